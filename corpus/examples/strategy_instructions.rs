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
//! `twostage` (twostage_ok with 100 threads, `executions/twostage_100/*`).
//! Strategies: `revfuzz` (the default's explorer beside a target), `combined` (the default's
//! priority strategy, with its profiling executions), `default` (both, as a test with a target
//! runs them), `surw` (the default without a target), and revfuzz's parts and the baselines
//! its cost is read against: `reversal` (race reversal alone), `greybox` (schedule fuzzing over
//! SURW), `random`, `walk` (the uniform walk). Seed 1, one worker, no minimization, as
//! the bench runs them; the instructions per execution are callgrind's total over the
//! executions. `RUNS` (default 1) repeats the run, as a criterion iteration does, for a
//! sampling profiler (`perf record -e cpu-clock`), which needs more than one run's time.

use pctvb::Config;
use pctvb_corpus::on_pctvb::correct;
use pctvb_corpus::run::{pctvb_default, PROFILE_RUNS};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: strategy_instructions counter|atomic|prodcons|ws|twostage \
                 revfuzz|combined|default|surw|reversal|greybox|random|walk EXECUTIONS [RUNS]";
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
    let body: fn(usize) = match program.as_str() {
        "counter" => correct::counter,
        "atomic" => correct::atomic_counter,
        "prodcons" => correct::producer_consumer_fixed,
        "ws" => correct::ws_deque_fixed,
        "twostage" => |_| correct::twostage_ok(100),
        other => {
            eprintln!("unknown program {other:?}; {usage}");
            std::process::exit(2);
        }
    };
    let Ok(executions) = executions.parse::<u64>() else {
        eprintln!("EXECUTIONS must be a number, not {executions:?}; {usage}");
        std::process::exit(2);
    };
    let base =
        Config::new().ignore_env().seed(1).minimize_runs(0).workers(1).iterations(executions);
    let config = match strategy.as_str() {
        "revfuzz" => base.strategy(pctvb::StrategyKind::Revfuzz),
        "surw" => base.strategy(pctvb::StrategyKind::Surw),
        "reversal" => base.strategy(pctvb::StrategyKind::Reversal),
        "greybox" => base.strategy(pctvb::StrategyKind::Greybox),
        "random" => base.strategy(pctvb::StrategyKind::Random),
        "walk" => base.strategy(pctvb::StrategyKind::UniformWalk),
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
    for _ in 0..runs {
        let report = config.run(move || body(0));
        // A bug-free program: a failure here is a bug of pctvb's, not a measurement.
        assert!(report.is_ok(), "{program} failed under {strategy}: {report:?}");
    }
    eprintln!("{program} under {strategy}: {runs} x {executions} executions, no failure");
}
