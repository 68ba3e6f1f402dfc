//! Parallel executions: a run of the random strategy, or of the uniform walk, spreads its
//! executions over OS threads, each with its own engine, and reports the failure with the
//! lowest index, which is what a serial run reports: the result does not depend on thread
//! timing. The random strategy's executions are independent given (seed, index); the walk's
//! depend only on its first execution (index 0), which every worker runs to learn from
//! before claiming indices (the same schedule in each; one of them counts it).
//!
//! Also sharding (`PCTVB_SHARD=k/m`): a run executes only the indices `i` with
//! `i % m == k - 1`, so a CI matrix can split a budget across machines (a run of the walk
//! also runs execution 0, to learn from it).
//!
//! Priority strategies run serially: their draws depend on the counts measured by earlier
//! executions of the run, so splitting them would change the schedules.

use std::collections::HashSet;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};

use super::outcome::Found;
use super::{Config, StrategyKind};
use crate::report::{self, Report};
use crate::runtime::{Execution, StackPool};
use crate::schedulers::Random;
use crate::vars::{VarInfo, VarProfile};

/// What one worker measured: per-index results, so the merge can keep exactly the indices a
/// serial run would have executed.
#[derive(Default)]
struct Worker {
    /// (index, threads, steps, schedule hash) of every execution the worker ran.
    executions: Vec<(u64, usize, u64, u64)>,
    failure: Option<Found>,
    variables: Vec<(VarInfo, VarProfile)>,
}

impl Config {
    /// Whether execution `index` belongs to this run's shard.
    pub(super) fn in_shard(&self, index: u64) -> bool {
        self.shard.is_none_or(|(k, m)| index % m == k - 1)
    }

    /// Runs `iterations` executions of `kind` (random or the uniform walk) on `workers` OS
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
        // Workers see the `#[pctvb::instrument]` tracking session of the thread that started
        // the run (sessions are per OS thread).
        let session = crate::instrument::current_session();
        let results: Vec<Worker> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let session = session.clone();
                    let (next, first_failure) = (&next, &first_failure);
                    let learning = learns.then_some(w == 0);
                    scope.spawn(move || {
                        let _session = crate::instrument::enter_session(session);
                        let claims = Claims { iterations, next, first_failure };
                        self.work(kind, learning, seed, body, at, claims)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("pctvb worker thread")).collect()
        });
        let last = first_failure.load(Ordering::SeqCst);
        let mut report = self.empty_report(kind.build().describe(), seed, iterations);
        let mut schedules = HashSet::new();
        let mut found: Option<Found> = None;
        for worker in results {
            for &(index, threads, steps, hash) in &worker.executions {
                if index <= last {
                    report.executions += 1;
                    report.stats.max_threads = report.stats.max_threads.max(threads);
                    report.stats.max_steps = report.stats.max_steps.max(steps);
                    schedules.insert(hash);
                }
            }
            merge_variables(&mut report.stats.variables, worker.variables);
            if let Some(f) = worker.failure.filter(|f| f.index == last) {
                found = Some(f);
            }
        }
        report.stats.distinct_schedules = schedules.len() as u64;
        if let Some(found) = found {
            let error = report::could_not_test(&found.cause, &found.strategy, found.index);
            if let Some(error) = error {
                report.error = Some(error);
                return report;
            }
            report.failures = 1;
            let exec = Execution::new(Box::new(Random), self.limits());
            let mut pool = StackPool::new(self.stack_size);
            report.failure = Some(self.minimize_found(&exec, &mut pool, body, at, found));
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
        // Runs execution `index`; whether it failed.
        let mut run = |index: u64, counted: bool, worker: &mut Worker| {
            let outcome = exec.run_one(&mut pool, seed, index, body, at);
            if counted {
                let record = (index, outcome.threads, outcome.steps, exec.schedule_hash());
                worker.executions.push(record);
            }
            let Some(cause) = outcome.failure else { return false };
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
        loop {
            // Indices are claimed in increasing order, so when index f fails every index
            // below f has been claimed by some worker, which runs it to the end.
            let index = claims.next.fetch_add(1, Ordering::SeqCst);
            if index >= claims.iterations || index > claims.first_failure.load(Ordering::SeqCst) {
                break;
            }
            if !self.in_shard(index) {
                continue;
            }
            if run(index, true, &mut worker) {
                break;
            }
        }
        worker.variables = exec.var_report();
        worker
    }
}

/// The indices a parallel run's workers claim, and the lowest failing one so far.
#[derive(Clone, Copy)]
struct Claims<'a> {
    iterations: u64,
    next: &'a AtomicU64,
    first_failure: &'a AtomicU64,
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
