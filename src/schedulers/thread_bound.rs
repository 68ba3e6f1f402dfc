//! Thread bounding (Bindal, Bansal, Lal, section 4): priority orders drawn as random
//! permutations of thread fragments.

use super::priority::{ChangeDomain, PriorityCore, PriorityScheme};
use super::{Decision, ExecutionStart, ScheduleRng, Strategy, StrategyError};
use crate::runtime::ThreadId;

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
    core: PriorityCore,
}

impl ThreadBound {
    /// Thread bounding for bugs of at most `threads` threads and `preemptions` preemptions.
    pub fn new(threads: u32, preemptions: u32) -> ThreadBound {
        let core = PriorityCore::new(PriorityScheme::Permutation, ChangeDomain::Steps, preemptions);
        ThreadBound { threads, preemptions, core }
    }
}

impl Strategy for ThreadBound {
    fn describe(&self) -> String {
        format!("threadbound(t={},c={})", self.threads, self.preemptions)
    }

    fn begin_execution(&mut self, start: &ExecutionStart<'_>, rng: &mut ScheduleRng) {
        self.core.begin(start, rng);
    }

    #[inline]
    fn choose(
        &mut self,
        decision: &Decision<'_>,
        _rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError> {
        Ok(self.core.choose(decision))
    }
}
