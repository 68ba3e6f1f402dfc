//! Bounded channel with a lost wakeup: a worker sleeps forever next to a waiting message.
//!
//! `BoundedQueue` is a `Mutex<VecDeque>` with two condition variables: receivers wait on
//! `not_empty`, senders wait on `not_full`. To save notifications, `send` wakes a receiver only
//! when the queue goes from empty to non-empty (`len() == 1` after the push). With one
//! receiver that is enough; with two it loses a wakeup:
//!
//! 1. Both workers find the queue empty and wait on `not_empty`.
//! 2. The producer sends job 1: the queue goes from empty to one message, so it calls
//!    `notify_one`, which wakes worker A. Worker A now needs the mutex back before it can run.
//! 3. The producer gets the mutex again before worker A does and sends job 2: the queue goes
//!    from one message to two, so there is no notification, and worker B sleeps on although
//!    there is a message for it.
//! 4. Worker A takes job 1 and job 2; meanwhile the producer, woken through `not_full`,
//!    sends `Stop`, `Stop`. If each of those sends finds a message still in the queue, none
//!    of them is an empty-to-non-empty transition, so none notifies. Worker A takes the first
//!    `Stop` and exits; the second `Stop` stays in the queue, and worker B, never notified,
//!    waits on `not_empty` forever while the main thread waits to join it.
//!
//! Real threads hit this when the producer sends twice before the woken worker is scheduled,
//! which is common on a loaded machine. pctvb reports a deadlock: worker B waits on the
//! `not_empty` Condvar, and the main thread waits to join it.
//!
//! Fix: call `not_empty.notify_one()` on every send (and `not_full.notify_one()` on every
//! receive, as here), or `notify_all` on the empty-to-non-empty transition. A notification is
//! cheap when nobody waits; skipping one is only safe with a single waiter.
//!
//! Run with `cargo run --release --example bounded_channel_lost_wakeup`. Measured with the default
//! strategy (SURW) over seeds 1 to 100 (`PCTVB_SEED=<s>`, `scripts/example-seeds.sh`):
//! the deadlock shows up after 1 to 48 executions (mean 10.9); the budget of 500 leaves a wide
//! margin and takes well under a second in release.

use std::collections::VecDeque;

use pctvb::sync::atomic::{AtomicU32, Ordering};
use pctvb::sync::{Arc, Condvar, Mutex};
use pctvb::thread;

/// Executions the example runs; see the measurement in the header.
pub const ITERATIONS: u64 = 500;

/// A blocking FIFO queue holding at most `capacity` messages.
struct BoundedQueue<T> {
    items: Mutex<VecDeque<T>>,
    not_empty: Condvar,
    not_full: Condvar,
    capacity: usize,
}

impl<T> BoundedQueue<T> {
    fn new(capacity: usize) -> BoundedQueue<T> {
        BoundedQueue {
            items: Mutex::new(VecDeque::with_capacity(capacity)),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
            capacity,
        }
    }

    /// Appends `value`, waiting while the queue is full.
    fn send(&self, value: T) {
        let mut items = self.items.lock().unwrap();
        while items.len() == self.capacity {
            items = self.not_full.wait(items).unwrap();
        }
        items.push_back(value);
        // BUG: wakes a receiver only on the empty-to-non-empty transition. With two waiting
        // receivers, a second send before the woken one runs wakes nobody.
        if items.len() == 1 {
            self.not_empty.notify_one();
        }
    }

    /// Removes the oldest message, waiting while the queue is empty.
    fn recv(&self) -> T {
        let mut items = self.items.lock().unwrap();
        while items.is_empty() {
            items = self.not_empty.wait(items).unwrap();
        }
        let value = items.pop_front().unwrap();
        self.not_full.notify_one();
        value
    }
}

/// What the producer sends to the workers.
enum Message {
    Job(u32),
    Stop,
}

/// A producer hands two jobs to two workers through a queue of capacity 2, then stops them.
pub fn two_workers() {
    let queue = Arc::new(BoundedQueue::new(2));
    let done = Arc::new(AtomicU32::new(0));

    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (queue, done) = (queue.clone(), done.clone());
            thread::spawn(move || {
                while let Message::Job(n) = queue.recv() {
                    done.fetch_add(n, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let producer = {
        let queue = queue.clone();
        thread::spawn(move || {
            for message in [Message::Job(1), Message::Job(2), Message::Stop, Message::Stop] {
                queue.send(message);
            }
        })
    };

    producer.join().unwrap();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(done.load(Ordering::SeqCst), 3, "a job was not done");
}

fn main() -> std::process::ExitCode {
    pctvb::Config::new()
        .name("bounded_channel_lost_wakeup::two_workers")
        .rerun_command("cargo run --release --example bounded_channel_lost_wakeup")
        .iterations(ITERATIONS)
        .run(two_workers)
        .print_expecting_bug()
}
