//! The combined strategy of the paper's randomized RankChecker (section 5): PCTVB's variable
//! choice and change points with thread bounding's priority orders.

use super::priority::{ChangeDomain, Prioritized, PriorityRules, PriorityScheme};
use super::registry::{Param, ParamSpec, StrategyInfo};
use super::registry::{DEFAULT_DEPTH, DEFAULT_THREADS, DEFAULT_VARS};
use crate::guarantee::BoundKind;

/// PCTVB's variables and change points with thread bounding's priorities: bugs of depth
/// `depth` on at most `vars` variables involving at most `threads` threads.
///
/// Each execution chooses `v` of the `Q` shared variables uniformly, draws a uniformly random
/// permutation `P` of `1..=n+c` (`c = d-1`; thread `i` starts at `P_i`), and draws `c` change
/// points uniformly from `S = {(q, j): q chosen, j in [1, k_q]}`; at the `i`-th one the running
/// thread's priority becomes `P_{n+i}`. Scheduling is strict priority.
///
/// This is the strategy `#[pctvb::test(depth = .., vars = ..)]` uses, because its bound
/// ([`crate::guarantee::combined_bound`]: `1/C(Q,v) * 1/K_v^(d-1) * 1/(t+d-1)!`) is the best
/// of the four for the bugs that matter in practice: it does not shrink with the number of
/// threads `n` (thread bounding replaces PCT's `1/n`), and its change points range over the
/// accesses of the chosen variables only (`K_v`, usually far below the total step count `k`),
/// while almost all real bugs have `c <= 2`, `v <= 2` and `t = 2` (paper, section 6).
#[derive(Clone, Debug)]
pub struct Combined {
    depth: u32,
    vars: u32,
    threads: u32,
}

impl Combined {
    /// The combined strategy for bugs of depth `depth` (at least 1) on at most `vars` variables
    /// and at most `threads` threads.
    pub fn new(depth: u32, vars: u32, threads: u32) -> Combined {
        Combined { depth: depth.max(1), vars, threads }
    }
}

impl PriorityRules for Combined {
    fn describe(&self) -> String {
        format!("combined(d={},v={},t={})", self.depth, self.vars, self.threads)
    }

    fn scheme(&self) -> PriorityScheme {
        PriorityScheme::Permutation
    }

    fn domain(&self) -> ChangeDomain {
        ChangeDomain::Accesses { vars: self.vars }
    }

    fn change_points(&self) -> u32 {
        self.depth - 1
    }
}

/// `strategy = "combined"`: depth [`DEFAULT_DEPTH`] on [`DEFAULT_VARS`] variables and
/// [`DEFAULT_THREADS`] threads, the combined bound.
pub(crate) const INFO: StrategyInfo = StrategyInfo {
    name: "combined",
    title: "the combined strategy",
    params: &[
        ParamSpec { param: Param::Depth, default: DEFAULT_DEPTH },
        ParamSpec { param: Param::Vars, default: DEFAULT_VARS },
        ParamSpec { param: Param::Threads, default: DEFAULT_THREADS },
    ],
    bound: Some(BoundKind::Combined),
    priority: true,
    learns_from_execution_0: false,
    parallel: false,
    build: |p| Prioritized::boxed(Combined::new(p.depth, p.vars, p.threads)),
};
