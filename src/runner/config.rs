//! `Config`: the builder a run is described with, and its defaults.

use std::sync::Arc;
use std::time::Duration;

use super::kind::StrategyKind;
use super::regressions::RegressionFile;
use crate::replay;
use crate::runtime::RunInfo;
use crate::schedulers::registry::Param;

/// How many executions a search runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Budget {
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
/// Without [`Config::strategy`], a run uses its explorer, [`StrategyKind::Surw`] unless
/// [`Config::explorer`] names another (no guarantee), unless a [`Config::depth`], [`Config::vars`], [`Config::threads`] or
/// [`Config::confidence`] is given: then it uses [`StrategyKind::Combined`] with defaults
/// depth 2 (one preemption), 1 variable and 3 threads (counting the spawner, see
/// [`Config::threads`]) for what is not given. The combined strategy is the default for guarantees because
/// its bound does not shrink with the number of threads and places change points only on the
/// accesses of the chosen variables, while real bugs almost always need at most 2
/// preemptions on at most 2 variables between 2 threads (the paper's survey). The default
/// thread bound is 3, not 2, because pctvb counts a thread that spawns the bug's threads
/// among them (see [`Config::threads`]): a bug between two threads the test body spawns is a
/// 3-thread bug, and a default of 2 would print a false guarantee for it.
///
/// A run whose priority strategy was chosen this way (not named) also runs its explorer
/// ([`StrategyKind::Revfuzz`]: race reversal, SURW that steers earlier executions' races into
/// their other order, then schedule fuzzing from the newest schedules that reached something
/// new; unless [`Config::explorer`] names another), in
/// profiling and in one search execution in two, most of its own first
/// ([`Config::explore_every`]): the priority
/// strategy's executions carry the guarantee, the explorer's find bugs outside its class (and,
/// on most programs, bugs of the class in fewer executions).
///
/// A priority strategy first runs [`Config::profile_runs`] profiling executions (a random
/// walk, with their own random streams) that measure the threads `n`, the scheduling points
/// `k` and each variable's accesses `k_q` and sharing; the search then draws every
/// execution's priorities and change points from the counts measured so far. The report
/// carries the per-execution bound computed from them ([`Report::bound`](crate::report::Report::bound)), what a passing
/// run proves ([`Report::guarantee`](crate::report::Report::guarantee)), the measured counts and the variable table
/// ([`Report::profile`](crate::report::Report::profile), [`Report::summary`](crate::report::Report::summary)). An execution that exceeds the counts it was
/// drawn with (more threads, steps, accesses, or a newly shared variable) is counted as
/// exceeding, the bound is recomputed with the raised counts, and only executions drawn with
/// the final counts are counted towards the confidence.
///
/// With a confidence target the run first tries to enumerate the strategy's class with the
/// systematic search, and samples only when that would not be cheaper ([`Config::enumerate`]):
///
/// ```
/// use pctvb::sync::{Arc, Mutex};
/// fn two_increments() {
///     let m = Arc::new(Mutex::new(0));
///     let m2 = m.clone();
///     let h = pctvb::thread::spawn(move || *m2.lock().unwrap() += 1);
///     *m.lock().unwrap() += 1;
///     h.join().unwrap();
///     assert_eq!(*m.lock().unwrap(), 2);
/// }
/// let report = pctvb::Config::new().seed(3).confidence(0.9).depth(2).run(two_increments);
/// assert!(report.is_ok());
/// // A small class: every schedule of it was explored.
/// let search = report.systematic.as_ref().expect("the class was enumerated");
/// assert!(search.complete);
/// assert!(report.summary().contains("exhaustively explored all schedules"));
///
/// // Sampled: the statement is a probability.
/// let config = pctvb::Config::new().seed(3).confidence(0.9).depth(2).enumerate(false);
/// let report = config.run(two_increments);
/// let guarantee = report.guarantee.as_ref().expect("a passing run with a priority strategy");
/// assert!(guarantee.confidence >= 0.9);
/// assert!(report.summary().contains("was missed, with probability >= 0.9"));
/// ```
///
/// Environment variables override the configuration, so a command line can change a test
/// without editing it: `PCTVB_SEED` (decimal or `0x` hex), `PCTVB_ITERATIONS`,
/// `PCTVB_REPLAY` (a token from a failure report, or `@<path>` of the file a report wrote a
/// token too long for a command line to; it applies to the test it was recorded in),
/// `PCTVB_WATCHDOG` (seconds, see [`Config::watchdog`]), `PCTVB_EXPLORER` (a strategy
/// name, see [`Config::explorer`]) and `PCTVB_ENUMERATE` (`0` or `1`, see
/// [`Config::enumerate`]). `PCTVB_ITERATIONS` and `PCTVB_CONFIDENCE` together are an
/// [`Error::Config`](crate::Error::Config); `PCTVB_ITERATIONS` over a [`Config::confidence`]
/// target replaces it with a note (printed, and in [`Report::notes`](crate::report::Report::notes)).
#[derive(Clone, Debug)]
pub struct Config {
    pub(super) name: Option<String>,
    pub(super) strategy: Option<StrategyKind>,
    pub(super) depth: Option<u32>,
    pub(super) vars: Option<u32>,
    pub(super) threads: Option<u32>,
    pub(super) budget: Budget,
    pub(super) profile_runs: u64,
    pub(super) stop_at_first_failure: bool,
    pub(super) seed: Option<u64>,
    pub(super) max_steps: u64,
    pub(super) max_threads: usize,
    pub(super) stack_size: usize,
    pub(super) replay: Option<String>,
    pub(super) rerun: Option<String>,
    pub(super) minimize_runs: u64,
    pub(super) regressions: RegressionFile,
    pub(super) workers: Option<usize>,
    pub(super) shard: Option<(u64, u64)>,
    pub(super) read_env: bool,
    pub(super) instrument_tracking: bool,
    pub(super) races: bool,
    /// Whether `compare_exchange_weak` may fail spuriously ([`Config::weak_cas_failures`]).
    pub(super) weak_cas_failures: bool,
    /// Whether long failing schedules are written to `target/pctvb/` (`PCTVB_TRACE`).
    pub(super) trace_files: bool,
    /// Whether panics inside executions are printed as they happen (`PCTVB_SHOW_PANICS`).
    pub(super) show_panics: bool,
    /// Every how many search executions of a priority strategy run the explorer
    /// ([`Config::explore_every`]); `None`: the default for how the strategy was chosen.
    pub(super) explore_every: Option<u64>,
    /// The strategy that explores: the default without a target, and the executions
    /// interleaved with a priority strategy's ([`Config::explorer`]); `None`: SURW alone,
    /// revfuzz beside a priority strategy.
    pub(super) explorer: Option<StrategyKind>,
    pub(super) time_budget: Option<std::time::Duration>,
    /// Whether a confidence target for the combined strategy first tries to enumerate the
    /// strategy's class ([`Config::enumerate`]).
    pub(super) enumerate: bool,
    /// When the time budget runs out, set when a run starts.
    pub(super) deadline: Option<std::time::Instant>,
    /// `PCTVB_PROGRESS`, when set: the progress line off, or on even off a terminal.
    pub(super) progress: Option<bool>,
    /// How the test binary was built, as `cargo test` arguments and environment (see
    /// [`Config::__cargo_target`]).
    pub(super) cargo_target: Option<crate::replay::CargoTarget>,
    pub(super) watchdog: Duration,
    /// What crash reports say about the run, set when a run starts (see `Config::run`).
    pub(super) run_info: Option<Arc<RunInfo>>,
}

pub use crate::schedulers::{DEFAULT_DEPTH, DEFAULT_THREADS, DEFAULT_VARS, MAX_DEPTH};
/// Default number of profiling executions before a priority strategy's search.
pub const DEFAULT_PROFILE_RUNS: u64 = 10;
pub use crate::runtime::PROFILE_INDEX_BASE;
/// Every how many search executions a run whose priority strategy was chosen by default runs
/// one of its explorer ([`Config::explore_every`]).
pub const DEFAULT_EXPLORE_EVERY: u64 = 2;
/// The explorer beside a priority strategy in a run that names none ([`Config::explorer`]):
/// revfuzz, race reversal's first 500 search executions then schedule fuzzing (a run of the
/// default length gives it 495: it never fuzzes, and never pays for the coverage). Measured on the
/// corpus (docs/RESULTS.md, "Expected cost with restarts"), the default with a target paid
/// less with race reversal as its exploring half than with SURW, and with SURW less than
/// with the uniform walk; revfuzz's executions are reversal's up to 500, so the bugs reversal
/// finds sooner cost the same, and its fuzzing finds SCTBench's SafeStack, which neither
/// found within 10^4 executions (the guide's strategy section). A run with a target is
/// serial whichever explorer it has (its priority strategy's draws depend on earlier
/// executions' counts), so the explorer's learning from earlier executions costs it no
/// parallelism.
pub(crate) const DEFAULT_EXPLORER: StrategyKind = StrategyKind::Revfuzz;
/// The strategy of a run without a target, bound or named strategy: SURW, which runs on
/// every core (race reversal learns from earlier executions, so it runs serially).
pub(crate) const DEFAULT_ALONE: StrategyKind = StrategyKind::Surw;
/// Default replay budget of minimization after a failure.
pub const DEFAULT_MINIMIZE_RUNS: u64 = 500;
/// Default number of executions.
pub const DEFAULT_ITERATIONS: u64 = 1000;
/// Default scheduling-point limit of one execution.
pub const DEFAULT_MAX_STEPS: u64 = 100_000;
/// Default thread limit of one execution.
pub const DEFAULT_MAX_THREADS: usize = 4096;
/// Default stack size of a logical thread: std's for the threads of the test harness. A
/// stack is reserved address space, mapped with a guard page; only the pages a thread touches
/// take memory.
pub const DEFAULT_STACK_SIZE: usize = 2 * 1024 * 1024;
/// The smallest stack size a run accepts ([`Config::stack_size`]): 64 KiB. A logical thread
/// starts on its stack in pctvb's own code (the coroutine's entry, the thread's bookkeeping,
/// the panic hook and the unwind that catch a failure), which in a debug build on x86-64
/// Linux needs 12 KiB for a trivial body that spawns, locks, joins and fails an assertion
/// (8 KiB overflowed); 64 KiB leaves five times that for the body. Below it, a run ended the
/// whole test process with a stack overflow before the body did anything, taking the other
/// tests' results with it; now it could not test, and says so.
pub const MIN_STACK_SIZE: usize = 64 * 1024;
/// The largest stack size a run accepts ([`Config::stack_size`]): `isize::MAX` bytes, the
/// most any mapping or Rust allocation can span. The stack allocator adds a guard page to the
/// size and rounds it up to whole pages; for a size within two pages of `usize::MAX` that sum
/// overflowed, and corosensei panicked ("integer overflow while calculating stack size") in a
/// way that failed the test with no message at all. Below this limit the sum cannot overflow,
/// and a size the system cannot map is an error that names the setting (see
/// [`Config::stack_size`]).
pub const MAX_STACK_SIZE: usize = isize::MAX as usize;
/// Default time an execution may go without a scheduling point before the watchdog ends the
/// process ([`Config::watchdog`]).
pub const DEFAULT_WATCHDOG: Duration = Duration::from_secs(10);

impl Default for Config {
    fn default() -> Config {
        Config::new()
    }
}

impl Config {
    /// The defaults: the selectively uniform random walk (SURW), 1000 executions, a fresh random seed, 100,000 scheduling
    /// points and 4096 threads per execution, 2 MiB stacks, a 10 s watchdog, environment
    /// overrides on.
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
            minimize_runs: DEFAULT_MINIMIZE_RUNS,
            regressions: RegressionFile::Off,
            workers: None,
            shard: None,
            read_env: true,
            instrument_tracking: true,
            races: true,
            weak_cas_failures: false,
            trace_files: true,
            show_panics: false,
            explore_every: None,
            explorer: None,
            time_budget: None,
            enumerate: true,
            deadline: None,
            progress: None,
            cargo_target: None,
            watchdog: DEFAULT_WATCHDOG,
            run_info: None,
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
    /// a particular order of at most `t` threads, **counting a thread that spawns them or
    /// that they wait for**: a thread that spawns one of the bug's threads while another of
    /// them already exists counts among the `t` (it decides whether the first can run ahead
    /// before the second exists), and so does a thread one of them waits for before the bug
    /// (one it joins, a lock's previous holder, a sender, a notifier: it decides when the
    /// waiting thread can run). So a bug between two threads the test body spawns one after
    /// the other has `t = 3`; one between the test body and a thread it spawns, `t = 2`; and
    /// if the second thread first joins a helper, `t = 4`. The bug-shape line of a failure
    /// report counts `t` the same way. Default 3. Without
    /// [`Config::strategy`], selects [`StrategyKind::Combined`].
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
    /// could not test: its report has an [`Error::Config`](crate::Error::Config), as it does when more than
    /// [`guarantee::MAX_EXECUTIONS`](crate::guarantee::MAX_EXECUTIONS) executions would be needed.
    pub fn confidence(mut self, confidence: f64) -> Config {
        self.budget = Budget::Confidence(confidence);
        self
    }

    /// Profiling executions (the naive random walk, or the explorer when the run explores, see
    /// [`Config::explore_every`]; before the search) that measure the counts a
    /// priority strategy and its guarantee need: threads `n`, scheduling points `k`, and the
    /// accesses `k_q` and sharing of every variable. At least 1 for a priority strategy;
    /// ignored by [`StrategyKind::Random`]. Default [`DEFAULT_PROFILE_RUNS`].
    pub fn profile_runs(mut self, runs: u64) -> Config {
        self.profile_runs = runs;
        self
    }

    /// With `false`, the run does not stop at the first failure: it runs every planned
    /// execution and counts the failing ones in [`Report::failures`](crate::report::Report::failures) ([`Report::failure`](crate::report::Report::failure) is
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
    pub fn count_failures<F: Fn() + Sync>(&self, body: F) -> (u64, u64) {
        // The strategy alone: executions of the explorer would mix another hit rate in.
        let report = self.clone().stop_at_first_failure(false).explore_every(0).run(body);
        (report.executions, report.failures)
    }

    /// The strategy this configuration runs: [`Config::strategy`] with the parameters
    /// [`Config::depth`], [`Config::vars`] and [`Config::threads`] override; without a
    /// strategy, [`StrategyKind::Combined`] when any of them or a confidence target is given
    /// (defaults depth 2, 1 variable, 3 threads), else the explorer ([`Config::explorer`],
    /// SURW by default). An error names a parameter the strategy does not take or a
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
            None => self.explorer.clone().unwrap_or(DEFAULT_ALONE),
        };
        if let Some(explorer) = &self.explorer {
            if explorer.is_priority() {
                return Err(format!(
                    "explorer = \"{}\" is a strategy with a guarantee; an explorer runs \
                     beside the guaranteed strategy, uncounted, and without a target alone: name \
                     one without a guarantee ({}), or strategy = \"{}\" to run it",
                    explorer.name(),
                    super::kind::explorer_names().join(", "),
                    explorer.name()
                ));
            }
        }
        let name = kind.name();
        let refuse = |what: &str| {
            Err(format!("the {name} strategy does not take a {what} bound (`{what}`)"))
        };
        if let Some(d) = self.depth {
            if !kind.set_param(Param::Depth, d) {
                return refuse("depth");
            }
            if d == 0 {
                return Err("depth must be at least 1 (depth 1 = no preemption)".into());
            }
        }
        if let Some(v) = self.vars {
            if !kind.set_param(Param::Vars, v) {
                return refuse("vars");
            }
        }
        if let Some(t) = self.threads {
            if !kind.set_param(Param::Threads, t) {
                return refuse("threads");
            }
        }
        if kind.depth() == Some(0) {
            return Err(format!("{name}: depth must be at least 1"));
        }
        self.check_depth(&kind)?;
        let (v, t) = kind.vars_threads();
        let bound = kind.guarantee_kind();
        if bound.uses_variables() && v == 0 && kind.depth() > Some(1) {
            return Err(format!("{name}: vars must be at least 1 for a depth of 2 or more"));
        }
        if bound.uses_threads() && t == 0 {
            return Err(format!("{name}: threads must be at least 1"));
        }
        if let Budget::Confidence(c) = self.budget {
            if !kind.is_priority() {
                return Err(format!(
                    "the {name} strategy has no probability bound, so a confidence target \
                     cannot be reached; use a priority strategy (pct, pctvb, threadbound or \
                     combined; a depth bound with no strategy named runs combined)"
                ));
            }
            if !(c > 0.0 && c < 1.0) {
                return Err(format!("confidence must be strictly between 0 and 1, got {c}"));
            }
        }
        if kind.is_priority() && self.profile_runs == 0 {
            return Err(format!(
                "{name} needs at least one profiling execution (profile_runs >= 1) to measure \
                 the counts its schedule and guarantee depend on"
            ));
        }
        if kind.is_priority() && self.explore_period() == 1 {
            return Err(format!(
                "explore_every(1) (explore_every = 1 in the attribute) gives every search execution to the \
                 explorer ({}) and none to {name}, so no execution would count towards its \
                 guarantee; use 0 (no explorer), 2 or more, or strategy = \"{}\"",
                self.explorer_kind().name(),
                self.explorer_kind().name()
            ));
        }
        Ok(kind)
    }

    /// A time budget: the search stops starting executions once `budget` has passed since the
    /// run started, and reports what the executions that did run prove (a priority strategy's
    /// guarantee gives the confidence they reach, which may be below a confidence target).
    /// `time = "30s"` in the attribute; `PCTVB_TIME=30s` overrides it. Profiling and
    /// minimization are not cut short.
    ///
    /// ```
    /// let report = pctvb::Config::new()
    ///     .iterations(u64::MAX / 2)
    ///     .time_budget(std::time::Duration::from_millis(50))
    ///     .run(|| pctvb::thread::spawn(|| {}).join().unwrap());
    /// assert!(report.is_ok());
    /// assert!(report.time_budget_spent);
    /// ```
    pub fn time_budget(mut self, budget: std::time::Duration) -> Config {
        self.time_budget = Some(budget);
        self
    }

    /// Set by `#[pctvb::test]`: how the test binary was built (package, target, features,
    /// rustflags, profile), so the replay line runs exactly this test as it was built.
    #[doc(hidden)]
    pub fn __cargo_target(mut self, target: crate::replay::CargoTarget) -> Config {
        self.cargo_target = Some(target);
        self
    }

    /// The strategy that explores, where no guarantee is asked of it: the default strategy
    /// of a run without a target or bound (and without [`Config::strategy`]), and the one a
    /// run interleaves with its priority strategy and profiles with
    /// ([`Config::explore_every`]). By default SURW, the selectively uniform random walk
    /// ([`StrategyKind::Surw`]), without a target (it runs on every core), and revfuzz
    /// ([`StrategyKind::Revfuzz`]: race reversal, then schedule fuzzing) beside a priority
    /// strategy (which runs serially anyway; on the corpus it found bugs in fewer executions
    /// than SURW there, and SafeStack's, docs/RESULTS.md);
    /// naming one sets both. `explorer = "uniform"` in the attribute; `PCTVB_EXPLORER=uniform`
    /// overrides it (for a whole suite, pctvb-loom's included).
    ///
    /// It must be a strategy without a guarantee (not [`StrategyKind::is_priority`]): its
    /// executions count towards nothing; a run given one with a guarantee could not test and
    /// says so. A run that names its strategy runs the explorer only where
    /// [`Config::explore_every`] gives it executions beside a priority strategy; a named
    /// strategy without a guarantee runs alone, whatever the explorer (an explorer, or an
    /// [`Config::explore_every`], given in code and unused that way is named in a note of
    /// the run). [`StrategyKind::UniformWalk`] gives the explorer the default had before
    /// SURW: SURW paid less over the corpus, but the walk paid less on some programs (the
    /// thread-scaling family, a work-stealing deque; docs/RESULTS.md), so a test that knows
    /// its bug is of that kind can ask for it.
    ///
    /// ```
    /// use pctvb::{Config, StrategyKind};
    /// let report = Config::new()
    ///     .ignore_env()
    ///     .explorer(StrategyKind::UniformWalk)
    ///     .depth(2)
    ///     .iterations(20)
    ///     .run(|| pctvb::thread::spawn(|| {}).join().unwrap());
    /// assert!(report.is_ok());
    /// assert!(report.strategy.ends_with(" + uniform 1 in 2"), "{}", report.strategy);
    /// ```
    pub fn explorer(mut self, kind: StrategyKind) -> Config {
        self.explorer = Some(kind);
        self
    }

    /// Refuses the bug depth `d` of `kind` (`d - 1` priority changes per execution, or for the
    /// systematic search and thread bounding `d - 1` preemptions) when it is above
    /// [`MAX_DEPTH`] (see there why) or when no execution could use it: a change takes effect
    /// at a scheduling point, at most one per point, and an execution has at most
    /// [`Config::max_steps`] of them. Both used to be taken, and a depth of 4294967295 asked
    /// 34 GB of every execution and ended the test binary.
    fn check_depth(&self, kind: &StrategyKind) -> Result<(), String> {
        let Some((c, preemptions)) = kind.priority_changes() else { return Ok(()) };
        // In u64: `preemptions` may be u32::MAX, whose depth a u32 does not hold.
        let (c, d) = (u64::from(c), u64::from(c) + 1);
        // As the user wrote it: `StrategyKind::systematic(c, ..)` gives preemptions, the
        // attribute and `Config::depth` a depth.
        let given = match (self.depth, preemptions) {
            (None, true) => format!("preemptions = {c} (depth {d})"),
            _ => format!("depth = {d}"),
        };
        let changes = if preemptions { "preemptions" } else { "priority changes" };
        if d > u64::from(MAX_DEPTH) {
            let why = if matches!(kind, StrategyKind::Systematic { .. }) {
                // No bound, but levels.
                "the search runs every schedule with up to c preemptions level by level, which \
                 no budget finishes for c in the hundreds, and a bound above the preemptions \
                 any schedule of the test can have explores the same schedules as that bound"
            } else {
                "every bound beyond it is below 1e-155 per execution (no number of executions \
                 reaches a confidence above 0), and each execution draws d - 1 change points"
            };
            return Err(format!(
                "{given} is above the largest depth pctvb takes, {MAX_DEPTH} ({} {changes} per \
                 execution): real bugs need depth 2 or 3, {why}; use a depth of at most \
                 {MAX_DEPTH} (2 or 3 finds most bugs)",
                MAX_DEPTH - 1
            ));
        }
        if c > self.max_steps {
            return Err(format!(
                "{given} asks for {c} {changes} per execution, more than the max_steps = {} \
                 scheduling points an execution may have: each takes effect at a scheduling \
                 point, one per point, so no execution could have them all; use a depth of at \
                 most {} or raise max_steps",
                self.max_steps,
                self.max_steps.saturating_add(1)
            ));
        }
        Ok(())
    }

    /// The strategy this run explores with beside a priority strategy ([`Config::explorer`]).
    pub(super) fn explorer_kind(&self) -> StrategyKind {
        self.explorer.clone().unwrap_or(DEFAULT_EXPLORER)
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

    /// Stack size of every logical thread, the test body's included (default
    /// 2 MiB as std's test threads; at least [`MIN_STACK_SIZE`], 64 KiB: a run given less
    /// could not test, its report has an [`Error::Config`](crate::Error::Config) naming the
    /// value and the minimum). A stack is reserved address space
    /// with a guard page below it; only the pages a thread touches take memory. A thread that
    /// overflows its stack ends the process (as in std), after a message that names the test,
    /// the logical thread and this setting.
    ///
    /// At most [`MAX_STACK_SIZE`] (`isize::MAX`; more is the same kind of error). Every
    /// thread's stack is mapped at this size when it starts: a size the system will not map
    /// (more address space or memory than it allows) stops the run with an
    /// [`Error::Config`](crate::Error::Config) that names `stack_size` and its value.
    ///
    /// ```
    /// let report = pctvb::Config::new().stack_size(1).run(|| {});
    /// let error = report.error().expect("below the minimum");
    /// assert!(error.to_string().contains("at least 65536"), "{error}");
    /// ```
    pub fn stack_size(mut self, bytes: usize) -> Config {
        self.stack_size = bytes;
        self
    }

    /// How long an execution may run without reaching a scheduling point (default
    /// 10 s; `Duration::ZERO` turns the watchdog off;
    /// `PCTVB_WATCHDOG=<seconds>` overrides it).
    ///
    /// Every logical thread of an execution runs on one OS thread, so a thread that blocks
    /// in something pctvb does not control (a std `Mutex` another logical thread holds, a std
    /// `mpsc` channel, I/O) or loops without a scheduling point stops the whole execution
    /// for good. The watchdog, one OS thread per process, notices it, prints the running
    /// logical thread, its last scheduling point and the likely causes, and, since it cannot
    /// unwind the stuck thread, **ends the process** with exit code 101: the test fails, and
    /// the tests that ran at the same time in the same binary are lost with it. It starts
    /// when a watched execution spawns its first logical thread: a lone thread cannot be left
    /// stuck by the others, and a process of one-thread tests starts no watchdog thread.
    pub fn watchdog(mut self, limit: Duration) -> Config {
        self.watchdog = limit;
        self
    }

    /// Replays exactly the execution a token from a failure report describes. `@<path>`
    /// reads the token from that file, as `PCTVB_REPLAY=@<path>` does: a report prints that
    /// form for a token too long for a command line (more than 100,000 bytes), which it wrote
    /// to the file.
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

    /// The line that replays `token` in this run's test: `PCTVB_REPLAY=<token>` and the
    /// command, or `PCTVB_REPLAY=@<file>` for a token too long for a command line (see
    /// [`line_value`]).
    pub(super) fn replay_line(&self, token: &str) -> String {
        let value = line_value(self.name.as_deref().unwrap_or(""), token);
        let line = match &self.rerun {
            Some(cmd) => format!("{}={value} {cmd}", replay::ENV_VAR),
            None => replay::command_line(&value, self.name.as_deref(), self.cargo_target.as_ref()),
        };
        // The detector decides where an execution stops (a race ends it before a later
        // assertion), so a token replays only with the setting it was recorded with: one that
        // `PCTVB_RACES` gave is part of the line.
        if self.read_env && std::env::var_os("PCTVB_RACES").is_some() {
            format!("PCTVB_RACES={} {line}", u8::from(self.races))
        } else {
            line
        }
    }

    /// How many replays minimization may spend after a failure (0 turns it off). Minimization
    /// searches for a schedule with fewer preemptions, then fewer steps, that fails the same
    /// way; the report shows both counts and the replay token points to the minimized
    /// schedule. It also stops after 5 seconds.
    pub fn minimize_runs(mut self, runs: u64) -> Config {
        self.minimize_runs = runs;
        self
    }

    /// Saves every failure's replay token to `path` and replays the saved tokens first in every
    /// later run, before any new exploration (proptest's regression files). A saved token that
    /// no longer fails is reported as "fixed?" and kept until you delete its line.
    pub fn regressions(mut self, path: impl Into<std::path::PathBuf>) -> Config {
        self.regressions = RegressionFile::At(path.into());
        self
    }

    /// Keeps regressions in `pctvb-regressions/<target>/<test path>.txt` in the crate being
    /// tested (`CARGO_MANIFEST_DIR`), `<target>` being the cargo target the test is built in
    /// (`lib`, `bin-<name>`, `test-<name>`, ...; `pctvb-regressions/<test path>.txt` when it
    /// is not known, outside `#[pctvb::test]`); `#[pctvb::test]` does this unless given
    /// `regressions = false`. A file of the name before per-target files is replayed too.
    pub fn default_regressions(mut self) -> Config {
        self.regressions = RegressionFile::Default;
        self
    }

    /// Turns regression files off.
    pub fn no_regressions(mut self) -> Config {
        self.regressions = RegressionFile::Off;
        self
    }

    /// Whether a run of PCTVB or the combined strategy over a program with
    /// [`#[pctvb::instrument]`](mod@crate::instrument)ed code tracks, in each execution, only the
    /// variables the strategy chose (default `true`): profiling tracks every variable the
    /// static pass found, so heap variables reached through raw pointers are measured too;
    /// each search execution then arms only the hooks of its chosen variables and gates the
    /// atomic and cell accesses of the others, so only the chosen variables' accesses are
    /// scheduling points (the paper's variable bounding with instrumentation: the change
    /// points land where they did, and executions of access-heavy code run faster). Replay
    /// tokens carry the session. Ignored
    /// while the calling thread has a session of its own ([`crate::instrument::track`]) and in
    /// programs without instrumented code.
    pub fn instrument_tracking(mut self, on: bool) -> Config {
        self.instrument_tracking = on;
        self
    }

    /// Whether the data-race detector runs (default `true`): accesses of
    /// [`pctvb::cell::UnsafeCell`](crate::cell::UnsafeCell) by different threads, at least
    /// one a write, with no happens-before between them (through locks, channels, spawn and
    /// join, or atomics with Release/Acquire orderings) fail the execution as a
    /// [`FailureKind::DataRace`](crate::FailureKind::DataRace). `PCTVB_RACES=0` turns it off
    /// from the command line (`PCTVB_RACES=1` on). Off, the accesses are still scheduling
    /// points; only the check and the clocks are skipped.
    pub fn race_detection(mut self, on: bool) -> Config {
        self.races = on;
        self
    }

    /// Whether `compare_exchange_weak` may fail spuriously (default `false`), as Rust allows
    /// and load-linked/store-conditional hardware (ARM, RISC-V) does: on, a weak
    /// compare-exchange that finds the value it expects makes a second scheduling point, its
    /// store-conditional (`store-conditional` in a schedule), and fails spuriously (returns
    /// `Err` with the value it found) if another thread runs there before it, as a context
    /// switch between the load and the store loses the reservation. So a spurious failure is
    /// a preemption of the schedule, counted in the depth and bounded by the guarantee as any
    /// other; code that assumes one weak call succeeds (no retry loop) fails. A failing
    /// execution's token records the setting, so its replay takes it. Off, a weak
    /// compare-exchange is a `compare_exchange`, as under loom and shuttle. Attribute:
    /// `weak_cas_failures = true`; `PCTVB_WEAK_CAS=1` turns it on from the command line
    /// (`PCTVB_WEAK_CAS=0` off), for a whole suite.
    pub fn weak_cas_failures(mut self, on: bool) -> Config {
        self.weak_cas_failures = on;
        self
    }

    /// Whether a failure whose schedule is too long to print whole writes it to a file
    /// (default `true`): `$CARGO_TARGET_DIR/pctvb/` (or `pctvb/` in the target directory the
    /// test binary was built in), named after the run ([`Config::name`]; an unnamed run's
    /// file name has the seed and the process id, so
    /// unnamed runs do not overwrite each other). The report names the file.
    /// `PCTVB_TRACE=0` turns it off from the command line (`PCTVB_TRACE=1` on).
    pub fn trace_files(mut self, on: bool) -> Config {
        self.trace_files = on;
        self
    }

    /// Whether panics raised inside executions are printed as they happen (default `false`:
    /// the failure report prints the failing one once, with its schedule; caught panics and
    /// those of passing executions are not printed). `PCTVB_SHOW_PANICS=1` turns it on from
    /// the command line (`0` off); [`Config::ignore_env`] ignores it as every `PCTVB_*`.
    pub fn show_panics(mut self, on: bool) -> Config {
        self.show_panics = on;
        self
    }

    /// Whether a confidence target first tries to *enumerate* the guarantee's class instead
    /// of sampling it (default `true`; `PCTVB_ENUMERATE=0` turns it off from the command
    /// line).
    ///
    /// With a confidence target the combined strategy (the default's) needs `N = ln(1/(1-c))/p`
    /// executions for its per-execution bound `p`. Its class (bugs of depth `<= d` involving
    /// `<= v` shared variables and `<= t` threads) is covered by what the systematic search
    /// [`StrategyKind::systematic`]`(d-1, d-1, t)` explores level by level (`d-1` preemptions
    /// fall at the accesses of at most `d-1` objects), and enumerating it at depth 2 runs of
    /// the order of `1/p` schedules before happens-before pruning, usually far fewer after it
    /// (227 against 38,461 sampled on a sharded-slab loom test, docs/RESULTS-loom-suites.md).
    /// So after profiling the run gives the systematic search `N/4` executions: when it
    /// explores every level within them, the run passes with its statement (exhaustive, or
    /// with probability at least `c` when the priority orders are drawn, Lemma 4.1), in
    /// [`Report::systematic`](crate::report::Report::systematic) rather than
    /// [`Report::guarantee`](crate::report::Report::guarantee); when it finds a bug, the run
    /// reports it. Otherwise the run samples as before, having spent at most a quarter more
    /// (and the explorer's executions between), and a note says so. With an explorer
    /// ([`Config::explore_every`]`(m)`), the explorer runs one execution after every `m - 1`
    /// of the search's, as it does beside the sampled strategy, so a buggy program's bug is
    /// found about as soon as when sampling; when the class was enumerated, it then runs the
    /// rest of its share after the search: as many executions as the enumeration took, and at
    /// least 1,000 (what a run without a target runs by default), for bugs outside the class.
    ///
    /// Off with `false`, and never for a run that counts failures
    /// ([`Config::stop_at_first_failure`]`(false)`: it measures the sampled strategy's hit
    /// rate), a shard ([`Config::shard`]) or a time budget.
    pub fn enumerate(mut self, on: bool) -> Config {
        self.enumerate = on;
        self
    }

    /// One search execution in `m` of a priority strategy runs the explorer
    /// ([`Config::explorer`]: revfuzz unless named) instead (`0`: never), and the profiling
    /// executions run it instead of the naive random walk.
    ///
    /// The explorer's executions come first: it takes fifteen executions in sixteen until it
    /// is 500 ahead of its one-in-`m` share, keeps that lead, and at the end of the planned
    /// executions (the iterations, or those a confidence target needs) the priority strategy
    /// runs alone until the explorer has exactly its share. A passing run runs as many of each
    /// as with one in `m` throughout; a bug the explorer finds (most bugs, and most of them
    /// early) shows sooner. Past the plan (a confidence target whose plan grew with new
    /// counts), and in a shard ([`Config::shard`]), it is every `m`-th execution.
    ///
    /// The priority strategy's executions carry the guarantee, for the bugs of its class
    /// (depth, variables, threads); the explorer's find bugs outside that class (two
    /// preemptions where the guarantee covers one, say) and, on most programs, bugs of the
    /// class in fewer executions. The guarantee counts only the strategy's executions, so with
    /// `m = 2` a passing run takes twice as many executions for the same confidence; an
    /// execution of the explorer that exceeds the measured counts raises them as any
    /// execution does.
    ///
    /// Default: [`DEFAULT_EXPLORE_EVERY`] when the priority strategy was chosen by default (a
    /// target or a bound given without [`Config::strategy`], as `#[pctvb::test]` does), `0`
    /// when a strategy is named, so an explicit strategy runs alone.
    pub fn explore_every(mut self, m: u64) -> Config {
        self.explore_every = Some(m);
        self
    }

    /// The former name of [`Config::explore_every`], from when the uniform walk was the only
    /// explorer; it does the same (with the default explorer, revfuzz, not the uniform walk:
    /// [`Config::explorer`] names the walk).
    #[deprecated(note = "use `explore_every`: the executions run the explorer (revfuzz by \
                         default; `explorer(StrategyKind::UniformWalk)` for the walk)")]
    pub fn uniform_walk_every(self, m: u64) -> Config {
        self.explore_every(m)
    }

    /// Every how many search executions this run explores (see [`Config::explore_every`]).
    pub(super) fn explore_period(&self) -> u64 {
        self.explore_every.unwrap_or(if self.strategy.is_none() {
            DEFAULT_EXPLORE_EVERY
        } else {
            0
        })
    }

    /// Notes on explorer settings the code gave that this run of `kind` does not use: a
    /// named strategy runs alone unless `explore_every` interleaves the explorer with a
    /// priority strategy, so `explorer` or `explore_every` would otherwise be ignored without
    /// a word. (`PCTVB_EXPLORER`, meant for a whole suite, is not noted.)
    pub(super) fn unused_explorer_settings(
        &self,
        kind: &StrategyKind,
        code_explorer: Option<&StrategyKind>,
    ) -> Vec<String> {
        let mut notes = Vec::new();
        if self.strategy.is_none() {
            return notes;
        }
        let name = kind.name();
        let every = self.explore_every.filter(|&m| m > 0);
        if let (Some(m), false) = (every, kind.is_priority()) {
            notes.push(format!(
                "explore_every = {m} has no effect: `{name}` has no guarantee and runs alone \
                 (explore_every interleaves the explorer with a priority strategy)"
            ));
        }
        let explores = kind.is_priority() && self.explore_period() > 0;
        if let (Some(explorer), false) = (code_explorer, explores) {
            notes.push(format!(
                "explorer = \"{}\" has no effect: the named strategy `{name}` runs alone; \
                 beside a priority strategy, explore_every = m runs the explorer in one \
                 execution in m",
                explorer.name()
            ));
        }
        notes
    }

    /// Ignores `PCTVB_*` environment variables (for tests of pctvb itself).
    pub fn ignore_env(mut self) -> Config {
        self.read_env = false;
        self
    }

    /// OS threads that run executions of the random strategy or the uniform walk in parallel
    /// (default: the available parallelism, or 1 when the test harness runs with
    /// `--test-threads=1`).
    /// Results are the same as a serial run's: the failure with the lowest execution index is
    /// reported. Priority strategies always run serially (their draws depend on earlier
    /// executions' counts). `workers(0)` counts as 1. `PCTVB_WORKERS` overrides it (at
    /// least 1: `PCTVB_WORKERS=0` is an [`Error::Config`](crate::Error::Config)).
    pub fn workers(mut self, workers: usize) -> Config {
        self.workers = Some(workers.max(1));
        self
    }

    /// Runs only shard `k` of `m` (1-based): the executions whose index `i` has
    /// `i % m == k - 1`, so a CI matrix can split one budget across machines
    /// (`PCTVB_SHARD=k/m` does the same). With a confidence target each shard runs its share
    /// of the planned executions and its statement gives the confidence of that share. A walk
    /// learns from execution 0, which every shard therefore runs first; only shard 1 counts
    /// it (the shards' executions add up to the budget), and the others' reports note it.
    /// A systematic search ([`StrategyKind::Systematic`]) is split by its initial priority
    /// orders instead: shard `k` runs the schedules that start from the orders whose index is
    /// `k - 1` modulo `m`, and its statement says it covered that share (give every shard the
    /// same seed: the shards then profile alike, measure the same threads and draw the same
    /// orders).
    ///
    /// # Panics
    /// If `k` is not in `1..=m`.
    pub fn shard(mut self, k: u64, m: u64) -> Config {
        assert!(m >= 1 && (1..=m).contains(&k), "shard {k}/{m}: k must be in 1..=m");
        self.shard = Some((k, m));
        self
    }
}

/// What a replay line's `PCTVB_REPLAY=` takes for `token`, of the test `name` (empty for an
/// unnamed run): the token itself, or for a token longer than [`replay::INLINE_LIMIT`],
/// `@<path>` of a file holding it, so the line stays short enough to run (see `replay`'s
/// "Tokens too long for a command line"). The file goes to the target directory's `pctvb/`
/// with the run's other files, else to the system's temporary directory; only when neither
/// can be written does the token stay in the line (it is still in the report's
/// `Failure::token` and the regression file).
pub(super) fn line_value(name: &str, token: &str) -> String {
    if token.len() <= replay::INLINE_LIMIT {
        return token.to_string();
    }
    [super::record::target_dir().join("pctvb"), std::env::temp_dir().join("pctvb")]
        .iter()
        .find_map(|dir| replay::write_token_file(dir, name, token).ok())
        .map_or_else(|| token.to_string(), |path| replay::file_value(&path))
}
