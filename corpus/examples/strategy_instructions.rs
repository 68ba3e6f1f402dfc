//! A bug-free corpus program run under one strategy for a fixed number of executions, to be
//! counted instruction by instruction (wall time on a shared machine says little):
//!
//! ```text
//! cargo build --release -p pctvb-corpus --example strategy_instructions
//! valgrind --tool=callgrind target/release/examples/strategy_instructions ws revfuzz 495
//! ```
//!
//! Programs: `counter`, `atomic` (atomic_counter), `prodcons` (producer_consumer_fixed), `ws`
//! (ws_deque_fixed), the programs of `executions/correct/*` in `benches/runtime.rs`, and
//! `twostage` (twostage_ok with 100 threads, `executions/twostage_100/*`), and `spawn4` (four
//! threads that do nothing, spawned and joined: `executions/lifecycle/spawn_join_4/*`, what
//! the threads' lifecycle costs apart from any operation).
//! Strategies: `revfuzz` (the default's explorer beside a target), `combined` (the default's
//! priority strategy, with its profiling executions), `default` (both, as a test with a target
//! runs them), `surw` (the default without a target), and revfuzz's parts and the baselines its
//! cost is read against: `reversal` (race reversal alone), `greybox` (schedule fuzzing over
//! SURW), `random`, `walk` (the uniform walk), `pos` (partial order sampling); and
//! `shuttle-random`, `shuttle-urw` and `shuttle-pct` (depth 3), the program's shuttle port as
//! `benches/runtime.rs` runs it, for `scripts/vs-shuttle.sh`. Seed 1, one worker, no
//! minimization, as the bench runs them; the instructions per execution are callgrind's total
//! over the executions. `RUNS` (default 1) repeats the run, as a criterion iteration does, for
//! a sampling profiler (`perf record -e cpu-clock`), which needs more than one run's time. The
//! example prints, last, the executions of one run (the profiling ones included) and the time
//! all runs took.

use pctvb::Config;
use pctvb_corpus::on_pctvb::correct;
use pctvb_corpus::on_shuttle;
use pctvb_corpus::run::{pctvb_default, PROFILE_RUNS};

/// A program's body on pctvb and its shuttle port.
type Bodies = (fn(usize), fn(usize));

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: strategy_instructions counter|atomic|prodcons|ws|twostage|spawn4 \
                 revfuzz|combined|default|surw|reversal|greybox|random|walk|pos|\
                 shuttle-random|shuttle-urw|shuttle-pct EXECUTIONS [RUNS]";
    let (program, strategy, executions, runs) = match args.as_slice() {
        [p, s, e] => (p, s, e, "1"),
        [p, s, e, r] => (p, s, e, r.as_str()),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let Ok(runs) = runs.parse::<u64>() else {
        eprintln!("RUNS must be a number, not {runs:?}; {usage}");
        std::process::exit(2);
    };
    let (body, shuttle_body): Bodies = match program.as_str() {
        "counter" => (correct::counter, on_shuttle::correct::counter),
        "atomic" => (correct::atomic_counter, on_shuttle::correct::atomic_counter),
        "prodcons" => {
            (correct::producer_consumer_fixed, on_shuttle::correct::producer_consumer_fixed)
        }
        "ws" => (correct::ws_deque_fixed, on_shuttle::correct::ws_deque_fixed),
        "twostage" => (|_| correct::twostage_ok(100), |_| on_shuttle::correct::twostage_ok(100)),
        "spawn4" => (|_| correct::spawn_join(4), |_| on_shuttle::correct::spawn_join(4)),
        other => {
            eprintln!("unknown program {other:?}; {usage}");
            std::process::exit(2);
        }
    };
    let Ok(executions) = executions.parse::<u64>() else {
        eprintln!("EXECUTIONS must be a number, not {executions:?}; {usage}");
        std::process::exit(2);
    };
    if let Some(scheduler) = strategy.strip_prefix("shuttle-") {
        let start = std::time::Instant::now();
        shuttle_runs(scheduler, shuttle_body, executions, runs, usage);
        let took = start.elapsed();
        eprintln!("{program} under {strategy}: {runs} x {executions} executions, no failure");
        // What `scripts/vs-shuttle.sh` reads: the executions and the time of the runs alone
        // (not the process's start).
        eprintln!("executions per run: {executions}");
        eprintln!("runs took: {} ns", took.as_nanos());
        return;
    }
    let base =
        Config::new().ignore_env().seed(1).minimize_runs(0).workers(1).iterations(executions);
    let config = match strategy.as_str() {
        "revfuzz" => base.strategy(pctvb::StrategyKind::Revfuzz),
        "surw" => base.strategy(pctvb::StrategyKind::Surw),
        "reversal" => base.strategy(pctvb::StrategyKind::Reversal),
        "greybox" => base.strategy(pctvb::StrategyKind::Greybox),
        "random" => base.strategy(pctvb::StrategyKind::Random),
        "walk" => base.strategy(pctvb::StrategyKind::UniformWalk),
        "pos" => base.strategy(pctvb::StrategyKind::Pos),
        "combined" => base.strategy(pctvb_default()).explore_every(0).profile_runs(PROFILE_RUNS),
        "default" => base
            .strategy(pctvb_default())
            .explore_every(pctvb::__internals::runner::DEFAULT_EXPLORE_EVERY)
            .profile_runs(PROFILE_RUNS),
        other => {
            eprintln!("unknown strategy {other:?}; {usage}");
            std::process::exit(2);
        }
    };
    let mut per_run = 0;
    let start = std::time::Instant::now();
    for _ in 0..runs {
        let report = config.run(move || body(0));
        // A bug-free program: a failure here is a bug of pctvb's, not a measurement.
        assert!(report.is_ok(), "{program} failed under {strategy}: {report:?}");
        // The profiling executions included.
        per_run = report.executions + report.profile.as_ref().map_or(0, |p| p.runs);
    }
    let took = start.elapsed();
    eprintln!("{program} under {strategy}: {runs} x {executions} executions, no failure");
    eprintln!("executions per run: {per_run}");
    eprintln!("runs took: {} ns", took.as_nanos());
}

/// `runs` runs of `executions` executions of `body` under shuttle's `scheduler` (`random`,
/// `urw` or `pct` with depth 3), seed 1, with the configuration `benches/runtime.rs` uses (and
/// its concrete scheduler types, not a boxed one).
fn shuttle_runs(scheduler: &str, body: fn(usize), executions: u64, runs: u64, usage: &str) {
    use shuttle::scheduler::{PctScheduler, RandomScheduler, Scheduler, UrwRandomScheduler};
    fn repeat<S: Scheduler + 'static>(make: impl Fn() -> S, body: fn(usize), runs: u64) {
        for _ in 0..runs {
            let mut config = shuttle::Config::new();
            config.failure_persistence = shuttle::FailurePersistence::None;
            shuttle::Runner::new(make(), config).run(move || body(0));
        }
    }
    let n = executions as usize;
    match scheduler {
        "random" => repeat(|| RandomScheduler::new_from_seed(1, n), body, runs),
        "urw" => repeat(|| UrwRandomScheduler::new_from_seed(1, n), body, runs),
        "pct" => repeat(|| PctScheduler::new_from_seed(1, 3, n), body, runs),
        other => {
            eprintln!("unknown shuttle scheduler {other:?}; {usage}");
            std::process::exit(2);
        }
    }
}
