//! Replays a recorded schedule choice by choice, and says exactly where a replay diverges.

use super::{Decision, ScheduleRng, Strategy, StrategyError};
use crate::runtime::ThreadId;

/// Follows the choices of a replay token and checks the run matches the recorded one.
pub(crate) struct Replay {
    choices: Vec<u32>,
    digest: u64,
    original: String,
    next: usize,
    /// Whether this execution already diverged: the first divergence is the one to report.
    diverged: bool,
}

impl Replay {
    pub(crate) fn new(choices: Vec<u32>, digest: u64, original: String) -> Replay {
        Replay { choices, digest, original, next: 0, diverged: false }
    }

    fn diverged(&mut self, detail: String) -> StrategyError {
        self.diverged = true;
        StrategyError::new(format!(
            "replay diverged: {detail}. The program no longer behaves as when the token was \
             recorded: either its code changed, or it depends on nondeterminism pctvb does not \
             control (HashMap iteration order, {}, I/O, real OS threads, thread ids), or on \
             state kept from one execution to the next (a static, a thread-local of the OS \
             thread), or the data-race detector was set otherwise (PCTVB_RACES). Re-run the test \
             without PCTVB_REPLAY to get a fresh token.",
            crate::runtime::UNCONTROLLED_TIME
        ))
    }
}

impl Strategy for Replay {
    fn describe(&self) -> String {
        format!("replay of {}", self.original)
    }

    fn choose(
        &mut self,
        decision: &Decision<'_>,
        _rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError> {
        let Some(&want) = self.choices.get(self.next) else {
            return Err(self.diverged(format!(
                "the recorded execution ended after {} scheduling points, but this one goes on \
                 ({} at step {})",
                self.choices.len(),
                decision.event.kind,
                decision.step
            )));
        };
        self.next += 1;
        let want = ThreadId(want);
        if decision.enabled.contains(&want) {
            Ok(want)
        } else {
            Err(self.diverged(format!(
                "at step {} the recording ran thread {}, which cannot run now (runnable: {:?})",
                decision.step,
                want.index(),
                decision.enabled.iter().map(|t| t.index()).collect::<Vec<_>>()
            )))
        }
    }

    fn begin_execution(&mut self, _: &super::ExecutionStart<'_>, _: &mut ScheduleRng) {
        self.next = 0;
        self.diverged = false;
    }

    fn end_execution(&mut self, digest: u64, steps: u64) -> Result<(), StrategyError> {
        if self.diverged {
            // Already reported where it diverged; the end differs as a consequence.
            return Ok(());
        }
        if self.next != self.choices.len() {
            return Err(self.diverged(format!(
                "the execution ended after {steps} scheduling points, the recording had {}",
                self.choices.len()
            )));
        }
        if digest != self.digest {
            return Err(self.diverged(
                "the same threads ran in the same order but performed different operations"
                    .to_string(),
            ));
        }
        Ok(())
    }
}
