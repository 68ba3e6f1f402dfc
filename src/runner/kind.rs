//! Strategies by name and parameters: the public [`StrategyKind`] and the one list of
//! strategies.
//!
//! The `strategy_kinds!` invocation below is that list: each entry is a public variant of
//! [`StrategyKind`] (its documentation and fields, named as [`StrategyParams`]'s) and the
//! [`StrategyInfo`] that describes the strategy (`=> module::INFO`, defined in the strategy's
//! file in `src/schedulers/`). From it the macro generates the enum, the registry
//! ([`STRATEGIES`], in the list's order) and the two conversions between a variant and its
//! description with parameter values; every query on a `StrategyKind` (its name, defaults,
//! bound, depth, whether it profiles or runs in parallel, its builder) goes through the
//! description, so no per-variant `match` is written by hand.

use crate::guarantee::BoundKind;
use crate::schedulers::registry::{same_name, Param, StrategyInfo, StrategyParams};
use crate::schedulers::{
    combined, greybox, pct, pctvb, portfolio, pos, random, reversal, surw, systematic,
    thread_bound, uniform_walk, Strategy, UnknownStrategy,
};

/// Defines [`StrategyKind`] from the list of strategies: the enum as written, [`STRATEGIES`],
/// and the conversions between a variant and its `(description, parameter values)`.
macro_rules! strategy_kinds {
    (
        $(#[$attr:meta])*
        pub enum StrategyKind {
            $(
                $(#[$variant_attr:meta])*
                $variant:ident $({
                    $(
                        $(#[$field_attr:meta])*
                        $field:ident: $ty:ty
                    ),* $(,)?
                })? => $info:path,
            )*
        }
    ) => {
        $(#[$attr])*
        pub enum StrategyKind {
            $(
                $(#[$variant_attr])*
                $variant $({
                    $(
                        $(#[$field_attr])*
                        $field: $ty
                    ),*
                })?,
            )*
        }

        /// Every strategy's description, in the order of [`StrategyKind`]'s variants.
        pub(crate) const STRATEGIES: &[&StrategyInfo] = &[$(&$info),*];

        impl StrategyKind {
            /// The strategy's description and parameter values.
            const fn parts(&self) -> (&'static StrategyInfo, StrategyParams) {
                #[allow(unused_mut)]
                let mut values = StrategyParams::BASE;
                let info: &'static StrategyInfo = match *self {
                    $(
                        StrategyKind::$variant $({ $($field),* })? => {
                            $($(values.$field = $field;)*)?
                            &$info
                        }
                    )*
                };
                (info, values)
            }

            /// The variant of `STRATEGIES[index]` with these parameter values.
            #[allow(unused_assignments)]
            const fn from_parts(index: usize, values: StrategyParams) -> StrategyKind {
                let mut i = 0;
                $(
                    if i == index {
                        return StrategyKind::$variant $({ $($field: values.$field),* })?;
                    }
                    i += 1;
                )*
                panic!("no strategy at this index of the registry")
            }
        }
    };
}

strategy_kinds! {
/// Which scheduling strategy a run uses.
///
/// Every strategy but `Random` and `UniformWalk` is a priority strategy with a computed
/// guarantee ([`StrategyKind::is_priority`]): the runner first makes
/// [`Config::profile_runs`](super::Config::profile_runs) profiling executions to measure the
/// counts its bound needs (see [`crate::guarantee`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StrategyKind {
    /// Uniform random choice among runnable threads at every scheduling point; no guarantee.
    Random => random::INFO,
    /// The uniform random walk (Zhao et al.'s URW): a random choice weighted
    /// by each runnable thread's estimated remaining scheduling points, learnt from the run's
    /// first execution, so interleavings are sampled nearly uniformly; no guarantee, no
    /// parameters; its executions run on every core like the random strategy's.
    UniformWalk => uniform_walk::INFO,
    /// PCT for bugs of depth `depth` (Burckhardt et al. 2010).
    Pct {
        /// Bug depth `d` (`d - 1` change points), at least 1.
        depth: u32,
    } => pct::INFO,
    /// PCT with variable bounding (Bindal et al., section 3).
    Pctvb {
        /// Bug depth `d`, at least 1.
        depth: u32,
        /// Variables `v` the change points are placed on.
        vars: u32,
    } => pctvb::INFO,
    /// Thread bounding with step change points (Bindal et al., section 4).
    ThreadBound {
        /// Threads `t` involved in the bug.
        threads: u32,
        /// Preemptions `c` (depth `c + 1`).
        preemptions: u32,
    } => thread_bound::INFO,
    /// Variable bounding with thread-bounding priorities (Bindal et al.'s randomized RankChecker),
    /// the default when a depth, variable or thread bound or a confidence is given.
    Combined {
        /// Bug depth `d`, at least 1.
        depth: u32,
        /// Variables `v` the change points are placed on.
        vars: u32,
        /// Threads `t` involved in the bug.
        threads: u32,
    } => combined::INFO,
    /// Systematic search (Bindal et al.'s Algorithm 1): every
    /// schedule with at most `preemptions` preemptions at accesses to any `vars` shared
    /// variables, for the priority orders of `threads` threads, level by level, with
    /// happens-before pruning; the report says which `(v, t, c)` levels were exhausted
    /// ([`crate::report::SystematicReport`]). [`Config::iterations`](super::Config::iterations)
    /// caps the executions; [`Config::confidence`](super::Config::confidence) sets `1 - eps`
    /// for randomized thread-bounding orders (and lifts the cap). Shard `k` of `m`
    /// ([`Config::shard`](super::Config::shard)) runs the schedules that start from the
    /// initial priority orders whose index is `k - 1` modulo `m`, within its share of the
    /// iterations; the `m` shards together run the whole search.
    Systematic {
        /// Most preemptions `c` per schedule.
        preemptions: u32,
        /// Most variables `v` whose accesses are preemption points.
        vars: u32,
        /// Threads `t` whose orders the priority orders cover.
        threads: u32,
        /// Happens-before pruning (on by default; off only to measure it).
        hb_pruning: bool,
        /// Wall-time budget; the report then says which levels were completed.
        max_time: Option<std::time::Duration>,
    } => systematic::INFO,
    /// Partial order sampling (Yuan et al., CAV 2018; Fray's default): every thread has a
    /// random priority and the highest-priority runnable thread runs; after each step the
    /// priorities of the thread that ran and of every thread whose pending operation races
    /// with that step (same object, one of them modifying it) are drawn again. No guarantee,
    /// no parameters, no profiling; its executions run on every core like the random
    /// strategy's.
    Pos => pos::INFO,
    /// A portfolio of the uniform walk, POS and PCT at depths 2, 3 and 5: each execution runs
    /// one of them, the walk unless another arm's recent executions added pairs of
    /// conflicting accesses the run had not seen more often than the walk's; every other arm
    /// runs at least 3% of the executions. No guarantee, no parameters, no profiling; serial
    /// (each execution's arm depends on the earlier ones), reproduced by its seed.
    Portfolio => portfolio::INFO,
    /// Coverage-guided schedule fuzzing: keeps the schedules whose executions reached new
    /// features (an operation's site and value beside its thread's previous one, reads-from
    /// pairs of sites) and replays a random prefix of a kept schedule before choosing at
    /// random. For deep bugs in lock-free code that need a chain of rare states (SCTBench's
    /// `SafeStack`). No guarantee, no parameters, no profiling; its executions are serial
    /// (each learns from the earlier ones).
    Greybox => greybox::INFO,
    /// The selectively uniform random walk (Zhao et al.'s SURW): each execution draws a
    /// variable that two or more threads accessed in the run's first execution, and
    /// interleaves the accesses to it as the uniform walk interleaves events (each thread
    /// weighted by its estimated accesses left), while the other events run in a naive random
    /// order; half its executions, drawn, run the uniform walk instead. No guarantee, no
    /// parameters, no profiling; its executions run on every core like the uniform walk's. What
    /// a run without a target runs ([`Config::explorer`](super::Config::explorer) names
    /// another).
    Surw => surw::INFO,
    /// Race reversal: the selectively uniform walk ([`StrategyKind::Surw`]), and in each
    /// execution the newest pair of conflicting accesses (same object, one of them modifying
    /// it, identified by call site and kind) that earlier executions saw in one order only is
    /// steered into the other: the threads about to make the first access wait until another
    /// thread makes the second. No guarantee, no parameters, no profiling; serial (each
    /// execution depends on the pairs the earlier ones saw), reproduced by its seed.
    Reversal => reversal::INFO,
    /// Race reversal ([`StrategyKind::Reversal`]) for the first 500 executions, then
    /// coverage-guided schedule fuzzing ([`StrategyKind::Greybox`]) that extends the newest
    /// kept schedules, with one execution in 8 left to race reversal. Every execution's
    /// coverage counts, race reversal's included, so the fuzzing starts from what reversal
    /// reached. The default's explorer ([`Config::explorer`](super::Config::explorer)): what
    /// runs beside the guaranteed strategy in a run with a target. For bugs race reversal
    /// finds in its first hundreds of executions it costs what reversal costs; for deep
    /// lock-free bugs that need a chain of rare states (SCTBench's `SafeStack`) it is the
    /// fuzzing that finds them. No guarantee, no parameters, no profiling; serial (each
    /// execution depends on the earlier ones), reproduced by its seed.
    Revfuzz => greybox::REVFUZZ_INFO,
}
}

/// The names of the strategies that may explore ([`Config::explorer`](super::Config::explorer)):
/// those without a guarantee, in the registry's order.
pub(super) fn explorer_names() -> Vec<&'static str> {
    STRATEGIES.iter().filter(|s| !s.priority).map(|s| s.name).collect()
}

impl StrategyKind {
    /// The systematic search up to `preemptions`, `vars` and `threads`, with happens-before
    /// pruning and no time budget.
    ///
    /// ```
    /// use pctvb::sync::{Arc, atomic::{AtomicUsize, Ordering::SeqCst}};
    /// use pctvb::{Config, StrategyKind};
    ///
    /// let increments = |atomic: bool| move || {
    ///     let n = Arc::new(AtomicUsize::new(0));
    ///     let n2 = n.clone();
    ///     let add = move |n: &AtomicUsize| if atomic {
    ///         n.fetch_add(1, SeqCst);
    ///     } else {
    ///         let v = n.load(SeqCst);
    ///         n.store(v + 1, SeqCst);
    ///     };
    ///     let h = pctvb::thread::spawn(move || add(&n2));
    ///     add(&n);
    ///     h.join().unwrap();
    ///     assert_eq!(n.load(SeqCst), 2);
    /// };
    /// let search = Config::new().strategy(StrategyKind::systematic(2, 1, 2));
    ///
    /// // The lost update needs one preemption at an access of one variable.
    /// let report = search.run(increments(false));
    /// let found = report.systematic.as_ref().unwrap().found_at;
    /// assert_eq!(found, Some((1, 2, 1))); // (v, t, c)
    ///
    /// // With fetch_add there is no bug, and the report says what was covered.
    /// let report = search.run(increments(true));
    /// let statement = report.systematic.as_ref().unwrap().statement();
    /// assert!(statement.starts_with(
    ///     "exhaustively explored all schedules with <= 2 preemptions at accesses to any <= 1 \
    ///      of Q=1 shared variables, for every priority order of all 2 threads"
    /// ));
    /// ```
    pub fn systematic(preemptions: u32, vars: u32, threads: u32) -> StrategyKind {
        StrategyKind::Systematic { preemptions, vars, threads, hb_pruning: true, max_time: None }
    }

    /// The strategy of this name with its default parameters
    /// (depth 2, 1 variable, 3 threads, and for the systematic search 2 preemptions on 2
    /// variables), or `None` for an unknown name.
    pub fn from_name(name: &str) -> Option<StrategyKind> {
        StrategyKind::__named(name).ok()
    }

    /// [`StrategyKind::from_name`] as a `const fn` whose error is the compile-time message of
    /// `#[pctvb::test(strategy = "...")]` (see [`crate::schedulers::registry`]); not a stable
    /// interface.
    #[doc(hidden)]
    // The message is built without allocation so that this can run in a `const`; a large
    // error costs nothing there, and the runtime calls are one per run.
    #[allow(clippy::result_large_err)]
    pub const fn __named(name: &str) -> Result<StrategyKind, UnknownStrategy> {
        let mut i = 0;
        while i < STRATEGIES.len() {
            if same_name(STRATEGIES[i].name, name) {
                return Ok(StrategyKind::from_parts(i, STRATEGIES[i].defaults()));
            }
            i += 1;
        }
        Err(UnknownStrategy::new(name, STRATEGIES))
    }

    /// The strategy's description.
    fn info(&self) -> &'static StrategyInfo {
        self.parts().0
    }

    /// The strategy's name in the `strategy = "..."` attribute argument.
    pub fn name(&self) -> &'static str {
        self.info().name
    }

    /// What a sentence calls the strategy ("the uniform random walk"), for the runner's notes.
    pub(super) fn title(&self) -> &'static str {
        self.info().title
    }

    pub(super) fn build(&self) -> Box<dyn Strategy> {
        let (info, values) = self.parts();
        (info.build)(&values)
    }

    /// Whether this is a priority strategy, which the runner profiles first (and, but for the
    /// systematic search, plans with its bound); false for [`StrategyKind::Random`] and
    /// [`StrategyKind::UniformWalk`], which have neither a bound nor profiling executions.
    pub fn is_priority(&self) -> bool {
        self.info().priority
    }

    /// Whether every execution after the first depends only on execution 0 (the uniform walk
    /// learns its estimates there), so every run, shard and parallel worker runs execution 0
    /// first.
    pub(super) fn learns_from_execution_0(&self) -> bool {
        self.info().learns_from_execution_0
    }

    /// Whether the strategy's executions may run on several OS threads.
    pub(super) fn runs_in_parallel(&self) -> bool {
        self.info().parallel
    }

    /// The bug depth `d` the strategy searches for (`None` for the random strategies).
    pub(super) fn depth(&self) -> Option<u32> {
        let (info, values) = self.parts();
        info.depth(&values)
    }

    /// The priority changes (preemptions) per execution the strategy's bound allows, `c = d -
    /// 1`, with whether its parameter counts preemptions (the systematic search, thread
    /// bounding) rather than a depth; `None` for a strategy without a depth. A depth of 0
    /// counts as 0 changes (the runner refuses it first).
    pub(super) fn priority_changes(&self) -> Option<(u32, bool)> {
        let (info, values) = self.parts();
        if info.takes(Param::Depth) {
            Some((values.depth.saturating_sub(1), false))
        } else if info.takes(Param::Preemptions) {
            Some((values.preemptions, true))
        } else {
            None
        }
    }

    /// Whether change points are placed on variable accesses (the counts that matter are then
    /// the shared variables and their `k_q`, otherwise `k`).
    pub(super) fn bounds_variables(&self) -> bool {
        self.guarantee_kind().uses_variables()
    }

    /// The bound the strategy's executions carry ([`BoundKind::Random`]: none).
    pub(super) fn guarantee_kind(&self) -> BoundKind {
        self.info().bound.unwrap_or(BoundKind::Random)
    }

    /// `(v, t)` as requested (0 where the strategy has no such bound).
    pub(super) fn vars_threads(&self) -> (u32, u32) {
        let (info, values) = self.parts();
        let get = |param, value| if info.takes(param) { value } else { 0 };
        (get(Param::Vars, values.vars), get(Param::Threads, values.threads))
    }

    /// Sets `param` to `value` (a depth `d` sets `preemptions = d - 1` for a strategy that
    /// counts preemptions); false when the strategy does not take it.
    pub(super) fn set_param(&mut self, param: Param, value: u32) -> bool {
        let (info, mut values) = self.parts();
        if !info.set(&mut values, param, value) {
            return false;
        }
        let index = STRATEGIES.iter().position(|i| std::ptr::eq(*i, info));
        *self = StrategyKind::from_parts(index.expect("a registered strategy"), values);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::{DEFAULT_DEPTH, DEFAULT_THREADS};
    use super::*;

    #[test]
    fn names_are_unique_and_every_name_gives_its_variant_with_defaults() {
        for (i, info) in STRATEGIES.iter().enumerate() {
            assert!(STRATEGIES[..i].iter().all(|other| other.name != info.name), "{}", info.name);
            // The runner's notes tell strategies apart by their titles.
            assert!(STRATEGIES[..i].iter().all(|o| o.title != info.title), "{}", info.title);
            let kind = StrategyKind::from_name(info.name).unwrap();
            assert_eq!(kind.name(), info.name);
            assert_eq!(kind.parts().1, info.defaults());
        }
        assert_eq!(
            StrategyKind::from_name("pct"),
            Some(StrategyKind::Pct { depth: DEFAULT_DEPTH })
        );
        assert_eq!(
            StrategyKind::from_name("threadbound"),
            Some(StrategyKind::ThreadBound {
                threads: DEFAULT_THREADS,
                preemptions: DEFAULT_DEPTH - 1
            })
        );
        assert_eq!(
            StrategyKind::from_name("systematic"),
            Some(StrategyKind::systematic(2, 2, DEFAULT_THREADS))
        );
        assert_eq!(StrategyKind::from_name("exhaustive"), None);
    }

    #[test]
    fn an_unknown_name_is_named_and_the_valid_ones_listed() {
        let message = StrategyKind::__named("pctt").unwrap_err();
        assert_eq!(
            message.as_str(),
            "unknown strategy \"pctt\"; expected one of: random, uniform, pct, pctvb, \
             threadbound, combined, systematic, pos, portfolio, greybox, surw, reversal, \
             revfuzz"
        );
        let long = "x".repeat(1000);
        let message = StrategyKind::__named(&long).unwrap_err();
        assert!(message.as_str().starts_with("unknown strategy; expected one of: random"));
    }

    #[test]
    fn depth_sets_preemptions_for_strategies_that_count_them() {
        let mut kind = StrategyKind::ThreadBound { threads: 2, preemptions: 1 };
        assert!(kind.set_param(Param::Depth, 4));
        assert!(kind.set_param(Param::Threads, 3));
        assert!(!kind.set_param(Param::Vars, 1));
        assert_eq!(kind, StrategyKind::ThreadBound { threads: 3, preemptions: 3 });
        assert_eq!(kind.depth(), Some(4));
        assert!(!StrategyKind::Random.clone().set_param(Param::Depth, 2));
    }
}
