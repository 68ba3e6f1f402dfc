//! Running one program under one tool: the tools, one trial, and a cell of trials.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pctvb::__internals::runner::PROFILE_INDEX_BASE;
use pctvb::{Config, StrategyKind};

use crate::Program;

/// A temporary directory for the schedules pctvb writes, removed with what it holds when the
/// value is dropped. pctvb writes the whole schedule of a long failure under
/// `$CARGO_TARGET_DIR/pctvb/`; the thousands of failures of a corpus run go here instead: one
/// directory shared by every run grew by each run's files (gigabytes after a day of runs)
/// until the disk was full.
pub struct TraceDir(std::path::PathBuf);

impl TraceDir {
    /// A directory of this process's own, which `CARGO_TARGET_DIR` then names. Call it before
    /// any other thread starts: it sets the environment.
    pub fn for_this_process() -> TraceDir {
        let dir = std::env::temp_dir().join(format!("pctvb-corpus-{}", std::process::id()));
        std::env::set_var("CARGO_TARGET_DIR", &dir);
        TraceDir(dir)
    }
}

impl Drop for TraceDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Sends this process's stderr to /dev/null (shuttle and loom print every failure).
#[cfg(unix)]
pub fn silence_stderr() {
    use std::os::fd::AsRawFd;
    extern "C" {
        fn dup2(old: i32, new: i32) -> i32;
    }
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        // SAFETY: dup2 on two valid descriptors; `null` stays open until then.
        unsafe { dup2(null.as_raw_fd(), 2) };
    }
}

/// Sends this process's stderr to /dev/null (not done off Unix).
#[cfg(not(unix))]
pub fn silence_stderr() {}

/// Programs the smoke tests leave out (`-- --quick`: 2 trials of 1000 executions per column;
/// `tests/smoke.rs`), because no tool finds their bug reliably within those budgets; the full
/// run measures them. safestack: `greybox` finds it within 10^4 executions in most trials (its
/// median is thousands), `pos` in one of 20, the others never.
/// twostage-100: at 1000 executions most columns miss it, and its 100 threads make the smoke
/// run three times longer.
pub const SMOKE_SKIPPED: [&str; 2] = ["safestack", "twostage-100"];

/// Profiling executions of pctvb's priority strategies (counted in the executions).
pub const PROFILE_RUNS: u64 = 10;

/// A tool and its configuration: one column of the results.
#[derive(Clone, Debug, PartialEq)]
pub enum Tool {
    /// pctvb with this strategy, alone.
    Pctvb(StrategyKind),
    /// What a pctvb test with a target and no named strategy runs: the combined strategy
    /// ([`pctvb_default`]) with the default explorer, revfuzz (race reversal, then schedule
    /// fuzzing), one search execution in two and in profiling (`Config::explore_every`).
    PctvbDefault,
    /// [`Tool::PctvbDefault`] with the portfolio (`strategy = "portfolio"`) in place of revfuzz,
    /// in profiling and in one search execution in two: what the default with a target
    /// would run if the portfolio were its exploring half.
    PctvbDefaultPortfolio,
    /// [`Tool::PctvbDefault`] with surw (`explorer = "surw"`) in place of revfuzz, in
    /// profiling and in one search execution in two: the default before race reversal
    /// became its exploring half, kept for comparison.
    PctvbDefaultSurw,
    /// [`Tool::PctvbDefault`] with the uniform walk (`explorer = "uniform"`) in place of
    /// revfuzz, in profiling and in one search execution in two: the default before surw
    /// became its exploring half, kept for comparison.
    PctvbDefaultUniform,
    /// [`Tool::PctvbDefault`] with race reversal (`explorer = "reversal"`) in place of
    /// revfuzz, in profiling and in one search execution in two: the default before revfuzz
    /// became its exploring half, kept for comparison.
    PctvbDefaultReversal,
    /// shuttle's `RandomScheduler`.
    ShuttleRandom,
    /// shuttle's `PctScheduler` with this depth.
    ShuttlePct(usize),
    /// shuttle's `UrwRandomScheduler` (uniformly random walk).
    ShuttleUrw,
    /// loom's DPOR model checker with this preemption bound (`None`: unbounded).
    Loom(Option<usize>),
}

/// The priority strategy of a run without parameters but with a target: the combined default
/// (depth 2, one variable, `DEFAULT_THREADS` = 3 threads, as `strategy = "combined"`).
pub fn pctvb_default() -> StrategyKind {
    StrategyKind::from_name("combined").expect("a registered strategy")
}

impl Tool {
    /// Every column, in document order.
    pub fn all() -> Vec<Tool> {
        vec![
            Tool::Pctvb(StrategyKind::Random),
            Tool::Pctvb(StrategyKind::UniformWalk),
            Tool::Pctvb(StrategyKind::Surw),
            Tool::Pctvb(StrategyKind::Reversal),
            Tool::Pctvb(StrategyKind::Pos),
            Tool::Pctvb(StrategyKind::Greybox),
            Tool::Pctvb(StrategyKind::Revfuzz),
            Tool::Pctvb(StrategyKind::Portfolio),
            Tool::Pctvb(StrategyKind::Pct { depth: 2 }),
            Tool::Pctvb(StrategyKind::Pct { depth: 3 }),
            Tool::Pctvb(StrategyKind::Pctvb { depth: 2, vars: 1 }),
            Tool::Pctvb(StrategyKind::from_name("threadbound").expect("a registered strategy")),
            Tool::Pctvb(pctvb_default()),
            Tool::PctvbDefault,
            Tool::PctvbDefaultPortfolio,
            Tool::PctvbDefaultSurw,
            Tool::PctvbDefaultUniform,
            Tool::PctvbDefaultReversal,
            // t = 2, not the default 3: the column as before pctvb counted the spawner (with
            // t = 3, scaling-n100's 20 trials alone had not finished after 2 minutes).
            Tool::Pctvb(StrategyKind::systematic(2, 2, 2)),
            Tool::ShuttleRandom,
            Tool::ShuttlePct(3),
            Tool::ShuttleUrw,
            Tool::Loom(Some(2)),
            Tool::Loom(None),
        ]
    }

    /// Short column name.
    pub fn name(&self) -> String {
        match self {
            Tool::Pctvb(k) => match k {
                StrategyKind::Random => "random".into(),
                StrategyKind::UniformWalk => "uniform".into(),
                StrategyKind::Pos => "pos".into(),
                StrategyKind::Pct { depth } => format!("pct d={depth}"),
                StrategyKind::Pctvb { depth, vars } => format!("pctvb d={depth} v={vars}"),
                StrategyKind::ThreadBound { threads, preemptions } => {
                    format!("tb t={threads} c={preemptions}")
                }
                StrategyKind::Combined { depth, vars, threads } => {
                    format!("combined d={depth} v={vars} t={threads}")
                }
                StrategyKind::Systematic { preemptions, vars, threads, .. } => {
                    format!("systematic c={preemptions} v={vars} t={threads}")
                }
                other => other.name().into(),
            },
            Tool::PctvbDefault => "pctvb default".into(),
            Tool::PctvbDefaultPortfolio => "pctvb default portfolio".into(),
            Tool::PctvbDefaultSurw => "pctvb default surw".into(),
            Tool::PctvbDefaultUniform => "pctvb default uniform".into(),
            Tool::PctvbDefaultReversal => "pctvb default reversal".into(),
            Tool::ShuttleRandom => "shuttle random".into(),
            Tool::ShuttlePct(d) => format!("shuttle pct d={d}"),
            Tool::ShuttleUrw => "shuttle urw".into(),
            Tool::Loom(Some(b)) => format!("loom pb={b}"),
            Tool::Loom(None) => "loom".into(),
        }
    }

    /// Which tool family the column belongs to.
    pub fn family(&self) -> &'static str {
        match self {
            Tool::Pctvb(_)
            | Tool::PctvbDefault
            | Tool::PctvbDefaultPortfolio
            | Tool::PctvbDefaultSurw
            | Tool::PctvbDefaultUniform
            | Tool::PctvbDefaultReversal => "pctvb",
            Tool::ShuttleRandom | Tool::ShuttlePct(_) | Tool::ShuttleUrw => "shuttle",
            Tool::Loom(_) => "loom",
        }
    }

    /// Whether repeated trials give the same result (loom's search does not take a seed).
    pub fn deterministic(&self) -> bool {
        matches!(self, Tool::Loom(_))
    }

    /// Whether the tool can run `program` (loom: at most 5 threads, the main one included,
    /// and no async program: loom has no `spawn`; shuttle: no race-only program, it has no
    /// race detection).
    pub fn supports(&self, program: &Program) -> bool {
        self.unsupported(program).is_none()
    }

    /// Why the tool cannot run `program`, for the results document's cell; `None` if it can.
    pub fn unsupported(&self, program: &Program) -> Option<&'static str> {
        match self {
            Tool::Loom(_) if program.group == crate::Group::Async => {
                Some("n/a (loom has no spawn)")
            }
            Tool::Loom(_) if program.threads > 5 => Some("-"),
            _ if self.family() == "shuttle" && program.group == crate::Group::Races => {
                Some("no race detection")
            }
            _ => None,
        }
    }
}

/// Whether this OS thread is stuck mid-panic, which breaks every program run on it afterwards.
/// shuttle 0.9 runs a program's threads as coroutines on the calling thread; when a failing
/// thread unwinds through a scheduling point (its lock guard's drop) and shuttle switches away
/// and ends the execution without resuming it (the wronglock port under shuttle's URW
/// scheduler), std's per-thread panic count stays raised. From then on
/// `std::thread::panicking()` is true on this thread: every `MutexGuard` drop poisons its
/// mutex, under every tool, and correct programs fail.
pub fn thread_poisoned() -> bool {
    std::thread::panicking()
}

/// Runs `f` on this thread, or on a fresh one when this one is poisoned ([`thread_poisoned`]).
/// A fresh thread starts without the tools' thread-local pools, so its first execution pays
/// for them; only trials after a poisoning pay that.
pub fn on_clean_thread<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if !thread_poisoned() {
        return f();
    }
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new().stack_size(64 << 20).spawn_scoped(s, f);
        match worker.expect("spawn a clean thread").join() {
            Ok(r) => r,
            Err(p) => std::panic::resume_unwind(p),
        }
    })
}

/// The budget of one trial.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Executions per trial (pctvb's profiling included; not for loom).
    pub executions: u64,
    /// Wall-time cap of a loom run.
    pub loom_time: Duration,
}

/// What one trial did.
#[derive(Clone, Debug)]
pub struct Trial {
    /// Whether an execution failed.
    pub failed: bool,
    /// Executions run until the first failure (included), or all that ran.
    pub executions: u64,
    /// Wall time of the trial.
    pub elapsed: Duration,
    /// The failure's message (first line), when there is one.
    pub message: Option<String>,
    /// The tool stopped for a reason of its own (time cap, exhausted search, a limit).
    pub note: Option<String>,
    /// pctvb's priority strategies: the failure came from one of the random profiling
    /// executions that run before the search.
    pub in_profiling: bool,
}

/// Runs one trial of `program` under `tool` with this seed.
pub fn trial(tool: &Tool, program: &Program, seed: u64, budget: Budget) -> Trial {
    match tool {
        Tool::Pctvb(kind) => pctvb_trial(kind, 0, None, program, seed, budget.executions),
        Tool::PctvbDefault
        | Tool::PctvbDefaultPortfolio
        | Tool::PctvbDefaultSurw
        | Tool::PctvbDefaultUniform
        | Tool::PctvbDefaultReversal => {
            let every = pctvb::__internals::runner::DEFAULT_EXPLORE_EVERY;
            let explorer = match tool {
                Tool::PctvbDefaultPortfolio => Some(StrategyKind::Portfolio),
                Tool::PctvbDefaultSurw => Some(StrategyKind::Surw),
                Tool::PctvbDefaultUniform => Some(StrategyKind::UniformWalk),
                Tool::PctvbDefaultReversal => Some(StrategyKind::Reversal),
                _ => None,
            };
            pctvb_trial(&pctvb_default(), every, explorer, program, seed, budget.executions)
        }
        Tool::Loom(bound) => loom_trial(*bound, program, budget.loom_time),
        shuttle => shuttle_trial(shuttle, program, seed, budget.executions),
    }
}

fn pctvb_trial(
    kind: &StrategyKind,
    explore_every: u64,
    explorer: Option<StrategyKind>,
    program: &Program,
    seed: u64,
    budget: u64,
) -> Trial {
    let (body, param) = (program.bodies.pctvb, program.param);
    let profiling = if kind.is_priority() { PROFILE_RUNS } else { 0 };
    let started = Instant::now();
    let mut config = Config::new()
        .ignore_env()
        .seed(seed)
        .iterations(budget.saturating_sub(profiling).max(1))
        .strategy(kind.clone())
        .explore_every(explore_every);
    if let Some(explorer) = explorer {
        config = config.explorer(explorer);
    }
    let report =
        config.minimize_runs(0).profile_runs(PROFILE_RUNS).workers(1).run(move || body(param));
    let elapsed = started.elapsed();
    // A run that could not test would otherwise read as a bug not found.
    if let Some(error) = report.error() {
        panic!("pctvb could not run the program: {error}");
    }
    let mut in_profiling = false;
    let (executions, message) = match report.failure() {
        Some(f) => {
            // A failure during profiling (random executions before the search) counts at its
            // position among them; a search failure after all the profiling.
            let n = match f.execution.checked_sub(PROFILE_INDEX_BASE) {
                Some(i) => {
                    in_profiling = true;
                    i + 1
                }
                None => profiling + report.executions,
            };
            let kind = match f.kind {
                pctvb::FailureKind::Panic => String::new(),
                other => format!("{other:?}: "),
            };
            (n, Some(first_line(&format!("{kind}{}", f.message))))
        }
        None => (profiling + report.executions, None),
    };
    let note = report
        .systematic
        .as_ref()
        .filter(|s| s.complete)
        .map(|_| "systematic search exhausted every level".to_string());
    Trial { failed: message.is_some(), executions, elapsed, message, note, in_profiling }
}

fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    line.chars().take(120).collect()
}

fn payload_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".into()
    }
}

fn shuttle_trial(tool: &Tool, program: &Program, seed: u64, budget: u64) -> Trial {
    use shuttle::scheduler::{PctScheduler, RandomScheduler, UrwRandomScheduler};
    let (body, param) = (program.bodies.shuttle, program.param);
    let count = Arc::new(AtomicU64::new(0));
    let counter = count.clone();
    let f = move || {
        counter.fetch_add(1, Ordering::Relaxed);
        body(param)
    };
    let mut config = shuttle::Config::new();
    config.failure_persistence = shuttle::FailurePersistence::None;
    config.silence_warnings = true;
    let n = budget as usize;
    let started = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| match tool {
        Tool::ShuttleRandom => {
            shuttle::Runner::new(RandomScheduler::new_from_seed(seed, n), config).run(f);
        }
        Tool::ShuttlePct(depth) => {
            shuttle::Runner::new(PctScheduler::new_from_seed(seed, *depth, n), config).run(f);
        }
        Tool::ShuttleUrw => {
            shuttle::Runner::new(UrwRandomScheduler::new_from_seed(seed, n), config).run(f);
        }
        _ => unreachable!("not a shuttle tool"),
    }));
    let elapsed = started.elapsed();
    let message = result.err().map(|p| first_line(&payload_message(&*p)));
    Trial {
        failed: message.is_some(),
        executions: count.load(Ordering::Relaxed),
        elapsed,
        message,
        note: None,
        in_profiling: false,
    }
}

/// loom's own panics, which are limits of the model checker rather than bugs found.
const LOOM_LIMITS: [&str; 3] =
    ["exceeded maximum number of branches", "max_threads", "Model exceeded"];

/// The first line of loom 0.7's own `assert_ne!(mo_i, mo_j)` in `rt/atomic.rs` (marked "TODO:
/// this sometimes fails" there), which fires on atomics stored to many times, as in spin
/// loops (the safestack port): a failure of the model checker, not of the program. Every
/// assertion in the corpus carries a message, so none of the programs' fails with exactly
/// this line.
const LOOM_INTERNAL: &str = "assertion `left != right` failed";

fn loom_trial(bound: Option<usize>, program: &Program, cap: Duration) -> Trial {
    let (body, param) = (program.bodies.loom, program.param);
    let count = Arc::new(AtomicU64::new(0));
    let counter = count.clone();
    let f = move || {
        counter.fetch_add(1, Ordering::Relaxed);
        body(param)
    };
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = bound;
    builder.max_branches = 1_000_000;
    builder.max_duration = Some(cap);
    builder.max_permutations = None;
    builder.checkpoint_interval = 1;
    builder.checkpoint_file = None;
    let started = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| builder.check(f)));
    let elapsed = started.elapsed();
    let executions = count.load(Ordering::Relaxed);
    match result {
        Ok(()) => {
            let note = if elapsed >= cap {
                format!("time cap of {} s reached", cap.as_secs_f64())
            } else {
                "explored every interleaving".into()
            };
            Trial {
                failed: false,
                executions,
                elapsed,
                message: None,
                note: Some(note),
                in_profiling: false,
            }
        }
        Err(p) => {
            let msg = first_line(&payload_message(&*p));
            if LOOM_LIMITS.iter().any(|l| msg.contains(l)) || msg == LOOM_INTERNAL {
                Trial {
                    failed: false,
                    executions,
                    elapsed,
                    message: None,
                    note: Some(msg),
                    in_profiling: false,
                }
            } else {
                Trial {
                    failed: true,
                    executions,
                    elapsed,
                    message: Some(msg),
                    note: None,
                    in_profiling: false,
                }
            }
        }
    }
}

/// The trials of one program under one tool.
#[derive(Clone, Debug)]
pub struct Cell {
    /// The tool.
    pub tool: Tool,
    /// Its trials (one for deterministic tools).
    pub trials: Vec<Trial>,
}

impl Cell {
    /// Runs `trials` trials (seeds `0..trials`; one for a deterministic tool).
    pub fn run(tool: &Tool, program: &Program, trials: u64, budget: Budget) -> Cell {
        let trials = if tool.deterministic() { 1 } else { trials };
        let trials = (0..trials)
            .map(|seed| on_clean_thread(|| trial(tool, program, seed, budget)))
            .collect();
        Cell { tool: tool.clone(), trials }
    }

    /// Trials that failed.
    pub fn found(&self) -> usize {
        self.trials.iter().filter(|t| t.failed).count()
    }

    /// Mean executions to the first failure, a trial without one counting all it ran; and
    /// whether some trial had none.
    pub fn mean(&self) -> (f64, bool) {
        let total: u64 = self.trials.iter().map(|t| t.executions).sum();
        (total as f64 / self.trials.len().max(1) as f64, self.found() < self.trials.len())
    }

    /// Expected executions to the first failure when a user reruns the tool with fresh seeds
    /// until it fails (the cost with restarts): the executions of all trials over the trials
    /// that failed; a trial that found nothing cost its whole budget before the restart. A
    /// cell where no trial failed is charged `2 * budget`, a floor on what it would cost
    /// that keeps geometric means finite.
    pub fn cost(&self, budget: u64) -> f64 {
        cost_with_restarts(self.found() as u64, self.executions(), budget)
    }

    /// Median executions to the first failure (same convention as [`Cell::mean`]).
    pub fn median(&self) -> f64 {
        let mut v: Vec<u64> = self.trials.iter().map(|t| t.executions).collect();
        v.sort_unstable();
        match v.len() {
            0 => 0.0,
            n if n % 2 == 1 => v[n / 2] as f64,
            n => (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0,
        }
    }

    /// Total wall time.
    pub fn elapsed(&self) -> Duration {
        self.trials.iter().map(|t| t.elapsed).sum()
    }

    /// Wall time of the first `n` trials (all of them if fewer): a column whose cells ran more
    /// trials compares with the others over as many.
    pub fn elapsed_first(&self, n: usize) -> Duration {
        self.trials.iter().take(n).map(|t| t.elapsed).sum()
    }

    /// Total executions.
    pub fn executions(&self) -> u64 {
        self.trials.iter().map(|t| t.executions).sum()
    }

    /// Executions per second over all trials.
    pub fn rate(&self) -> f64 {
        self.executions() as f64 / self.elapsed().as_secs_f64().max(1e-9)
    }
}

/// The cost with restarts of trials that ran `executions` in all and failed `found` times
/// ([`Cell::cost`]): `executions / found`, or `2 * budget` when none failed.
pub fn cost_with_restarts(found: u64, executions: u64, budget: u64) -> f64 {
    match found {
        0 => 2.0 * budget as f64,
        found => executions as f64 / found as f64,
    }
}

/// The bug's `(c, v, t)` as pctvb measures it on a minimized failing schedule: the smallest
/// over a few runs, or `None` when
/// no run fails. An upper bound on the true shape, tight when minimization is. Tries the
/// random strategy, PCT d=3 and the combined default, three seeds each.
pub fn measured_shape(program: &Program, budget: u64) -> Option<pctvb::report::BugShape> {
    let (body, param) = (program.bodies.pctvb, program.param);
    let mut best: Option<pctvb::report::BugShape> = None;
    for kind in [StrategyKind::Random, StrategyKind::Pct { depth: 3 }, pctvb_default()] {
        for seed in 0..3 {
            let report = Config::new()
                .ignore_env()
                .seed(seed)
                .iterations(budget)
                .strategy(kind.clone())
                .workers(1)
                .run(move || body(param));
            if let Some(s) = report.failure().and_then(|f| f.shape) {
                let key = |s: &pctvb::report::BugShape| (s.preemptions, s.variables, s.threads);
                if best.as_ref().is_none_or(|b| key(&s) < key(b)) {
                    best = Some(s);
                }
            }
        }
    }
    best
}

/// The geometric mean of `xs` (positive numbers), `None` for none.
pub fn geomean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

/// Executions per second of `program` under `tool`, measured over as many trials as fit in
/// `min_time` (at least one, at most 1000; seeds from 1000 on, apart from the result trials):
/// throughput including each trial's setup and failure report, stable even where a trial
/// finds its bug in one or two executions and takes a fraction of a millisecond.
pub fn rate(tool: &Tool, program: &Program, budget: Budget, min_time: Duration) -> f64 {
    let (mut executions, mut elapsed) = (0u64, Duration::ZERO);
    for seed in 1000..2000 {
        let t = on_clean_thread(|| trial(tool, program, seed, budget));
        executions += t.executions;
        elapsed += t.elapsed;
        if elapsed >= min_time {
            break;
        }
    }
    executions as f64 / elapsed.as_secs_f64().max(1e-9)
}

/// A cell of `tool` whose trials are `(failed, executions)`, for the unit tests of this
/// crate (run's and doc's).
#[cfg(test)]
pub(crate) fn test_cell(tool: Tool, trials: &[(bool, u64)]) -> Cell {
    let trials = trials
        .iter()
        .map(|&(failed, executions)| Trial {
            failed,
            executions,
            elapsed: Duration::from_millis(1),
            message: failed.then(|| "bug".to_string()),
            note: None,
            in_profiling: false,
        })
        .collect();
    Cell { tool, trials }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(trials: &[(bool, u64)]) -> Cell {
        test_cell(Tool::ShuttleUrw, trials)
    }

    #[test]
    fn cost_with_restarts_counts_every_trial_over_the_finds() {
        // Every trial found it: the mean.
        assert_eq!(cell(&[(true, 3), (true, 5)]).cost(100), 4.0);
        // One of three: 10 + 100 + 100 executions for one find.
        assert_eq!(cell(&[(true, 10), (false, 100), (false, 100)]).cost(100), 210.0);
        // None: twice the budget, whatever ran.
        assert_eq!(cell(&[(false, 100), (false, 100)]).cost(100), 200.0);
        assert_eq!(cell(&[(false, 58)]).cost(1000), 2000.0);
    }

    #[test]
    fn wall_time_of_the_first_trials_only() {
        // Five trials of 1 ms each: the first 3 (a column of 20 trials beside a headline
        // column of 100 compares over the first 20), and all when fewer ran.
        let c = cell(&[(true, 1); 5]);
        assert_eq!(c.elapsed(), Duration::from_millis(5));
        assert_eq!(c.elapsed_first(3), Duration::from_millis(3));
        assert_eq!(c.elapsed_first(20), Duration::from_millis(5));
    }

    #[test]
    fn geomean_of_costs() {
        assert_eq!(geomean(&[]), None);
        let g = geomean(&[2.0, 8.0]).unwrap();
        assert!((g - 4.0).abs() < 1e-12, "{g}");
        let g = geomean(&[10.0, 10.0, 10.0]).unwrap();
        assert!((g - 10.0).abs() < 1e-12, "{g}");
    }
}
