//! Where a tool's cost on the buggy corpus programs comes from: per program, the expected
//! executions to the first failure with restarts (RESULTS.md's measure) and the share of
//! trials whose first failure came at execution 1, 2, 3, 4-5, 6-10 or later; at the end, the
//! geometric mean of the costs and, for a pctvb column, its ratio to shuttle URW's on the
//! programs shuttle runs.
//!
//! ```text
//! cargo run --release -p pctvb-corpus --example first_failures -- default 200
//! cargo run --release -p pctvb-corpus --example first_failures -- revfuzz 200 --first-seed 200 --only ws-deque
//! ```
//!
//! The tool is a column name of RESULTS.md (`default`, `revfuzz`, `sh-urw`...). Trials use
//! seeds `first-seed..first-seed + trials` (0 by default) and the corpus budget of 10^4
//! executions; safestack is left out (a trial of it takes up to the whole budget, and it says
//! little of the first executions). Unlike the corpus command it measures no wall time, so
//! 200 trials of the default over every other program take seconds: a quick check of a
//! strategy change before the corpus reruns it (the executions a seed runs do not depend on
//! the machine). The shuttle URW reference runs the same seeds when `--vs-urw` is given.

use pctvb_corpus::doc::column_name;
use pctvb_corpus::run::{
    cost_with_restarts, on_clean_thread, silence_stderr, trial, Budget, Tool, TraceDir,
};
use std::time::Duration;

/// A program's trials: cost with restarts, and the share of trials by first failing execution.
struct Row {
    cost: f64,
    shares: [f64; 6],
}

fn measure(tool: &Tool, program: &pctvb_corpus::Program, seeds: std::ops::Range<u64>) -> Row {
    let budget = Budget { executions: 10_000, loom_time: Duration::from_secs(10) };
    let trials = seeds.end - seeds.start;
    let (mut total, mut found, mut by_index) = (0u64, 0u64, [0u64; 6]);
    for seed in seeds {
        let t = on_clean_thread(|| trial(tool, program, seed, budget));
        total += t.executions;
        if t.failed {
            found += 1;
            let bucket = match t.executions {
                1 => 0,
                2 => 1,
                3 => 2,
                4 | 5 => 3,
                6..=10 => 4,
                _ => 5,
            };
            by_index[bucket] += 1;
        }
    }
    let cost = cost_with_restarts(found, total, budget.executions);
    Row { cost, shares: by_index.map(|n| n as f64 / trials as f64) }
}

fn main() {
    let usage = "usage: first_failures TOOL TRIALS [--first-seed S] [--only a,b] [--vs-urw]";
    let mut args = std::env::args().skip(1);
    let (Some(name), Some(trials)) = (args.next(), args.next()) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let Ok(trials) = trials.parse::<u64>() else {
        eprintln!("TRIALS must be a number, not {trials:?}; {usage}");
        std::process::exit(2);
    };
    let (mut first, mut only, mut vs_urw) = (0u64, Vec::<String>::new(), false);
    let bad = |what: String| -> ! {
        eprintln!("{what}; {usage}");
        std::process::exit(2);
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--vs-urw" => vs_urw = true,
            "--first-seed" => match args.next().map(|s| s.parse::<u64>()) {
                Some(Ok(seed)) => first = seed,
                _ => bad("--first-seed takes a number".into()),
            },
            "--only" => match args.next() {
                Some(list) => only = list.split(',').map(String::from).collect(),
                None => bad("--only takes a list of programs".into()),
            },
            other => bad(format!("unknown argument {other:?}")),
        }
    }
    let catalog = pctvb_corpus::catalog();
    if let Some(unknown) = only.iter().find(|n| !catalog.iter().any(|p| &p.name == *n)) {
        bad(format!("no corpus program is called {unknown:?}"));
    }
    let columns: Vec<(String, Tool)> =
        Tool::all().into_iter().map(|t| (column_name(&t), t)).collect();
    let Some((_, tool)) = columns.iter().find(|(c, _)| *c == name) else {
        let names: Vec<&str> = columns.iter().map(|(c, _)| c.as_str()).collect();
        eprintln!("unknown tool {name:?}; one of {}", names.join(", "));
        std::process::exit(2);
    };
    // As the corpus command: failures' schedules to a directory of this run's, removed at the
    // end, and shuttle's printed failures and backtraces nowhere.
    let _traces = TraceDir::for_this_process();
    std::env::set_var("RUST_BACKTRACE", "0");
    silence_stderr();
    let urw = Tool::ShuttleUrw;
    let seeds = first..first + trials;
    let (mut logs, mut ratio_logs) = (Vec::new(), Vec::new());
    println!(
        "program              cost      e1    e2    e3  e4-5 e6-10  e11+{}",
        match vs_urw {
            true => "   sh-urw  ratio",
            false => "",
        }
    );
    for program in catalog {
        if !program.bug || program.name == "safestack" {
            continue;
        }
        if !only.is_empty() && !only.contains(&program.name) {
            continue;
        }
        let row = measure(tool, &program, seeds.clone());
        let s = row.shares;
        print!(
            "{:<18} {:>8.2}  {:.2}  {:.2}  {:.2}  {:.2}  {:.2}  {:.2}",
            program.name, row.cost, s[0], s[1], s[2], s[3], s[4], s[5]
        );
        logs.push(row.cost.ln());
        if vs_urw && urw.supports(&program) {
            let reference = measure(&urw, &program, seeds.clone());
            print!(" {:>8.2}  {:.2}", reference.cost, row.cost / reference.cost);
            ratio_logs.push((row.cost / reference.cost).ln());
        }
        println!();
    }
    let geomean = |v: &[f64]| (v.iter().sum::<f64>() / v.len().max(1) as f64).exp();
    println!("geomean cost {:.3} over {} programs", geomean(&logs), logs.len());
    if vs_urw {
        println!(
            "geomean ratio to sh-urw {:.4} over {} programs",
            geomean(&ratio_logs),
            ratio_logs.len()
        );
    }
}
