//! An async channel that loses a wake-up: a receiver task waits forever next to a message.
//!
//! `Channel` is a `Mutex` over a queue of messages and the waker of the receiver waiting for
//! one. `recv` is a future: it takes a message if there is one, and otherwise stores its
//! task's waker and returns `Pending`; `send` pushes a message and wakes the stored waker.
//! The channel keeps *one* waker, as a single-consumer channel may. With two receivers it
//! loses a wake-up:
//!
//! 1. Receiver A finds the queue empty, stores its waker and waits.
//! 2. Receiver B finds the queue empty and stores its waker **in the same slot**: A's waker is
//!    dropped without being called. No one holds it any more.
//! 3. The producer sends message 1 and wakes B; then message 2, with no waker left to call.
//! 4. B takes message 1. Message 2 sits in the queue, and A, never woken, waits forever (and
//!    the test body waits for A).
//!
//! On a real executor the task simply never finishes: the program hangs, or (with a timeout)
//! fails far from the cause. pctvb reports a lost wake-up: the task, where it was spawned,
//! where its poll returned `Pending`, and that no one holds its waker; with the schedule and
//! the replay line.
//!
//! Fix (`FixedChannel` below): keep a waker per waiting receiver (a queue of wakers), and
//! register the waker in the same critical section that found the queue empty. Once per
//! receiver, and out again when the receiver takes a message: a future may be polled with no
//! wake-up (executors do it, `join!` polls every branch when one is woken; pctvb explores
//! such spurious polls), and a waker queued twice, or left queued by a receiver that took a
//! message before its wake-up came, takes a later send's wake-up while another receiver's
//! waker waits behind it, losing a wake-up just the same. The second run of this
//! example checks the fixed channel with a depth-2 search and prints the guarantee its
//! passing run proves.
//!
//! Run with `cargo run --release --example async_lost_wakeup`. Measured with the default
//! strategy (SURW) over seeds 1 to 100 (`PCTVB_SEED=<s>`, `scripts/example-seeds.sh`):
//! the lost wake-up shows up after 1 to 40 executions (mean 8.1); the budget of 2,000 leaves a
//! margin.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use pctvb::future::{block_on, spawn};
use pctvb::sync::{Arc, Mutex};

/// Executions the buggy run makes.
pub const ITERATIONS: u64 = 2000;

/// The buggy channel: one waker slot for any number of receivers.
pub struct Channel {
    state: Mutex<(VecDeque<u32>, Option<Waker>)>,
}

impl Channel {
    fn new() -> Arc<Channel> {
        Arc::new(Channel { state: Mutex::new((VecDeque::new(), None)) })
    }

    fn send(&self, message: u32) {
        let waiter = {
            let mut state = self.state.lock().unwrap();
            state.0.push_back(message);
            state.1.take()
        };
        if let Some(waker) = waiter {
            waker.wake();
        }
    }

    fn recv(self: &Arc<Self>) -> impl Future<Output = u32> {
        let channel = self.clone();
        std::future::poll_fn(move |cx: &mut Context<'_>| {
            let mut state = channel.state.lock().unwrap();
            if let Some(message) = state.0.pop_front() {
                return Poll::Ready(message);
            }
            // BUG: overwrites (and drops) the waker another receiver stored.
            state.1 = Some(cx.waker().clone());
            Poll::Pending
        })
    }
}

/// Two receiver tasks, one message each; the test body sends two messages and awaits both.
pub fn two_receivers() {
    let channel = Channel::new();
    let receivers: Vec<_> = (0..2)
        .map(|_| {
            let channel = channel.clone();
            spawn(async move { channel.recv().await })
        })
        .collect();
    channel.send(1);
    channel.send(2);
    let total: u32 = block_on(async {
        let mut total = 0;
        for receiver in receivers {
            total += receiver.await;
        }
        total
    });
    assert_eq!(total, 3);
}

/// The fixed channel: a waker per waiting receiver, registered under the same lock that saw
/// the queue empty.
pub struct FixedChannel {
    state: Mutex<(VecDeque<u32>, VecDeque<Waker>)>,
}

impl FixedChannel {
    fn new() -> Arc<FixedChannel> {
        Arc::new(FixedChannel { state: Mutex::new((VecDeque::new(), VecDeque::new())) })
    }

    fn send(&self, message: u32) {
        let waiter = {
            let mut state = self.state.lock().unwrap();
            state.0.push_back(message);
            state.1.pop_front()
        };
        if let Some(waker) = waiter {
            waker.wake();
        }
    }

    fn recv(self: &Arc<Self>) -> Recv {
        Recv { channel: self.clone() }
    }
}

/// `FixedChannel::recv`'s future.
pub struct Recv {
    channel: Arc<FixedChannel>,
}

impl Future for Recv {
    type Output = u32;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        let mut state = self.channel.state.lock().unwrap();
        if let Some(message) = state.0.pop_front() {
            // A receiver polled before its wake-up (a spurious poll) takes its waker out: left
            // queued, it would take the wake-up of a later message from a waiting receiver.
            state.1.retain(|w| !w.will_wake(cx.waker()));
            return Poll::Ready(message);
        }
        // A woken receiver that lost the message to another one registers again; one polled
        // with its waker still queued (a spurious poll) replaces it rather than queue it twice.
        match state.1.iter_mut().find(|w| w.will_wake(cx.waker())) {
            Some(queued) => queued.clone_from(cx.waker()),
            None => state.1.push_back(cx.waker().clone()),
        }
        Poll::Pending
    }
}

/// [`two_receivers`] on the fixed channel.
pub fn two_receivers_fixed() {
    let channel = FixedChannel::new();
    let receivers: Vec<_> = (0..2)
        .map(|_| {
            let channel = channel.clone();
            spawn(async move { channel.recv().await })
        })
        .collect();
    channel.send(1);
    channel.send(2);
    let total: u32 = block_on(async {
        let mut total = 0;
        for receiver in receivers {
            total += receiver.await;
        }
        total
    });
    assert_eq!(total, 3);
}

/// The fixed program's run: 4,000 executions searching for bugs of depth 2, which gives a
/// guarantee when none is found.
pub fn fixed_config() -> pctvb::Config {
    pctvb::Config::new()
        .name("async_lost_wakeup::two_receivers_fixed")
        .rerun_command("cargo run --release --example async_lost_wakeup")
        .iterations(4000)
        .depth(2)
}

fn main() -> std::process::ExitCode {
    let found = pctvb::Config::new()
        .name("async_lost_wakeup::two_receivers")
        .rerun_command("cargo run --release --example async_lost_wakeup")
        .iterations(ITERATIONS)
        .run(two_receivers)
        .print_expecting_bug();
    if found != std::process::ExitCode::SUCCESS {
        return found;
    }
    println!("\nThe fixed channel (a waker per waiting receiver):\n");
    let report = fixed_config().run(two_receivers_fixed);
    match (report.error(), report.failure()) {
        (Some(error), _) => println!("pctvb could not run: {error}"),
        (None, Some(failure)) => println!("{failure}"),
        (None, None) => {
            println!("{}", report.summary());
            return std::process::ExitCode::SUCCESS;
        }
    }
    std::process::ExitCode::FAILURE
}
