//! The uniform random scheduler: the baseline every other strategy is measured against.

use rand::RngExt;

use super::registry::StrategyInfo;
use super::{Decision, ScheduleRng, Strategy, StrategyError};
use crate::runtime::ThreadId;

/// Picks uniformly among the enabled threads at every scheduling point. It has no useful
/// probability guarantee for deep bugs, which is why the priority strategies exist.
#[derive(Clone, Debug, Default)]
pub struct Random;

impl Strategy for Random {
    fn describe(&self) -> String {
        "random".to_string()
    }

    /// A point with no choice changes nothing here (`choose` draws only among two or more).
    fn skips_forced(&self) -> bool {
        true
    }

    #[inline]
    fn choose(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError> {
        let enabled = decision.enabled;
        if enabled.len() == 1 {
            return Ok(enabled[0]);
        }
        Ok(enabled[rng.random_range(0..enabled.len())])
    }
}

/// `strategy = "random"`: no parameters, no bound, executions in parallel.
pub(crate) const INFO: StrategyInfo = StrategyInfo {
    name: "random",
    title: "the naive random walk",
    params: &[],
    bound: None,
    priority: false,
    learns_from_execution_0: false,
    parallel: true,
    build: |_| Box::new(Random),
};
