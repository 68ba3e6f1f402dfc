//! The systematic search loop ([`StrategyKind::Systematic`]): profiling, then one execution per
//! work item of the [`crate::schedulers::Systematic`] strategy until a failure, exhaustion of
//! every level, or the budget. A shard (`PCTVB_SHARD=k/m`) runs the schedules that start from
//! its share of the initial priority orders (`Engine::start`), within its share of an
//! iteration budget, and its statement says so.

use std::collections::HashSet;
use std::panic::Location;

use super::config::{Budget, PROFILE_INDEX_BASE};
use super::outcome::Found;
use super::progress::Progress;
use super::{Config, StrategyKind};
use crate::report::{Report, SearchShard, SystematicReport};
use crate::runtime::{real_now, Execution, FailureCause, StackPool};
use crate::schedulers::{Strategy, Systematic, SystematicParams, DEFAULT_ORDER_EPS};

/// An explorer run between a systematic search's executions (a confidence target's
/// enumeration, `enumerate.rs`): one execution after every `period - 1` of the search's, on
/// the search's engine with the strategies swapped, seeded apart from the run's other
/// explorer executions so none repeats another.
pub(super) struct Interleaved {
    /// The explorer while the search runs (taken while its own execution runs).
    strategy: Option<Box<dyn Strategy>>,
    /// The search's strategy while the explorer runs.
    parked: Option<Box<dyn Strategy>>,
    /// Every how many executions one is the explorer's (at least 2).
    period: u64,
    /// The explorer's seed.
    seed: u64,
    /// The explorer's name, for notes.
    name: &'static str,
    /// Explorer executions run.
    pub(super) ran: u64,
    /// The explorer's execution (from 0) that failed first, when one did.
    pub(super) failed_at: Option<u64>,
    /// The most threads and scheduling points one of its executions had.
    pub(super) max_threads: usize,
    pub(super) max_steps: u64,
}

impl Interleaved {
    pub(super) fn new(explorer: &StrategyKind, period: u64, seed: u64) -> Interleaved {
        debug_assert!(period >= 2, "explore_every(1) is rejected before any search");
        Interleaved {
            strategy: Some(explorer.build()),
            parked: None,
            period,
            seed,
            name: explorer.name(),
            ran: 0,
            failed_at: None,
            max_threads: 0,
            max_steps: 0,
        }
    }

    /// Puts the explorer on `exec` for its next execution, and returns that execution's seed
    /// and index; the explorer stays on (for the failure's report and minimization) until
    /// [`Interleaved::park`].
    fn take_turn(&mut self, exec: &Execution) -> (u64, u64) {
        let explorer = self.strategy.take().expect("the explorer is parked between executions");
        self.parked = Some(exec.replace_strategy(explorer));
        self.ran += 1;
        (self.seed, self.ran - 1)
    }

    /// Gives `exec` back the search's strategy and parks the explorer.
    fn park(&mut self, exec: &Execution) {
        let search = self.parked.take().expect("the search's strategy was parked");
        self.strategy = Some(exec.replace_strategy(search));
    }
}

impl Config {
    pub(super) fn systematic(
        &self,
        kind: StrategyKind,
        seed: u64,
        budget: Budget,
        body: &dyn Fn(),
        at: &'static Location<'static>,
    ) -> Report {
        // A shard runs its share of the search (`Engine::start`) and of an iteration budget,
        // so the shards together run at most the budget.
        let (eps, max_executions) = match budget {
            Budget::Iterations(n) => (DEFAULT_ORDER_EPS, self.shard_share(budget, n)),
            Budget::Confidence(c) => (1.0 - c, u64::MAX),
        };
        self.systematic_search(kind, seed, eps, max_executions, None, body, at)
    }

    /// The search of [`Config::systematic`]: drawn priority orders miss an order with
    /// probability at most `eps`, and at most `max_executions` executions run after profiling
    /// (also the enumeration of a confidence target's class, `enumerate.rs`, which gives it
    /// an explorer to run between the search's executions: `interleave`; a search with one stops
    /// at its first failure, the explorer's included).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn systematic_search(
        &self,
        kind: StrategyKind,
        seed: u64,
        eps: f64,
        max_executions: u64,
        mut interleave: Option<&mut Interleaved>,
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
        // that are shared. A failure found here is kept in case the search does not find one
        // (and minimized if it is reported: a random schedule has many needless preemptions);
        // a search with an explorer between its executions (a confidence target's
        // enumeration, which runs only when the run stops at its first failure) stops at this
        // one, minimized as the explorer's are, since what its user waits for is the bug, not
        // the search's levels.
        debug_assert!(interleave.is_none() || self.stop_at_first_failure);
        let stop_at_profile_failure = interleave.is_some();
        let mut profile_failure = None;
        let mut profile_found = None;
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
                if stop_at_profile_failure {
                    profile_failure = Some(self.minimized_failure(
                        &exec,
                        &mut pool,
                        body,
                        at,
                        &cause,
                        seed,
                        index,
                        outcome.digest,
                        session.is_some(),
                    ));
                    break;
                }
                if profile_found.is_none() {
                    profile_found = Some(Found::capture(&exec, cause, seed, index, outcome.digest));
                }
            } else if !exec.had_choice() {
                // No point had two threads that could run: every execution repeats this one,
                // so further profiling would measure nothing new (the search then runs it once).
                break;
            }
        }
        let n = report.stats.max_threads.max(1);
        // A shard searches from its share of the initial priority orders (a confidence
        // target's enumeration, `interleave`, never runs in a shard).
        debug_assert!(interleave.is_none() || self.shard.is_none());
        engine.borrow_mut().start(n, seed, self.shard);

        let mut stopped_by = None;
        let mut complete = false;
        let mut found_at = None;
        let mut executions_to_bug = None;
        let mut index = 0u64;
        let mut progress = Progress::new(self.name.as_deref(), self.progress);
        loop {
            if stop_at_profile_failure && profile_failure.is_some() {
                stopped_by = Some("a profiling execution failed".to_string());
                break;
            }
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
            // The run's own time budget (`PCTVB_TIME`, `Config::time_budget`, a loom
            // suite's `LOOM_MAX_DURATION`) bounds the search as the strategy's does.
            let over_budget = self.deadline.is_some_and(|d| real_now() >= d);
            if index >= max_executions || over_time.is_some() || over_budget {
                engine.borrow_mut().cancel();
                report.time_budget_spent |= over_budget;
                let run_budget = self.time_budget.unwrap_or_default();
                stopped_by = Some(match over_time {
                    Some(limit) => format!("the time budget of {limit:?} ran out"),
                    None if over_budget => format!(
                        "the time budget of {} ran out",
                        super::watch::duration_text(run_budget)
                    ),
                    None => match self.shard {
                        Some(_) => format!(
                            "the budget of {max_executions} executions (this shard's share) \
                             ran out"
                        ),
                        None => format!("the budget of {max_executions} executions ran out"),
                    },
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
            if let Some(il) = interleave.as_deref_mut() {
                if (index + 1).is_multiple_of(il.period - 1) {
                    let (il_seed, j) = il.take_turn(&exec);
                    let outcome = exec.run_one(&mut pool, il_seed, j, body, at);
                    // Kept apart: the search's own maxima say whether it met more threads
                    // than its profiling saw.
                    il.max_threads = il.max_threads.max(outcome.threads);
                    il.max_steps = il.max_steps.max(outcome.steps);
                    schedules.insert(exec.schedule_hash());
                    let failure = outcome.failure.map(|cause| {
                        match Config::could_not_test(&exec, &cause, j) {
                            Some(error) => Err(error),
                            // A random schedule, long as a rule: minimized as the sampled
                            // search's explorer failures are.
                            None => Ok(self.minimized_failure(
                                &exec,
                                &mut pool,
                                body,
                                at,
                                &cause,
                                il_seed,
                                j,
                                outcome.digest,
                                session.is_some(),
                            )),
                        }
                    });
                    il.park(&exec);
                    // A search with an explorer stops at its first failure (the doc above).
                    match failure {
                        Some(Err(error)) => {
                            report.error = Some(error);
                            stopped_by = Some("an error: the search could not continue".into());
                            break;
                        }
                        Some(Ok(f)) => {
                            report.failures += 1;
                            report.failure = Some(f);
                            il.failed_at = Some(j);
                            stopped_by = Some(format!(
                                "{}, run between its executions, found a bug",
                                il.name
                            ));
                            break;
                        }
                        None => {}
                    }
                }
            }
            index += 1;
        }
        let mut profile_note = None;
        if report.failure.is_none() && report.error.is_none() {
            let profile_failure = profile_failure.or_else(|| {
                let found = profile_found?;
                Some(self.minimized_found(&exec, &mut pool, body, at, found, session.is_some()))
            });
            if let Some(f) = profile_failure {
                report.failures += 1;
                report.failure = Some(f);
                profile_note = Some(match stop_at_profile_failure {
                    true => "a profiling execution (random schedule) failed before the search \
                             began: the failure reported is that one"
                        .to_string(),
                    false => "a profiling execution (random schedule) failed, but no schedule \
                              within the searched levels did: the failure reported is the \
                              profiling one, and the bug lies outside the bounds searched (or \
                              the search was stopped first)"
                        .to_string(),
                });
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
            shard: self.shard.map(|(k, m)| SearchShard {
                index: k,
                count: m,
                orders: engine.own_orders(),
            }),
        };
        report.notes.push(format!("systematic: {systematic}"));
        report.systematic = Some(systematic);
        report
    }
}
