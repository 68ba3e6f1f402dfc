//! The combined strategy of the paper's randomized RankChecker (section 5): PCTVB's variable
//! choice and change points with thread bounding's priority orders.

use super::priority::{ChangeDomain, PriorityCore, PriorityScheme};
use super::{Decision, ExecutionStart, ScheduleRng, Strategy, StrategyError};
use crate::runtime::ThreadId;
use crate::vars::VarId;

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
    core: PriorityCore,
}

impl Combined {
    /// The combined strategy for bugs of depth `depth` (at least 1) on at most `vars` variables
    /// and at most `threads` threads.
    pub fn new(depth: u32, vars: u32, threads: u32) -> Combined {
        let depth = depth.max(1);
        let core = PriorityCore::new(
            PriorityScheme::Permutation,
            ChangeDomain::Accesses { vars },
            depth - 1,
        );
        Combined { depth, vars, threads, core }
    }

    /// The variables chosen for the current execution.
    pub fn chosen_vars(&self) -> &[VarId] {
        self.core.chosen_vars()
    }
}

impl Strategy for Combined {
    fn describe(&self) -> String {
        format!("combined(d={},v={},t={})", self.depth, self.vars, self.threads)
    }

    fn chosen_variables(&self) -> &[VarId] {
        self.core.chosen_vars()
    }

    fn bounds_variables(&self) -> bool {
        true
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
