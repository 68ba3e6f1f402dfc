//! Schedulers: who runs next at every scheduling point.
//!
//! This module owns the [`Strategy`] trait and its implementations. A strategy sees only what a
//! [`Decision`] tells it (the enabled threads, the running thread, the event about to happen)
//! and the execution's seeded random number generator; it never touches threads, stacks or
//! synchronization state, which belong to the runtime. Every strategy is deterministic given
//! the run seed and the execution index (and, for strategies that learn from the run's earlier
//! executions, those executions), which is what makes seeds and replay tokens work.
//!
//! Strategies: [`Random`] (the baseline, no guarantee), [`UniformWalk`] (a random walk
//! weighted by each thread's estimated remaining scheduling points, so it samples
//! interleavings nearly uniformly: Zhao et al.'s URW, ASPLOS 2025; no guarantee, and its
//! estimates come from the run's first executions), [`Pct`] (Burckhardt et al. 2010),
//! [`Pctvb`] (PCT with variable bounding, Bindal et al. section 3), [`ThreadBound`] (thread
//! bounding, section 4) and [`Combined`] (variable bounding with thread-bounding priorities,
//! the paper's randomized RankChecker and pctvb's default for guarantees). The priority
//! strategies share one core: strict priority scheduling, change points, extra threads below
//! all others, and demotion of spinning threads.

pub(crate) mod combined;
mod guided;
pub(crate) mod pct;
pub(crate) mod pctvb;
mod priority;
pub(crate) mod random;
pub(crate) mod registry;
mod replay;
pub(crate) mod systematic;
pub(crate) mod thread_bound;
pub(crate) mod uniform_walk;

pub use combined::Combined;
pub(crate) use guided::{Blocks, Guided};
pub use pct::Pct;
pub use pctvb::Pctvb;
pub use random::Random;
#[doc(hidden)]
pub use registry::UnknownStrategy;
pub(crate) use replay::Replay;
pub use systematic::{
    LevelStats, OrderSet, Systematic, SystematicParams, TrackedVar, DEFAULT_ORDER_EPS,
    MAX_EXHAUSTIVE_ORDERS, MAX_RANDOM_ORDERS,
};
pub use thread_bound::ThreadBound;
pub use uniform_walk::UniformWalk;

use rand_chacha::ChaCha8Rng;

use crate::runtime::{Event, ThreadId};
use crate::vars::{VarId, VarInfo, VarProfile};

/// The random number generator every strategy draws from: ChaCha8 seeded with the run seed and
/// switched to the stream of the execution index, so execution `i` of seed `s` is the same on
/// every machine and can be re-run alone.
pub type ScheduleRng = ChaCha8Rng;

/// What a strategy is told at one scheduling point.
#[derive(Debug)]
pub struct Decision<'a> {
    /// Threads that can run now, in increasing id order. Never empty.
    pub enabled: &'a [ThreadId],
    /// The thread that reached the scheduling point.
    pub current: ThreadId,
    /// Whether `current` can keep running (false when it blocked or exited).
    pub current_enabled: bool,
    /// The operation `current` is about to perform (or just did, for `Block`/`ThreadExit`).
    pub event: &'a Event,
    /// Index of this scheduling point in the execution, from 0.
    pub step: u64,
    /// For an access to a variable: how many accesses the execution has made to that variable,
    /// this one included (the `j` of the paper's `(q, j)` change points); 0 otherwise.
    pub var_access: u64,
    /// How many `yield_now` calls `current` made since it last did something other than read
    /// shared state. Priority strategies lower a thread's priority once this passes
    /// [`YIELD_DEMOTION_THRESHOLD`], so spin loops terminate (paper, section 5).
    pub yield_streak: u32,
}

/// Yields in a row after which a spinning thread is demoted (the paper uses 100).
pub const YIELD_DEMOTION_THRESHOLD: u32 = 100;

/// What a strategy may know at the start of an execution: what earlier executions of the run
/// measured.
#[derive(Debug)]
pub struct ExecutionStart<'a> {
    /// Index of the execution within the run.
    pub index: u64,
    /// Most threads any earlier execution had (the paper's n), at least 1.
    pub max_threads: usize,
    /// Most scheduling points any earlier execution had (the paper's k).
    pub max_steps: u64,
    /// Variables met so far, by [`crate::vars::VarId`] index.
    pub vars: &'a [VarInfo],
    /// Their profiles (max accesses per execution, shared or not).
    pub profiles: &'a [VarProfile],
}

/// Why a strategy could not continue; fails the execution with this message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrategyError(pub String);

/// A scheduling algorithm. Implementations must be deterministic given the rng they are handed.
pub trait Strategy {
    /// A short description with parameters, e.g. `random` or `pct(d=3)`, used in reports and
    /// replay tokens.
    fn describe(&self) -> String;

    /// Called before each execution.
    fn begin_execution(&mut self, _start: &ExecutionStart<'_>, _rng: &mut ScheduleRng) {}

    /// The variables the current execution is bounded to (PCTVB's chosen variables), by
    /// [`VarId`]; empty for strategies that do not bound variables. A run with
    /// `#[pctvb::instrument]`ed code tracks exactly these in each execution, so only their
    /// accesses are scheduling points.
    fn chosen_variables(&self) -> &[VarId] {
        &[]
    }

    /// Whether the strategy bounds each execution to its [`Strategy::chosen_variables`]
    /// (PCTVB, the combined strategy). A strategy that does not interleaves every variable:
    /// an execution of it under a run's `#[pctvb::instrument]` session tracks them all.
    fn bounds_variables(&self) -> bool {
        false
    }

    /// Picks the thread that runs next; must return one of `decision.enabled`.
    fn choose(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError>;

    /// Called after each execution that ran to its end, with the digest of its event sequence
    /// and its number of scheduling points; an error fails the execution.
    fn end_execution(&mut self, _digest: u64, _steps: u64) -> Result<(), StrategyError> {
        Ok(())
    }
}
