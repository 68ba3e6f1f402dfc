//! Strategies by name and parameters, and what each needs from the guarantee maths.

use super::config::{DEFAULT_DEPTH, DEFAULT_THREADS, DEFAULT_VARS};
use crate::guarantee;
use crate::schedulers::{Combined, Pct, Pctvb, Random, Strategy, ThreadBound};

/// Which scheduling strategy a run uses.
///
/// Every strategy but `Random` is a priority strategy with a computed guarantee: the runner
/// first makes [`Config::profile_runs`](super::Config::profile_runs) profiling executions to measure the counts its bound
/// needs (see [`crate::guarantee`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StrategyKind {
    /// Uniform random choice among runnable threads at every scheduling point; no guarantee.
    Random,
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
}

impl StrategyKind {
    pub(super) fn build(&self) -> Box<dyn Strategy> {
        match *self {
            StrategyKind::Random => Box::new(Random),
            StrategyKind::Pct { depth } => Box::new(Pct::new(depth)),
            StrategyKind::Pctvb { depth, vars } => Box::new(Pctvb::new(depth, vars)),
            StrategyKind::ThreadBound { threads, preemptions } => {
                Box::new(ThreadBound::new(threads, preemptions))
            }
            StrategyKind::Combined { depth, vars, threads } => {
                Box::new(Combined::new(depth, vars, threads))
            }
        }
    }

    /// The strategy's name in the `strategy = "..."` attribute argument.
    pub fn name(&self) -> &'static str {
        match self {
            StrategyKind::Random => "random",
            StrategyKind::Pct { .. } => "pct",
            StrategyKind::Pctvb { .. } => "pctvb",
            StrategyKind::ThreadBound { .. } => "threadbound",
            StrategyKind::Combined { .. } => "combined",
        }
    }

    /// The strategy of this name with default parameters ([`DEFAULT_DEPTH`], [`DEFAULT_VARS`],
    /// [`DEFAULT_THREADS`]), or `None` for an unknown name.
    pub fn from_name(name: &str) -> Option<StrategyKind> {
        let (depth, vars, threads) = (DEFAULT_DEPTH, DEFAULT_VARS, DEFAULT_THREADS);
        Some(match name {
            "random" => StrategyKind::Random,
            "pct" => StrategyKind::Pct { depth },
            "pctvb" => StrategyKind::Pctvb { depth, vars },
            "threadbound" => StrategyKind::ThreadBound { threads, preemptions: depth - 1 },
            "combined" => StrategyKind::Combined { depth, vars, threads },
            _ => return None,
        })
    }

    /// The bug depth `d` the strategy searches for (`None` for random).
    pub(super) fn depth(&self) -> Option<u32> {
        match *self {
            StrategyKind::Random => None,
            StrategyKind::Pct { depth }
            | StrategyKind::Pctvb { depth, .. }
            | StrategyKind::Combined { depth, .. } => Some(depth),
            StrategyKind::ThreadBound { preemptions, .. } => Some(preemptions + 1),
        }
    }

    /// Whether change points are placed on variable accesses (the counts that matter are then
    /// the shared variables and their `k_q`, otherwise `k`).
    pub(super) fn bounds_variables(&self) -> bool {
        matches!(self, StrategyKind::Pctvb { .. } | StrategyKind::Combined { .. })
    }

    pub(super) fn guarantee_kind(&self) -> guarantee::Strategy {
        match self {
            StrategyKind::Random => guarantee::Strategy::Random,
            StrategyKind::Pct { .. } => guarantee::Strategy::Pct,
            StrategyKind::Pctvb { .. } => guarantee::Strategy::Pctvb,
            StrategyKind::ThreadBound { .. } => guarantee::Strategy::ThreadBound,
            StrategyKind::Combined { .. } => guarantee::Strategy::Combined,
        }
    }

    /// `(v, t)` as requested (0 where the strategy has no such bound).
    pub(super) fn vars_threads(&self) -> (u32, u32) {
        match *self {
            StrategyKind::Pctvb { vars, .. } => (vars, 0),
            StrategyKind::ThreadBound { threads, .. } => (0, threads),
            StrategyKind::Combined { vars, threads, .. } => (vars, threads),
            _ => (0, 0),
        }
    }
}
