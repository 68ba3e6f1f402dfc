//! Strategies by name and parameters, and what each needs from the guarantee maths.

use super::config::{DEFAULT_DEPTH, DEFAULT_THREADS, DEFAULT_VARS};
use crate::guarantee;
use crate::schedulers::{
    Combined, Pct, Pctvb, Random, Strategy, Systematic, SystematicParams, ThreadBound, UniformWalk,
    DEFAULT_ORDER_EPS,
};

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
    Random,
    /// The uniform random walk ([`crate::schedulers::UniformWalk`]): a random choice weighted
    /// by each runnable thread's estimated remaining scheduling points, learnt from the run's
    /// first execution, so interleavings are sampled nearly uniformly; no guarantee, no
    /// parameters; its executions run on every core like the random strategy's.
    UniformWalk,
    /// PCT for bugs of depth `depth` ([`crate::schedulers::Pct`]).
    Pct {
        /// Bug depth `d` (`d - 1` change points), at least 1.
        depth: u32,
    },
    /// PCT with variable bounding ([`crate::schedulers::Pctvb`]).
    Pctvb {
        /// Bug depth `d`, at least 1.
        depth: u32,
        /// Variables `v` the change points are placed on.
        vars: u32,
    },
    /// Thread bounding with step change points ([`crate::schedulers::ThreadBound`]).
    ThreadBound {
        /// Threads `t` involved in the bug.
        threads: u32,
        /// Preemptions `c` (depth `c + 1`).
        preemptions: u32,
    },
    /// Variable bounding with thread-bounding priorities ([`crate::schedulers::Combined`]),
    /// the default when a depth, variable or thread bound or a confidence is given.
    Combined {
        /// Bug depth `d`, at least 1.
        depth: u32,
        /// Variables `v` the change points are placed on.
        vars: u32,
        /// Threads `t` involved in the bug.
        threads: u32,
    },
    /// Systematic search ([`crate::schedulers::Systematic`], the paper's Algorithm 1): every
    /// schedule with at most `preemptions` preemptions at accesses to any `vars` shared
    /// variables, for the priority orders of `threads` threads, level by level, with
    /// happens-before pruning; the report says which `(v, t, c)` levels were exhausted
    /// ([`crate::report::SystematicReport`]). [`Config::iterations`](super::Config::iterations)
    /// caps the executions; [`Config::confidence`](super::Config::confidence) sets `1 - eps`
    /// for randomized thread-bounding orders (and lifts the cap).
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
    },
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

    pub(super) fn build(&self) -> Box<dyn Strategy> {
        match *self {
            StrategyKind::Random => Box::new(Random),
            StrategyKind::UniformWalk => Box::new(UniformWalk::new()),
            StrategyKind::Pct { depth } => Box::new(Pct::new(depth)),
            StrategyKind::Pctvb { depth, vars } => Box::new(Pctvb::new(depth, vars)),
            StrategyKind::ThreadBound { threads, preemptions } => {
                Box::new(ThreadBound::new(threads, preemptions))
            }
            StrategyKind::Combined { depth, vars, threads } => {
                Box::new(Combined::new(depth, vars, threads))
            }
            StrategyKind::Systematic { preemptions, vars, threads, hb_pruning, .. } => {
                Box::new(Systematic::new(SystematicParams {
                    preemptions,
                    vars,
                    threads,
                    hb_pruning,
                    eps: DEFAULT_ORDER_EPS,
                }))
            }
        }
    }

    /// The strategy's name in the `strategy = "..."` attribute argument.
    pub fn name(&self) -> &'static str {
        match self {
            StrategyKind::Random => "random",
            StrategyKind::UniformWalk => "uniform",
            StrategyKind::Pct { .. } => "pct",
            StrategyKind::Pctvb { .. } => "pctvb",
            StrategyKind::ThreadBound { .. } => "threadbound",
            StrategyKind::Combined { .. } => "combined",
            StrategyKind::Systematic { .. } => "systematic",
        }
    }

    /// The strategy of this name with default parameters ([`DEFAULT_DEPTH`], [`DEFAULT_VARS`],
    /// [`DEFAULT_THREADS`]), or `None` for an unknown name.
    pub fn from_name(name: &str) -> Option<StrategyKind> {
        let (depth, vars, threads) = (DEFAULT_DEPTH, DEFAULT_VARS, DEFAULT_THREADS);
        Some(match name {
            "random" => StrategyKind::Random,
            "uniform" => StrategyKind::UniformWalk,
            "pct" => StrategyKind::Pct { depth },
            "pctvb" => StrategyKind::Pctvb { depth, vars },
            "threadbound" => StrategyKind::ThreadBound { threads, preemptions: depth - 1 },
            "combined" => StrategyKind::Combined { depth, vars, threads },
            "systematic" => StrategyKind::systematic(2, 2, threads),
            _ => return None,
        })
    }

    /// Whether this is a priority strategy with a computed guarantee, which the runner
    /// profiles first and plans with its bound; false for [`StrategyKind::Random`] and
    /// [`StrategyKind::UniformWalk`], which have neither a bound nor profiling executions.
    pub fn is_priority(&self) -> bool {
        !matches!(self, StrategyKind::Random | StrategyKind::UniformWalk)
    }

    /// Whether every execution after the first depends only on execution 0 (the uniform walk
    /// learns its estimates there), so every run, shard and parallel worker runs execution 0
    /// first.
    pub(super) fn learns_from_execution_0(&self) -> bool {
        matches!(self, StrategyKind::UniformWalk)
    }

    /// The bug depth `d` the strategy searches for (`None` for the random strategies).
    pub(super) fn depth(&self) -> Option<u32> {
        match *self {
            StrategyKind::Random | StrategyKind::UniformWalk => None,
            StrategyKind::Pct { depth }
            | StrategyKind::Pctvb { depth, .. }
            | StrategyKind::Combined { depth, .. } => Some(depth),
            StrategyKind::ThreadBound { preemptions, .. }
            | StrategyKind::Systematic { preemptions, .. } => Some(preemptions + 1),
        }
    }

    /// Whether change points are placed on variable accesses (the counts that matter are then
    /// the shared variables and their `k_q`, otherwise `k`).
    pub(super) fn bounds_variables(&self) -> bool {
        matches!(self, StrategyKind::Pctvb { .. } | StrategyKind::Combined { .. })
    }

    pub(super) fn guarantee_kind(&self) -> guarantee::BoundKind {
        match self {
            // Both random walks: no bound.
            StrategyKind::Random | StrategyKind::UniformWalk => guarantee::BoundKind::Random,
            StrategyKind::Pct { .. } => guarantee::BoundKind::Pct,
            StrategyKind::Pctvb { .. } => guarantee::BoundKind::Pctvb,
            StrategyKind::ThreadBound { .. } => guarantee::BoundKind::ThreadBound,
            StrategyKind::Combined { .. } => guarantee::BoundKind::Combined,
            // Not used: the systematic search runs its own loop and states its own coverage.
            StrategyKind::Systematic { .. } => guarantee::BoundKind::Combined,
        }
    }

    /// `(v, t)` as requested (0 where the strategy has no such bound).
    pub(super) fn vars_threads(&self) -> (u32, u32) {
        match *self {
            StrategyKind::Pctvb { vars, .. } => (vars, 0),
            StrategyKind::ThreadBound { threads, .. } => (0, threads),
            StrategyKind::Combined { vars, threads, .. }
            | StrategyKind::Systematic { vars, threads, .. } => (vars, threads),
            _ => (0, 0),
        }
    }
}
