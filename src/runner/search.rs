//! The search: profiling executions, the execution loop, and the counts and bound a priority
//! strategy's guarantee rests on.

use std::io::Write as _;
use std::ops::ControlFlow;
use std::panic::Location;

use super::config::{Budget, DEFAULT_ITERATIONS, PROFILE_INDEX_BASE};
use super::progress::Progress;
use super::watch::{count_text, duration_text, long_plan, DistinctSchedules, LONG_RUN};
use super::{Config, StrategyKind};
use crate::error::Error;
use crate::guarantee::{self, BoundFactors, BoundParams, GuaranteeError, GuaranteeStatement};
use crate::instrument::{Selection, StaticVarId, Tracking};
use crate::replay;
use crate::report::{Failure, Profile, Report, Stats};
use crate::runtime::{real_now, Execution, FailureCause, StackPool};
use crate::schedulers::{Random, Strategy};

/// Runs shorter than this stay on one OS thread.
const PARALLEL_MIN_EXECUTIONS: u64 = 256;

impl Config {
    /// Runs the search `kind` asks for, on the engine that suits it: the random walks'
    /// executions do not depend on one another and can spread over OS threads; the
    /// systematic search has its own loop over levels; every other search (and a short or
    /// counting walk) runs on this OS thread.
    pub(super) fn search(
        &self,
        kind: StrategyKind,
        seed: u64,
        budget: Budget,
        body: &(dyn Fn() + Sync),
        at: &'static Location<'static>,
    ) -> Report {
        if let Some(iterations) = self.parallel_plan(&kind, budget) {
            // Execution 0 first, on this OS thread, as the serial search: when it fails,
            // cannot test, or offers no choice (one schedule: a model with one thread, as
            // many of a loom suite's are), the run ends with it, and starting worker threads
            // would cost more than the run. Otherwise the worker count is asked, and with more
            // than one worker the serial search hands the run over to them (they run
            // execution 0 again: the walk learns from it); with one, it goes on from
            // execution 1, as a run with `workers(1)` does.
            let workers = if self.shard.is_none() {
                match self.search_serial(kind.clone(), seed, budget, body, at, true) {
                    SerialEnd::Done(report) => return *report,
                    SerialEnd::HandOver { workers } => workers,
                }
            } else {
                self.resolved_workers()
            };
            if workers > 1 {
                return self.search_parallel(&kind, seed, iterations, workers, body, at);
            }
        }
        if let StrategyKind::Systematic { .. } = kind {
            return self.systematic(kind, seed, budget, body, at);
        }
        match self.search_serial(kind, seed, budget, body, at, false) {
            SerialEnd::Done(report) => *report,
            SerialEnd::HandOver { .. } => unreachable!("a serial search asked not to hand over"),
        }
    }

    /// The worker count of a run that may go parallel. Asked only once execution 0 ran and
    /// the run goes on (but for a shard): a run that ends with execution 0 never needs it
    /// (see `default_workers`).
    fn resolved_workers(&self) -> usize {
        self.workers.unwrap_or_else(super::default_workers)
    }

    /// The executions of a search that may run in parallel (on more than one worker, which
    /// [`Config::search`] asks after execution 0), or `None` when it stays on this thread. Only
    /// the random walks run in parallel (a priority strategy's draws depend on the counts of
    /// earlier executions), only for an iteration budget, only when the run stops at its first
    /// failure (a counting run reports every failure, in order), and only for many executions:
    /// starting the threads costs tens of microseconds.
    fn parallel_plan(&self, kind: &StrategyKind, budget: Budget) -> Option<u64> {
        match budget {
            Budget::Iterations(n)
                if kind.runs_in_parallel()
                    && self.workers != Some(1)
                    && self.stop_at_first_failure
                    && n >= PARALLEL_MIN_EXECUTIONS =>
            {
                Some(n)
            }
            _ => None,
        }
    }

    /// A search on this OS thread, with one engine whose strategy persists across
    /// executions. A priority strategy first profiles (see [`Config::profile`]), then
    /// searches with the counts profiling measured; other strategies search at once. With
    /// `may_hand_over` (a run [`Config::parallel_plan`] allows on workers), once execution 0
    /// passed with a choice the worker count is asked: more than one ends this search
    /// ([`SerialEnd::HandOver`]), one lets it go on.
    fn search_serial(
        &self,
        kind: StrategyKind,
        seed: u64,
        budget: Budget,
        body: &(dyn Fn() + Sync),
        at: &'static Location<'static>,
        may_hand_over: bool,
    ) -> SerialEnd {
        let priority = kind.is_priority();
        // Variable bounding over `#[pctvb::instrument]`ed code tracks the chosen variables.
        let instrumented = priority && kind.bounds_variables() && self.instrument_tracking;
        // The other priority strategies (PCT, thread bounding) track every variable, without
        // gating, for the whole run, as the systematic search does: their bound counts every
        // scheduling point, so the instrumented accesses must be points in every execution,
        // or a bug among them would be outside every execution the bound speaks of (PCT and
        // thread bounding passed with a guarantee over a raw-pointer lost update they could
        // never interleave). `None` when the user's own session or no instrumented code.
        let _tracks_all = (priority && !kind.bounds_variables() && self.instrument_tracking)
            .then(crate::instrument::profiling_session)
            .flatten();
        // Every `explore_every`-th search execution runs the explorer, which also profiles.
        let explore_every = if priority { self.explore_period() } else { 0 };
        let mut serial = Serial {
            exec: self.first_execution(&kind, explore_every, budget),
            pool: StackPool::new(self.stack_size),
            body,
            at,
            seed,
        };
        let planned = match budget {
            Budget::Iterations(n) => n,
            Budget::Confidence(_) => 0,
        };
        // The explorer by the name `strategy = "..."` takes, so the description says what ran.
        let describe = match explore_every {
            0 => kind.build().describe(),
            m => format!("{} + {} 1 in {m}", kind.build().describe(), self.explorer_kind().name()),
        };
        let mut report = self.empty_report(describe, seed, planned);
        let mut search = Search {
            kind: &kind,
            budget,
            profile: None,
            counts: Counts::default(),
            static_only: Vec::new(),
            explore_every,
            explorer: self.explorer_kind().title(),
            explorations: 0,
            explore_raises: 0,
            may_hand_over,
            handed_over: None,
            tracks_all: _tracks_all.is_some(),
        };
        // The explorer while the priority strategy runs, and the other way round.
        let mut parked: Option<Box<dyn Strategy>> = None;
        if priority {
            if self.profile(&mut serial, &mut search, &mut report, instrumented).is_break() {
                return SerialEnd::Done(Box::new(report));
            }
            if let Some(done) = self.enumerate_class(&kind, seed, budget, &mut report, body, at) {
                return SerialEnd::Done(Box::new(done));
            }
            parked = start_strategy(&serial.exec, &kind, explore_every);
        }
        let searched = self.search_executions(
            &mut serial,
            &mut search,
            &mut parked,
            &mut report,
            instrumented,
        );
        if let Some(workers) = search.handed_over {
            return SerialEnd::HandOver { workers };
        }
        if searched.is_break() {
            return SerialEnd::Done(Box::new(report));
        }
        report.stats.variables = serial.exec.var_report();
        search.finish(&mut report);
        // What the strategies did over the run (the portfolio's executions per arm), asked of
        // the engine's strategy and of the parked one, as the run ends.
        let last = serial.exec.replace_strategy(Box::new(Random));
        for strategy in [Some(last), parked].into_iter().flatten() {
            report.notes.extend(strategy.summary());
        }
        SerialEnd::Done(Box::new(report))
    }

    /// The engine a serial search starts with. A priority strategy profiles first, under a
    /// random strategy (the explorer when the run explores, naive random otherwise), which
    /// [`start_strategy`] replaces after profiling; other strategies start as themselves.
    fn first_execution(
        &self,
        kind: &StrategyKind,
        explore_every: u64,
        budget: Budget,
    ) -> Execution {
        let priority = kind.is_priority();
        let mut first: Box<dyn Strategy> = match (priority, explore_every) {
            (false, _) => kind.build(),
            (true, 0) => Box::new(Random),
            (true, _) => self.explorer_kind().build(),
        };
        // A number of executions bounds the strategy's search executions: all of them, or the
        // explorer's share, at most one in `explore_every` (`explores`). A confidence target's
        // plan may grow, so it tells nothing. The profiling executions the explorer runs first
        // do not count (`ExecutionStart::profiling`).
        if let Budget::Iterations(n) = budget {
            match (priority, explore_every) {
                (false, _) => first.runs_at_most(n),
                (true, 0) => {}
                (true, every) => first.runs_at_most(n / every),
            }
        }
        let exec = Execution::new(first, self.limits());
        if priority {
            // One registry: the static pass's variables enter the run's table first, so the
            // report lists those no execution met beside those profiling measured.
            for info in crate::instrument::static_var_infos() {
                exec.intern_var(info.site, info.kind);
            }
        }
        exec
    }

    /// Profiling, before a priority strategy's search: `profile_runs` executions of a random
    /// walk measure the counts (threads, scheduling points, accesses and sharing of every
    /// variable) the strategy draws with and its bound rests on, then the search is planned
    /// from them ([`Search::plan`]). Over `#[pctvb::instrument]`ed code (`instrumented`) the
    /// executions track every variable, and the variables of the items they entered that none
    /// of them accessed still count in `Q`.
    ///
    /// Breaks when the run ends here, its report complete: a profiling execution failed
    /// (when the run stops at its first failure; a counting run ignores profiling failures)
    /// or could not test, or the confidence target is unreachable.
    fn profile(
        &self,
        serial: &mut Serial<'_>,
        search: &mut Search<'_>,
        report: &mut Report,
        instrumented: bool,
    ) -> ControlFlow<()> {
        let Serial { exec, pool, body, at, seed } = serial;
        let (body, at, seed) = (*body, *at, *seed);
        let mut profiling =
            if instrumented { crate::instrument::profiling_session() } else { None };
        for i in 0..self.profile_runs {
            let index = PROFILE_INDEX_BASE + i;
            // Profiling runs the explorer's first executions (or naive random ones).
            exec.set_ordinal(i, true);
            let outcome = exec.run_one(pool, seed, index, body, at);
            record_size(&mut report.stats, outcome.threads, outcome.steps);
            if let Some(cause) = outcome.failure {
                if let Some(error) = Config::could_not_test(exec, &cause, index) {
                    report.error = Some(error);
                    report.stats.variables = exec.var_report();
                    return ControlFlow::Break(());
                }
                if self.stop_at_first_failure {
                    report.failure = Some(self.minimized_failure(
                        exec,
                        pool,
                        body,
                        at,
                        &cause,
                        seed,
                        index,
                        outcome.digest,
                        profiling.is_some() || search.tracks_all,
                    ));
                    report.failures = 1;
                    // The executions the user paid for: the profiling ones so far.
                    report.executions = i + 1;
                    report.stats.variables = exec.var_report();
                    return ControlFlow::Break(());
                }
            } else if !exec.had_choice() {
                // One schedule: the search would repeat this execution (its priorities and
                // change points have nothing to choose between).
                report.only_schedule = true;
                report.executions = 1;
                report.stats.distinct_schedules = 1;
                report.stats.variables = exec.var_report();
                return ControlFlow::Break(());
            }
        }
        if profiling.take().is_some() {
            let vars = exec.vars();
            search.static_only =
                crate::instrument::unmet_in_entered_items(vars.infos(), vars.profiles());
        }
        search.profiled(exec, &report.stats, self.profile_runs);
        if let Err(message) = search.plan(report) {
            report.stats.variables = exec.var_report();
            self.fail_config(report, "confidence", message);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    /// The search executions, until the budget is spent (for a confidence target: until
    /// enough executions drawn with the final counts ran; a shard runs its share) or, when
    /// the run stops at its first failure, a failure. Every `explore_every`-th execution of
    /// a priority strategy runs the explorer instead (swapped with the `parked` one), and
    /// after every execution the counts are compared with those it was drawn with
    /// ([`Search::after_execution`]). An execution that could not test ends the run with its
    /// error.
    ///
    /// Breaks when the run ends with a configuration error (a confidence a raise of the
    /// counts made unreachable), its report complete.
    fn search_executions(
        &self,
        serial: &mut Serial<'_>,
        search: &mut Search<'_>,
        parked: &mut Option<Box<dyn Strategy>>,
        report: &mut Report,
        instrumented: bool,
    ) -> ControlFlow<()> {
        let kind = search.kind;
        let priority = kind.is_priority();
        let explore_every = search.explore_every;
        let mut schedules = DistinctSchedules::default();
        let mut index = 0;
        let started = real_now();
        let mut plan_told = false;
        // A shard runs its share of a confidence plan; an iteration budget is an index range,
        // which `in_shard` already splits.
        let budget = search.budget;
        let share = |planned: u64| match budget {
            Budget::Confidence(_) => self.shard_share(budget, planned),
            Budget::Iterations(_) => planned,
        };
        let mut follow = if instrumented { crate::instrument::follow_strategy() } else { None };
        let mut progress = Progress::new(self.name.as_deref(), self.progress);
        while search.wants_more(index, share(report.planned)) {
            progress.tick(
                report.executions,
                self.shard_share(budget, report.planned),
                report.failures,
            );
            if report.executions > 0 {
                if self.deadline.is_some_and(|d| real_now() >= d) {
                    report.time_budget_spent = true;
                    break;
                }
                if !plan_told {
                    let elapsed = real_now().duration_since(started);
                    if report.executions == 32 || elapsed > LONG_RUN / 10 {
                        plan_told = true;
                        let planned = self.shard_share(budget, report.planned);
                        self.tell_long_plan(search, report, elapsed, planned);
                    }
                }
            }
            // The uniform walk learns from execution 0, which every shard runs (as a parallel
            // run's workers do); a shard that does not own it runs it only to learn from it.
            let learns = index == 0 && kind.learns_from_execution_0();
            if !self.in_shard(index) && !learns {
                index += 1;
                continue;
            }
            let learning_only = learns && !self.in_shard(index);
            let exec = &serial.exec;
            let total = match budget {
                _ if self.shard.is_some() => 0,
                Budget::Iterations(_) => report.planned,
                Budget::Confidence(_) => total_with_explorer(report.planned, explore_every),
            };
            // A shard runs every m-th index: counted by the index, the explorer's every-th
            // would fall on the same shards whenever m and its period share a factor (with 2
            // shards and one in 2, one shard ran only the explorer and counted nothing). Its
            // own executions interleave it instead.
            let position = if self.shard.is_some() { report.executions } else { index };
            let exploring = explores(position, search.explorations, explore_every, total);
            if exploring {
                swap_strategy(exec, parked);
                // The explorer ran the profiling executions before its search ones.
                exec.set_ordinal(self.profile_runs + search.explorations, false);
                search.explorations += 1;
            }
            let outcome =
                exec.run_one(&mut serial.pool, serial.seed, index, serial.body, serial.at);
            let only_schedule = outcome.failure.is_none() && !exec.had_choice();
            // Another shard's execution 0, run to learn from, is that shard's to count (so
            // the shards' executions add up to the budget), unless the run ends with it.
            if learning_only && outcome.failure.is_none() && !only_schedule {
                report.notes.push(self.learning_note());
            } else {
                report.executions += 1;
                record_size(&mut report.stats, outcome.threads, outcome.steps);
                schedules.insert(exec.schedule_hash());
            }
            if priority {
                if let Err(message) = search.observe(exec, index, exploring, report) {
                    report.stats.variables = exec.var_report();
                    self.fail_config(report, "confidence", message);
                    return ControlFlow::Break(());
                }
            }
            if let Some(cause) = outcome.failure {
                if let Some(error) = Config::could_not_test(exec, &cause, index) {
                    report.error = Some(error);
                    break;
                }
                report.failures += 1;
                if report.failure.is_none() {
                    let mut f = self.first_failure(
                        serial,
                        &cause,
                        index,
                        outcome.digest,
                        exploring,
                        &mut follow,
                    );
                    if search.tracks_all {
                        self.tag_session(&mut f, None, false);
                    }
                    report.failure = Some(f);
                }
                if self.stop_at_first_failure {
                    break;
                }
            }
            if exploring {
                swap_strategy(&serial.exec, parked);
            }
            if only_schedule {
                // No scheduling point had two threads to choose from: every execution is
                // this one.
                report.only_schedule = true;
                break;
            }
            if index == 0 && search.may_hand_over {
                let workers = self.resolved_workers();
                if workers > 1 {
                    search.handed_over = Some(workers);
                    return ControlFlow::Break(());
                }
            }
            index += 1;
        }
        schedules.report(&mut report.stats);
        if report.time_budget_spent {
            report.notes.push(self.budget_spent_note(search, report));
        }
        ControlFlow::Continue(())
    }

    /// Says up front, on stderr whether or not it is a terminal and in the report, what a run
    /// that will take longer than [`LONG_RUN`] plans: how many executions, how long, which
    /// parameter drives them and how to shorten it. `elapsed` is the time the search's first
    /// `report.executions` executions took, `planned` the executions this run (shard) plans.
    fn tell_long_plan(
        &self,
        search: &Search<'_>,
        report: &mut Report,
        elapsed: std::time::Duration,
        planned: u64,
    ) {
        let per = elapsed.div_f64(report.executions.max(1) as f64);
        // A run that explores runs the explorer's executions beside the counted ones.
        let total = match search.budget {
            Budget::Confidence(_) => total_with_explorer(planned, search.explore_every),
            Budget::Iterations(_) => planned,
        };
        let name = self.name.as_deref().unwrap_or("this run");
        let driver = match search.budget {
            Budget::Confidence(c) => {
                let kind = search.kind;
                let bound = report
                    .bound
                    .as_ref()
                    .map_or(String::new(), |b| format!(" (per-execution bound {b})"));
                format!(
                    "the confidence target {c} for {}{bound} drives them; to shorten it, lower the \
                     confidence or the bug class (depth, vars, threads)",
                    kind.build().describe()
                )
            }
            Budget::Iterations(n) => format!(
                "iterations = {} (or PCTVB_ITERATIONS) drives them; to shorten it, lower it",
                count_text(n)
            ),
        };
        let Some(note) = long_plan(name, total, per, &driver, self.time_budget) else { return };
        let _ = writeln!(std::io::stderr(), "pctvb: {note}");
        report.notes.push(note);
    }

    /// Of `planned` executions (a confidence target's counted ones, or an iteration budget),
    /// those this run runs: a shard's share (of an iteration budget, the indices it owns),
    /// else all. What a shard's messages count (its plan, progress and time budget).
    pub(super) fn shard_share(&self, budget: Budget, planned: u64) -> u64 {
        match self.shard {
            Some((k, m)) => match budget {
                Budget::Iterations(_) => (planned + m - k) / m,
                Budget::Confidence(_) => planned.div_ceil(m),
            },
            None => planned,
        }
    }

    /// The note of a run its time budget stopped.
    fn budget_spent_note(&self, search: &Search<'_>, report: &Report) -> String {
        let budget =
            self.time_budget.map_or(String::new(), |t| format!(" of {}", duration_text(t)));
        let of_planned = match search.budget {
            Budget::Confidence(_) => {
                let covered = search.profile.as_ref().map_or(0, |p| p.covered);
                format!(
                    "; {} of the {} executions the confidence target needs were counted, and \
                     the guarantee gives the confidence they reach",
                    count_text(covered),
                    count_text(self.shard_share(search.budget, report.planned))
                )
            }
            Budget::Iterations(n) => {
                format!(" of the {} planned", count_text(self.shard_share(search.budget, n)))
            }
        };
        format!(
            "the time budget{budget} was spent after {} executions{of_planned}",
            count_text(report.executions)
        )
    }

    /// The report of the first failing search execution, `index` (`exploring`: it ran the
    /// explorer), minimized when the run stops at it; a counting run keeps going, so its
    /// first failure is reported as found. Over `#[pctvb::instrument]`ed code (`follow`, the
    /// session that follows the strategy's choices) the execution tracked its strategy's
    /// chosen variables (the explorer: all of them): minimization and the replay token keep
    /// exactly those.
    fn first_failure(
        &self,
        serial: &mut Serial<'_>,
        cause: &FailureCause,
        index: u64,
        digest: u64,
        exploring: bool,
        follow: &mut Option<Tracking>,
    ) -> Failure {
        let Serial { exec, pool, body, at, seed, .. } = serial;
        let (body, at, seed) = (*body, *at, *seed);
        let tracked = follow.as_ref().map(|_| match exploring {
            true => Selection::All,
            false => Selection::Vars(chosen_static_vars(exec)),
        });
        let _fixed = match &tracked {
            Some(selection) if self.stop_at_first_failure => {
                drop(follow.take());
                Some(crate::instrument::track(selection.clone()).gate_primitives(true))
            }
            _ => None,
        };
        let mut f = if self.stop_at_first_failure {
            self.minimized_failure(exec, pool, body, at, cause, seed, index, digest, false)
        } else {
            self.failure(exec, cause, seed, index, digest)
        };
        match &tracked {
            Some(Selection::Vars(ids)) => self.tag_session(&mut f, Some(ids), true),
            Some(_) => self.tag_session(&mut f, None, true),
            None => {}
        }
        f
    }

    /// Names in `failure`'s replay token the tracking session its execution ran under
    /// (`tracked`: `None` for every variable), so a replay starts the same one.
    pub(super) fn tag_session(
        &self,
        failure: &mut Failure,
        tracked: Option<&[StaticVarId]>,
        gate: bool,
    ) {
        let Some(Ok(mut token)) = failure.token.as_deref().map(replay::decode) else { return };
        token.strategy.push_str(&crate::instrument::token_suffix(tracked, gate));
        let encoded = replay::encode(&token);
        failure.replay_command = Some(self.replay_line(&encoded));
        failure.token = Some(encoded);
    }

    /// Ends `report` with a configuration error about `what`: the run could not test.
    fn fail_config(&self, report: &mut Report, what: &str, message: String) {
        report.error = Some(Error::config(what, message));
    }
}

/// One serial search's engine and what each of its executions needs: the execution (its
/// strategy and variable table persist across executions), its stack pool, the body, where
/// the run was started, and the run seed.
struct Serial<'b> {
    exec: Execution,
    pool: StackPool,
    body: &'b (dyn Fn() + Sync),
    at: &'static Location<'static>,
    seed: u64,
}

/// Adds an execution's threads and scheduling points to the run's maxima.
fn record_size(stats: &mut Stats, threads: usize, steps: u64) {
    stats.max_threads = stats.max_threads.max(threads);
    stats.max_steps = stats.max_steps.max(steps);
}

/// After profiling, gives the engine the priority strategy `kind` in place of the profiling
/// explorer, and returns the explorer when the search keeps running it every `explore_every`-th
/// execution (swapped in and out by [`swap_strategy`]).
fn start_strategy(
    exec: &Execution,
    kind: &StrategyKind,
    explore_every: u64,
) -> Option<Box<dyn Strategy>> {
    let profiler = exec.replace_strategy(kind.build());
    (explore_every > 0).then_some(profiler)
}

/// Swaps the execution's strategy with the parked one (the priority strategy and the
/// explorer).
fn swap_strategy(exec: &Execution, parked: &mut Option<Box<dyn Strategy>>) {
    let next = parked.take().expect("a run that explores parks the explorer or the strategy");
    *parked = Some(exec.replace_strategy(next));
}

/// The static variables among the variables the strategy chose for the execution `exec` ran
/// last.
fn chosen_static_vars(exec: &Execution) -> Vec<StaticVarId> {
    let chosen = exec.chosen_vars().unwrap_or_default();
    crate::instrument::static_ids(&chosen)
}

/// The counts a priority strategy's draws and bound depend on, as measured so far.
#[derive(Clone, Debug, Default, PartialEq)]
struct Counts {
    /// Most threads in one execution.
    n: u64,
    /// Most scheduling points in one execution.
    k: u64,
    /// Ids of the shared variables, in id order.
    shared: Vec<usize>,
    /// Their `k_q`, in the same order.
    kq: Vec<u64>,
    /// Variables of `#[pctvb::instrument]`ed items that `Q` counts although no execution
    /// shared them: the static pass found them in an item profiling entered, but no profiling
    /// execution accessed them (`crate::instrument::unmet_in_entered_items`).
    static_only: u64,
}

impl Counts {
    /// Whether the counts after the executions so far are still `self`; cheaper than
    /// [`Counts::read`] (no allocation), as it runs after every execution.
    pub(super) fn unchanged(&self, exec: &Execution, stats: &Stats) -> bool {
        if self.n != stats.max_threads.max(1) as u64 || self.k != stats.max_steps {
            return false;
        }
        let vars = exec.vars();
        let mut shared = self.shared.iter().zip(&self.kq);
        for (i, p) in vars.profiles().iter().enumerate() {
            if p.shared {
                match shared.next() {
                    Some((&q, &kq)) if q == i && kq == p.max_accesses => {}
                    _ => return false,
                }
            }
        }
        shared.next().is_none()
    }

    /// The counts after the executions so far; `stats` has the most threads and steps of any
    /// of them (the same maxima the runtime hands strategies in `ExecutionStart`);
    /// `static_only` the variables profiling never accessed that `Q` counts while unshared.
    pub(super) fn read(exec: &Execution, stats: &Stats, static_only: &[usize]) -> Counts {
        let vars = exec.vars();
        let (mut shared, mut kq) = (Vec::new(), Vec::new());
        for (i, p) in vars.profiles().iter().enumerate() {
            if p.shared {
                shared.push(i);
                kq.push(p.max_accesses);
            }
        }
        let profiles = vars.profiles();
        let static_only = static_only.iter().filter(|&&i| !profiles[i].shared).count() as u64;
        Counts { n: stats.max_threads.max(1) as u64, k: stats.max_steps, shared, kq, static_only }
    }

    /// `Q`: the shared variables and the static-only ones.
    fn q(&self) -> u64 {
        self.kq.len() as u64 + self.static_only
    }

    /// The `k_q` the bound uses: a static-only variable's is 0 (no change point can be placed
    /// on it, but the variable choice counts it).
    fn bound_kq(&self) -> Vec<u64> {
        let mut kq = self.kq.clone();
        kq.resize(kq.len() + self.static_only as usize, 0);
        kq
    }

    /// What grew from `self` to `after` among the counts `kind` depends on, e.g.
    /// `"k 23 -> 25"`; `None` when nothing it depends on changed.
    pub(super) fn grown(&self, after: &Counts, kind: &StrategyKind) -> Option<String> {
        let mut what = Vec::new();
        if after.n != self.n {
            what.push(format!("n {} -> {}", self.n, after.n));
        }
        if kind.bounds_variables() {
            if after.shared != self.shared {
                what.push(format!(
                    "shared variables {} -> {} (Q {} -> {})",
                    self.shared.len(),
                    after.shared.len(),
                    self.q(),
                    after.q()
                ));
            } else if after.kq != self.kq {
                let max = |c: &Counts| c.kq.iter().copied().max().unwrap_or(0);
                what.push(format!("some k_q rose (max {} -> {})", max(self), max(after)));
            }
        } else if after.k != self.k {
            what.push(format!("k {} -> {}", self.k, after.k));
        }
        (!what.is_empty()).then(|| what.join(", "))
    }
}

/// Notes about raised counts kept in a report before the rest are only counted.
const MAX_RAISE_NOTES: usize = 5;

/// The state of a priority strategy's search: counts, bound, budget and guarantee.
struct Search<'a> {
    kind: &'a StrategyKind,
    budget: Budget,
    profile: Option<Profile>,
    counts: Counts,
    /// Run variable ids of the static-only variables, fixed after profiling.
    static_only: Vec<usize>,
    /// Every how many search executions one runs the explorer (0: never).
    explore_every: u64,
    /// What those executions ran ("the selectively uniform walk"), for the report's notes.
    explorer: &'static str,
    /// Search executions that ran the explorer.
    explorations: u64,
    /// Executions of the explorer that raised the counts.
    explore_raises: u64,
    /// Whether the run may go to workers after execution 0 ([`Config::search_serial`]).
    may_hand_over: bool,
    /// The worker count the run went to (the search ended after execution 0).
    handed_over: Option<usize>,
    /// The run tracks every instrumented variable, without gating, for all its executions (a
    /// priority strategy that does not bound variables): a failure's token says so.
    tracks_all: bool,
}

/// How a serial search ended: with its report, or after execution 0, handing the run over to
/// `workers` worker threads ([`Config::search_serial`]).
enum SerialEnd {
    Done(Box<Report>),
    HandOver { workers: usize },
}

impl Search<'_> {
    /// `(v, t)` as the bound uses them: `v` clamped to `Q`.
    pub(super) fn effective_vars_threads(&self) -> (u32, u32) {
        let (v, t) = self.kind.vars_threads();
        (v.min(self.counts.q() as u32), t)
    }

    /// The per-execution bound for the current counts.
    pub(super) fn bound(&self) -> Result<BoundFactors, GuaranteeError> {
        let (v, t) = self.effective_vars_threads();
        let kq = self.counts.bound_kq();
        let params = BoundParams {
            n: self.counts.n,
            k: self.counts.k,
            kq: &kq,
            v,
            d: self.kind.depth().unwrap_or(1),
            t,
        };
        guarantee::bound_for(self.kind.guarantee_kind(), &params)
            .map(|b| b.expect("priority strategies have a bound"))
    }

    /// Computes the bound and, for a confidence target, the planned executions. A bound that
    /// cannot be computed (e.g. no shared variable to place change points on) is a note, not
    /// an error; an unreachable confidence is an error naming the dominant factor.
    pub(super) fn plan(&mut self, report: &mut Report) -> Result<(), String> {
        match self.bound() {
            Ok(bound) => {
                if let Budget::Confidence(c) = self.budget {
                    report.planned = bound.executions_for_confidence(c).map_err(|e| {
                        format!(
                            "{}: {e} (per-execution bound {bound}); lower depth, vars or \
                             threads, or the confidence, or shrink the test",
                            self.kind.name()
                        )
                    })?;
                }
                report.bound = Some(bound);
            }
            Err(e) => {
                if let Budget::Confidence(_) = self.budget {
                    report.planned = DEFAULT_ITERATIONS;
                }
                report.bound = None;
                let no_shared = matches!(e, GuaranteeError::InvalidParameter { name: "v", .. });
                let note = if no_shared && self.counts.q() == 0 {
                    // The usual cause, said in the user's terms rather than the bound's
                    // parameter that it made invalid.
                    let plan = match self.budget {
                        Budget::Confidence(_) => format!(
                            "; without a bound there is no plan for the confidence target, so \
                             the search ran the default {DEFAULT_ITERATIONS} executions of the \
                             strategy"
                        ),
                        Budget::Iterations(_) => String::new(),
                    };
                    format!(
                        "no guarantee: the profiling executions met no variable two threads \
                         share (Q=0: no atomic, lock, cell or other object used by two threads), \
                         so a bug of depth >= 2 has no shared access to be preempted at and the \
                         bound cannot be computed{plan}; n={}, k={}",
                        self.counts.n, self.counts.k
                    )
                } else {
                    format!(
                        "no guarantee for the counts measured so far ({e}); n={}, k={}, Q={}",
                        self.counts.n,
                        self.counts.k,
                        self.counts.q()
                    )
                };
                let profile = self.profile.as_mut().expect("profiled");
                if !profile.notes.contains(&note) {
                    profile.notes.push(note);
                }
            }
        }
        Ok(())
    }

    /// Takes the counts `runs` profiling executions measured (`stats` has their most threads
    /// and steps) as those the search draws with, and records them in the profile.
    fn profiled(&mut self, exec: &Execution, stats: &Stats, runs: u64) {
        self.counts = Counts::read(exec, stats, &self.static_only);
        self.profile = Some(Profile {
            runs,
            n: self.counts.n,
            k: self.counts.k,
            shared_variables: self.counts.kq.len() as u64,
            static_only_variables: self.counts.static_only,
            max_kq: self.counts.kq.iter().copied().max().unwrap_or(0),
            ..Profile::default()
        });
    }

    /// After search execution `index` (`explored`: of the explorer), which `exec` just ran:
    /// reads the counts again only when they changed (most executions change nothing, and
    /// reading allocates), then compares them ([`Search::after_execution`]).
    fn observe(
        &mut self,
        exec: &Execution,
        index: u64,
        explored: bool,
        report: &mut Report,
    ) -> Result<(), String> {
        let after = if self.counts.unchanged(exec, &report.stats) {
            None
        } else {
            Some(Counts::read(exec, &report.stats, &self.static_only))
        };
        self.after_execution(index, explored, after, report)
    }

    /// Whether to run execution `index`.
    pub(super) fn wants_more(&self, index: u64, planned: u64) -> bool {
        match (self.budget, &self.profile) {
            (Budget::Confidence(_), Some(p)) => {
                p.covered < planned && index < guarantee::MAX_EXECUTIONS
            }
            _ => index < planned,
        }
    }

    /// Compares the counts after execution `index` (`None`: unchanged) with those it was
    /// drawn with; a raise marks it as exceeding, restarts the count of covered executions
    /// and recomputes the bound (and, for a confidence target, the planned executions). An
    /// execution of the explorer (`explored`) is never covered, but a raise it measures counts the
    /// same way: the strategy's executions drawn with the old counts no longer count.
    pub(super) fn after_execution(
        &mut self,
        index: u64,
        explored: bool,
        after: Option<Counts>,
        report: &mut Report,
    ) -> Result<(), String> {
        let grown = after.and_then(|after| {
            let grown = self.counts.grown(&after, self.kind);
            self.counts = after;
            grown
        });
        let profile = self.profile.as_mut().expect("profiled");
        let Some(what) = grown else {
            if !explored {
                profile.covered += 1;
            }
            return Ok(());
        };
        profile.covered = 0;
        if explored {
            self.explore_raises += 1;
            if self.explore_raises as usize > MAX_RAISE_NOTES {
                return self.plan(report);
            }
            profile.notes.push(format!(
                "execution {index} ({}) raised the counts ({what}); the bound was recomputed \
                 and only executions drawn with the new counts are counted",
                self.explorer
            ));
            return self.plan(report);
        }
        profile.exceeded += 1;
        if profile.exceeded as usize <= MAX_RAISE_NOTES {
            profile.notes.push(format!(
                "execution {index} exceeded the counts it was drawn with ({what}); the bound \
                 was recomputed and only executions drawn with the new counts are counted"
            ));
        }
        self.plan(report)
    }

    /// Fills the report's profile and, after a passing run, the guarantee statement.
    pub(super) fn finish(mut self, report: &mut Report) {
        let Some(mut profile) = self.profile.take() else { return };
        let more = profile.exceeded.saturating_sub(MAX_RAISE_NOTES as u64);
        if more > 0 {
            profile.notes.push(format!("{more} more executions exceeded the counts"));
        }
        let more = self.explore_raises.saturating_sub(MAX_RAISE_NOTES as u64);
        if more > 0 {
            profile
                .notes
                .push(format!("{more} more executions of {} raised the counts", self.explorer));
        }
        if self.explorations > 0 {
            profile.notes.push(format!(
                "{} of the {} search executions ran {} (1 in {} over a whole run, most of \
                 them early, for bugs outside the guarantee's class); the guarantee counts only \
                 the strategy's",
                self.explorations, report.executions, self.explorer, self.explore_every
            ));
        }
        profile.final_n = self.counts.n;
        profile.final_k = self.counts.k;
        profile.final_shared_variables = self.counts.kq.len() as u64;
        profile.final_static_only_variables = self.counts.static_only;
        profile.final_max_kq = self.counts.kq.iter().copied().max().unwrap_or(0);
        if report.failures == 0 && report.error.is_none() {
            if let Some(bound) = &report.bound {
                let (v, t) = self.effective_vars_threads();
                report.guarantee = Some(GuaranteeStatement {
                    strategy: self.kind.guarantee_kind(),
                    depth: self.kind.depth().unwrap_or(1),
                    variables: v,
                    threads: t,
                    confidence: bound.confidence_after(profile.covered),
                    executions: profile.covered,
                    n: profile.final_n,
                    shared_variables: self.counts.q(),
                    static_only_variables: profile.final_static_only_variables,
                    max_kq: profile.final_max_kq,
                    k: profile.final_k,
                    profiling_runs: profile.runs,
                    exceeded_runs: profile.exceeded,
                });
            }
        }
        report.profile = Some(profile);
    }
}

/// How far the explorer's executions may run ahead of its share (one in `every`) early in a
/// run; see [`explores`]. Measured on the corpus (issue #18; 60 trials of the 22 programs
/// whose bug the default finds after profiling): a lead of 250 executions paid 0.87x what one
/// in two throughout paid, 500 a little less (SafeStack 5,502 executions against 5,867), 1000
/// about the same as 500 (4,596 on SafeStack) while a bug only the priority strategy finds
/// waits longer.
const EXPLORER_LEAD: u64 = 500;

/// Early in a run, until the explorer is [`EXPLORER_LEAD`] ahead of its share, the priority
/// strategy runs one execution in this many and the explorer the others. Measured with
/// `cargo run --release -p pctvb-corpus --example first_failures -- default 200 --vs-urw`
/// (every buggy program but safestack; the default's cost with restarts against shuttle
/// URW's over the 51 programs shuttle runs), seeds 0-199: one in 2 (no lead) paid 0.540x, one
/// in 3 0.523x, one in 4 0.517x, one in 8 0.511x, one in 16 0.509x, one in 32 0.510x, none
/// 0.511x; seeds 200-399: one in 4 0.517x, one in 8 0.510x, one in 16 0.508x. The explorer
/// finds most bugs, and most of them early; a bug the priority strategy finds sooner than
/// the explorer waits longer (prodcons: 21 executions with one in 4, 37 with one in 16).
const EARLY_STRATEGY_ONE_IN: u64 = 16;

/// Executions a run plans when `planned` of them are the priority strategy's and the
/// explorer runs one in `every` (none: `planned`).
fn total_with_explorer(planned: u64, every: u64) -> u64 {
    match every {
        m if m > 1 => planned.saturating_mul(m) / (m - 1),
        _ => planned,
    }
}

/// Whether search execution `index` runs the explorer, `explored` of the executions before
/// it having run it, when it runs one in `every` over a run of `total` executions (0: not
/// known, or a shard's, whose indices are not consecutive).
///
/// The explorer's executions come first: it takes all but one in [`EARLY_STRATEGY_ONE_IN`]
/// until it is [`EXPLORER_LEAD`] executions ahead of its share, keeps that lead, and the
/// priority strategy takes every execution at the plan's end until the explorer has exactly
/// its share. A run that passes therefore runs as many executions of each as with one in
/// `every` throughout (the guarantee, counted over the priority strategy's executions, costs
/// no more), while a bug the explorer finds is found sooner: it finds most bugs, and most of
/// them early (race reversal's targets are fresh). Past the plan (a confidence plan raised by
/// new counts) the explorer takes its share again.
pub(super) fn explores(index: u64, explored: u64, every: u64, total: u64) -> bool {
    if every == 0 {
        return false;
    }
    if total == 0 {
        return index % every == every - 1;
    }
    let next = index + 1;
    let share = next / every;
    let front = next - next / EARLY_STRATEGY_ONE_IN;
    let allowed = front.min(share + EXPLORER_LEAD).min(share.max(total / every));
    explored < allowed
}

#[cfg(test)]
mod tests {
    use super::{explores, total_with_explorer, EARLY_STRATEGY_ONE_IN, EXPLORER_LEAD};

    /// The explorer's executions among the first `n` of a run of `total`, by [`explores`].
    fn explorer_runs(n: u64, every: u64, total: u64) -> Vec<bool> {
        let mut explored = 0;
        (0..n)
            .map(|index| {
                let e = explores(index, explored, every, total);
                explored += u64::from(e);
                e
            })
            .collect()
    }

    #[test]
    fn the_explorer_comes_first_and_has_its_share_at_the_plans_end() {
        for (total, every) in [(10_000, 2), (10_000, 3), (600, 2), (7, 2), (3_001, 4)] {
            let runs = explorer_runs(total, every, total);
            let explored = runs.iter().filter(|&&e| e).count() as u64;
            assert_eq!(explored, total / every, "its share of {total}, one in {every}");
            // Early, all but one in EARLY_STRATEGY_ONE_IN (16), as long as the plan leaves
            // room for the priority strategy to catch up.
            let n = 10 * EARLY_STRATEGY_ONE_IN as usize;
            let early = runs.iter().take(n).filter(|&&e| e).count();
            assert_eq!(early, 150.min(total as usize / every as usize), "{total} {every}");
            // Never more than the lead ahead of its share.
            let mut e = 0;
            for (i, &r) in runs.iter().enumerate() {
                e += u64::from(r);
                assert!(e <= (i as u64 + 1) / every + EXPLORER_LEAD, "at {i}");
            }
        }
        // A long plan: the lead is kept through the middle, and the plan ends with the priority
        // strategy's executions only.
        let runs = explorer_runs(10_000, 2, 10_000);
        let ahead = |n: usize| runs[..n].iter().filter(|&&e| e).count() as i64 - n as i64 / 2;
        assert_eq!(ahead(5_000), EXPLORER_LEAD as i64);
        assert!(runs[10_000 - 2 * EXPLORER_LEAD as usize..].iter().all(|&e| !e));
    }

    #[test]
    fn a_number_of_executions_gives_the_explorer_at_most_one_in_every() {
        // What `search_serial` tells the explorer (`Strategy::runs_at_most`): a run of `n`
        // executions, planned (`total = n`) or a shard's (`total = 0`), explores at most
        // `n / every` times; greybox skips its coverage on it, so it must hold for every `n`.
        for every in 1..=5 {
            for n in 0..400 {
                for total in [n, 0] {
                    let explored = explorer_runs(n, every, total).iter().filter(|&&e| e).count();
                    assert!(explored as u64 <= n / every, "{n} runs, one in {every}, plan {total}");
                }
            }
        }
    }

    #[test]
    fn without_a_plan_or_past_it_the_explorer_takes_one_in_every() {
        // No known plan (a shard's indices): every `every`-th index.
        for every in [2, 3, 5] {
            let runs = explorer_runs(100, every, 0);
            for (i, &e) in runs.iter().enumerate() {
                assert_eq!(e, i as u64 % every == every - 1, "{i} of one in {every}");
            }
        }
        // A plan of 100 raised later: past it, one in two again.
        let mut explored = 0;
        let mut past = Vec::new();
        for index in 0..300 {
            let e = explores(index, explored, 2, 100);
            explored += u64::from(e);
            if index >= 100 {
                past.push(e);
            }
        }
        assert_eq!(past.iter().filter(|&&e| e).count(), 100);
        assert!(past.windows(2).all(|w| w[0] != w[1]), "alternating");
        assert!(!explores(5, 0, 0, 100), "no explorer");
        assert_eq!(total_with_explorer(300, 2), 600);
        assert_eq!(total_with_explorer(300, 3), 450);
        assert_eq!(total_with_explorer(300, 0), 300);
    }
}
