//! Probabilistic guarantees for pctvb's randomized priority schedulers.
//!
//! A randomized scheduler that exposes every bug of some class with
//! probability at least `p` in each execution, using fresh randomness in each
//! execution, misses a given bug of that class in all of `N` executions with
//! probability at most `(1-p)^N`. This module computes the per-execution lower
//! bound `p` of each strategy, the number of executions needed for a target
//! confidence, the confidence reached by a number of executions, the number of
//! executions of Lemma 4.1, and the sentence that reports the guarantee.
//!
//! # Per-execution lower bounds
//!
//! `n` threads, `k` scheduling points per execution, `k_q` accesses of shared
//! variable `q` per execution (`Q` shared variables), bug depth `d` (so
//! `c = d-1` change points), at most `v` variables and at most `t` threads
//! involved in the bug, and `K_v` = the sum of the `v` largest `k_q`.
//!
//! | strategy | `p >=` | source |
//! |---|---|---|
//! | PCT | `1/n * 1/k^c` | Burckhardt et al., ASPLOS 2010 (PCT's main theorem) |
//! | PCTVB | `1/C(Q,v) * 1/n * 1/K_v^c` | Bindal et al., Theorem 3.1, worst case over variable sets |
//! | ThreadBound | `1/(t+c)! * 1/k^c` | Bindal et al., section 4 (priority orders as in Lemma 4.1) |
//! | Combined | `1/C(Q,v) * 1/K_v^c * 1/(t+c)!` | derived in [`combined_bound`] |
//! | Random | none | a uniform random walk has no useful bound |
//!
//! When `d = 1` there are no change points, so the variable choice cannot
//! matter and its factor is 1 whatever `v` is.
//!
//! # Assumptions shared by every bound
//!
//! * `n` is at least the number of threads an execution ever has.
//! * `k` (resp. each `k_q`) is at least the number of scheduling points
//!   (resp. accesses of `q`) of any execution. pctvb measures these counts in
//!   profiling executions, so a guarantee covers only the executions that
//!   stayed within the measured counts: the report says how many did not.
//! * What "depth `d`" means depends on the priority scheme. For PCT and PCTVB
//!   it is what PCT's proof uses: under at least one in `n` of the `n!`
//!   initial priority orders of the threads, `d - 1` priority changes at the
//!   right scheduling points (each putting the running thread below every
//!   initial priority; for PCTVB, at accesses of the bug's variables) make the
//!   test fail. Those orders have probability at least `1/n` together, and each
//!   needs its labelled change points drawn at its steps, `1/k^(d-1)`. PCT's
//!   paper counts ordering constraints instead (a set of `d` constraints
//!   between events that triggers the bug whenever all of them hold), and when
//!   threads wait that count can be lower: with a lock and a join, two
//!   constraints fix an outcome that needs two priority changes (PCT(2) hit it
//!   in 0 of 3,000 executions against a bound of 0.013), and behind a yield one
//!   constraint fixes an outcome that fails under one order in 6 of 3 threads
//!   (PCT(1) at 0.18 against 1/3): `tests/differential.rs`,
//!   `ordering_constraints_undercount_pct_depth`. The statement says which
//!   depth it means. For ThreadBound and Combined it is the paper's `c + 1`: the
//!   bug needs `c = d-1` preemptions and one relative order of the `t + c`
//!   thread fragments they create. The two can differ: the paper's Figure 10
//!   needs 2 preemptions but has 4 ordering constraints, and PCT's fixed
//!   change-point priorities (all below the initial ones) need 3 change points
//!   for it where random fragment priorities need 2 (`tests/guarantee_paper.rs`
//!   measures both).
//! * The threads `t` of a bug are the threads whose order it needs, **counting a
//!   thread that spawns one of them while another of them exists** (usually the
//!   test body's). The thread-bounding argument needs it: the bug is exposed
//!   when its `t + c` fragment priorities fall in one relative order only if
//!   which of its threads are enabled at each moment depends on those threads
//!   alone. A thread spawned by an uncounted thread while another bug thread
//!   exists appears at a moment decided by the spawner's priority, outside the
//!   `t + c` (measured: a one-preemption bug between a writer spawned first and
//!   a reader spawned second hit 0.028 per execution against `1/3! * 1/3 =
//!   0.056` with the spawner left out, and the bound `1/4! * 1/3` with it
//!   counted holds). A thread that is not spawned yet is then like a thread
//!   blocked on an event of a counted thread, which the argument allows.
//!   **A thread one of them waits for counts too** (before the bug's last
//!   preemption: one it joins, a lock's previous holder, a sender it receives from,
//!   a notifier, an unparker, a waker), whether or not it waits in the failing
//!   schedule: a thread blocked on an event of an uncounted thread is enabled at a
//!   moment that thread's priority decides (measured, a user probe: a reader that
//!   joins the last of a chain of four helpers before its two reads, one
//!   preemption, hit 0.0061 per execution against the combined bound `1/4! * 1/3 =
//!   0.0139` with `t = 3`: the writer must also run after every helper). The
//!   statement says "counting a thread that spawns them or that they wait for";
//!   the bug-shape report counts `t` the same way; `tests/guarantee_adversarial.rs`
//!   measures both.
//!   PCT and PCTVB do not bound `t`: their `n` counts every thread.
//! * Change points of PCTVB and Combined fall before accesses of the chosen
//!   variables only (never at a spawn, join, park, exit, yield or fence): a bug
//!   is in their class when each of its preemptions can be taken right before
//!   an access of one of its `v` variables. PCT and ThreadBound draw change
//!   points over every scheduling point.
//! * The schedule is the only source of nondeterminism, and each execution
//!   draws its random choices independently of the others.
//!
//! # Log space
//!
//! `C(Q,v)`, `(t+c)!` and `k^c` overflow `f64` long before the parameters get
//! large (`Q` up to 10^6, `k` up to 10^9, `d` and `t` up to 10 and beyond), so
//! every bound is kept as a sum of natural logarithms ([`BoundFactors`]), and
//! the probabilities derived from it use `ln_1p`/`exp_m1`, which stay accurate
//! for `p` far below `f64::EPSILON`.

use std::f64::consts::SQRT_2;
use std::fmt;

/// The largest number of executions [`executions_for_confidence`] will ask
/// for; a larger need is reported as [`GuaranteeError::TooManyExecutions`].
pub const MAX_EXECUTIONS: u64 = 10_000_000;

/// Up to this many terms, `ln C(n, k)` is summed term by term instead of as a
/// difference of three huge `ln` factorials, which would cancel catastrophically
/// when `n` is large and `k` small (the usual case: `Q` = 10^6, `v` = 2).
const DIRECT_SUM_TERMS: u64 = 100_000;

mod bounds;
mod check;
mod confidence;
mod error;
mod factors;
mod lemma;
mod math;
mod statement;
#[cfg(test)]
mod tests;

pub use bounds::*;
pub use check::*;
pub use confidence::*;
pub use error::*;
pub use factors::*;
pub use lemma::*;
use math::*;
pub use statement::*;
