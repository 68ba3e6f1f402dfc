//! Systematic search: the exhaustive algorithm of Bindal, Bansal and Lal (sections 2 and 5,
//! Algorithm 1): iterative context bounding over variable subsets and thread-bounding priority
//! orders, with happens-before pruning. The search is stateless: a state is identified by the
//! partial schedule that reaches it and is reconstructed by replaying that schedule.
//!
//! One [`Systematic`] strategy keeps the whole search across executions (work queues, explored
//! states, per-level counts); the runner (`Config::run` with
//! [`crate::StrategyKind::Systematic`]) asks it for the next execution until it is exhausted or
//! a budget runs out.
//!
//! # Limits
//!
//! - The thread-bound `t` selects the priority orders; it is not iterated as a level.
//! - Levels with `c < v` only hold schedules of smaller subsets; their work items are reused
//!   rather than run (while the record cache has room) but are still walked to produce the
//!   next level's work.
//! - Work items and recorded steps are capped in memory; past the cap the search stops and
//!   says so (see the report's `stopped_by`).
//!
//! # The search
//!
//! - **Variables.** A variable is an allocation site plus its *loop-iteration number*: the
//!   `i`-th object of a site met in an execution is `site#i` (the paper's heap naming; pctvb
//!   registers an object when it is first used, so `i` counts first accesses, not
//!   allocations). Only shared variables (accessed by two or more threads in the profiling
//!   executions or the search) are tracked: a preemption at an access to a variable only one
//!   thread touches reaches the same states as one at that thread's next scheduling point.
//!   They are ordered by iteration number, lowest first, then by first appearance. Variables
//!   first seen shared after the `v = 0` level join the list for the next `v`; those first
//!   seen shared in the last level make that level run again for its subsets that hold one
//!   (else no preemption would ever be placed at their accesses).
//! - **Levels.** `v = 0` runs every priority order once without preemption (`c = 0`). Then for
//!   `v = 1, 2, ..` up to the bound, for `c = 1, 2, ..` up to the bound, for every `v`-subset
//!   of the variables: the subset's work items with `c` priority changes run, and every access
//!   to a tracked variable where the running thread could be preempted becomes a work item
//!   with `c + 1` changes (Algorithm 1's `nextWorkQueue`).
//! - **Preemptions.** Scheduling is strict priority. A preemption is a priority change of the
//!   running thread at an access to a tracked variable that makes another enabled thread run;
//!   only these count towards `c` (switches that strict priority makes by itself, e.g. to a
//!   higher-priority thread that was just spawned or woken, are free: the paper's definition).
//! - **Priority orders.** When the thread-bounding set would need at least as many orders as
//!   there are, every order is enumerated: all `n!` initial orders of the `n` threads, and at
//!   each preemption every placement of the preempted thread below the thread that takes over
//!   (equivalent to all `(n+c)!` permutations of thread fragments, without the duplicates).
//!   Otherwise the orders are [`crate::guarantee::lemma_4_1_executions`]`(n+c, t+c, eps)`
//!   random permutations `P` of `1..=n+c` (thread `i` starts at `P_i`, the `j`-th preempted
//!   thread gets `P_{n+j}`), which cover every relative order of every `t+c` fragments with
//!   probability at least `1 - eps` (Lemma 4.1).
//! - **Happens-before pruning.** The state before each scheduling decision is fingerprinted by
//!   its happens-before graph (every performed operation with its thread, its index in the
//!   thread, and its position among the conflicting operations on its object: writes are
//!   totally ordered, a read is placed after the writes before it; synchronization operations
//!   count as writes) together with the running thread and the priority order still in effect.
//!   Equal fingerprints reach the same state and schedule the same future, so a work item
//!   whose fingerprint was explored (with at most as many changes) is dropped, and an
//!   execution that reaches an explored fingerprint generates no further work. Explored sets
//!   are per variable subset; pruning never crosses subsets.
//! - **Reuse across subsets.** An execution is determined by its work item, so a work item
//!   that already ran for another subset (e.g. every item of level `(v=2, c=1)`, which are
//!   those of the `v=1` subsets) is not run again: its recorded states and preemption points
//!   are replayed against the current subset's explored states, which still decide what is
//!   pruned (counted as `reused` in [`LevelStats`]).
//! - **Spin loops.** A thread that yields is not enabled until another thread makes progress
//!   (the runtime's rule for every strategy), so strict priority never spins forever; the
//!   enabled threads are part of a state's fingerprint.
//!
//! # Files
//!
//! - `mod.rs`: the [`Systematic`] strategy, its parameters and what the report shows
//!   ([`TrackedVar`], [`OrderSet`], [`LevelStats`]).
//! - `engine.rs`: the search driver (levels, subsets, queues, explored states, limits).
//! - `explore.rs`: one execution (following a work item, harvesting preemption points).
//! - `work.rs`: work items, their records for reuse, and the search's stages.
//! - `run.rs`: the execution in progress (priorities, variables, fingerprints).
//! - `hb.rs`: the happens-before fingerprint.
//! - `orders.rs`: permutations and subsets.
//!
//! # Why the runner drives it
//!
//! [`Systematic`] is a strategy like the others for the runtime (it picks a thread at every
//! scheduling point), but the number of executions is the search's to decide: the runner's
//! loop (`runner/systematic.rs`) profiles, calls `Engine::start` with the measured threads,
//! then asks `Engine::advance` for each next work item until the levels are exhausted, a
//! safety limit stops the search or the budget runs out, and builds the level report from
//! the engine. A shard of the run (`PCTVB_SHARD=k/m`) is handed to `Engine::start`, which
//! queues only the initial orders whose index is `k - 1` modulo `m`: every work item keeps
//! its initial order's index, so the shard runs exactly the schedules descending from them. The strategy trait has no way to say "no next execution" or to report levels,
//! and adding them for one strategy would burden all the others.

mod engine;
mod explore;
mod hb;
mod orders;
mod run;
mod work;

use std::cell::RefCell;
use std::rc::Rc;

pub(crate) use engine::Engine;

use super::registry::{Param, ParamSpec, StrategyInfo};
use super::{Decision, ExecutionStart, ScheduleRng, Strategy, StrategyError};
use crate::runtime::ThreadId;
use crate::schedulers::registry::DEFAULT_THREADS;
use crate::vars::VarId;

/// Default `eps` of the randomized thread-bounding orders (probability 0.99 of covering every
/// order of every `t + c` fragments).
pub const DEFAULT_ORDER_EPS: f64 = 0.01;

/// Most random priority orders drawn.
pub const MAX_RANDOM_ORDERS: u64 = 100_000;

/// Most initial orders enumerated exhaustively (`n! <= 5040`, i.e. `n <= 7`); beyond, the
/// randomized thread-bounding set is used even when it is larger.
pub const MAX_EXHAUSTIVE_ORDERS: u64 = 5040;

/// The bounds of a systematic search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SystematicParams {
    /// Most preemptions (`c`) per schedule.
    pub preemptions: u32,
    /// Most variables (`v`) whose accesses are preemption points.
    pub vars: u32,
    /// Threads (`t`) whose relative orders the priority orders must cover.
    pub threads: u32,
    /// Happens-before pruning on (the default) or off (for measuring it).
    pub hb_pruning: bool,
    /// Probability that the randomized thread-bounding orders miss an order (Lemma 4.1).
    pub eps: f64,
}

/// A variable as the systematic search tracks it: an allocation site and the loop-iteration
/// number of the object (its rank among the site's objects in the execution, from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TrackedVar {
    /// The allocation site.
    pub var: VarId,
    /// The object's rank among the objects of that site, in order of first access.
    pub iteration: u32,
}

/// Which priority orders the search enumerates.
#[derive(Clone, Debug, PartialEq)]
pub enum OrderSet {
    /// Every initial order of the `threads` threads and every placement of each preempted
    /// thread: no probability caveat.
    Exhaustive {
        /// Threads ordered (`n`, measured by profiling).
        threads: usize,
        /// Initial orders (`n!`).
        orders: u64,
    },
    /// Random permutations of `1..=n+c` (Lemma 4.1).
    Random {
        /// Threads ordered (`n`).
        threads: usize,
        /// Permutations drawn.
        orders: u64,
        /// Permutations Lemma 4.1 needs; when more than `orders` (capped at
        /// [`MAX_RANDOM_ORDERS`]), there is no probability guarantee.
        needed: u64,
        /// Probability that some order of some `t + c` fragments is missed.
        eps: f64,
    },
}

/// A level `(v, t, c)` of the search and what happened in it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LevelStats {
    /// Variables tracked per subset.
    pub v: u32,
    /// Thread bound of the priority orders.
    pub t: u32,
    /// Priority changes (preemptions) of the level's schedules.
    pub c: u32,
    /// Variable subsets searched at this level (so far, while it runs).
    pub subsets: u64,
    /// Executions run.
    pub executions: u64,
    /// Work items not run again because the same schedule already ran for another variable
    /// subset: its recorded states and preemption points were replayed against this subset's
    /// explored states instead.
    pub reused: u64,
    /// Schedules of this level not run because their happens-before state had been explored.
    pub pruned: u64,
    /// Whether every schedule of the level was run or pruned.
    pub exhausted: bool,
}

/// The systematic search as a strategy (see the module docs). The runner drives it; as a
/// plain strategy it only profiles (random choices).
pub struct Systematic {
    engine: Rc<RefCell<Engine>>,
}

impl Systematic {
    /// A systematic search with these bounds.
    pub fn new(params: SystematicParams) -> Systematic {
        Systematic { engine: Rc::new(RefCell::new(Engine::new(params))) }
    }

    /// The search state, shared with the runner.
    pub(crate) fn engine(&self) -> Rc<RefCell<Engine>> {
        self.engine.clone()
    }
}

impl std::fmt::Debug for Systematic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Strategy for Systematic {
    fn describe(&self) -> String {
        self.engine.borrow().describe()
    }

    fn begin_execution(&mut self, start: &ExecutionStart<'_>, _rng: &mut ScheduleRng) {
        self.engine.borrow_mut().begin(start);
    }

    fn choose(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError> {
        self.engine.borrow_mut().choose(decision, rng)
    }

    fn end_execution(&mut self, _digest: u64, _steps: u64) -> Result<(), StrategyError> {
        self.engine.borrow_mut().end();
        Ok(())
    }
}

/// `strategy = "systematic"`: at most 2 preemptions at accesses to at most 2 variables, orders
/// of [`DEFAULT_THREADS`] threads, happens-before pruning. It profiles first (so a confidence
/// target, which sets `1 - eps`, is allowed) but has no per-execution bound: the runner drives
/// it with its own loop (`runner/systematic.rs`) and the report states its coverage.
pub(crate) const INFO: StrategyInfo = StrategyInfo {
    name: "systematic",
    title: "the systematic search",
    params: &[
        ParamSpec { param: Param::Preemptions, default: 2 },
        ParamSpec { param: Param::Vars, default: 2 },
        ParamSpec { param: Param::Threads, default: DEFAULT_THREADS },
    ],
    bound: None,
    priority: true,
    learns_from_execution_0: false,
    parallel: false,
    build: |p| {
        Box::new(Systematic::new(SystematicParams {
            preemptions: p.preemptions,
            vars: p.vars,
            threads: p.threads,
            hb_pruning: p.hb_pruning,
            eps: DEFAULT_ORDER_EPS,
        }))
    },
};
