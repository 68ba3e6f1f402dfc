//! Strategy results (issue: randomized schedulers): regenerates `docs/RESULTS-strategies.md`
//! and two PNG plots (`docs/figure6.png`, `docs/thread_scaling.png`) with `cargo run --release -p
//! pctvb-corpus --bin strategy_results` (under a minute on two cores; the plots need a font,
//! see `pctvb_corpus::plot`).
//!
//! 1. The paper's Figure 6: two variables, one involved in a c=1, v=1, t=2 bug, the other's
//!    access frequency swept; mean executions to the bug for PCT and PCTVB. PCT's change point
//!    is uniform over all k steps, so the noise variable's accesses dilute it; PCTVB picks the
//!    variable first, so it does not care how often the other one is accessed.
//! 2. Thread-count scaling: a bug between 2 threads among n threads (the others are
//!    bystanders doing unrelated work); mean executions to the bug for Random, PCT (d=2),
//!    thread bounding, PCTVB and the combined strategy. PCT's bound shrinks with n and with
//!    the steps k the bystanders add; thread bounding's priority factor does not depend on
//!    n, and variable bounding's change points ignore the bystanders' unshared accesses.
//!
//! Each cell is the mean over `TRIALS` seeds of the executions (profiling included) until the
//! first failure, with runs capped at `CAP` executions; a trial that hits the cap counts as
//! `CAP` and the cell is marked with `>`.

use std::fmt::Write as _;
use std::time::Instant;

use pctvb::runner::PROFILE_INDEX_BASE;
use pctvb::sync::atomic::{AtomicUsize, Ordering};
use pctvb::sync::Arc;
use pctvb::{thread, Config, StrategyKind};
use std::path::Path;

use pctvb_corpus::plot;

const TRIALS: u64 = 20;
const CAP: u64 = 20_000;
const PROFILE_RUNS: u64 = 10;

/// Figure 6's program: thread 1 reads `x` twice and expects the same value; thread 2 writes
/// `x` once; thread 3 accesses the unrelated `y` `noise` times.
fn figure_6(noise: usize) -> impl Fn() + Sync {
    move || {
        let x = Arc::new(AtomicUsize::new(0));
        let y = Arc::new(AtomicUsize::new(0));
        let x1 = x.clone();
        let reader = thread::spawn(move || {
            let a = x1.load(Ordering::SeqCst);
            let b = x1.load(Ordering::SeqCst);
            assert_eq!(a, b, "x changed between the reads");
        });
        let writer = thread::spawn(move || x.store(1, Ordering::SeqCst));
        let busy = thread::spawn(move || {
            for _ in 0..noise {
                y.fetch_add(1, Ordering::SeqCst);
            }
        });
        reader.join().unwrap();
        writer.join().unwrap();
        busy.join().unwrap();
    }
}

/// A bug between two threads among `n`: the setter increments `a` ten times and then raises
/// `flag`; the checker fails if it sees all ten increments but not the flag. The checker must
/// run exactly between the setter's last increment and its flag store, which a random walk
/// rarely does (the setter must first run ten steps unpreempted by the checker). `n - 2`
/// bystanders work on their own counters: they add steps (k) but no shared variables.
fn scaling(n: usize) -> impl Fn() + Sync {
    move || {
        let a = Arc::new(AtomicUsize::new(0));
        let flag = Arc::new(AtomicUsize::new(0));
        let (a1, flag1) = (a.clone(), flag.clone());
        let setter = thread::spawn(move || {
            for _ in 0..10 {
                a1.fetch_add(1, Ordering::SeqCst);
            }
            flag1.store(1, Ordering::SeqCst);
        });
        let checker = thread::spawn(move || {
            if a.load(Ordering::SeqCst) == 10 {
                assert_eq!(flag.load(Ordering::SeqCst), 1, "saw the work but not the flag");
            }
        });
        let bystanders: Vec<_> = (0..n.saturating_sub(2))
            .map(|_| {
                thread::spawn(|| {
                    let own = AtomicUsize::new(0);
                    for _ in 0..3 {
                        own.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        setter.join().unwrap();
        checker.join().unwrap();
        for h in bystanders {
            h.join().unwrap();
        }
    }
}

/// Mean executions to the first failure over `TRIALS` seeds, and whether any trial hit the cap.
fn mean_executions(kind: &StrategyKind, body: &(dyn Fn() + Sync)) -> (f64, bool) {
    let mut total = 0;
    let mut capped = false;
    for seed in 0..TRIALS {
        let report = Config::new()
            .ignore_env()
            .seed(seed)
            .iterations(CAP)
            .strategy(kind.clone())
            .minimize_runs(0)
            .profile_runs(PROFILE_RUNS)
            .workers(1)
            .run(body);
        // Executions spent, profiling included: a priority strategy first runs
        // `profile_runs` random executions, which may already find the bug.
        let profiling = if *kind == StrategyKind::Random { 0 } else { PROFILE_RUNS };
        if let Some(error) = report.error() {
            panic!("pctvb could not run {}: {error}", kind.name());
        }
        match report.failure() {
            Some(f) => match f.execution.checked_sub(PROFILE_INDEX_BASE) {
                Some(i) => total += i + 1,
                None => total += profiling + report.executions,
            },
            None => {
                total += profiling + CAP;
                capped = true;
            }
        }
    }
    (total as f64 / TRIALS as f64, capped)
}

fn cell((mean, capped): (f64, bool)) -> String {
    format!("{}{mean:.1}", if capped { ">" } else { "" })
}

/// Draws one plot, or ends the process with the reason: a results document must not embed a
/// plot that is missing or stale.
fn draw(file: &str, title: &str, x_label: &str, xs: &[f64], series: &[plot::Series]) {
    if let Err(e) = plot::line_chart(Path::new(file), plot::SIZE, title, x_label, xs, series) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

fn main() {
    // The plots need a font: without one, fail now rather than after the trials.
    if let Err(e) = plot::use_font() {
        eprintln!("{e}");
        std::process::exit(1);
    }
    let started = Instant::now();
    let mut doc = String::from(
        "# Randomized strategies: measured executions to the bug\n\n\
         Regenerate with `cargo run --release -p pctvb-corpus --bin strategy_results` (writes this file and the PNG\n\
         plots next to it). Each cell: mean over 20 seeds of the executions until the first\n\
         failure, the 10 random profiling executions of the priority strategies included\n\
         (they may find the bug themselves), capped at 20,000 (`>`: some trial hit the\n\
         cap).\n\n",
    );

    let noise = [1usize, 10, 100, 1000];
    let fig6 = [
        ("PCT d=2", StrategyKind::Pct { depth: 2 }),
        ("PCTVB d=2 v=1", StrategyKind::Pctvb { depth: 2, vars: 1 }),
    ];
    doc += "## Figure 6: a bug on a rarely accessed variable\n\n\
            Thread 1 reads `x` twice, thread 2 writes `x` once, thread 3 accesses `y` N times.\n\n\
            | accesses of `y` | PCT d=2 | PCTVB d=2 v=1 |\n|---|---|---|\n";
    let mut fig6_series: Vec<(String, Vec<f64>)> =
        fig6.iter().map(|(n, _)| (n.to_string(), Vec::new())).collect();
    for &f in &noise {
        let body = figure_6(f);
        let cells: Vec<(f64, bool)> = fig6.iter().map(|(_, k)| mean_executions(k, &body)).collect();
        for (s, c) in fig6_series.iter_mut().zip(&cells) {
            s.1.push(c.0);
        }
        let _ = writeln!(doc, "| {f} | {} | {} |", cell(cells[0]), cell(cells[1]));
    }
    doc += "\n![Figure 6](figure6.png)\n\n";
    let xs: Vec<f64> = noise.iter().map(|&f| f as f64).collect();
    draw(
        "docs/figure6.png",
        "Figure 6: bug variable vs. a noisy one",
        "accesses of the other variable",
        &xs,
        &fig6_series,
    );

    let threads = [2usize, 3, 5, 10, 20, 50, 100];
    let strategies = [
        ("Random", StrategyKind::Random),
        ("PCT d=2", StrategyKind::Pct { depth: 2 }),
        ("ThreadBound t=2 c=1", StrategyKind::ThreadBound { threads: 2, preemptions: 1 }),
        ("PCTVB d=2 v=1", StrategyKind::Pctvb { depth: 2, vars: 1 }),
        ("Combined d=2 v=1 t=2", StrategyKind::Combined { depth: 2, vars: 1, threads: 2 }),
    ];
    doc += "## Thread-count scaling: a 2-thread bug among n threads\n\n\
            The setter increments `a` ten times, then raises `flag`; the checker fails if it sees\n\
            ten increments but no flag. n - 2 bystanders increment their own counters.\n\n| n |";
    for (name, _) in &strategies {
        let _ = write!(doc, " {name} |");
    }
    doc += "\n|---|";
    doc += &"---|".repeat(strategies.len());
    doc += "\n";
    let mut scaling_series: Vec<(String, Vec<f64>)> =
        strategies.iter().map(|(n, _)| (n.to_string(), Vec::new())).collect();
    for &n in &threads {
        let body = scaling(n);
        let _ = write!(doc, "| {n} |");
        for (i, (_, kind)) in strategies.iter().enumerate() {
            let c = mean_executions(kind, &body);
            scaling_series[i].1.push(c.0);
            let _ = write!(doc, " {} |", cell(c));
        }
        doc += "\n";
    }
    doc += "\n![Thread scaling](thread_scaling.png)\n";
    let xs: Vec<f64> = threads.iter().map(|&n| n as f64).collect();
    draw(
        "docs/thread_scaling.png",
        "A 2-thread bug among n threads",
        "threads n",
        &xs,
        &scaling_series,
    );
    let _ = write!(doc, "\nMeasured in {:.0} s.\n", started.elapsed().as_secs_f64());
    std::fs::write("docs/RESULTS-strategies.md", &doc).unwrap();
    println!("{doc}");
}
