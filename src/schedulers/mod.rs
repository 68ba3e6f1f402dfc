//! Schedulers: who runs next at every scheduling point.
//!
//! This module owns the strategies and the crate-private `Strategy` trait they implement. A
//! strategy sees only what a `Decision` tells it (the enabled threads, the running thread, the
//! event about to happen), the execution's seeded random number generator and, as the
//! execution ends, its trace (`Strategy::observe_trace`: work a strategy can do once per
//! execution stays out of the scheduling points), and at a decision the steps of the points
//! with no choice it let the engine pass over since its last one (`Strategy::skips_forced`:
//! a point where the running thread alone can run is recorded without asking, and the
//! strategy ends as asking would have left it); it never touches threads, stacks or
//! synchronization state, which belong to the runtime. Every strategy is
//! deterministic given the run seed and the execution index (and, for strategies that learn
//! from the run's earlier executions, those executions), which is what makes seeds and replay
//! tokens work.
//!
//! Strategies: [`Random`] (the baseline, no guarantee), [`UniformWalk`] (a random walk
//! weighted by each thread's estimated remaining scheduling points, so it samples
//! interleavings nearly uniformly: Zhao et al.'s URW, ASPLOS 2025; no guarantee, and its
//! estimates come from the run's first executions), [`Surw`](surw::Surw) (the selective
//! variant: that walk over the accesses to one shared variable per execution, the shared
//! variables taken in rounds, other events in naive random order, the walk itself in the
//! first execution after learning and in one in eight of the others, write loops run
//! whole in three executions in four by the rule of [`write_loops`], which race reversal
//! applies too; no guarantee),
//! [`Reversal`](reversal::Reversal) (race reversal: SURW, with each execution steering a pair
//! of conflicting accesses the earlier ones saw in one order only into the other; no
//! guarantee, serial), `revfuzz` (race reversal's first 500 executions, then
//! [`Greybox`](greybox::Greybox)'s fuzzing from the newest kept schedules; the default's
//! explorer with a target; no guarantee, serial),
//! [`Pct`] (Burckhardt et al. 2010),
//! [`Pctvb`] (PCT with variable bounding, Bindal et al. section 3), [`ThreadBound`] (thread
//! bounding, section 4), [`Combined`] (variable bounding with thread-bounding priorities,
//! the paper's randomized RankChecker and pctvb's default for guarantees), [`Systematic`]
//! (the paper's exhaustive search), [`Pos`](pos::Pos) (partial order sampling, Yuan et al.,
//! CAV 2018: random priorities, re-drawn after each step for the threads whose pending
//! operations race with it; no guarantee), [`Portfolio`](portfolio::Portfolio) (one of the
//! walk, POS and PCT at depths 2, 3 and 5 per execution, the walk's unless another arm's
//! executions add more new pairs of conflicting accesses, each other arm with a floor share;
//! no guarantee), and [`Greybox`](greybox::Greybox) (coverage-guided
//! schedule fuzzing: after SURW's first 500 executions, keeps the schedules that reached new
//! features and replays random prefixes of them, continuing with SURW; no guarantee, serial). The four priority strategies are each only their rules
//! (the priority scheme, where change points go, how many, how they describe themselves); one
//! core runs them all: strict priority scheduling, change points, extra threads below all
//! others. (A thread that yields is not enabled until another thread makes progress: the
//! runtime's rule, see `runtime/execution.rs`, so strategies only ever see enabled threads.) Users pick a strategy with
//! [`StrategyKind`](crate::StrategyKind); the types here document the algorithms.
//!
//! # One description per strategy
//!
//! Each strategy's file defines, beside the strategy, its `INFO: StrategyInfo` (in
//! `registry.rs`): its name (`strategy = "..."` in `#[pctvb::test]`), the parameters it takes
//! with their defaults, the bound its executions carry (a [`crate::guarantee::BoundKind`], or
//! none), whether it is a priority strategy (profiles first, runs serially, allows a
//! confidence target), whether it learns from execution 0, whether its executions may run in
//! parallel, and its builder. [`StrategyKind`](crate::StrategyKind) is generated from one list
//! (`strategy_kinds!` in `src/runner/kind.rs`) that pairs each public variant with its `INFO`;
//! the runner, the configuration checks and the guarantee ask the description, not the
//! variant. `#[pctvb::test]` keeps no copy of the names: it emits a `const` that looks the
//! name up in this registry at compile time (see `registry.rs` for why that and not a shared
//! crate).
//!
//! # To add a strategy
//!
//! 1. Write `src/schedulers/<name>.rs`: the strategy (a type implementing `Strategy`; for a
//!    priority strategy, a parameter type implementing `PriorityRules`, run by
//!    `Prioritized::boxed`) and its `pub(crate) const INFO: StrategyInfo`, whose `build`
//!    turns `StrategyParams` into the boxed strategy. Declare it here with
//!    `pub(crate) mod <name>;`. If its guarantee is a new formula, add a [`BoundKind`](crate::guarantee::BoundKind)
//!    variant with its formula in `src/guarantee/bounds.rs`.
//! 2. Add one entry to the `strategy_kinds!` list in `src/runner/kind.rs`: the documented
//!    variant with its fields (named as `StrategyParams`' fields) and `=> <name>::INFO`.
//!
//! That is all: the name is then accepted by `#[pctvb::test(strategy = "<name>")]` and
//! [`StrategyKind::from_name`](crate::StrategyKind::from_name), `Config::depth`, `vars` and
//! `threads` set the parameters it takes and are refused otherwise, and the runner profiles,
//! parallelizes and bounds it as its description says. A strategy that needs a search loop of
//! its own (as the systematic search does, see below) also needs that loop in the runner.
//!
//! # Why the trait is crate-private
//!
//! The `Strategy` trait is `pub(crate)`, not a pluggable extension point like shuttle's
//! `Scheduler`. A public trait would be a promise we cannot keep stable yet: its inputs
//! (`Decision`, `ExecutionStart`) expose runtime details that are still changing (the engine
//! refactor, variable tracking), and pctvb's value is the guarantee, which needs to know each
//! strategy's bound: a user strategy would have none, and the runner would have to learn to run
//! it without profiling, bound or statement. Making it public later is an addition; taking a
//! public trait back would not be.
//!
//! # The systematic search
//!
//! [`Systematic`] implements the same trait (its `choose` follows the current work item's
//! priority changes, `end_execution` harvests the execution into new work), but it is driven
//! differently: between executions the runner (`runner/systematic.rs`) asks its search engine
//! for the next work item, stops when the levels are exhausted or a budget runs out, and
//! reports the levels covered instead of a bound. A strategy's `begin_execution` cannot say
//! "there is no next execution", and the per-level coverage report is the systematic search's
//! own, so the loop stays outside the trait.

pub(crate) mod combined;
pub(crate) mod greybox;
mod guided;
pub(crate) mod pct;
pub(crate) mod pctvb;
pub(crate) mod portfolio;
pub(crate) mod pos;
mod priority;
pub(crate) mod random;
pub(crate) mod registry;
mod replay;
pub(crate) mod reversal;
mod rng;
pub(crate) mod surw;
pub(crate) mod systematic;
pub(crate) mod thread_bound;
pub(crate) mod uniform_walk;
pub(crate) mod write_loops;

pub(crate) use guided::{Blocks, Guided};
pub use random::Random;
#[doc(hidden)]
pub use registry::UnknownStrategy;
pub use registry::{DEFAULT_DEPTH, DEFAULT_THREADS, DEFAULT_VARS, MAX_DEPTH};
pub(crate) use replay::Replay;
pub use systematic::{
    LevelStats, OrderSet, Systematic, SystematicParams, DEFAULT_ORDER_EPS, MAX_RANDOM_ORDERS,
};

use crate::runtime::{Enabled, EnabledChange, Event, EventKind, ObjectId, Pending, Step, ThreadId};
use crate::vars::{VarId, VarInfo, VarProfile};

/// The random number generator every strategy draws from (`rng.rs`).
pub use rng::ScheduleRng;

/// What a strategy is told at one scheduling point.
#[derive(Debug)]
pub(crate) struct Decision<'a> {
    /// Threads that can run now, in increasing id order. Never empty.
    pub enabled: &'a [ThreadId],
    /// The engine's enabled threads, of which `enabled` is all (in most decisions) or a part:
    /// the one thread offered while exploration is off, or a list a strategy filtered before
    /// passing the decision on (race reversal's hold). Read through
    /// [`Decision::enabled_words`].
    pub engine: &'a Enabled,
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
    /// Every other thread's pending operation (what it announced at its latest scheduling
    /// point); the current thread's is `event`.
    pub pending: Pending<'a>,
}

impl<'a> Decision<'a> {
    /// `enabled` as bit words (bit `t % 64` of word `t / 64`; words past the highest thread
    /// may be zero), kept by the engine as the set changes, so that a strategy choosing on
    /// bits does not build them from `enabled` at every decision; `None` when `enabled` is not
    /// the engine's list itself (see [`Decision::engine`]), which the words would not
    /// describe. Tied to the list by its address, so a strategy that passes a decision on with
    /// `enabled` replaced cannot pass on words of another set.
    #[inline]
    pub(crate) fn enabled_words(&self) -> Option<&'a [u64]> {
        let list: &[ThreadId] = self.engine;
        (list.as_ptr() == self.enabled.as_ptr() && list.len() == self.enabled.len())
            .then(|| self.engine.words())
    }

    /// The points the engine passed over since the strategy was last asked, up to this
    /// decision, for a strategy that lets it ([`Strategy::skips_forced`]): every one the
    /// current thread's, which went on; the first is step `self.step - skipped().len()`.
    /// Empty for a strategy asked at every point. The engine keeps where the strategy was last
    /// asked, so a strategy that runs others beneath it passes them the same steps with the
    /// decision.
    #[inline]
    pub(crate) fn skipped(&self) -> &'a [Step] {
        self.pending.skipped()
    }

    /// The variable of `object` (an object some step of this execution named).
    #[inline]
    pub(crate) fn var_of(&self, object: ObjectId) -> Option<VarId> {
        self.pending.var_of(object)
    }
}

/// How long a strategy that chose the running thread would go on choosing it
/// ([`Strategy::keeps_running`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeepRunning {
    /// The step (as [`Decision::step`] counts them) from which it must be asked again:
    /// `u64::MAX` for never on that account.
    pub until_step: u64,
    /// Variables at whose accesses it must be asked: bit `id % 64` for each variable `id`
    /// (two variables may share a bit, which only asks more often); 0 for none.
    pub watch: u64,
}

impl KeepRunning {
    /// No point: the strategy is asked at every point with a choice.
    pub(crate) const NONE: KeepRunning = KeepRunning { until_step: 0, watch: 0 };

    /// The bit of variable `var` in [`KeepRunning::watch`].
    #[inline(always)]
    pub(crate) fn bit(var: VarId) -> u64 {
        1 << (var.0 % 64)
    }
}

/// What a strategy may know at the start of an execution: what earlier executions of the run
/// measured.
#[derive(Debug)]
pub(crate) struct ExecutionStart<'a> {
    /// Most threads any earlier execution had (the paper's n), at least 1.
    pub max_threads: usize,
    /// Most scheduling points any earlier execution had (the paper's k).
    pub max_steps: u64,
    /// Variables met so far, by [`crate::vars::VarId`] index.
    pub vars: &'a [VarInfo],
    /// Their profiles (max accesses per execution, shared or not).
    pub profiles: &'a [VarProfile],
    /// Which of this strategy's executions in the run this one is, from 0, counted in the
    /// order of the run's execution indices (not of time): the execution's index in a run of
    /// one strategy, whichever worker of a parallel run executes it; the explorer's own count
    /// in a run that alternates it with a priority strategy (`Execution::set_ordinal`). A
    /// strategy whose executions depend on earlier ones of the run only through execution 0
    /// may spread its choices over executions by it and stay reproducible by index.
    pub ordinal: u64,
    /// A profiling execution: one that measures the program for a priority strategy before
    /// its search, run by the explorer (or a naive random walk). It counts among the
    /// explorer's executions (`ordinal`), but not towards the search's phases that depend on
    /// how many executions came before (greybox's and revfuzz's first executions, after
    /// which the fuzzing starts).
    pub profiling: bool,
}

#[cfg(test)]
impl ExecutionStart<'static> {
    /// Tests: a run's first execution, one thread and no step seen before, no profiling.
    pub(crate) const FIRST: ExecutionStart<'static> = ExecutionStart {
        max_threads: 1,
        max_steps: 0,
        vars: &[],
        profiles: &[],
        ordinal: 0,
        profiling: false,
    };
}

/// Why a strategy could not continue; fails the execution with this message.
///
/// A boxed `str`, not a `String`: `Result<ThreadId, StrategyError>` is then 16 bytes and
/// comes back from every layer of a strategy's `choose` in two registers rather than through
/// memory (a `String` makes it 24 bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StrategyError(pub(crate) Box<str>);

impl StrategyError {
    pub(crate) fn new(message: String) -> StrategyError {
        StrategyError(message.into_boxed_str())
    }
}

/// An access's identity within a run: its call site (the address of its `Location`, one per
/// call site) and kind, in the bits above any address; not mixed (race reversal mixes two into
/// a pair's key). Race reversal's pairs and the write-loop rule's repetitions use it.
pub(crate) fn access_key(site: &'static std::panic::Location<'static>, kind: EventKind) -> u64 {
    site as *const std::panic::Location<'static> as usize as u64 ^ (kind as u64) << 56
}

/// The steps of an execution's `trace` at which the strategy was asked for a choice: all but
/// a last one whose thread waits and that "chose" that thread itself (no thread could run: the
/// execution ended there); any other waiting step chose another thread (a waiting thread
/// cannot run). For [`Strategy::observe_trace`].
pub(crate) fn asked(trace: &[Step]) -> &[Step] {
    match trace.last() {
        Some(s) if s.waits && s.chosen == s.thread => &trace[..trace.len() - 1],
        _ => trace,
    }
}

/// A scheduling algorithm. Implementations must be deterministic given the rng they are handed.
/// Crate-private: see the module documentation.
pub(crate) trait Strategy {
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

    /// Whether this execution's strategy is told how the enabled threads change
    /// ([`Strategy::enabled_changed`]), asked once [`Strategy::begin_execution`] returned; if
    /// not, the engine tells it nothing (and pays no call per change). A strategy that runs
    /// others beneath it answers for the one that runs this execution and passes the changes
    /// on (the portfolio, for its arm).
    fn reads_changes(&self) -> bool {
        false
    }

    /// In an execution whose strategy [`reads_changes`](Strategy::reads_changes): changes of
    /// the engine's enabled threads, told as the engine makes them (first, as the execution
    /// starts, the main thread's), each a real change, so that the changes told since the
    /// previous decision turn the set it saw into the next decision's. For a strategy that
    /// keeps its own index of the enabled threads (the priority strategies' tournament tree),
    /// so that a decision costs the changes, not a pass over [`Decision::enabled`]. It
    /// describes the engine's set, which `enabled` is but while exploration is off (then
    /// `enabled` is the one thread offered).
    fn enabled_changed(&mut self, _changes: &[EnabledChange]) {}

    /// Whether this execution's strategy lets the engine pass over the points with no choice,
    /// asked once [`Strategy::begin_execution`] returned. Such a point (the running thread is
    /// the only one that can run, it is runnable, and its operation is no `Block`, so it goes
    /// on) is then recorded in the trace without asking [`Strategy::choose`], and the strategy
    /// reads those steps at its next decision ([`Decision::skipped`]: every one is the
    /// decision's current thread's, since only a decision switches threads), leaving its state
    /// and its draws from the rng as choosing at each would have: the schedules do not depend
    /// on it (`tests/schedule_fingerprints.rs` holds them to that, with a program whose owner
    /// thread runs alone). The points after an execution's last decision are never read, so
    /// a strategy that learns from its counts at the end (execution 0 of the walks) says no.
    /// The engine passes over points only while exploring (pctvb-loom's `stop_exploring`
    /// offers one thread at every point) and in executions limited below `u32::MAX` steps (a
    /// step keeps its access count in 32 bits, [`Step::var_access`]).
    ///
    /// Why: asking costs the engine the event, the decision and a dynamic call at every point
    /// even for a strategy with nothing to do there, and a program whose threads run alone
    /// for most of their operations has mostly such points (the corpus's work-stealing deque,
    /// `ws_deque_fixed`: 59 of its 88 points an execution under the random walk). Callgrind
    /// (`corpus/examples/strategy_instructions.rs ws STRATEGY 1000`) counted 7% fewer
    /// instructions under the random walk, 4-6% under SURW and race reversal, 3% under the
    /// combined strategy and 4% under the default with a target. A strategy that runs others
    /// beneath it answers for the one that runs this execution.
    fn skips_forced(&self) -> bool {
        false
    }

    /// Whether this execution's strategy, one that [`skips_forced`](Strategy::skips_forced),
    /// may also say after choosing the running thread how long it would go on choosing it
    /// ([`Strategy::keeps_running`]), asked once [`Strategy::begin_execution`] returned.
    fn may_keep_running(&self) -> bool {
        false
    }

    /// Asked after each decision of an execution whose strategy [`may keep the running
    /// thread`](Strategy::may_keep_running) at which it chose the running thread: the points
    /// at which it would choose that thread again, with nothing else to do there than what it
    /// does at a point with no choice, as long as no thread becomes enabled
    /// ([`KeepRunning::NONE`]: none).
    /// The engine passes over those points as over the ones with no choice, and the strategy
    /// reads them at its next decision ([`Decision::skipped`]): every one is still the
    /// current thread's. It asks again at the first point of the running thread at or after
    /// [`KeepRunning::until_step`], at an access to a variable [`KeepRunning::watch`] names,
    /// after any thread became enabled (a spawn, a wake, a release, a spinner's), and
    /// wherever it would ask without it (the thread blocks, waits at a lock, yields with no
    /// one to run, exits). So a strategy whose choice can change only with the enabled set or
    /// at such points (a priority strategy: the highest-priority enabled thread, until a
    /// change point) makes the same choices as when asked at every point
    /// (`tests/schedule_fingerprints.rs` holds the priority strategies to that).
    ///
    /// Why: a priority strategy keeps choosing the running thread while another thread could
    /// run, at most of its decisions (the corpus's work-stealing deque: the owner's loop while
    /// the thief waits for its turn), and each of them costs the engine's decision and a
    /// dynamic call for no change.
    fn keeps_running(&self) -> KeepRunning {
        KeepRunning::NONE
    }

    /// Picks the thread that runs next; must return one of `decision.enabled`.
    fn choose(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError>;

    /// Called as each execution ends, before [`Strategy::end_execution`], with its trace: every
    /// scheduling point in order (who reached it, its operation with the value it read or
    /// wrote, the thread chosen), the last one included when it asked no choice (it waits and
    /// no thread can run). For a strategy that learns from what the operations did (greybox's
    /// coverage): reading the trace once at the end costs less than looking at every point.
    fn observe_trace(&mut self, _trace: &[Step]) {}

    /// The most search executions the run can give this strategy (profiling ones aside), told
    /// before the first when the run's budget fixes it (a number of executions, not a
    /// confidence target); never told means unknown. A strategy may then skip learning that
    /// only later executions would use (greybox's coverage, read once its fuzzing starts).
    fn runs_at_most(&mut self, _executions: u64) {}

    /// Called after each execution that ran to its end, with the digest of its event sequence
    /// and its number of scheduling points; an error fails the execution.
    fn end_execution(&mut self, _digest: u64, _steps: u64) -> Result<(), StrategyError> {
        Ok(())
    }

    /// What the strategy did over the run, for the report's notes (the portfolio's executions
    /// per arm); `None` for strategies with nothing to add to their description.
    fn summary(&self) -> Option<String> {
        None
    }
}
