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
//! and empty reports), `env` (`PCTVB_*` variables).

mod config;
mod env;
mod kind;
mod minimize;
mod outcome;
mod parallel;
mod progress;
mod regressions;
mod search;
mod systematic;

use std::panic::Location;
use std::time::Instant;

pub use config::{
    Config, DEFAULT_DEPTH, DEFAULT_ITERATIONS, DEFAULT_MAX_STEPS, DEFAULT_MAX_THREADS,
    DEFAULT_PROFILE_RUNS, DEFAULT_STACK_SIZE, DEFAULT_THREADS, DEFAULT_VARS, DEFAULT_WALK_EVERY,
    PROFILE_INDEX_BASE,
};
pub use kind::StrategyKind;

use crate::error::Error;
use crate::replay::{self, ReplayToken};
use crate::report::Report;
use crate::runtime::Limits;
use config::Budget;

enum Plan {
    /// `effective` is this configuration with the environment's overrides applied.
    Search { seed: u64, budget: Budget, kind: StrategyKind, effective: Box<Config> },
    Replay {
        token: ReplayToken,
        encoded: String,
        /// Where the token came from, for errors: `PCTVB_REPLAY` or `Config::replay`.
        origin: &'static str,
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
        let started = Instant::now();
        let at = Location::caller();
        if crate::runtime::in_execution() {
            let message = "a pctvb run was started inside the execution of another run; nested \
                           runs are not supported: start the inner run outside the outer body, \
                           or call the inner body directly";
            return self.error_report(Error::Unsupported { message: message.into() });
        }
        let mut report = match self.resolve() {
            Ok(Plan::Search { seed, budget, kind, effective }) => {
                let mut report = effective.search_with_regressions(kind, seed, budget, &body, at);
                report.notes.extend(variable_origins(&report));
                report
            }
            Ok(Plan::Replay { token, encoded, origin }) => {
                self.replay_one(token, encoded, origin, &body, at)
            }
            Err(error) => self.error_report(error),
        };
        report.elapsed = started.elapsed();
        report
    }

    /// Like [`Config::run`], but a run that could not test is the `Err` case, so `?` keeps
    /// it apart from the report of a run that tested (which passed, or found a bug).
    ///
    /// ```
    /// let error = pctvb::Config::new().replay("pctvb1-garbage").try_run(|| {}).unwrap_err();
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
        let (replayed, notes) = match self.replay_saved(&path, body, at) {
            Ok(done) => done,
            Err(report) => return *report,
        };
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
        let overrides = if self.read_env { env::read()? } else { env::Overrides::default() };
        let token_text = match (&self.replay, overrides.replay) {
            (Some(t), _) => Some((t.clone(), "Config::replay")),
            (None, Some(t)) => Some((t, replay::ENV_VAR)),
            (None, None) => None,
        };
        if let Some((text, origin)) = token_text {
            let token = replay::decode(&text).map_err(|e| {
                Error::token(
                    origin,
                    format!(
                        "invalid replay token: {e}. Copy the whole token from the failure report \
                         into {origin}, or unset it to search again"
                    ),
                )
            })?;
            let for_other_test = self.replay.is_none()
                && !token.test.is_empty()
                && self.name.as_deref().is_some_and(|n| n != token.test);
            if !for_other_test {
                return Ok(Plan::Replay { token, encoded: text, origin });
            }
        }
        let kind = self.resolved_strategy().map_err(|e| Error::config("strategy", e))?;
        let seed = overrides.seed.or(self.seed).unwrap_or_else(rand::random);
        let budget = overrides.iterations.map(Budget::Iterations).unwrap_or(self.budget);
        let mut effective = Box::new(self.clone());
        effective.workers =
            Some(overrides.workers.or(self.workers).unwrap_or_else(default_workers));
        effective.shard = overrides.shard.or(self.shard);
        Ok(Plan::Search { seed, budget, kind, effective })
    }

    fn limits(&self) -> Limits {
        let races = match self.read_env.then(env::races).flatten() {
            Some(on) => on,
            None => self.races,
        };
        Limits { max_steps: self.max_steps, max_threads: self.max_threads, races }
    }
}

/// The available parallelism, or 1 when the test harness was asked to run one test at a time
/// (`--test-threads=1` or `RUST_TEST_THREADS=1`), which usually means "do not run in
/// parallel".
fn default_workers() -> usize {
    let args: Vec<String> = std::env::args().collect();
    let one_at_a_time = std::env::var("RUST_TEST_THREADS").is_ok_and(|v| v.trim() == "1")
        || args.iter().any(|a| a == "--test-threads=1")
        || args.windows(2).any(|w| w[0] == "--test-threads" && w[1] == "1");
    if one_at_a_time {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
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
