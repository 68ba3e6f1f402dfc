//! Treiber stack with the ABA problem: a recycled node makes a stale compare-and-swap succeed.
//!
//! `Stack` is a lock-free Treiber stack over raw pointers. `head` is an `AtomicPtr<Node>`;
//! `push` links a node above the head and compare-and-swaps `head` from that head to the node;
//! `pop` reads the head `X` and its successor `Y` and compare-and-swaps `head` from `X` to `Y`.
//! Popped nodes are recycled, not freed: `pop` puts them on a free list and `push` reuses the one
//! popped longest ago (reusing the oldest node rather than the newest makes reuse, and so ABA,
//! rarer; it does not make it impossible). The compare-and-swap in `pop` only checks that
//! `head` holds the same address as when it read `Y`, not that nothing happened in between. With
//! tasks 3, 2, 1 in nodes `X -> Y -> Z` and three workers that each pop a task and push it back:
//!
//! 1. Worker A starts a pop: it reads `head = X` and `X.next = Y`, and is preempted before its
//!    compare-and-swap.
//! 2. Worker B pops X (task 3) and worker C pops Y (task 2): the stack is `Z`, the free list
//!    `X, Y`.
//! 3. B pushes its task back in X, the node popped longest ago: the stack is `X -> Z`.
//! 4. A's compare-and-swap from X to Y succeeds, since `head` is X again. A rightly gets X's
//!    task, but installs Y as the head: a node on the free list, no longer on the stack.
//! 5. The next push takes Y from the free list and links it above the head, that is above
//!    itself: the stack is a cycle through Y, and task 1, in Z, is lost. Draining the stack at
//!    the end finds a task missing and another one over and over.
//!
//! The schedule pctvb prints may be another interleaving of the same kind: any in which a
//! pop's compare-and-swap succeeds on a node that left the stack and came back between the
//! pop's reads and its compare-and-swap. (In the report, the values of `head` and `next` are
//! node addresses, and `<- preempted` marks the operation before which the thread was switched
//! out.)
//!
//! Every node stays allocated until the stack is dropped, so no interleaving touches freed
//! memory: the bug corrupts the stack, and the final check catches it.
//!
//! Fix: make the compare-and-swap fail when the head was popped and pushed back, by pairing the
//! head with a version counter bumped on every change and swapping both together (a tagged
//! pointer: a node index and a counter in one `AtomicU64`, or a counter in the pointer's unused
//! high bits); or never recycle a node while another thread may still hold a pointer to it
//! (hazard pointers, or epoch-based reclamation as in `crossbeam-epoch`); or use a `Mutex`.
//!
//! The `stack` module is written with std's paths, as the code under test is in a user's crate,
//! and annotated with `#[pctvb::instrument(force)]`. The attribute rewrites those paths to
//! pctvb's, so the stack's atomic operations and locks are scheduling points, and hooks its
//! raw-pointer reads and writes of nodes, which become scheduling points while the nodes are
//! tracked (runs of the PCTVB and combined strategies track the variables they choose; this
//! run, with the naive random walk, tracks none: the bug's window lies between two
//! operations on `head`). `force` instruments the module in every build, so that
//! `cargo run --example` needs no flags. In your own crate write `#[pctvb::instrument]` and
//! build the tests with `RUSTFLAGS="--cfg pctvb" cargo test` (declaring `cfg(pctvb)` to the
//! `unexpected_cfgs` lint, as the README shows): without that cfg the module is compiled
//! exactly as written.
//!
//! Run with `cargo run --release --example treiber_aba`. Measured with the naive random walk
//! (`StrategyKind::Random`) over seeds 1 to 100 (`PCTVB_SEED=<s>`, `scripts/example-seeds.sh`): the
//! bug shows up after 1 to 912 executions (mean 172.7, so a run of 2,000 misses it with probability
//! about e^-11); the budget takes well under a second in release. The example names that strategy
//! because the uniform walk (the default before SURW) is weaker on this program: it learns each
//! thread's length from the run's first execution, a worker's compare-and-swap retries make that
//! length vary, and on some seeds what it learns makes the bug's window rare. SURW, the default
//! now, is about even with the naive walk here (`PCTVB_STRATEGY=surw scripts/example-seeds.sh
//! treiber_aba`: 1 to 1261 executions, mean 175.1), with a longer tail. It is one of the few programs of
//! pctvb's corpus where the naive walk is ahead of the uniform walk (docs/RESULTS.md,
//! `treiber-aba`: a mean of 348 executions against 377; SURW's there is 190).

use pctvb::sync::Arc;
use pctvb::thread;

/// Executions the example runs; see the measurement in the header.
pub const ITERATIONS: u64 = 2000;

/// The strategy the example runs; see the measurement in the header.
pub const STRATEGY: pctvb::StrategyKind = pctvb::StrategyKind::Random;

/// The code under test, written against std.
#[pctvb::instrument(force)]
mod stack {
    use std::collections::VecDeque;
    use std::ptr;
    use std::sync::atomic::{AtomicPtr, Ordering::SeqCst};
    use std::sync::Mutex;

    struct Node {
        value: u64,
        /// Atomic because a pop may read it while a push rewrites it in a recycled node.
        next: AtomicPtr<Node>,
    }

    /// The stack's nodes.
    struct Nodes {
        /// Popped nodes, oldest first.
        free: VecDeque<*mut Node>,
        /// Every node allocated, to free when the stack is dropped.
        all: Vec<*mut Node>,
    }

    /// A lock-free stack of `u64`s that recycles its nodes.
    pub struct Stack {
        head: AtomicPtr<Node>,
        nodes: Mutex<Nodes>,
    }

    // SAFETY: threads share nodes only through `head` and `nodes`, and nodes are freed only by
    // `drop`, when no other thread can reach the stack.
    unsafe impl Send for Stack {}
    unsafe impl Sync for Stack {}

    impl Stack {
        pub fn new() -> Stack {
            Stack {
                head: AtomicPtr::new(ptr::null_mut()),
                nodes: Mutex::new(Nodes { free: VecDeque::new(), all: Vec::new() }),
            }
        }

        pub fn push(&self, value: u64) {
            let node = self.take_node();
            // SAFETY: nodes stay allocated while the stack lives.
            unsafe { (*node).value = value };
            loop {
                let head = self.head.load(SeqCst);
                unsafe { (*node).next.store(head, SeqCst) };
                if self.head.compare_exchange(head, node, SeqCst, SeqCst).is_ok() {
                    return;
                }
            }
        }

        /// BUG: ABA on `head`.
        pub fn pop(&self) -> Option<u64> {
            loop {
                let head = self.head.load(SeqCst);
                if head.is_null() {
                    return None;
                }
                // SAFETY: nodes stay allocated while the stack lives.
                let next = unsafe { (*head).next.load(SeqCst) };
                // If other threads pop `head` and `next` and push `head`'s node back here,
                // `next` is stale, but the compare-and-swap still succeeds.
                if self.head.compare_exchange(head, next, SeqCst, SeqCst).is_ok() {
                    let value = unsafe { (*head).value };
                    self.nodes.lock().unwrap().free.push_back(head);
                    return Some(value);
                }
            }
        }

        /// The free node popped longest ago, or a new one.
        fn take_node(&self) -> *mut Node {
            let mut nodes = self.nodes.lock().unwrap();
            if let Some(node) = nodes.free.pop_front() {
                return node;
            }
            let node =
                Box::into_raw(Box::new(Node { value: 0, next: AtomicPtr::new(ptr::null_mut()) }));
            nodes.all.push(node);
            node
        }
    }

    impl Drop for Stack {
        fn drop(&mut self) {
            for &node in &self.nodes.get_mut().unwrap().all {
                // SAFETY: allocated by `take_node` with `Box::into_raw`, freed only here.
                drop(unsafe { Box::from_raw(node) });
            }
        }
    }
}

/// Three tasks on the stack; three workers each pop one and push it back.
pub fn three_workers_requeue() {
    let tasks = Arc::new(stack::Stack::new());
    for task in [1, 2, 3] {
        tasks.push(task);
    }
    let workers: Vec<_> = (0..3)
        .map(|_| {
            let tasks = tasks.clone();
            thread::spawn(move || {
                let task = tasks.pop().expect("the stack lost a task: a worker found it empty");
                tasks.push(task);
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    // At most four pops: a corrupted stack may be a cycle that never runs empty.
    let mut left: Vec<u64> = std::iter::from_fn(|| tasks.pop()).take(4).collect();
    left.sort();
    assert_eq!(left, [1, 2, 3], "the stack lost or duplicated a task");
}

fn main() -> std::process::ExitCode {
    pctvb::Config::new()
        .name("treiber_aba::three_workers_requeue")
        .rerun_command("cargo run --release --example treiber_aba")
        .strategy(STRATEGY)
        .iterations(ITERATIONS)
        .run(three_workers_requeue)
        .print_expecting_bug()
}
