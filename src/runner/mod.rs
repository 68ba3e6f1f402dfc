//! The runner: configuration, the loop over executions, and turning the first failure into a
//! [`Report`] with a replay token.
//!
//! This module owns [`Config`] (builder, defaults, environment overrides), the choice of
//! [`StrategyKind`], the search loop with its profiling and guarantee bookkeeping, and the
//! replay of one token. It relies on the runtime to execute one execution and on `replay` for
//! tokens; it never touches a thread or an object directly.
//!
//! Files: `config` (builder and defaults), `kind` (strategies by name and parameters),
//! `search` (profiling, the execution loop, counts and bounds), `outcome` (failures, replays
//! and empty reports), `env` (`PCTVB_*` variables), `record` (the execution a named run is in,
//! kept where a crash of the process cannot lose it).

mod config;
mod enumerate;
mod env;
mod kind;
mod minimize;
mod outcome;
mod parallel;
mod progress;
mod record;
mod regressions;
mod search;
mod speed_hint;
mod systematic;
mod watch;

use std::io::Write as _;
use std::panic::Location;
use std::sync::Arc;
use std::time::Duration;

use crate::runtime::real_now;

pub use config::{
    Config, DEFAULT_EXPLORE_EVERY, DEFAULT_PROFILE_RUNS, MAX_DEPTH, MAX_STACK_SIZE, MIN_STACK_SIZE,
    PROFILE_INDEX_BASE,
};
pub use kind::StrategyKind;

use crate::error::Error;
use crate::replay::{self, ReplayToken};
use crate::report::Report;
use crate::runtime::{Limits, RunInfo};
use config::Budget;

enum Plan {
    /// `effective` is this configuration with the environment's overrides applied.
    Search {
        seed: u64,
        budget: Budget,
        kind: StrategyKind,
        effective: Box<Config>,
        /// What the user must know of how this run differs from the code's: why a
        /// `PCTVB_REPLAY` token was not replayed here (it belongs to another test), or that
        /// `PCTVB_ITERATIONS` replaced the code's confidence target.
        notes: Vec<String>,
    },
    Replay {
        token: ReplayToken,
        encoded: String,
        /// Where the token came from, for errors: `PCTVB_REPLAY` or `Config::replay`, with
        /// the file a `@<path>` value named.
        origin: String,
        /// `PCTVB_WATCHDOG`, in seconds.
        watchdog: Option<u64>,
        /// `PCTVB_RACES`.
        races: Option<bool>,
        /// `PCTVB_TRACE` and `PCTVB_SHOW_PANICS`.
        trace_files: Option<bool>,
        show_panics: Option<bool>,
    },
}

impl Config {
    /// Runs `body` as up to `iterations` executions and reports the first failure.
    ///
    /// The body may borrow from the caller: every logical thread finishes (or is abandoned)
    /// before `run` returns. It must be `Sync` because executions of the random walks run
    /// on several OS threads at once (see [`Config::workers`]).
    ///
    /// A run that could not test (an invalid configuration or token, a replay that diverged,
    /// a strategy that could not continue) reports why in [`Report::error`], never as a
    /// [`Report::failure`]; [`Config::try_run`] returns it as an `Err` instead.
    #[track_caller]
    pub fn run<F: Fn() + Sync>(&self, body: F) -> Report {
        let started = real_now();
        let at = Location::caller();
        if crate::runtime::in_execution() {
            // The outer run could not test: its execution ends here, with this error as the
            // outer run's `Report::error`. Returning an error report to the body instead let a
            // body that ignored it pass without running its inner test, and one that asserted
            // it report "found a bug" and save the execution as a regression.
            let message = format!(
                "a pctvb run was started inside the execution of another run (at {at}); nested \
                 runs are not supported: start the inner run outside the outer body, or call \
                 the inner body directly"
            );
            crate::runtime::with_current(|ex| {
                if let Some(ex) = ex {
                    ex.fail(crate::runtime::FailureCause::Unsupported { message: message.clone() })
                }
            });
            return self.error_report(Error::Unsupported { message });
        }
        let mut report = match self.resolve() {
            Ok(Plan::Search { seed, budget, kind, mut effective, notes }) => {
                for note in &notes {
                    // Past the harness's capture: the note explains why this test did not
                    // replay, or did not run as its code says, whether it passes or fails.
                    let _ = writeln!(std::io::stderr(), "pctvb: {note}");
                }
                effective.deadline = effective.time_budget.map(|t| started + t);
                // The race check of instrumented pointer accesses needs their hooks armed.
                let _pointers = effective.races.then(crate::instrument::arm_pointer_checks);
                let record = effective.start_run(seed, None);
                let mut report = effective.search_with_regressions(kind, seed, budget, &body, at);
                report.notes.extend(notes);
                report.notes.extend(record.and_then(|r| r.unfinished_note()));
                report.notes.extend(variable_origins(&report));
                report.notes.extend(unscheduled_cells(&report));
                effective.finish_run();
                report
            }
            Ok(Plan::Replay {
                token,
                encoded,
                origin,
                watchdog,
                races,
                trace_files,
                show_panics,
            }) => {
                let mut this = self.clone();
                this.races = races.unwrap_or(this.races);
                this.trace_files = trace_files.unwrap_or(this.trace_files);
                this.show_panics = show_panics.unwrap_or(this.show_panics);
                if let Some(secs) = watchdog {
                    this.watchdog = Duration::from_secs(secs);
                }
                let _pointers = this.races.then(crate::instrument::arm_pointer_checks);
                this.start_run(token.seed, Some(&encoded));
                let report = this.replay_one(token, encoded, &origin, &body, at);
                this.finish_run();
                report
            }
            Err(error) => self.error_report(error),
        };
        report.elapsed = real_now().duration_since(started);
        if report.error.is_none() {
            report.notes.extend(speed_hint::note(report.elapsed));
        }
        report
    }

    /// Like [`Config::run`], but a run that could not test is the `Err` case, so `?` keeps
    /// it apart from the report of a run that tested (which passed, or found a bug).
    ///
    /// ```
    /// let error = pctvb::Config::new().replay("pctvb2-garbage").try_run(|| {}).unwrap_err();
    /// assert!(matches!(error, pctvb::Error::Token { .. }), "{error}");
    /// ```
    #[track_caller]
    pub fn try_run<F: Fn() + Sync>(&self, body: F) -> Result<Report, Error> {
        let mut report = self.run(body);
        match report.error.take() {
            Some(error) => Err(error),
            None => Ok(report),
        }
    }

    /// Replays the saved failures first, then searches; saves a new failure.
    fn search_with_regressions(
        &self,
        kind: StrategyKind,
        seed: u64,
        budget: Budget,
        body: &(dyn Fn() + Sync),
        at: &'static Location<'static>,
    ) -> Report {
        let Some(path) = self.regression_path() else {
            return self.search(kind, seed, budget, body, at);
        };
        let (mut replayed, mut notes) = match self.replay_saved(&path, body, at) {
            Ok(done) => done,
            Err(report) => return *report,
        };
        // The file of this test before files were per target, shared by every target with a
        // test of this path: its tokens for this test still replay, until the user moves them.
        if let Some(legacy) = self.legacy_regression_path().filter(|p| p.exists()) {
            let (more, more_notes) = match self.replay_saved(&legacy, body, at) {
                Ok(done) => done,
                Err(report) => return *report,
            };
            replayed += more;
            notes.extend(more_notes);
            if more > 0 {
                notes.push(format!(
                    "{} is this test's regression file from before each cargo target had its \
                     own: it was replayed too, but every target with a test of this path \
                     (a package's lib and bin) replays it; move its lines to {} (this \
                     target's file) or to the other targets' files, and delete it",
                    legacy.display(),
                    path.display()
                ));
            }
        }
        // "fixed?" asks the user to act (delete the line when sure): past the harness's
        // capture, or a passing test would keep it to itself.
        for note in &notes {
            let _ = writeln!(std::io::stderr(), "pctvb: {note}");
        }
        let mut report = self.search(kind, seed, budget, body, at);
        report.regressions_replayed = replayed;
        report.notes.extend(notes);
        if let Some(failure) = &report.failure {
            if let Some(note) = regressions::save(&path, failure) {
                report.notes.push(note);
            }
        }
        report
    }

    fn resolve(&self) -> Result<Plan, Error> {
        // Before anything runs on a stack of this size, a replay included.
        if self.stack_size < config::MIN_STACK_SIZE {
            return Err(Error::config(
                "stack_size",
                format!(
                    "stack_size {} is below the minimum of {} bytes (64 KiB): pctvb's own start \
                     of a logical thread needs about 12 KiB of it, so a smaller stack would end \
                     the process with a stack overflow; use at least {} (the default is {}, 2 \
                     MiB)",
                    self.stack_size,
                    config::MIN_STACK_SIZE,
                    config::MIN_STACK_SIZE,
                    config::DEFAULT_STACK_SIZE
                ),
            ));
        }
        if self.stack_size > config::MAX_STACK_SIZE {
            return Err(Error::config(
                "stack_size",
                format!(
                    "stack_size {} is larger than any stack can be: a stack is one mapping of \
                     address space, and no mapping spans more than isize::MAX = {} bytes (the \
                     allocator's guard page and rounding to pages would overflow); use a size \
                     the machine can map, e.g. the default {} (2 MiB), or a few MiB for deep \
                     recursion",
                    self.stack_size,
                    config::MAX_STACK_SIZE,
                    config::DEFAULT_STACK_SIZE
                ),
            ));
        }
        let overrides = if self.read_env { env::read()? } else { env::Overrides::default() };
        let token_text = match (&self.replay, overrides.replay) {
            (Some(t), _) => Some((t.clone(), "Config::replay")),
            (None, Some(t)) => Some((t, replay::ENV_VAR)),
            (None, None) => None,
        };
        let mut notes = Vec::new();
        if let Some((given, source)) = token_text {
            let way_out = match source {
                "Config::replay" => "or drop Config::replay to search again",
                _ => "or unset it to search again",
            };
            let (text, origin) = read_token_file(given, source, way_out)?;
            let token = replay::decode(&text).map_err(|e| {
                // The token's error says how to get a good one; only the way out is added
                // (saying "copy it again" twice read as a stutter).
                let what = match origin != source {
                    true => format!("{origin} (the file's text)"),
                    false => origin.clone(),
                };
                Error::token(&origin, format!("invalid replay token in {what}: {e}; {way_out}"))
            })?;
            match self.token_for(&token, &text) {
                Ok(None) => {
                    if source == replay::ENV_VAR {
                        replay::note_env_token_replayed();
                    }
                    return Ok(Plan::Replay {
                        token,
                        encoded: text,
                        origin,
                        watchdog: overrides.watchdog,
                        races: overrides.races,
                        trace_files: overrides.trace_files,
                        show_panics: overrides.show_panics,
                    });
                }
                Ok(Some(n)) => notes.push(n),
                Err(error) => return Err(error),
            }
        }
        // The settings the environment makes that choose the strategy, for its errors: the code
        // may be fine as written.
        let from_env: Vec<String> = [
            overrides.strategy.as_ref().map(|k| format!("PCTVB_STRATEGY={}", k.name())),
            overrides.explorer.as_ref().map(|k| format!("PCTVB_EXPLORER={}", k.name())),
            overrides.confidence.map(|c| format!("PCTVB_CONFIDENCE={c}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut effective = Box::new(self.clone());
        // PCTVB_STRATEGY replaces the code's strategy unless the code already runs that one
        // (its parameters then stay, e.g. a preemption bound the code set).
        if let Some(kind) = overrides.strategy {
            if effective.strategy.as_ref().map(StrategyKind::name) != Some(kind.name()) {
                effective.strategy = Some(kind);
            }
        }
        if let Some(p) = overrides.confidence {
            effective.budget = Budget::Confidence(p);
        }
        if let Some(kind) = overrides.explorer {
            effective.explorer = Some(kind);
        }
        effective.enumerate = overrides.enumerate.unwrap_or(effective.enumerate);
        let kind = effective.resolved_strategy().map_err(|e| match from_env.as_slice() {
            [] => Error::config("strategy", e),
            set => Error::config(
                "strategy",
                format!(
                    "{e} (the environment set {}: change or unset it to run this test as \
                         its code says)",
                    set.join(" and ")
                ),
            ),
        })?;
        notes.extend(effective.unused_explorer_settings(&kind, self.explorer.as_ref()));
        let seed = overrides.seed.or(self.seed).unwrap_or_else(fresh_seed);
        // PCTVB_ITERATIONS overrides the code's budget as every PCTVB_* overrides the code,
        // a confidence target included (a CI job's fixed budget); the run then says so, as
        // its statement gives the confidence of those executions, not the target's.
        // (PCTVB_CONFIDENCE with it is an error, env::read.)
        if let (Some(n), Budget::Confidence(c)) = (overrides.iterations, effective.budget) {
            notes.push(format!(
                "PCTVB_ITERATIONS={n} replaced this test's confidence target {c}: the run \
                 ran at most {n} executions and its statement gives the confidence they reach, \
                 not {c}; unset PCTVB_ITERATIONS to run to the target"
            ));
        }
        let budget = overrides.iterations.map(Budget::Iterations).unwrap_or(effective.budget);
        if budget == Budget::Iterations(0) {
            return Err(Error::config(
                "iterations",
                "iterations(0) would run no execution and pass without testing anything; use 1 \
                 or more",
            ));
        }
        // `None`: the default, asked of the machine only when a search goes parallel.
        effective.workers = overrides.workers.or(self.workers);
        effective.shard = overrides.shard.or(self.shard);
        effective.time_budget = overrides.time.or(self.time_budget);
        effective.progress = overrides.progress;
        if let Some(secs) = overrides.watchdog {
            effective.watchdog = Duration::from_secs(secs);
        }
        effective.races = overrides.races.unwrap_or(self.races);
        effective.weak_cas_failures = overrides.weak_cas_failures.unwrap_or(self.weak_cas_failures);
        effective.trace_files = overrides.trace_files.unwrap_or(self.trace_files);
        effective.show_panics = overrides.show_panics.unwrap_or(self.show_panics);
        Ok(Plan::Search { seed, budget, kind, effective, notes })
    }

    /// Whether this run replays `token` (read from `PCTVB_REPLAY`, `encoded`): `Ok(None)` when
    /// it does, `Ok(Some(note))` when the token belongs to another test that runs in this
    /// process too (this run searches, and says why), an error when it belongs to a test this
    /// process does not run (see [`replay`]'s "Which test a token replays"). A token given in
    /// code ([`Config::replay`]) and a run without a name always replay.
    fn token_for(&self, token: &ReplayToken, encoded: &str) -> Result<Option<String>, Error> {
        let Some(name) = self.name.as_deref().filter(|_| self.replay.is_none()) else {
            return Ok(None);
        };
        let args: Vec<String> = std::env::args().skip(1).collect();
        let recorded = match token.test.as_str() {
            "" => "an unnamed run (Config::run without Config::name)".to_string(),
            test => format!("test `{test}`"),
        };
        match replay::token_for(&token.test, name, &args) {
            replay::TokenFor::ThisTest => Ok(None),
            replay::TokenFor::OtherTest => Ok(Some(format!(
                "PCTVB_REPLAY was recorded for {recorded}, not for this test (`{name}`): this \
                 test ran its normal search, not a replay; the token's own test replays it"
            ))),
            replay::TokenFor::NotSelected => {
                let line = replay::command_line(
                    &config::line_value(&token.test, encoded.trim()),
                    Some(&token.test),
                    self.cargo_target.as_ref(),
                );
                Err(Error::token(
                    replay::ENV_VAR,
                    format!(
                        "PCTVB_REPLAY holds a token recorded for {recorded}, not for this test \
                         (`{name}`), and this run does not include that test, so nothing would \
                         replay it. To replay it, run:\n    {line}\nIf that test was renamed or \
                         removed, the token no longer applies: unset PCTVB_REPLAY and run the \
                         test again to get a new one"
                    ),
                ))
            }
        }
    }

    /// Prepares what crash reports say about the run seeded `seed` (a replay of the token
    /// `replay`, or a search), and for a named search the record of the execution it is in
    /// (see `record.rs`), which it returns: after the run, it says what an earlier run of the
    /// same test that did not finish left behind, if this run opened the file and found that.
    fn start_run(&mut self, seed: u64, replay: Option<&str>) -> Option<Arc<record::Record>> {
        let template = self.replay_line("\0");
        let rerun_line = match replay {
            Some(token) => self.replay_line(token.trim()),
            None if self.name.is_some() || self.rerun.is_some() => {
                template.replace(&format!("{}=\0", replay::ENV_VAR), &format!("PCTVB_SEED={seed}"))
            }
            None => format!("PCTVB_SEED={seed} (or Config::seed({seed}) in code)"),
        };
        let test = self.name.clone().unwrap_or_else(|| "(unnamed run)".to_string());
        let record = match (&self.name, replay) {
            (Some(name), None) => Some(Arc::new(record::Record::new(name, seed, &rerun_line))),
            _ => None,
        };
        self.run_info = Some(Arc::new(RunInfo {
            test,
            token_name: self.name.clone().unwrap_or_default(),
            rerun_line,
            replay_template: template,
            seed,
            stack_size: self.stack_size,
            watchdog: (!self.watchdog.is_zero()).then_some(self.watchdog),
            record: record.clone().map(|r| Box::new(r) as Box<dyn crate::runtime::ExecutionRecord>),
            encode_token: Some(|run, strategy, execution, choices, digest| {
                let token = replay::encode(&ReplayToken {
                    test: run.token_name.clone(),
                    strategy: replay::Recorded {
                        races: (!run.races).then_some(false),
                        weak_cas_failures: run.weak_cas_failures,
                        ..Default::default()
                    }
                    .tag(strategy),
                    seed: run.seed,
                    execution,
                    choices,
                    digest,
                });
                // What the crash report's replay line takes: a long token's file.
                config::line_value(&run.token_name, &token)
            }),
            clock_base: crate::runtime::ClockBase::now(),
            races: self.races,
            weak_cas_failures: self.weak_cas_failures,
        }));
        record
    }

    /// The run ended (the process did not die): a crash after it names it.
    fn finish_run(&self) {
        if let Some(run) = &self.run_info {
            crate::runtime::note_finished_run(run);
        }
    }

    fn limits(&self) -> Limits {
        let run = match &self.run_info {
            Some(run) => run.clone(),
            None => Arc::new(RunInfo::anonymous(self.stack_size)),
        };
        Limits {
            max_steps: self.max_steps,
            max_threads: self.max_threads,
            races: self.races,
            weak_cas_failures: self.weak_cas_failures,
            show_panics: self.show_panics,
            run,
        }
    }
}

/// The token text a `PCTVB_REPLAY` or `Config::replay` value (`given`, from `source`) gives,
/// and where it came from, for errors: the value itself, from `source`; or for a `@<path>`
/// value (a token too long for a command line, see `replay`), the file's text, from
/// `<source>=@<path>`. A file that cannot be read is an error naming the variable (or
/// `Config::replay`) and the path, ending with `way_out`.
fn read_token_file(
    given: String,
    source: &'static str,
    way_out: &str,
) -> Result<(String, String), Error> {
    let Some(path) = replay::token_file(&given) else {
        return Ok((given, source.to_string()));
    };
    let origin = match source {
        "Config::replay" => format!("Config::replay(\"{}{path}\")", replay::FILE_MARK),
        _ => format!("{source}={}{path}", replay::FILE_MARK),
    };
    match replay::read_token_file(path) {
        // The file ends with a newline; a token given in the line has none.
        Ok(text) => Ok((text.trim().to_string(), origin)),
        Err(why) => Err(Error::token(
            &origin,
            format!(
                "{origin} names a file to read the replay token from, but {why}. A failure \
                 report's replay line names the file pctvb wrote its token to (in the target \
                 directory's pctvb/, which `cargo clean` empties; a #[pctvb::test] also \
                 replays the failure from its regression file when it runs again): run that \
                 line as printed, {way_out}"
            ),
        )),
    }
}

/// A random seed for a run that was given none. std's `RandomState` keys are random per OS
/// thread (read from the OS once per thread, which the engine's maps do anyway) and differ at
/// each call; hashing the clock with them gives an unpredictable seed without `rand`'s thread
/// generator, whose set-up on each new thread (a `getrandom` call and a ChaCha block) cost
/// more than a loom suite's one-execution model (issue #17).
fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}

/// The available parallelism, or 1 when the test harness was asked to run one test at a time
/// (`--test-threads=1` or `RUST_TEST_THREADS=1`), which usually means "do not run in
/// parallel".
pub(super) fn default_workers() -> usize {
    let args: Vec<String> = std::env::args().collect();
    let one_at_a_time = std::env::var("RUST_TEST_THREADS").is_ok_and(|v| v.trim() == "1")
        || args.iter().any(|a| a == "--test-threads=1")
        || args.windows(2).any(|w| w[0] == "--test-threads" && w[1] == "1");
    if one_at_a_time {
        1
    } else {
        // Asked once per process: std reads the cgroup files (/proc/self/cgroup, the CPU
        // quota) at every call, which cost more than a whole one-schedule run (a loom
        // suite's one-thread models, one run each: issue #17's event-listener row).
        static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

/// What a guarantee's variables are when the run had cells whose accesses are race checks but
/// no scheduling points (pctvb-loom's `UnsafeCell`, `VarKind::CheckedCell`): the guarantee
/// counts only the objects whose operations are scheduling points, so the sentence names the
/// class it covers.
fn unscheduled_cells(report: &Report) -> Option<String> {
    // A statement of either kind: a sampled guarantee, or an enumerated class's (the
    // systematic search's), whose levels count the same scheduling points.
    if report.guarantee.is_none() && report.systematic.is_none() {
        return None;
    }
    let cells = report
        .stats
        .variables
        .iter()
        .filter(|(info, _)| info.kind == crate::vars::VarKind::CheckedCell)
        .count();
    (cells > 0).then(|| {
        format!(
            "the accesses of {} are checked for data races, not scheduled (as in loom): \
             the guarantee's variables and k are the synchronising operations' (atomics, \
             locks, ...), whose order decides every cell access's in an execution with no \
             race",
            crate::report::plural(cells, "UnsafeCell variable")
        )
    })
}

/// Where the run's variables came from, when the binary has `#[pctvb::instrument]`ed code:
/// variables found by its static pass and variables met at run time share one identity, their
/// creation site.
fn variable_origins(report: &Report) -> Option<String> {
    let registered = crate::instrument::variable_count();
    if registered == 0 {
        return None;
    }
    let infos: Vec<_> = report.stats.variables.iter().map(|(info, _)| info.clone()).collect();
    let (found, only_run) = crate::instrument::origin_counts(&infos);
    Some(format!(
        "variables: {found} of the run's {} were also found by the static pass of \
         #[pctvb::instrument] ({registered} registered, {} never met by this run), {only_run} \
         only at run time (created outside instrumented code)",
        infos.len(),
        registered.saturating_sub(found)
    ))
}

#[cfg(test)]
mod tests {
    use super::fresh_seed;

    /// Seeds drawn in a row and on several threads at once all differ (a chance collision
    /// among 4,000 64-bit hashes is about 4e-13).
    #[test]
    fn fresh_seeds_differ_within_a_thread_and_across_threads() {
        let mut seeds: Vec<u64> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..1000).map(|_| fresh_seed()).collect::<Vec<_>>()))
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        seeds.sort_unstable();
        seeds.dedup();
        assert_eq!(seeds.len(), 4000);
    }
}
