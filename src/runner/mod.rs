//! The runner: configuration, the loop over executions, and turning the first failure into a
//! [`Report`] with a replay token.
//!
//! This module owns [`Config`] (builder, defaults, environment overrides) and the run loop. It
//! relies on the runtime to execute one execution and on `replay` for tokens; it never touches
//! a thread or an object directly.

mod env;

use std::collections::HashSet;
use std::panic::Location;
use std::time::Instant;

use crate::replay::{self, ReplayToken};
use crate::report::{self, Failure, FailureKind, Report, Stats};
use crate::runtime::{Execution, Limits, StackPool};
use crate::schedulers::{Random, Replay, Strategy};

/// Which scheduling strategy a run uses.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StrategyKind {
    /// Uniform random choice among runnable threads at every scheduling point.
    Random,
}

impl StrategyKind {
    fn build(&self) -> Box<dyn Strategy> {
        match self {
            StrategyKind::Random => Box::new(Random),
        }
    }
}

/// How to run a test body: strategy, budget, seed and limits.
///
/// ```
/// use pctvb::sync::{Arc, atomic::{AtomicUsize, Ordering}};
/// let report = pctvb::Config::new().iterations(200).seed(7).run(|| {
///     let n = Arc::new(AtomicUsize::new(0));
///     let n2 = n.clone();
///     let h = pctvb::thread::spawn(move || { n2.fetch_add(1, Ordering::SeqCst); });
///     n.fetch_add(1, Ordering::SeqCst);
///     h.join().unwrap();
///     assert_eq!(n.load(Ordering::SeqCst), 2);
/// });
/// assert!(report.is_ok());
/// assert_eq!(report.executions, 200);
/// ```
///
/// Environment variables override the configuration, so a command line can change a test
/// without editing it: `PCTVB_SEED` (decimal or `0x` hex), `PCTVB_ITERATIONS`, and
/// `PCTVB_REPLAY` (a token from a failure report; it applies to the test it was recorded in).
#[derive(Clone, Debug)]
pub struct Config {
    name: Option<String>,
    strategy: StrategyKind,
    iterations: u64,
    seed: Option<u64>,
    max_steps: u64,
    max_threads: usize,
    stack_size: usize,
    replay: Option<String>,
    rerun: Option<String>,
    read_env: bool,
}

/// Default number of executions.
pub const DEFAULT_ITERATIONS: u64 = 1000;
/// Default scheduling-point limit of one execution.
pub const DEFAULT_MAX_STEPS: u64 = 100_000;
/// Default thread limit of one execution.
pub const DEFAULT_MAX_THREADS: usize = 4096;
/// Default stack size of a logical thread.
pub const DEFAULT_STACK_SIZE: usize = 256 * 1024;

impl Default for Config {
    fn default() -> Config {
        Config::new()
    }
}

impl Config {
    /// The defaults: random strategy, 1000 executions, a fresh random seed, 100,000 scheduling
    /// points and 4096 threads per execution, 256 KiB stacks, environment overrides on.
    pub fn new() -> Config {
        Config {
            name: None,
            strategy: StrategyKind::Random,
            iterations: DEFAULT_ITERATIONS,
            seed: None,
            max_steps: DEFAULT_MAX_STEPS,
            max_threads: DEFAULT_MAX_THREADS,
            stack_size: DEFAULT_STACK_SIZE,
            replay: None,
            rerun: None,
            read_env: true,
        }
    }

    /// Names the run (the full test path, e.g. `my_crate::tests::transfer`); the name goes
    /// into replay tokens and the replay command line.
    pub fn name(mut self, name: impl Into<String>) -> Config {
        self.name = Some(name.into());
        self
    }

    /// The scheduling strategy.
    pub fn strategy(mut self, strategy: StrategyKind) -> Config {
        self.strategy = strategy;
        self
    }

    /// How many executions to run at most (the run stops at the first failure).
    pub fn iterations(mut self, iterations: u64) -> Config {
        self.iterations = iterations;
        self
    }

    /// The run seed; without one, each run draws a fresh seed (failures stay reproducible
    /// through their replay token).
    pub fn seed(mut self, seed: u64) -> Config {
        self.seed = Some(seed);
        self
    }

    /// Scheduling points one execution may take before it fails as a runaway.
    pub fn max_steps(mut self, max_steps: u64) -> Config {
        self.max_steps = max_steps;
        self
    }

    /// Threads one execution may create (the test body's thread included).
    pub fn max_threads(mut self, max_threads: usize) -> Config {
        self.max_threads = max_threads;
        self
    }

    /// Stack size of every logical thread.
    pub fn stack_size(mut self, bytes: usize) -> Config {
        self.stack_size = bytes;
        self
    }

    /// Replays exactly the execution a token from a failure report describes.
    pub fn replay(mut self, token: impl Into<String>) -> Config {
        self.replay = Some(token.into());
        self
    }

    /// The command that re-runs this run, used to print the replay line
    /// (`PCTVB_REPLAY=<token> <command>`). Defaults to `cargo test -- --exact <test path>` for a
    /// named run.
    pub fn rerun_command(mut self, command: impl Into<String>) -> Config {
        self.rerun = Some(command.into());
        self
    }

    fn replay_line(&self, token: &str) -> String {
        match &self.rerun {
            Some(cmd) => format!("{}={token} {cmd}", replay::ENV_VAR),
            None => replay::command_line(token, self.name.as_deref()),
        }
    }

    /// Ignores `PCTVB_*` environment variables (for tests of pctvb itself).
    pub fn ignore_env(mut self) -> Config {
        self.read_env = false;
        self
    }

    /// Runs `body` as up to `iterations` executions and reports the first failure.
    ///
    /// The body may borrow from the caller: every logical thread finishes (or is abandoned)
    /// before `run` returns.
    #[track_caller]
    pub fn run<F: Fn()>(&self, body: F) -> Report {
        let started = Instant::now();
        let at = Location::caller();
        let mut report = match self.resolve() {
            Ok(Plan::Search { seed, iterations }) => self.search(seed, iterations, &body, at),
            Ok(Plan::Replay { token, encoded }) => self.replay_one(token, encoded, &body, at),
            Err((kind, message)) => self.error_report(kind, message),
        };
        report.elapsed = started.elapsed();
        report
    }

    fn resolve(&self) -> Result<Plan, (FailureKind, String)> {
        let overrides = if self.read_env { env::read()? } else { env::Overrides::default() };
        let token_text = match (&self.replay, overrides.replay) {
            (Some(t), _) => Some(t.clone()),
            (None, Some(t)) => Some(t),
            (None, None) => None,
        };
        if let Some(text) = token_text {
            let token = replay::decode(&text)
                .map_err(|e| (FailureKind::BadToken, format!("invalid replay token: {e}")))?;
            let for_other_test = self.replay.is_none()
                && !token.test.is_empty()
                && self.name.as_deref().is_some_and(|n| n != token.test);
            if !for_other_test {
                return Ok(Plan::Replay { token, encoded: text });
            }
        }
        let seed = overrides.seed.or(self.seed).unwrap_or_else(rand::random);
        let iterations = overrides.iterations.unwrap_or(self.iterations);
        Ok(Plan::Search { seed, iterations })
    }

    fn limits(&self) -> Limits {
        Limits { max_steps: self.max_steps, max_threads: self.max_threads }
    }

    fn search(
        &self,
        seed: u64,
        iterations: u64,
        body: &dyn Fn(),
        at: &'static Location<'static>,
    ) -> Report {
        let exec = Execution::new(self.strategy.build(), self.limits());
        let mut pool = StackPool::new(self.stack_size);
        let mut report = self.empty_report(exec.describe_strategy(), seed, iterations);
        let mut schedules = HashSet::new();
        for index in 0..iterations {
            let outcome = exec.run_one(&mut pool, seed, index, body, at);
            report.executions += 1;
            report.stats.max_threads = report.stats.max_threads.max(outcome.threads);
            report.stats.max_steps = report.stats.max_steps.max(outcome.steps);
            schedules.insert(exec.schedule_hash());
            if let Some(cause) = outcome.failure {
                report.failure = Some(self.failure(&exec, &cause, seed, index, outcome.digest));
                break;
            }
        }
        report.stats.distinct_schedules = schedules.len() as u64;
        report.stats.variables = exec.var_report();
        report
    }

    fn replay_one(
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

    fn failure(
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

    fn empty_report(&self, strategy: String, seed: u64, planned: u64) -> Report {
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
        }
    }

    fn error_report(&self, kind: FailureKind, message: String) -> Report {
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

enum Plan {
    Search { seed: u64, iterations: u64 },
    Replay { token: ReplayToken, encoded: String },
}
