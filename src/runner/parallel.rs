//! Parallel executions: a run of the random strategy, or of a walk (uniform or SURW), spreads its
//! executions over OS threads, each with its own engine, and reports the failure with the
//! lowest index, which is what a serial run reports: the result does not depend on thread
//! timing. The random strategy's executions are independent given (seed, index); a walk's
//! depend only on its first execution (index 0), which every worker runs to learn from
//! before claiming indices (the same schedule in each; one of them counts it), and on their
//! index (SURW's first walk and its rounds of selections: `ExecutionStart::ordinal`, which
//! is the index here whichever worker claims it).
//!
//! Also sharding (`PCTVB_SHARD=k/m`): a run executes only the indices `i` with
//! `i % m == k - 1`, so a CI matrix can split a budget across machines (a run of the walk
//! also runs execution 0, to learn from it, but counts it only in shard 1, which owns it, so
//! the shards' executions add up to the budget; a note in the others says so).
//!
//! A parallel run starts with execution 0 on the calling thread ([`Config::search`]): when it
//! fails or offers no choice, the run ends there, without worker threads.
//!
//! Priority strategies run serially: their draws depend on the counts measured by earlier
//! executions of the run, so splitting them would change the schedules.

use std::io::Write as _;
use std::panic::Location;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

use super::outcome::Found;
use super::watch::DistinctSchedules;
use super::{Budget, Config, StrategyKind};
use crate::report::{self, Report};
use crate::runtime::{real_now, Execution, StackPool};
use crate::schedulers::Random;
use crate::vars::{VarInfo, VarProfile};

/// What one worker measured, so the merge can keep exactly the indices a serial run would
/// have executed: the executions no failure can exclude any more are folded into counts as
/// the run goes (the memory stays bounded however many executions run), the others kept one
/// by one.
#[derive(Default)]
struct Worker {
    /// Executions folded: every one of them has an index below any failure's.
    folded: u64,
    max_threads: usize,
    max_steps: u64,
    schedules: DistinctSchedules,
    /// (index, threads, steps, schedule hash) of the executions not folded yet.
    recent: Vec<(u64, usize, u64, u64)>,
    failure: Option<Found>,
    variables: Vec<(VarInfo, VarProfile)>,
    /// It ran execution 0, another shard's, only to learn from it (not counted).
    learned_only: bool,
}

impl Worker {
    /// Folds the recent executions whose index is below `below`.
    fn fold(&mut self, below: u64) {
        let mut kept = Vec::new();
        for record @ (index, threads, steps, hash) in std::mem::take(&mut self.recent) {
            if index < below {
                self.folded += 1;
                self.max_threads = self.max_threads.max(threads);
                self.max_steps = self.max_steps.max(steps);
                self.schedules.insert(hash);
            } else {
                kept.push(record);
            }
        }
        self.recent = kept;
    }
}

/// Folds a worker's recent executions every this many.
const FOLD_EVERY: usize = 256;

impl Config {
    /// Whether execution `index` belongs to this run's shard.
    pub(super) fn in_shard(&self, index: u64) -> bool {
        self.shard.is_none_or(|(k, m)| index % m == k - 1)
    }

    /// The note of a walk's shard that ran execution 0, shard 1's, only to learn from it.
    pub(super) fn learning_note(&self) -> String {
        let m = self.shard.map_or(1, |(_, m)| m);
        format!(
            "execution 0 belongs to shard 1 of {m} and ran here too, first, for the walk to \
             learn from; only shard 1 counts it, so the {m} shards' executions add up to the \
             budget"
        )
    }

    /// Runs `iterations` executions of `kind` (random, or a walk: uniform, SURW) on `workers` OS
    /// threads.
    pub(super) fn search_parallel(
        &self,
        kind: &StrategyKind,
        seed: u64,
        iterations: u64,
        workers: usize,
        body: &(dyn Fn() + Sync),
        at: &'static Location<'static>,
    ) -> Report {
        // The walk learns from execution 0, which every worker runs first.
        let learns = kind.learns_from_execution_0();
        let next = AtomicU64::new(u64::from(learns));
        let first_failure = AtomicU64::new(u64::MAX);
        let running: Vec<AtomicU64> = (0..workers).map(|_| AtomicU64::new(u64::MAX)).collect();
        let (stop, single) = (AtomicBool::new(false), AtomicBool::new(false));
        let plan = OnceLock::new();
        // Workers see the `#[pctvb::instrument]` tracking session of the thread that started
        // the run (sessions are per OS thread).
        let session = crate::instrument::current_session();
        let results: Vec<Worker> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let session = session.clone();
                    let (next, first_failure) = (&next, &first_failure);
                    let (running, stop, single, plan) = (&running[..], &stop, &single, &plan);
                    let learning = learns.then_some(w == 0);
                    scope.spawn(move || {
                        let _session = crate::instrument::enter_session(session);
                        let claims = Claims {
                            iterations,
                            next,
                            first_failure,
                            running,
                            worker: w,
                            stop,
                            single,
                            plan,
                            workers,
                        };
                        self.work(kind, learning, seed, body, at, claims)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("pctvb worker thread")).collect()
        });
        let last = first_failure.load(Ordering::SeqCst);
        let mut report = self.empty_report(kind.build().describe(), seed, iterations);
        let mut schedules = DistinctSchedules::default();
        let mut found: Option<Found> = None;
        let learned_only = results.iter().any(|w| w.learned_only);
        for mut worker in results {
            worker.fold(last.saturating_add(1));
            report.executions += worker.folded;
            report.stats.max_threads = report.stats.max_threads.max(worker.max_threads);
            report.stats.max_steps = report.stats.max_steps.max(worker.max_steps);
            schedules.merge(worker.schedules);
            merge_variables(&mut report.stats.variables, worker.variables);
            if let Some(f) = worker.failure.filter(|f| f.index == last) {
                found = Some(f);
            }
        }
        schedules.report(&mut report.stats);
        if learned_only {
            report.notes.push(self.learning_note());
        }
        report.notes.extend(plan.into_inner());
        if single.load(Ordering::SeqCst) {
            // One schedule: the executions the workers ran at the same time repeat it; a
            // serial run stops after the first.
            report.only_schedule = true;
            report.executions = 1;
        } else if stop.load(Ordering::SeqCst) {
            report.time_budget_spent = true;
            let budget = self
                .time_budget
                .map_or(String::new(), |t| format!(" of {}", super::watch::duration_text(t)));
            report.notes.push(format!(
                "the time budget{budget} was spent after {} executions of the {} planned",
                super::watch::count_text(report.executions),
                super::watch::count_text(
                    self.shard_share(Budget::Iterations(iterations), iterations)
                )
            ));
        }
        if let Some(found) = found {
            let error = report::could_not_test(&found.cause, &found.strategy, found.index);
            if let Some(error) = error {
                report.error = Some(error);
                return report;
            }
            report.failures = 1;
            let exec = Execution::new(Box::new(Random), self.limits());
            let mut pool = StackPool::new(self.stack_size);
            report.failure = Some(self.minimized_found(&exec, &mut pool, body, at, found, false));
        }
        report
    }

    /// One worker's share of a parallel run. `learning`: for the walk, this worker runs
    /// execution 0 first to learn from it, and counts it when `Some(true)`.
    fn work(
        &self,
        kind: &StrategyKind,
        learning: Option<bool>,
        seed: u64,
        body: &dyn Fn(),
        at: &'static Location<'static>,
        claims: Claims<'_>,
    ) -> Worker {
        let exec = Execution::new(kind.build(), self.limits());
        let mut pool = StackPool::new(self.stack_size);
        let mut worker = Worker::default();
        // Runs execution `index`; whether it failed or had no choice (then every execution
        // repeats it).
        let mut run = |index: u64, counted: bool, worker: &mut Worker| {
            let outcome = exec.run_one(&mut pool, seed, index, body, at);
            if counted {
                let record = (index, outcome.threads, outcome.steps, exec.schedule_hash());
                worker.recent.push(record);
            }
            let Some(cause) = outcome.failure else {
                if !exec.had_choice() {
                    claims.single.store(true, Ordering::SeqCst);
                    return true;
                }
                return false;
            };
            claims.first_failure.fetch_min(index, Ordering::SeqCst);
            if counted {
                worker.failure = Some(Found::capture(&exec, cause, seed, index, outcome.digest));
            }
            true
        };
        if learning.is_some_and(|counted| run(0, counted, &mut worker)) {
            worker.variables = exec.var_report();
            return worker;
        }
        if learning == Some(true) && !self.in_shard(0) {
            // Another shard's execution 0, run to learn from: that shard counts it (it did not
            // end the run, which would have made it this shard's result).
            worker.recent.pop();
            worker.learned_only = true;
        }
        let mine = &claims.running[claims.worker];
        let (started, mut ran) = (real_now(), 0u64);
        // Worker 0 shows the run's progress line, counting every worker's claimed executions.
        let mut progress = (claims.worker == 0)
            .then(|| super::progress::Progress::new(self.name.as_deref(), self.progress));
        let planned = Budget::Iterations(claims.iterations);
        loop {
            if claims.single.load(Ordering::SeqCst) {
                break;
            }
            if self.deadline.is_some_and(|d| real_now() >= d) {
                claims.stop.store(true, Ordering::SeqCst);
            }
            if claims.stop.load(Ordering::SeqCst) {
                break;
            }
            // Published before the claim, a lower bound of the index this worker runs: no
            // worker folds an execution a failure of it could still exclude.
            mine.store(claims.next.load(Ordering::SeqCst), Ordering::SeqCst);
            // Indices are claimed in increasing order, so when index f fails every index
            // below f has been claimed by some worker, which runs it to the end.
            let index = claims.next.fetch_add(1, Ordering::SeqCst);
            if index >= claims.iterations || index > claims.first_failure.load(Ordering::SeqCst) {
                break;
            }
            mine.store(index, Ordering::SeqCst);
            if !self.in_shard(index) {
                continue;
            }
            if run(index, true, &mut worker) {
                break;
            }
            ran += 1;
            if let Some(progress) = progress.as_mut().filter(|_| ran.is_multiple_of(64)) {
                let claimed = claims.next.load(Ordering::Relaxed).min(claims.iterations);
                let done = self.shard_share(Budget::Iterations(claimed), claimed);
                let total = self.shard_share(planned, claims.iterations);
                progress.show(done, total, 0);
            }
            if claims.worker == 0 && ran == TELL_PLAN_AFTER {
                self.tell_parallel_plan(&claims, real_now().duration_since(started));
            }
            if worker.recent.len() >= FOLD_EVERY {
                let running = claims.running.iter().map(|r| r.load(Ordering::SeqCst)).min();
                let failure = claims.first_failure.load(Ordering::SeqCst).saturating_add(1);
                worker.fold(running.unwrap_or(u64::MAX).min(failure));
            }
        }
        mine.store(u64::MAX, Ordering::SeqCst);
        worker.variables = exec.var_report();
        worker
    }
}

impl Config {
    /// Says up front what a parallel run that will be long plans (see
    /// `Config::tell_long_plan`), from the time worker 0 took for its first executions.
    fn tell_parallel_plan(&self, claims: &Claims<'_>, elapsed: std::time::Duration) {
        let per = elapsed.div_f64((TELL_PLAN_AFTER * claims.workers as u64) as f64);
        let driver = format!(
            "iterations = {} (or PCTVB_ITERATIONS) drives them; to shorten it, lower it",
            super::watch::count_text(claims.iterations)
        );
        let name = self.name.as_deref().unwrap_or("this run");
        // A shard runs the indices it owns.
        let total = self.shard_share(Budget::Iterations(claims.iterations), claims.iterations);
        let note = super::watch::long_plan(name, total, per, &driver, self.time_budget);
        if let Some(note) = note {
            let _ = writeln!(std::io::stderr(), "pctvb: {note}");
            let _ = claims.plan.set(note);
        }
    }
}

/// Worker 0 estimates how long the run takes after this many of its executions.
const TELL_PLAN_AFTER: u64 = 64;

/// The indices a parallel run's workers claim, the lowest failing one so far, the index each
/// worker runs (`u64::MAX`: none), and whether the run stops: its time budget is spent, or an
/// execution had no choice to make (`single`).
#[derive(Clone, Copy)]
struct Claims<'a> {
    iterations: u64,
    next: &'a AtomicU64,
    first_failure: &'a AtomicU64,
    running: &'a [AtomicU64],
    worker: usize,
    stop: &'a AtomicBool,
    single: &'a AtomicBool,
    /// The plan worker 0 told, when the run will be long.
    plan: &'a OnceLock<String>,
    workers: usize,
}

/// Adds `more` to `into`, by allocation site: most accesses, shared if shared anywhere.
fn merge_variables(into: &mut Vec<(VarInfo, VarProfile)>, more: Vec<(VarInfo, VarProfile)>) {
    for (info, profile) in more {
        let same = |(i, _): &&mut (VarInfo, VarProfile)| {
            i.kind == info.kind && i.site.to_string() == info.site.to_string()
        };
        match into.iter_mut().find(same) {
            Some((_, p)) => {
                p.max_accesses = p.max_accesses.max(profile.max_accesses);
                p.shared |= profile.shared;
            }
            None => into.push((info, profile)),
        }
    }
}
