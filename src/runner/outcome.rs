//! Turning an execution's outcome into a report: failures with replay tokens, the replay of
//! one token, and empty reports.

use std::panic::Location;

use super::Config;
use crate::replay::{self, ReplayToken};
use crate::report::{self, Failure, FailureKind, Report, Stats};
use crate::runtime::{Execution, StackPool};
use crate::schedulers::Replay;

impl Config {
    pub(super) fn replay_one(
        &self,
        token: ReplayToken,
        encoded: String,
        body: &dyn Fn(),
        at: &'static Location<'static>,
    ) -> Report {
        let strategy =
            Box::new(Replay::new(token.choices.clone(), token.digest, token.strategy.clone()));
        let exec = Execution::new(strategy, self.limits());
        let mut pool = StackPool::new(self.stack_size);
        let mut report = self.empty_report(exec.describe_strategy(), token.seed, 1);
        report.replayed = true;
        let outcome = exec.run_one(&mut pool, token.seed, token.execution, body, at);
        report.executions = 1;
        report.stats.max_threads = outcome.threads;
        report.stats.max_steps = outcome.steps;
        report.stats.distinct_schedules = 1;
        if let Some(cause) = outcome.failure {
            report.failures = 1;
            let mut failure =
                self.failure(&exec, &cause, token.seed, token.execution, outcome.digest);
            // Keep the token the user passed: it is the one that reproduces this execution.
            failure.replay_command = Some(self.replay_line(encoded.trim()));
            failure.token = Some(encoded);
            report.failure = Some(failure);
        }
        report.stats.variables = exec.var_report();
        report
    }

    pub(super) fn failure(
        &self,
        exec: &Execution,
        cause: &crate::runtime::FailureCause,
        seed: u64,
        index: u64,
        digest: u64,
    ) -> Failure {
        let (kind, message, thread, location) = report::explain(cause);
        let (choices, trace) = exec.take_schedule();
        let schedule = report::schedule_steps(&trace, |o| exec.describe_object(o));
        let preemptions = schedule.iter().filter(|s| s.preempted).count();
        let reproducible = !matches!(kind, FailureKind::ReplayDiverged | FailureKind::Internal);
        let token = reproducible.then(|| {
            replay::encode(&ReplayToken {
                test: self.name.clone().unwrap_or_default(),
                strategy: exec.describe_strategy(),
                seed,
                execution: index,
                choices,
                digest,
            })
        });
        let replay_command = token.as_deref().map(|t| self.replay_line(t));
        Failure {
            kind,
            execution: index,
            thread,
            message,
            location,
            token,
            replay_command,
            schedule,
            preemptions,
        }
    }

    pub(super) fn empty_report(&self, strategy: String, seed: u64, planned: u64) -> Report {
        Report {
            name: self.name.clone(),
            strategy,
            seed,
            executions: 0,
            planned,
            failure: None,
            stats: Stats::default(),
            elapsed: Default::default(),
            replayed: false,
            failures: 0,
            profile: None,
            bound: None,
            guarantee: None,
        }
    }

    pub(super) fn error_report(&self, kind: FailureKind, message: String) -> Report {
        let mut report = self.empty_report(String::new(), 0, 0);
        report.failure = Some(Failure {
            kind,
            execution: 0,
            thread: None,
            message,
            location: None,
            token: None,
            replay_command: None,
            schedule: Vec::new(),
            preemptions: 0,
        });
        report
    }
}
