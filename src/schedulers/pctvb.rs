//! PCTVB: PCT with variable bounding (Bindal, Bansal, Lal: "Variable and Thread Bounding for
//! Systematic Testing of Multithreaded Programs", section 3).

use super::priority::{ChangeDomain, Prioritized, PriorityRules, PriorityScheme};
use super::registry::{Param, ParamSpec, StrategyInfo};
use super::registry::{DEFAULT_DEPTH, DEFAULT_VARS};
use crate::guarantee::BoundKind;

/// PCTVB with bug depth `d` and variable bound `v` (the paper's section 3 algorithm).
///
/// At the start of each execution, with `n` the most threads of any earlier execution and, for
/// each of the `Q` shared variables `q` (accessed by two or more threads in some earlier
/// execution), `k_q` the most accesses to `q` in one execution:
///
/// 0. `v` of the `Q` shared variables are chosen uniformly (all of them when `Q < v`);
/// 1. threads `0..n` get a uniformly random permutation of `d..d+n-1`, as in PCT;
/// 2. `d-1` change points are drawn uniformly and independently from
///    `S = {(q, j): q chosen, j in [1, k_q]}`;
/// 3. strict priority scheduling; when the running thread makes the `j`-th access of the
///    execution to `q` and `(q, j)` is the `i`-th change point, its priority becomes `i`.
///
/// Only accesses to the chosen variables carry change points; every other operation
/// (synchronization included) is still a scheduling point, where the highest-priority enabled
/// thread runs, so blocking and waking behave as under PCT. The bound is
/// [`crate::guarantee::pctvb_bound`]: `1/C(Q,v) * 1/(n K_v^(d-1))`.
#[derive(Clone, Debug)]
pub struct Pctvb {
    depth: u32,
    vars: u32,
}

impl Pctvb {
    /// PCTVB for bugs of depth `depth` (at least 1) on at most `vars` variables.
    pub fn new(depth: u32, vars: u32) -> Pctvb {
        Pctvb { depth: depth.max(1), vars }
    }
}

impl PriorityRules for Pctvb {
    fn describe(&self) -> String {
        format!("pctvb(d={},v={})", self.depth, self.vars)
    }

    fn scheme(&self) -> PriorityScheme {
        PriorityScheme::Pct
    }

    fn domain(&self) -> ChangeDomain {
        ChangeDomain::Accesses { vars: self.vars }
    }

    fn change_points(&self) -> u32 {
        self.depth - 1
    }
}

/// `strategy = "pctvb"`: depth [`DEFAULT_DEPTH`] on [`DEFAULT_VARS`] variables, PCTVB's bound.
pub(crate) const INFO: StrategyInfo = StrategyInfo {
    name: "pctvb",
    title: "PCT with variable bounding",
    params: &[
        ParamSpec { param: Param::Depth, default: DEFAULT_DEPTH },
        ParamSpec { param: Param::Vars, default: DEFAULT_VARS },
    ],
    bound: Some(BoundKind::Pctvb),
    priority: true,
    learns_from_execution_0: false,
    parallel: false,
    build: |p| Prioritized::boxed(Pctvb::new(p.depth, p.vars)),
};
