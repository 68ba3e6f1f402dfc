//! Turning an execution's outcome into a report: failures with replay tokens, the replay of
//! one token, and empty reports.

use std::io::Write;
use std::panic::Location;
use std::path::Path;

use super::Config;
use crate::error::Error;
use crate::replay::{self, ReplayToken};
use crate::report::{self, Failure, Report, Stats};
use crate::runtime::{describe_object, Captured, Execution, FailureCause, StackPool, ThreadId};
use crate::schedulers::Replay;

/// A failing execution, copied out of the engine for its report.
pub(super) struct Found {
    pub(super) cause: FailureCause,
    pub(super) captured: Captured,
    pub(super) digest: u64,
    pub(super) seed: u64,
    pub(super) index: u64,
    pub(super) strategy: String,
}

impl Found {
    /// Copies the execution `exec` just ran (execution `index` of the run seeded `seed`),
    /// which failed with `cause`.
    pub(super) fn capture(
        exec: &Execution,
        cause: FailureCause,
        seed: u64,
        index: u64,
        digest: u64,
    ) -> Found {
        Found {
            cause,
            captured: exec.capture(),
            digest,
            seed,
            index,
            strategy: exec.describe_strategy(),
        }
    }
}

impl Config {
    /// Replays the execution `token` (read from `origin`: `PCTVB_REPLAY`, `Config::replay` or
    /// a regression file's line) records. A replay that does not follow the token is an
    /// [`Error::ReplayDiverged`]: the token says nothing about the program as it is now. The
    /// settings the token records (the detector when it was off, the limit a limit's failure
    /// ran into: [`replay::Recorded`]) are taken as recorded.
    pub(super) fn replay_one(
        &self,
        token: ReplayToken,
        encoded: String,
        origin: &str,
        body: &dyn Fn(),
        at: &'static Location<'static>,
    ) -> Report {
        // The `#[pctvb::instrument]` tracking session the execution ran under, if the token
        // names one: it decides which accesses were scheduling points.
        let _session = match crate::instrument::session_for_token(&token.strategy) {
            Ok(session) => session,
            Err(message) => return self.error_report(Error::token(origin, message)),
        };
        // Run with the settings the token records, whatever this configuration says.
        let recorded = replay::Recorded::read(&token.strategy);
        let mut as_recorded = self.clone();
        as_recorded.races = recorded.races.unwrap_or(self.races);
        as_recorded.max_steps = recorded.max_steps.unwrap_or(self.max_steps);
        as_recorded.max_threads = recorded.max_threads.unwrap_or(self.max_threads);
        // On or off as recorded: the store-conditional points are in the schedule or not.
        as_recorded.weak_cas_failures = recorded.weak_cas_failures;
        let settings = |c: &Config| (c.races, c.max_steps, c.max_threads, c.weak_cas_failures);
        if settings(&as_recorded) != settings(self) {
            return as_recorded.replay_one(token, encoded, origin, body, at);
        }
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
        report.stats.variables = exec.var_report();
        if let Some(cause) = outcome.failure {
            // The only strategy here is the replay: its errors are divergences.
            if let FailureCause::Strategy { message } = &cause {
                let execution = token.execution;
                report.error = Some(Error::ReplayDiverged { execution, message: message.clone() });
                return report;
            }
            if let Some(error) = Config::could_not_test(&exec, &cause, token.execution) {
                report.error = Some(error);
                return report;
            }
            report.failures = 1;
            let found = Found::capture(&exec, cause, token.seed, token.execution, outcome.digest);
            // Keep the token the user passed: it is the one that reproduces this execution
            // (a token of the replay strategy would not, and a long one would be written to a
            // file for nothing).
            report.failure = Some(self.report_with_token(&found, None, Some(encoded)));
        }
        report
    }

    /// The settings a replay of an execution of this run that failed with `cause` must take as
    /// they were (see [`replay::Recorded`]): the detector when it was off, the limit a limit's
    /// failure ran into.
    fn recorded(&self, cause: &FailureCause) -> replay::Recorded {
        let out_of_steps =
            matches!(cause, FailureCause::MaxSteps { .. } | FailureCause::Livelock { .. });
        replay::Recorded {
            races: (!self.races).then_some(false),
            max_steps: out_of_steps.then_some(self.max_steps),
            max_threads: matches!(cause, FailureCause::TooManyThreads { .. })
                .then_some(self.max_threads),
            weak_cas_failures: self.weak_cas_failures,
        }
    }

    /// Why pctvb could not test, when the execution `exec` just ran (execution `index`) failed
    /// with a `cause` that is not a bug: its strategy could not continue, or an internal
    /// error. `None` when `cause` is a bug, which becomes a [`Failure`].
    pub(super) fn could_not_test(
        exec: &Execution,
        cause: &FailureCause,
        index: u64,
    ) -> Option<Error> {
        report::could_not_test(cause, &exec.describe_strategy(), index)
    }

    /// The failure report of the execution `exec` just ran, which failed with `cause`, a bug
    /// (see [`Config::could_not_test`]).
    pub(super) fn failure(
        &self,
        exec: &Execution,
        cause: &FailureCause,
        seed: u64,
        index: u64,
        digest: u64,
    ) -> Failure {
        self.report_found(&Found::capture(exec, cause.clone(), seed, index, digest), None)
    }

    /// The failure report of `found`, whose cause is a bug; `minimized` is the original schedule's preemptions and
    /// the replays it took when `found` is the result of minimization.
    pub(super) fn report_found(&self, found: &Found, minimized: Option<(usize, u64)>) -> Failure {
        self.report_with_token(found, minimized, None)
    }

    /// [`Config::report_found`], with the replay token `token` when given (a replay's: the
    /// token it was given), else the token of `found`.
    fn report_with_token(
        &self,
        found: &Found,
        minimized: Option<(usize, u64)>,
        token: Option<String>,
    ) -> Failure {
        let (kind, message, thread, location) = report::explain(&found.cause);
        let captured = &found.captured;
        let label = |t: ThreadId| match captured.threads.get(t.index()).and_then(|i| i.name.clone())
        {
            Some(name) => name.chars().take(8).collect(),
            None if t == ThreadId::MAIN => "main".to_string(),
            None => format!("t{t}"),
        };
        let schedule = report::schedule_steps(
            &captured.trace,
            |o| {
                let (kind, site, _) = captured.objects[o.index()];
                describe_object(kind, site)
            },
            label,
        );
        let preemptions = schedule.iter().filter(|s| s.preempted).count();
        let token = token.unwrap_or_else(|| {
            replay::encode(&ReplayToken {
                test: self.name.clone().unwrap_or_default(),
                // With the settings the replay must take as recorded.
                strategy: self.recorded(&found.cause).tag(found.strategy.clone()),
                seed: found.seed,
                execution: found.index,
                choices: captured.choices.clone(),
                digest: found.digest,
            })
        });
        let replay_command = Some(self.replay_line(token.trim()));
        let shape = (!captured.trace.is_empty()).then(|| {
            report::measure_shape(
                &captured.trace,
                &captured.waits_on,
                |o| captured.objects[o.index()].2,
                thread.as_ref().map(|t| t.id),
                report::racing_threads(&found.cause),
            )
        });
        let trace_file = if self.trace_files && report::is_long(&schedule) {
            self.write_trace(found, &schedule)
        } else {
            None
        };
        Failure {
            kind,
            execution: found.index,
            thread,
            message,
            location,
            token: Some(token),
            replay_command,
            schedule,
            preemptions,
            minimized_from: minimized.map(|(from, _)| from),
            minimization_runs: minimized.map_or(0, |(_, runs)| runs),
            shape,
            trace_file,
            replay_diverges: None,
        }
    }

    /// Writes the whole schedule of a long failure to `target/pctvb/`, returning the path. The
    /// file is named after the run; an unnamed run's name has the seed and the process id, so
    /// unnamed runs (of one process, or of several) do not overwrite each other's files.
    fn write_trace(&self, found: &Found, schedule: &[report::ScheduleStep]) -> Option<String> {
        let dir = super::record::target_dir().join("pctvb");
        let name = crate::replay::file_name(&match self.name.as_deref() {
            Some(name) => name.to_string(),
            None => format!("run-seed{:x}-pid{}", found.seed, std::process::id()),
        });
        let path = dir.join(format!("{name}-execution-{}.txt", found.index));
        overwrite(&dir, &path, report::full_text(schedule).as_bytes()).ok()?;
        Some(path.display().to_string())
    }

    pub(super) fn empty_report(&self, strategy: String, seed: u64, planned: u64) -> Report {
        Report {
            name: self.name.clone(),
            strategy,
            seed,
            executions: 0,
            planned,
            failure: None,
            error: None,
            stats: Stats::default(),
            elapsed: Default::default(),
            replayed: false,
            failures: 0,
            profile: None,
            bound: None,
            guarantee: None,
            regressions_replayed: 0,
            notes: Vec::new(),
            systematic: None,
            time_budget_spent: false,
            only_schedule: false,
        }
    }

    /// The report of a run that could not test, for `error`.
    pub(super) fn error_report(&self, error: Error) -> Report {
        let mut report = self.empty_report(String::new(), 0, 0);
        report.error = Some(error);
        report
    }
}

/// Makes `path` (in `dir`, created when missing) hold exactly `bytes`, cheaply when it exists.
/// A file name is written again whenever a later run fails at the same execution index (a
/// test failing on every run, or many runs in one process), and truncating a file to zero
/// makes some file systems (ext4) flush it to disk when it is closed, which costs more than
/// the rest of the report. So the old contents are overwritten in place and only a longer
/// remainder is cut off.
fn overwrite(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let open = || std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(path);
    let mut file = match open() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir)?;
            open()?
        }
        other => other?,
    };
    let old = file.metadata()?.len();
    file.write_all(bytes)?;
    if old > bytes.len() as u64 {
        file.set_len(bytes.len() as u64)?;
    }
    Ok(())
}
