//! The bug programs of the PCTVB paper (Bindal, Bansal, Lal: "Variable and Thread Bounding for
//! Systematic Testing of Multithreaded Programs"), Figures 1-4, 8-10 and 12, written with
//! pctvb's threads and atomics so tests and benchmarks can run them as `Config::run` bodies.
//!
//! Each figure's body spawns the paper's threads from the test body's thread (the "main"
//! thread, which only spawns and joins) and fails with an assertion exactly when the paper's
//! `ASSERT` fails. `a++` is one atomic read-modify-write (`fetch_add`), `x = a` an atomic
//! load, `a = x` an atomic store: every one is a scheduling point and an access of its
//! variable.
//!
//! [`FIGURES`] lists them with the paper's bug parameters `(c, v, t)`: `c` preemptions, on
//! accesses to `v` variables, ordering `t` of the paper's threads. Under pctvb the spawning
//! thread matters too (a thread spawned later cannot run before it exists), so the thread
//! count of the bug as pctvb's bounds see it is at most `t + 1` ([`Figure::threads_with_main`]).
#![allow(dead_code)]

use pctvb::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use pctvb::sync::Arc;
use pctvb::thread;

/// A paper figure: its body and its bug's parameters.
#[derive(Clone, Copy, Debug)]
pub struct Figure {
    /// `"figure 2"` etc.
    pub name: &'static str,
    /// The program; panics exactly when the paper's assertion fails.
    pub body: fn(),
    /// Preemptions the bug needs (`c`; depth `d = c + 1`).
    pub c: u32,
    /// Variables the preemptions happen at (`v`).
    pub v: u32,
    /// Threads of the paper's program the bug orders (`t`).
    pub t: u32,
    /// Threads of the execution, the test body's included (`n`).
    pub n: u32,
    /// The bug's depth in PCT's sense (Burckhardt et al.): the number of ordering constraints
    /// between events that trigger it. It can exceed `c + 1`: in figure 10 the two preemptions
    /// of thread 1 must surround thread 3's increment *and* let thread 2's run first, which is
    /// four constraints, and PCT's fixed change-point priorities (`1..d-1`, below every
    /// initial one) need three change points for it, where thread bounding's random
    /// fragment priorities need two.
    pub pct_depth: u32,
}

impl Figure {
    /// The bug depth `d = c + 1`.
    pub fn depth(&self) -> u32 {
        self.c + 1
    }

    /// The thread bound as pctvb sees the bug: the paper's threads plus the spawning thread,
    /// whose order relative to them decides which of them exist yet.
    pub fn threads_with_main(&self) -> u32 {
        (self.t + 1).min(self.n)
    }
}

/// Every figure, in paper order.
pub const FIGURES: &[Figure] = &[
    Figure { name: "figure 1", body: figure_1, c: 0, v: 0, t: 2, n: 3, pct_depth: 1 },
    Figure { name: "figure 2", body: figure_2, c: 1, v: 1, t: 2, n: 3, pct_depth: 2 },
    Figure { name: "figure 3", body: figure_3, c: 2, v: 1, t: 2, n: 3, pct_depth: 3 },
    Figure { name: "figure 4", body: figure_4, c: 2, v: 2, t: 2, n: 3, pct_depth: 3 },
    Figure { name: "figure 8", body: figure_8, c: 0, v: 0, t: 3, n: 4, pct_depth: 2 },
    Figure { name: "figure 9", body: figure_9, c: 1, v: 1, t: 3, n: 4, pct_depth: 4 },
    Figure { name: "figure 10", body: figure_10, c: 2, v: 2, t: 3, n: 4, pct_depth: 4 },
    Figure { name: "figure 12", body: figure_12, c: 2, v: 1, t: 2, n: 3, pct_depth: 3 },
];

/// Variants of the figures with known parameters that stress one factor of the bounds.
pub const VARIANTS: &[Figure] = &[
    Figure {
        name: "figure 2, busy variable",
        body: figure_2_busy_variable,
        c: 1,
        v: 1,
        t: 2,
        n: 3,
        pct_depth: 2,
    },
    Figure {
        name: "figure 2, bystanders",
        body: figure_2_bystanders,
        c: 1,
        v: 1,
        t: 2,
        n: 6,
        pct_depth: 2,
    },
];

/// The facade the corpus's programs import their threads and synchronization from.
pub mod rt {
    pub use pctvb::{sync, thread};
}

/// The figures' code: the corpus's (`corpus/src/programs/figures.rs`), one source for these
/// tests and for the side-by-side runs under shuttle and loom.
mod source {
    include!("../../corpus/src/programs/figures.rs");
}

use source::run_threads;

/// Figure 1 (c=0, v=0): `ASSERT(a == 0)` against `a++`.
pub fn figure_1() {
    source::figure_1(0)
}

/// Figure 2 (c=1, v=1): two reads of `a` separated by `a++`.
pub fn figure_2() {
    source::figure_2(0)
}

/// Figure 3 (c=2, v=1): the reads must see `a = 1` and then `a = 0`.
pub fn figure_3() {
    source::figure_3(0)
}

/// Figure 4 (c=2, v=2): `t1 != t2` needs a preemption on `a`, `t3 == 1` one on `b`.
pub fn figure_4() {
    source::figure_4(0)
}

/// Figure 8 (c=0, v=0, t=3): the check after two increments.
pub fn figure_8() {
    source::figure_8(0)
}

/// Figure 9 (c=1, v=1, t=3): two increments between two reads.
pub fn figure_9() {
    source::figure_9(0)
}

/// Figure 10 (c=2, v=2, t=3): `a++` between the reads of `a` and `b++` between those of `b`.
pub fn figure_10() {
    source::figure_10(0)
}

/// Figure 12 (c=2, v=1, t=2): AllocationVector.
pub fn figure_12() {
    source::figure_12(0)
}

/// Figure 2 with a "busy" shared variable both threads hit ten times before touching `a`:
/// the bug's variable is a corner variable (3 of 23 accesses). PCT's change point must land on
/// one step of about 30; PCTVB's, once it picked `a` (one chance in two), on one of `a`'s
/// three accesses (the paper's Figure 6 experiment).
pub fn figure_2_busy_variable() {
    let a = Arc::new(AtomicUsize::new(0));
    let busy = Arc::new(AtomicUsize::new(0));
    let (a1, b1, a2, b2) = (a.clone(), busy.clone(), a, busy);
    run_threads(vec![
        Box::new(move || {
            for _ in 0..10 {
                b1.fetch_add(1, SeqCst);
            }
            let t1 = a1.load(SeqCst);
            let t2 = a1.load(SeqCst);
            assert_eq!(t1, t2, "figure 2 (busy): a changed between the reads");
        }),
        Box::new(move || {
            for _ in 0..10 {
                b2.fetch_add(1, SeqCst);
            }
            a2.fetch_add(1, SeqCst);
        }),
    ]);
}

/// Figure 2 with three bystander threads that only yield: `n = 6` while the bug still orders
/// two threads (and the spawning one). PCT's bound shrinks with `n`, thread bounding's does
/// not.
pub fn figure_2_bystanders() {
    let a = Arc::new(AtomicUsize::new(0));
    let (a1, a2) = (a.clone(), a);
    let mut threads: Vec<Box<dyn FnOnce() + Send + 'static>> = vec![
        Box::new(move || {
            let t1 = a1.load(SeqCst);
            let t2 = a1.load(SeqCst);
            assert_eq!(t1, t2, "figure 2 (bystanders): a changed between the reads");
        }),
        Box::new(move || {
            a2.fetch_add(1, SeqCst);
        }),
    ];
    for _ in 0..3 {
        threads.push(Box::new(|| {
            thread::yield_now();
            thread::yield_now();
        }));
    }
    run_threads(threads);
}
