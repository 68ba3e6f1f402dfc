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

use crate::guarantee::{self, BoundFactors, BoundParams, GuaranteeError, GuaranteeStatement};
use crate::replay::{self, ReplayToken};
use crate::report::{self, Failure, FailureKind, Profile, Report, Stats};
use crate::runtime::{Execution, Limits, StackPool};
use crate::schedulers::{Combined, Pct, Pctvb, Random, Replay, Strategy, ThreadBound};

/// Which scheduling strategy a run uses.
///
/// Every strategy but `Random` is a priority strategy with a computed guarantee: the runner
/// first makes [`Config::profile_runs`] profiling executions to measure the counts its bound
/// needs (see [`crate::guarantee`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StrategyKind {
    /// Uniform random choice among runnable threads at every scheduling point; no guarantee.
    Random,
    /// PCT for bugs of depth `depth` ([`crate::schedulers::Pct`]).
    Pct {
        /// Bug depth `d` (`d - 1` change points), at least 1.
        depth: u32,
    },
    /// PCT with variable bounding ([`crate::schedulers::Pctvb`]).
    Pctvb {
        /// Bug depth `d`, at least 1.
        depth: u32,
        /// Variables `v` the change points are placed on.
        vars: u32,
    },
    /// Thread bounding with step change points ([`crate::schedulers::ThreadBound`]).
    ThreadBound {
        /// Threads `t` involved in the bug.
        threads: u32,
        /// Preemptions `c` (depth `c + 1`).
        preemptions: u32,
    },
    /// Variable bounding with thread-bounding priorities ([`crate::schedulers::Combined`]),
    /// the default when a depth, variable or thread bound or a confidence is given.
    Combined {
        /// Bug depth `d`, at least 1.
        depth: u32,
        /// Variables `v` the change points are placed on.
        vars: u32,
        /// Threads `t` involved in the bug.
        threads: u32,
    },
}

/// Default bug depth of the priority strategies: one preemption (`c = 1`).
pub const DEFAULT_DEPTH: u32 = 2;
/// Default variable bound of PCTVB and the combined strategy.
pub const DEFAULT_VARS: u32 = 1;
/// Default thread bound of thread bounding and the combined strategy.
pub const DEFAULT_THREADS: u32 = 2;
/// Default number of profiling executions before a priority strategy's search.
pub const DEFAULT_PROFILE_RUNS: u64 = 10;
/// Profiling execution `i` runs as execution index `PROFILE_INDEX_BASE + i`: the random
/// streams of profiling never overlap those of the search (indices `0..`), so both stay
/// reproducible from the seed.
pub const PROFILE_INDEX_BASE: u64 = 1 << 63;

impl StrategyKind {
    fn build(&self) -> Box<dyn Strategy> {
        match *self {
            StrategyKind::Random => Box::new(Random),
            StrategyKind::Pct { depth } => Box::new(Pct::new(depth)),
            StrategyKind::Pctvb { depth, vars } => Box::new(Pctvb::new(depth, vars)),
            StrategyKind::ThreadBound { threads, preemptions } => {
                Box::new(ThreadBound::new(threads, preemptions))
            }
            StrategyKind::Combined { depth, vars, threads } => {
                Box::new(Combined::new(depth, vars, threads))
            }
        }
    }

    /// The strategy's name in the `strategy = "..."` attribute argument.
    pub fn name(&self) -> &'static str {
        match self {
            StrategyKind::Random => "random",
            StrategyKind::Pct { .. } => "pct",
            StrategyKind::Pctvb { .. } => "pctvb",
            StrategyKind::ThreadBound { .. } => "threadbound",
            StrategyKind::Combined { .. } => "combined",
        }
    }

    /// The strategy of this name with default parameters ([`DEFAULT_DEPTH`], [`DEFAULT_VARS`],
    /// [`DEFAULT_THREADS`]), or `None` for an unknown name.
    pub fn from_name(name: &str) -> Option<StrategyKind> {
        let (depth, vars, threads) = (DEFAULT_DEPTH, DEFAULT_VARS, DEFAULT_THREADS);
        Some(match name {
            "random" => StrategyKind::Random,
            "pct" => StrategyKind::Pct { depth },
            "pctvb" => StrategyKind::Pctvb { depth, vars },
            "threadbound" => StrategyKind::ThreadBound { threads, preemptions: depth - 1 },
            "combined" => StrategyKind::Combined { depth, vars, threads },
            _ => return None,
        })
    }

    /// The bug depth `d` the strategy searches for (`None` for random).
    fn depth(&self) -> Option<u32> {
        match *self {
            StrategyKind::Random => None,
            StrategyKind::Pct { depth }
            | StrategyKind::Pctvb { depth, .. }
            | StrategyKind::Combined { depth, .. } => Some(depth),
            StrategyKind::ThreadBound { preemptions, .. } => Some(preemptions + 1),
        }
    }

    /// Whether change points are placed on variable accesses (the counts that matter are then
    /// the shared variables and their `k_q`, otherwise `k`).
    fn bounds_variables(&self) -> bool {
        matches!(self, StrategyKind::Pctvb { .. } | StrategyKind::Combined { .. })
    }

    fn guarantee_kind(&self) -> guarantee::Strategy {
        match self {
            StrategyKind::Random => guarantee::Strategy::Random,
            StrategyKind::Pct { .. } => guarantee::Strategy::Pct,
            StrategyKind::Pctvb { .. } => guarantee::Strategy::Pctvb,
            StrategyKind::ThreadBound { .. } => guarantee::Strategy::ThreadBound,
            StrategyKind::Combined { .. } => guarantee::Strategy::Combined,
        }
    }

    /// `(v, t)` as requested (0 where the strategy has no such bound).
    fn vars_threads(&self) -> (u32, u32) {
        match *self {
            StrategyKind::Pctvb { vars, .. } => (vars, 0),
            StrategyKind::ThreadBound { threads, .. } => (0, threads),
            StrategyKind::Combined { vars, threads, .. } => (vars, threads),
            _ => (0, 0),
        }
    }
}

/// How many executions a search runs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Budget {
    /// Exactly this many (fewer if one fails); the report says what confidence they reach.
    Iterations(u64),
    /// As many as the strategy's bound needs to reach this confidence.
    Confidence(f64),
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
/// # Strategies and guarantees
///
/// Without [`Config::strategy`], a run uses [`StrategyKind::Random`] (fast, no guarantee)
/// unless a [`Config::depth`], [`Config::vars`], [`Config::threads`] or
/// [`Config::confidence`] is given: then it uses [`StrategyKind::Combined`] with defaults
/// depth [`DEFAULT_DEPTH`] (one preemption), [`DEFAULT_VARS`] variable and [`DEFAULT_THREADS`]
/// threads for what is not given. The combined strategy is the default for guarantees because
/// its bound does not shrink with the number of threads and places change points only on the
/// accesses of the chosen variables, while real bugs almost always need at most 2
/// preemptions on at most 2 variables between 2 threads (the paper's survey).
///
/// A priority strategy first runs [`Config::profile_runs`] profiling executions (random
/// strategy, their own random streams) that measure the threads `n`, the scheduling points
/// `k` and each variable's accesses `k_q` and sharing; the search then draws every
/// execution's priorities and change points from the counts measured so far. The report
/// carries the per-execution bound computed from them ([`Report::bound`]), what a passing
/// run proves ([`Report::guarantee`]), the measured counts and the variable table
/// ([`Report::profile`], [`Report::summary`]). An execution that exceeds the counts it was
/// drawn with (more threads, steps, accesses, or a newly shared variable) is counted as
/// exceeding, the bound is recomputed with the raised counts, and only executions drawn with
/// the final counts are counted towards the confidence.
///
/// ```
/// use pctvb::sync::{Arc, Mutex};
/// let report = pctvb::Config::new().seed(3).confidence(0.9).depth(2).run(|| {
///     let m = Arc::new(Mutex::new(0));
///     let m2 = m.clone();
///     let h = pctvb::thread::spawn(move || *m2.lock().unwrap() += 1);
///     *m.lock().unwrap() += 1;
///     h.join().unwrap();
///     assert_eq!(*m.lock().unwrap(), 2);
/// });
/// assert!(report.is_ok());
/// let guarantee = report.guarantee.as_ref().expect("a passing run with a priority strategy");
/// assert!(guarantee.confidence >= 0.9);
/// assert!(report.summary().contains("was missed, with probability >= 0.9"));
/// ```
///
/// Environment variables override the configuration, so a command line can change a test
/// without editing it: `PCTVB_SEED` (decimal or `0x` hex), `PCTVB_ITERATIONS`, and
/// `PCTVB_REPLAY` (a token from a failure report; it applies to the test it was recorded in).
#[derive(Clone, Debug)]
pub struct Config {
    name: Option<String>,
    strategy: Option<StrategyKind>,
    depth: Option<u32>,
    vars: Option<u32>,
    threads: Option<u32>,
    budget: Budget,
    profile_runs: u64,
    stop_at_first_failure: bool,
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
            strategy: None,
            depth: None,
            vars: None,
            threads: None,
            budget: Budget::Iterations(DEFAULT_ITERATIONS),
            profile_runs: DEFAULT_PROFILE_RUNS,
            stop_at_first_failure: true,
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

    /// The scheduling strategy. [`Config::depth`], [`Config::vars`] and [`Config::threads`]
    /// override its parameters, whichever is called first.
    pub fn strategy(mut self, strategy: StrategyKind) -> Config {
        self.strategy = Some(strategy);
        self
    }

    /// The bug depth `d` to search for (`d - 1` preemptions; for thread bounding,
    /// `preemptions = d - 1`). Without [`Config::strategy`], selects
    /// [`StrategyKind::Combined`].
    pub fn depth(mut self, depth: u32) -> Config {
        self.depth = Some(depth);
        self
    }

    /// The variable bound `v`: change points go to accesses of `v` randomly chosen shared
    /// variables (PCTVB and Combined only). Without [`Config::strategy`], selects
    /// [`StrategyKind::Combined`].
    pub fn vars(mut self, vars: u32) -> Config {
        self.vars = Some(vars);
        self
    }

    /// The thread bound `t` of the guarantee (ThreadBound and Combined only): bugs that need
    /// a particular order of at most `t` threads. The test body's own thread counts when its
    /// order matters, e.g. when it spawns the threads of the bug one after the other (a thread
    /// spawned later cannot run before it exists). Without [`Config::strategy`], selects
    /// [`StrategyKind::Combined`].
    pub fn threads(mut self, threads: u32) -> Config {
        self.threads = Some(threads);
        self
    }

    /// How many executions to run at most (the run stops at the first failure). For a
    /// priority strategy the report then says which confidence these executions reach.
    /// Replaces a [`Config::confidence`] target.
    pub fn iterations(mut self, iterations: u64) -> Config {
        self.budget = Budget::Iterations(iterations);
        self
    }

    /// Runs as many executions as the strategy's per-execution bound needs to find every bug
    /// of the configured depth (and variable and thread bounds) with at least this
    /// probability, computed from the counts measured by profiling. Replaces
    /// [`Config::iterations`]. Without [`Config::strategy`], selects
    /// [`StrategyKind::Combined`]; with [`StrategyKind::Random`], which has no bound, the run
    /// fails with [`FailureKind::BadConfig`], as it does when more than
    /// [`guarantee::MAX_EXECUTIONS`] executions would be needed.
    pub fn confidence(mut self, confidence: f64) -> Config {
        self.budget = Budget::Confidence(confidence);
        self
    }

    /// Profiling executions (random strategy, before the search) that measure the counts a
    /// priority strategy and its guarantee need: threads `n`, scheduling points `k`, and the
    /// accesses `k_q` and sharing of every variable. At least 1 for a priority strategy;
    /// ignored by [`StrategyKind::Random`]. Default [`DEFAULT_PROFILE_RUNS`].
    pub fn profile_runs(mut self, runs: u64) -> Config {
        self.profile_runs = runs;
        self
    }

    /// With `false`, the run does not stop at the first failure: it runs every planned
    /// execution and counts the failing ones in [`Report::failures`] ([`Report::failure`] is
    /// still the first). This is for measuring strategies (hit rates against the computed
    /// bounds), not for testing programs. Failures of profiling executions are not counted.
    pub fn stop_at_first_failure(mut self, stop: bool) -> Config {
        self.stop_at_first_failure = stop;
        self
    }

    /// Runs every planned execution and returns `(executions, failures)`: how many search
    /// executions ran and how many of them failed. For measuring strategies; see
    /// [`Config::stop_at_first_failure`].
    #[track_caller]
    pub fn count_failures<F: Fn()>(&self, body: F) -> (u64, u64) {
        let report = self.clone().stop_at_first_failure(false).run(body);
        (report.executions, report.failures)
    }

    /// The strategy this configuration runs: [`Config::strategy`] with the parameters
    /// [`Config::depth`], [`Config::vars`] and [`Config::threads`] override; without a
    /// strategy, [`StrategyKind::Combined`] when any of them or a confidence target is given
    /// (defaults [`DEFAULT_DEPTH`], [`DEFAULT_VARS`], [`DEFAULT_THREADS`]), else
    /// [`StrategyKind::Random`]. An error names a parameter the strategy does not take or a
    /// value out of range.
    pub fn resolved_strategy(&self) -> Result<StrategyKind, String> {
        let wants_guarantee = self.depth.is_some()
            || self.vars.is_some()
            || self.threads.is_some()
            || matches!(self.budget, Budget::Confidence(_));
        let mut kind = match &self.strategy {
            Some(k) => k.clone(),
            None if wants_guarantee => StrategyKind::Combined {
                depth: DEFAULT_DEPTH,
                vars: DEFAULT_VARS,
                threads: DEFAULT_THREADS,
            },
            None => StrategyKind::Random,
        };
        let name = kind.name();
        let refuse = |what: &str| {
            Err(format!("the {name} strategy does not take a {what} bound (`{what}`)"))
        };
        if let Some(d) = self.depth {
            match &mut kind {
                StrategyKind::Random => return refuse("depth"),
                StrategyKind::Pct { depth }
                | StrategyKind::Pctvb { depth, .. }
                | StrategyKind::Combined { depth, .. } => *depth = d,
                StrategyKind::ThreadBound { preemptions, .. } => *preemptions = d.saturating_sub(1),
            }
            if d == 0 {
                return Err("depth must be at least 1 (depth 1 = no preemption)".into());
            }
        }
        if let Some(v) = self.vars {
            match &mut kind {
                StrategyKind::Pctvb { vars, .. } | StrategyKind::Combined { vars, .. } => *vars = v,
                _ => return refuse("vars"),
            }
        }
        if let Some(t) = self.threads {
            match &mut kind {
                StrategyKind::ThreadBound { threads, .. }
                | StrategyKind::Combined { threads, .. } => *threads = t,
                _ => return refuse("threads"),
            }
        }
        if kind.depth() == Some(0) {
            return Err(format!("{name}: depth must be at least 1"));
        }
        let (v, t) = kind.vars_threads();
        if kind.bounds_variables() && v == 0 && kind.depth() > Some(1) {
            return Err(format!("{name}: vars must be at least 1 for a depth of 2 or more"));
        }
        if matches!(kind, StrategyKind::ThreadBound { .. } | StrategyKind::Combined { .. })
            && t == 0
        {
            return Err(format!("{name}: threads must be at least 1"));
        }
        if let Budget::Confidence(c) = self.budget {
            if kind == StrategyKind::Random {
                return Err("the random strategy has no probability bound, so a confidence \
                            target cannot be reached; use a priority strategy (e.g. depth = 2)"
                    .into());
            }
            if !(c > 0.0 && c < 1.0) {
                return Err(format!("confidence must be strictly between 0 and 1, got {c}"));
            }
        }
        if kind != StrategyKind::Random && self.profile_runs == 0 {
            return Err(format!(
                "{name} needs at least one profiling execution (profile_runs >= 1) to measure \
                 the counts its schedule and guarantee depend on"
            ));
        }
        Ok(kind)
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
            Ok(Plan::Search { seed, budget, kind }) => self.search(kind, seed, budget, &body, at),
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
        let kind = self.resolved_strategy().map_err(|e| (FailureKind::BadConfig, e))?;
        let seed = overrides.seed.or(self.seed).unwrap_or_else(rand::random);
        let budget = overrides.iterations.map(Budget::Iterations).unwrap_or(self.budget);
        Ok(Plan::Search { seed, budget, kind })
    }

    fn limits(&self) -> Limits {
        Limits { max_steps: self.max_steps, max_threads: self.max_threads }
    }

    fn search(
        &self,
        kind: StrategyKind,
        seed: u64,
        budget: Budget,
        body: &dyn Fn(),
        at: &'static Location<'static>,
    ) -> Report {
        let priority = kind != StrategyKind::Random;
        // Profiling runs under the random strategy; the search strategy replaces it after.
        let first: Box<dyn Strategy> = if priority { Box::new(Random) } else { kind.build() };
        let exec = Execution::new(first, self.limits());
        let mut pool = StackPool::new(self.stack_size);
        let planned = match budget {
            Budget::Iterations(n) => n,
            Budget::Confidence(_) => 0,
        };
        let mut report = self.empty_report(kind.build().describe(), seed, planned);
        let mut schedules = HashSet::new();
        let mut search = Search { kind: &kind, budget, profile: None, counts: Counts::default() };

        if priority {
            for i in 0..self.profile_runs {
                let index = PROFILE_INDEX_BASE + i;
                let outcome = exec.run_one(&mut pool, seed, index, body, at);
                report.stats.max_threads = report.stats.max_threads.max(outcome.threads);
                report.stats.max_steps = report.stats.max_steps.max(outcome.steps);
                if let Some(cause) = outcome.failure {
                    if self.stop_at_first_failure {
                        let f = self.failure(&exec, &cause, seed, index, outcome.digest);
                        report.failure = Some(f);
                        report.failures = 1;
                        report.stats.variables = exec.var_report();
                        return report;
                    }
                }
            }
            search.counts = Counts::read(&exec, &report.stats);
            search.profile = Some(Profile {
                runs: self.profile_runs,
                n: search.counts.n,
                k: search.counts.k,
                shared_variables: search.counts.kq.len() as u64,
                max_kq: search.counts.kq.iter().copied().max().unwrap_or(0),
                ..Profile::default()
            });
            if let Err(message) = search.plan(&mut report) {
                report.stats.variables = exec.var_report();
                return self.fail_config(report, message);
            }
            exec.state.borrow_mut().strategy = kind.build();
        }

        let mut index = 0;
        while search.wants_more(index, report.planned) {
            let outcome = exec.run_one(&mut pool, seed, index, body, at);
            report.executions += 1;
            report.stats.max_threads = report.stats.max_threads.max(outcome.threads);
            report.stats.max_steps = report.stats.max_steps.max(outcome.steps);
            schedules.insert(exec.schedule_hash());
            if priority {
                let after = if search.counts.unchanged(&exec, &report.stats) {
                    None
                } else {
                    Some(Counts::read(&exec, &report.stats))
                };
                if let Err(message) = search.after_execution(index, after, &mut report) {
                    report.stats.variables = exec.var_report();
                    return self.fail_config(report, message);
                }
            }
            if let Some(cause) = outcome.failure {
                report.failures += 1;
                if report.failure.is_none() {
                    report.failure = Some(self.failure(&exec, &cause, seed, index, outcome.digest));
                }
                if self.stop_at_first_failure {
                    break;
                }
            }
            index += 1;
        }
        report.stats.distinct_schedules = schedules.len() as u64;
        report.stats.variables = exec.var_report();
        search.finish(&mut report);
        report
    }

    fn fail_config(&self, mut report: Report, message: String) -> Report {
        let error = self.error_report(FailureKind::BadConfig, message);
        report.failure = error.failure;
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
            failures: 0,
            profile: None,
            bound: None,
            guarantee: None,
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
    Search { seed: u64, budget: Budget, kind: StrategyKind },
    Replay { token: ReplayToken, encoded: String },
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
}

impl Counts {
    /// Whether the counts after the executions so far are still `self`; cheaper than
    /// [`Counts::read`] (no allocation), as it runs after every execution.
    fn unchanged(&self, exec: &Execution, stats: &Stats) -> bool {
        if self.n != stats.max_threads.max(1) as u64 || self.k != stats.max_steps {
            return false;
        }
        let st = exec.state.borrow();
        let mut shared = self.shared.iter().zip(&self.kq);
        for (i, p) in st.vars.profiles().iter().enumerate() {
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
    /// of them (the same maxima the runtime hands strategies in `ExecutionStart`).
    fn read(exec: &Execution, stats: &Stats) -> Counts {
        let st = exec.state.borrow();
        let (mut shared, mut kq) = (Vec::new(), Vec::new());
        for (i, p) in st.vars.profiles().iter().enumerate() {
            if p.shared {
                shared.push(i);
                kq.push(p.max_accesses);
            }
        }
        Counts { n: stats.max_threads.max(1) as u64, k: stats.max_steps, shared, kq }
    }

    /// What grew from `self` to `after` among the counts `kind` depends on, e.g.
    /// `"k 23 -> 25"`; `None` when nothing it depends on changed.
    fn grown(&self, after: &Counts, kind: &StrategyKind) -> Option<String> {
        let mut what = Vec::new();
        if after.n != self.n {
            what.push(format!("n {} -> {}", self.n, after.n));
        }
        if kind.bounds_variables() {
            if after.shared != self.shared {
                what.push(format!("Q {} -> {}", self.shared.len(), after.shared.len()));
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
}

impl Search<'_> {
    /// `(v, t)` as the bound uses them: `v` clamped to `Q`.
    fn effective_vars_threads(&self) -> (u32, u32) {
        let (v, t) = self.kind.vars_threads();
        (v.min(self.counts.kq.len() as u32), t)
    }

    /// The per-execution bound for the current counts.
    fn bound(&self) -> Result<BoundFactors, GuaranteeError> {
        let (v, t) = self.effective_vars_threads();
        let params = BoundParams {
            n: self.counts.n,
            k: self.counts.k,
            kq: &self.counts.kq,
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
    fn plan(&mut self, report: &mut Report) -> Result<(), String> {
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
                let note = format!(
                    "no guarantee for the counts measured so far ({e}); n={}, k={}, Q={}",
                    self.counts.n,
                    self.counts.k,
                    self.counts.kq.len()
                );
                let profile = self.profile.as_mut().expect("profiled");
                if !profile.notes.contains(&note) {
                    profile.notes.push(note);
                }
            }
        }
        Ok(())
    }

    /// Whether to run execution `index`.
    fn wants_more(&self, index: u64, planned: u64) -> bool {
        match (self.budget, &self.profile) {
            (Budget::Confidence(_), Some(p)) => {
                p.covered < planned && index < guarantee::MAX_EXECUTIONS
            }
            _ => index < planned,
        }
    }

    /// Compares the counts after execution `index` (`None`: unchanged) with those it was
    /// drawn with; a raise
    /// marks it as exceeding, restarts the count of covered executions and recomputes the
    /// bound (and, for a confidence target, the planned executions).
    fn after_execution(
        &mut self,
        index: u64,
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
            profile.covered += 1;
            return Ok(());
        };
        profile.exceeded += 1;
        profile.covered = 0;
        if profile.exceeded as usize <= MAX_RAISE_NOTES {
            profile.notes.push(format!(
                "execution {index} exceeded the counts it was drawn with ({what}); the bound \
                 was recomputed and only executions drawn with the new counts are counted"
            ));
        }
        self.plan(report)
    }

    /// Fills the report's profile and, after a passing run, the guarantee statement.
    fn finish(mut self, report: &mut Report) {
        let Some(mut profile) = self.profile.take() else { return };
        let more = profile.exceeded.saturating_sub(MAX_RAISE_NOTES as u64);
        if more > 0 {
            profile.notes.push(format!("{more} more executions exceeded the counts"));
        }
        profile.final_n = self.counts.n;
        profile.final_k = self.counts.k;
        profile.final_shared_variables = self.counts.kq.len() as u64;
        profile.final_max_kq = self.counts.kq.iter().copied().max().unwrap_or(0);
        if report.failures == 0 {
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
                    shared_variables: profile.final_shared_variables,
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
