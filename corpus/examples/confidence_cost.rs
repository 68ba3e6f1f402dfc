//! What a buggy program costs a test with a confidence target, enumerated or sampled:
//! `cargo run --release -p pctvb-corpus --example confidence_cost` (a few minutes on two
//! cores; `--only a,b` for some programs, `--trials N`, 10 by default).
//!
//! Every buggy corpus program but safestack (which no default finds within its budget) runs
//! under `Config::confidence(0.99)` with the default strategy (the combined strategy, SURW in
//! every second execution), seeds 0..N, one worker, no minimization, twice: as a user gets it
//! (the class enumerated first when that is cheaper, the explorer between the search's
//! executions) and with `enumerate(false)` (sampled, as before enumeration). A cell is the
//! executions to the first failure with restarts (every execution of every trial over the
//! trials that failed), counting every call of the body: profiling, the search's, the
//! explorer's, and the one replay that checks a failure's token.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use pctvb::Config;

fn cost(body: fn(usize), param: usize, trials: u64, enumerate: bool) -> (u64, f64) {
    let calls = Arc::new(AtomicU64::new(0));
    let mut found = 0;
    for seed in 0..trials {
        let counter = calls.clone();
        let report = Config::new()
            .ignore_env()
            .seed(seed)
            .confidence(0.99)
            .enumerate(enumerate)
            .minimize_runs(0)
            .workers(1)
            .run(move || {
                counter.fetch_add(1, Ordering::Relaxed);
                body(param)
            });
        if let Some(error) = report.error() {
            panic!("could not test: {error}");
        }
        found += u64::from(report.failure().is_some());
    }
    let total = calls.load(Ordering::Relaxed) as f64;
    (found, if found > 0 { total / found as f64 } else { f64::INFINITY })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1));
    let only: Option<Vec<String>> =
        value("--only").map(|s| s.split(',').map(String::from).collect());
    let trials: u64 = value("--trials").map_or(10, |t| t.parse().expect("--trials N"));
    println!("| program | enumerated (default) | sampled (`enumerate = false`) |");
    println!("|---|---:|---:|");
    let (mut log_e, mut log_s, mut n) = (0.0, 0.0, 0);
    for p in pctvb_corpus::catalog() {
        if !p.bug || p.name == "safestack" {
            continue;
        }
        if only.as_ref().is_some_and(|o| !o.contains(&p.name)) {
            continue;
        }
        let (fe, ce) = cost(p.bodies.pctvb, p.param, trials, true);
        let (fs, cs) = cost(p.bodies.pctvb, p.param, trials, false);
        println!("| {} | {ce:.1} ({fe}/{trials}) | {cs:.1} ({fs}/{trials}) |", p.name);
        log_e += ce.ln();
        log_s += cs.ln();
        n += 1;
    }
    let geo = |log: f64| (log / n as f64).exp();
    println!("| **geomean ({n} programs)** | **{:.1}** | **{:.1}** |", geo(log_e), geo(log_s));
}
