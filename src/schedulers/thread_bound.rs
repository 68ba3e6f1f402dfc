//! Thread bounding (Bindal, Bansal, Lal, section 4): priority orders drawn as random
//! permutations of thread fragments.

use super::priority::{ChangeDomain, Prioritized, PriorityRules, PriorityScheme};
use super::registry::{Param, ParamSpec, StrategyInfo};
use super::registry::{DEFAULT_DEPTH, DEFAULT_THREADS};
use crate::guarantee::BoundKind;

/// Thread bounding for bugs involving at most `threads` threads and `preemptions` preemptive
/// context switches (`c`; depth `d = c + 1`).
///
/// At the start of each execution (`n` and `k` measured as for [`super::Pct`]) a uniformly
/// random permutation `P` of `1..=n+c` is drawn; thread `i` starts with priority `P_i`.
/// `c` change points are drawn uniformly and independently from the steps `[1, k]`, as in PCT
/// (there is no variable bound here; [`super::Combined`] places them on variables); at the
/// `i`-th one the running thread's priority becomes `P_{n+i}`, i.e. the preempted thread
/// becomes a new "thread fragment" with a random place in the order. Scheduling is strict
/// priority. Any `t + c` of the `n + c` fragments are in each relative order with probability
/// `1/(t+c)!` (the premise of Lemma 4.1), which gives [`crate::guarantee::thread_bound`]:
/// `1/(t+c)! * 1/k^c`, independent of `n`.
#[derive(Clone, Debug)]
pub struct ThreadBound {
    threads: u32,
    preemptions: u32,
}

impl ThreadBound {
    /// Thread bounding for bugs of at most `threads` threads and `preemptions` preemptions.
    pub fn new(threads: u32, preemptions: u32) -> ThreadBound {
        ThreadBound { threads, preemptions }
    }
}

impl PriorityRules for ThreadBound {
    fn describe(&self) -> String {
        format!("threadbound(t={},c={})", self.threads, self.preemptions)
    }

    fn scheme(&self) -> PriorityScheme {
        PriorityScheme::Permutation
    }

    fn domain(&self) -> ChangeDomain {
        ChangeDomain::Steps
    }

    fn change_points(&self) -> u32 {
        self.preemptions
    }
}

/// `strategy = "threadbound"`: [`DEFAULT_THREADS`] threads and `DEFAULT_DEPTH - 1`
/// preemptions, the thread-bounding bound.
pub(crate) const INFO: StrategyInfo = StrategyInfo {
    name: "threadbound",
    title: "thread bounding",
    params: &[
        ParamSpec { param: Param::Threads, default: DEFAULT_THREADS },
        ParamSpec { param: Param::Preemptions, default: DEFAULT_DEPTH - 1 },
    ],
    bound: Some(BoundKind::ThreadBound),
    priority: true,
    learns_from_execution_0: false,
    parallel: false,
    build: |p| Prioritized::boxed(ThreadBound::new(p.threads, p.preemptions)),
};
