//! The systematic search loop ([`StrategyKind::Systematic`]): profiling, then one execution per
//! work item of the [`crate::schedulers::Systematic`] strategy until a failure, exhaustion of
//! every level, or the budget.

use std::collections::HashSet;
use std::panic::Location;

use super::config::{Budget, PROFILE_INDEX_BASE};
use super::progress::Progress;
use super::{Config, StrategyKind};
use crate::report::{Report, SystematicReport};
use crate::runtime::{real_now, Execution, FailureCause, StackPool};
use crate::schedulers::{Strategy, Systematic, SystematicParams, DEFAULT_ORDER_EPS};

impl Config {
    pub(super) fn systematic(
        &self,
        kind: StrategyKind,
        seed: u64,
        budget: Budget,
        body: &dyn Fn(),
        at: &'static Location<'static>,
    ) -> Report {
        let (eps, max_executions) = match budget {
            Budget::Iterations(n) => (DEFAULT_ORDER_EPS, n),
            Budget::Confidence(c) => (1.0 - c, u64::MAX),
        };
        self.systematic_search(kind, seed, eps, max_executions, body, at)
    }

    /// The search of [`Config::systematic`]: drawn priority orders miss an order with
    /// probability at most `eps`, and at most `max_executions` executions run after profiling
    /// (also the enumeration of a confidence target's class, `enumerate.rs`).
    pub(super) fn systematic_search(
        &self,
        kind: StrategyKind,
        seed: u64,
        eps: f64,
        max_executions: u64,
        body: &dyn Fn(),
        at: &'static Location<'static>,
    ) -> Report {
        let started = real_now();
        let StrategyKind::Systematic { preemptions, vars, threads, hb_pruning, max_time } = kind
        else {
            unreachable!("systematic() runs only the systematic strategy")
        };
        let params = SystematicParams { preemptions, vars, threads, hb_pruning, eps };
        let strategy = Systematic::new(params);
        let engine = strategy.engine();
        let describe = strategy.describe();
        let exec = Execution::new(Box::new(strategy), self.limits());
        let mut pool = StackPool::new(self.stack_size);
        let mut report = self.empty_report(describe, seed, max_executions);
        let mut schedules = HashSet::new();
        // Over `#[pctvb::instrument]`ed code every static variable is tracked, without gating,
        // for the whole search: a work item's execution must have the same scheduling points
        // whichever subset it runs for, or its record could not be reused by other subsets.
        // Each subset still preempts only at its own variables' accesses.
        let session =
            if self.instrument_tracking { crate::instrument::profiling_session() } else { None };
        let failure = |exec: &Execution, cause: &FailureCause, index: u64, digest: u64| {
            let mut f = self.failure(exec, cause, seed, index, digest);
            if session.is_some() {
                self.tag_session(&mut f, None, false);
            }
            f
        };

        // Profiling (random choices): the threads the priority orders order, and the variables
        // that are shared. A failure found here is kept in case the search does not find one.
        let mut profile_failure = None;
        let profile_runs = self.profile_runs.max(1);
        let mut profiled = 0;
        for i in 0..profile_runs {
            let index = PROFILE_INDEX_BASE + i;
            let outcome = exec.run_one(&mut pool, seed, index, body, at);
            profiled += 1;
            report.stats.max_threads = report.stats.max_threads.max(outcome.threads);
            report.stats.max_steps = report.stats.max_steps.max(outcome.steps);
            if let Some(cause) = outcome.failure {
                if let Some(error) = Config::could_not_test(&exec, &cause, index) {
                    report.error = Some(error);
                    return report;
                }
                if profile_failure.is_none() {
                    profile_failure = Some(failure(&exec, &cause, index, outcome.digest));
                }
            } else if !exec.had_choice() {
                // No point had two threads that could run: every execution repeats this one,
                // so further profiling would measure nothing new (the search then runs it once).
                break;
            }
        }
        let n = report.stats.max_threads.max(1);
        engine.borrow_mut().start(n, seed);

        let mut stopped_by = None;
        let mut complete = false;
        let mut found_at = None;
        let mut executions_to_bug = None;
        let mut index = 0u64;
        let mut progress = Progress::new(self.name.as_deref(), self.progress);
        loop {
            if !engine.borrow_mut().advance() {
                match engine.borrow().stop_reason() {
                    Some(reason) => stopped_by = Some(reason.to_string()),
                    None => complete = true,
                }
                break;
            }
            // Budgets are checked once there is work left, so a search that ends exactly at
            // its budget is reported complete.
            let over_time = max_time.filter(|&limit| real_now().duration_since(started) >= limit);
            if index >= max_executions || over_time.is_some() {
                engine.borrow_mut().cancel();
                stopped_by = Some(match over_time {
                    Some(limit) => format!("the time budget of {limit:?} ran out"),
                    None => format!("the budget of {max_executions} executions ran out"),
                });
                break;
            }
            let outcome = exec.run_one(&mut pool, seed, index, body, at);
            report.executions += 1;
            report.stats.max_threads = report.stats.max_threads.max(outcome.threads);
            report.stats.max_steps = report.stats.max_steps.max(outcome.steps);
            schedules.insert(exec.schedule_hash());
            progress.tick(report.executions, max_executions, report.failures);
            if let Some(cause) = outcome.failure {
                if let Some(error) = Config::could_not_test(&exec, &cause, index) {
                    report.error = Some(error);
                    stopped_by = Some("an error: the search could not continue".to_string());
                    break;
                }
                report.failures += 1;
                if report.failure.is_none() {
                    report.failure = Some(failure(&exec, &cause, index, outcome.digest));
                    found_at = engine.borrow().current_level().map(|(v, c)| (v, threads, c));
                    executions_to_bug = Some(index + 1);
                }
                if self.stop_at_first_failure {
                    break;
                }
            }
            index += 1;
        }
        let mut profile_note = None;
        if report.failure.is_none() && report.error.is_none() {
            if let Some(f) = profile_failure {
                report.failures += 1;
                report.failure = Some(f);
                profile_note = Some(
                    "a profiling execution (random schedule) failed, but no schedule within the \
                     searched levels did: the failure reported is the profiling one, and the bug \
                     lies outside the bounds searched (or the search was stopped first)"
                        .to_string(),
                );
            }
        }
        report.stats.distinct_schedules = schedules.len() as u64;
        report.stats.variables = exec.var_report();

        let engine = engine.borrow();
        let mut notes: Vec<String> = engine.notes().to_vec();
        notes.extend(profile_note);
        if report.stats.max_threads > n {
            notes.push(format!(
                "some executions had {} threads, more than the {n} profiling measured; the \
                 extra threads always ran below the ordered ones",
                report.stats.max_threads
            ));
        }
        let systematic = SystematicReport {
            max_preemptions: preemptions,
            max_vars: vars,
            max_threads: threads,
            hb_pruning,
            threads: n,
            variables: engine.variables(),
            orders: engine.orders().cloned(),
            levels: engine.levels().to_vec(),
            found_at,
            executions_to_bug,
            complete: complete && found_at.is_none(),
            stopped_by,
            profile_runs: profiled,
            notes,
        };
        report.notes.push(format!("systematic: {systematic}"));
        report.systematic = Some(systematic);
        report
    }
}
