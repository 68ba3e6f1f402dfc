//! Treiber stack with the ABA problem: a lock-free slot pool hands out the same slot twice.
//!
//! `SlotPool` keeps its free slots on a Treiber stack: `head` is the index of the first free
//! slot and `next[i]` the free slot after slot `i`. `alloc` pops (read `head`, read
//! `next[head]`, compare-and-swap `head` from the old head to that next), `free` pushes. The
//! compare-and-swap only checks that `head` holds the same index as before, not that nothing
//! happened in between, and slots are reused, so this interleaving corrupts the stack:
//!
//! 1. Thread 1 starts `alloc`: it reads `head = A` and `next[A] = B`, and is preempted before
//!    its compare-and-swap.
//! 2. Thread 2 allocates A, allocates B, and frees A: `head` is A again, but A is now followed
//!    by what came after B, and B is in use by thread 2.
//! 3. Thread 1's compare-and-swap from A to B succeeds, since `head` is A: thread 1 gets A
//!    (correctly) but sets `head` to B, a slot thread 2 is using.
//! 4. An `alloc` before thread 2 frees B hands out B a second time; the pool's check catches
//!    it.
//!
//! Three threads share a pool of six slots, two each. Two threads are enough for the bug, but
//! then thread 2 must run its dozen steps while thread 1 waits in its window, which a random
//! schedule rarely does; with a third thread, the other two can share that work.
//!
//! Fix: make the compare-and-swap fail when the head was popped and pushed back, by pairing the
//! head index with a version counter bumped on every change (both in one `AtomicU64`, compared
//! and swapped together), or reclaim slots only when no thread can still be reading them
//! (hazard pointers, epochs), or use a `Mutex`.
//!
//! The program uses indices into arrays of atomics instead of pointers, so it needs no
//! `unsafe`; the bug is the same as with pointers and recycled nodes.
//!
//! Run with `cargo run --release --example treiber_aba`. Measured with the default random strategy
//! over seeds 1 to 100 (`PCTVB_SEED=<s>`): the bug shows up after 11 to 2,056 executions (mean
//! 382, so a run of 5,000 misses it with probability about e^-13); the budget takes well under
//! a second in release.

use pctvb::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use pctvb::sync::Arc;
use pctvb::thread;

/// Executions the example runs; see the measurement in the header.
pub const ITERATIONS: u64 = 5000;

/// "No slot": the end of the free list.
const NIL: usize = usize::MAX;

/// A fixed set of slots, handed out and taken back without locks.
struct SlotPool {
    /// The first free slot, or `NIL`.
    head: AtomicUsize,
    /// `next[i]`: the free slot after slot `i` while `i` is free.
    next: Vec<AtomicUsize>,
    /// Whether slot `i` is handed out: the pool's own consistency check.
    in_use: Vec<AtomicBool>,
}

impl SlotPool {
    /// A pool of `slots` free slots, `0 -> 1 -> ... -> slots - 1`.
    fn new(slots: usize) -> SlotPool {
        SlotPool {
            head: AtomicUsize::new(0),
            next: (0..slots)
                .map(|i| AtomicUsize::new(if i + 1 < slots { i + 1 } else { NIL }))
                .collect(),
            in_use: (0..slots).map(|_| AtomicBool::new(false)).collect(),
        }
    }

    /// Takes a free slot, or `None` if all are in use. BUG: ABA on `head`.
    fn alloc(&self) -> Option<usize> {
        loop {
            let head = self.head.load(SeqCst);
            if head == NIL {
                return None;
            }
            let next = self.next[head].load(SeqCst);
            // If other threads pop `head`, pop more, and push `head` back right here, `next`
            // is stale but the compare-and-swap below still succeeds.
            if self.head.compare_exchange(head, next, SeqCst, SeqCst).is_ok() {
                let was_in_use = self.in_use[head].swap(true, SeqCst);
                assert!(!was_in_use, "slot {head} handed out twice");
                return Some(head);
            }
        }
    }

    /// Gives a slot back.
    fn free(&self, slot: usize) {
        self.in_use[slot].store(false, SeqCst);
        loop {
            let head = self.head.load(SeqCst);
            self.next[slot].store(head, SeqCst);
            if self.head.compare_exchange(head, slot, SeqCst, SeqCst).is_ok() {
                return;
            }
        }
    }
}

/// Three threads each take two slots and give them back.
pub fn three_threads_alloc_free() {
    let pool = Arc::new(SlotPool::new(6));
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let pool = pool.clone();
            thread::spawn(move || {
                let a = pool.alloc().expect("6 slots are enough for 3 threads x 2");
                let b = pool.alloc().expect("6 slots are enough for 3 threads x 2");
                pool.free(a);
                pool.free(b);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

fn main() -> std::process::ExitCode {
    pctvb::Config::new()
        .name("treiber_aba::three_threads_alloc_free")
        .rerun_command("cargo run --release --example treiber_aba")
        .iterations(ITERATIONS)
        .run(three_threads_alloc_free)
        .print_expecting_bug()
}
