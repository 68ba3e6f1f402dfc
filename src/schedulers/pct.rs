//! PCT (Burckhardt, Kothari, Musuvathi, Nagarakatte: "A Randomized Scheduler with
//! Probabilistic Guarantees of Finding Bugs", ASPLOS 2010).

use super::priority::{ChangeDomain, Prioritized, PriorityRules, PriorityScheme};
use super::registry::DEFAULT_DEPTH;
use super::registry::{Param, ParamSpec, StrategyInfo};
use crate::guarantee::BoundKind;

/// PCT with bug depth `d`, faithful to the paper.
///
/// At the start of each execution, with `n` the most threads and `k` the most scheduling
/// points any earlier execution of the run had (the profiling executions measure them first):
///
/// 1. threads `0..n` get a uniformly random permutation of the priorities `d..d+n-1`;
/// 2. `d-1` change points are drawn uniformly and independently from `[1, k]`;
/// 3. at every scheduling point the enabled thread with the highest priority runs; when the
///    execution reaches the step of the `i`-th change point, the running thread's priority
///    becomes `i`, below every initial priority.
///
/// This exposes every bug of depth `d` with probability at least `1/(n k^(d-1))`
/// ([`crate::guarantee::pct_bound`]) as long as the execution has at most `n` threads and `k`
/// scheduling points. A thread beyond the `n`-th gets a priority below all others (the runner
/// counts such an execution as one that exceeded the measured counts). A thread that yields
/// is not enabled until another thread makes progress (the runtime's rule for yields), so
/// spin loops terminate without any change of priority outside the algorithm.
#[derive(Clone, Debug)]
pub struct Pct {
    depth: u32,
}

impl Pct {
    /// PCT for bugs of depth `depth` (at least 1; `depth - 1` change points).
    pub fn new(depth: u32) -> Pct {
        Pct { depth: depth.max(1) }
    }
}

impl PriorityRules for Pct {
    fn describe(&self) -> String {
        format!("pct(d={})", self.depth)
    }

    fn scheme(&self) -> PriorityScheme {
        PriorityScheme::Pct
    }

    fn domain(&self) -> ChangeDomain {
        ChangeDomain::Steps
    }

    fn change_points(&self) -> u32 {
        self.depth - 1
    }
}

/// `strategy = "pct"`: depth [`DEFAULT_DEPTH`], PCT's bound.
pub(crate) const INFO: StrategyInfo = StrategyInfo {
    name: "pct",
    title: "PCT",
    params: &[ParamSpec { param: Param::Depth, default: DEFAULT_DEPTH }],
    bound: Some(BoundKind::Pct),
    priority: true,
    learns_from_execution_0: false,
    parallel: false,
    build: |p| Prioritized::boxed(Pct::new(p.depth)),
};
