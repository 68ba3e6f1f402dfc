//! `cargo run --release -p pctvb-corpus -- --all`: runs every corpus program under every pctvb
//! strategy, shuttle's schedulers and loom, and writes `docs/RESULTS.md` and the family plots
//! (`docs/corpus_*.png`).
//!
//! Options: `--quick` (smoke test: few trials, small budget, nothing written unless `--out`;
//! exits with status 1 unless every buggy program is found by some tool and no correct
//! program fails; without `--only`, it leaves out `run::SMOKE_SKIPPED`), `--only a,b`
//! (programs by name), `--tools a,b` (columns by short name, e.g. `comb,sh-rand`), `--trials N`,
//! `--headline-trials N` (trials of the headline ratio's two columns, `default` and `sh-urw`,
//! on the buggy programs: 100 by default, never fewer than `--trials`; the ratio of their
//! geometric means moves by a few percent between runs of 20 trials, as much as the gap to the
//! speed issue's goal), `--budget N`, `--loom-secs S`, `--jobs N` (cells run in parallel),
//! `--out PATH`, `--verbose` (keep the tools' stderr; by default it goes to /dev/null, since
//! shuttle and loom print every failure they find).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pctvb_corpus::doc::{self, Row, Setup};
use pctvb_corpus::run::{self, Budget, Cell, Tool};
use pctvb_corpus::{catalog, plot, Group, Program};

struct Options {
    quick: bool,
    only: Option<Vec<String>>,
    tools: Option<Vec<String>>,
    trials: u64,
    headline_trials: u64,
    budget: u64,
    loom_secs: f64,
    jobs: usize,
    out: Option<PathBuf>,
    verbose: bool,
}

fn parse() -> Result<Options, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut o = Options {
        quick,
        only: None,
        tools: None,
        trials: if quick { 2 } else { 20 },
        headline_trials: if quick { 2 } else { 100 },
        budget: if quick { 1000 } else { 10_000 },
        loom_secs: if quick { 0.5 } else { 10.0 },
        jobs: 1,
        out: if quick { None } else { Some(root.join("docs/RESULTS.md")) },
        verbose: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--all" | "--quick" => {}
            "--only" => o.only = Some(value()?.split(',').map(String::from).collect()),
            "--tools" => o.tools = Some(value()?.split(',').map(String::from).collect()),
            "--trials" => o.trials = value()?.parse().map_err(|e| format!("--trials: {e}"))?,
            "--headline-trials" => {
                o.headline_trials =
                    value()?.parse().map_err(|e| format!("--headline-trials: {e}"))?
            }
            "--budget" => o.budget = value()?.parse().map_err(|e| format!("--budget: {e}"))?,
            "--loom-secs" => {
                o.loom_secs = value()?.parse().map_err(|e| format!("--loom-secs: {e}"))?
            }
            "--jobs" => o.jobs = value()?.parse().map_err(|e| format!("--jobs: {e}"))?,
            "--out" => o.out = Some(PathBuf::from(value()?)),
            "--verbose" => o.verbose = true,
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    o.trials = o.trials.max(1);
    o.headline_trials = o.headline_trials.max(o.trials);
    o.jobs = o.jobs.max(1);
    Ok(o)
}

fn environment() -> Vec<String> {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("model name")).map(|l| l.to_string()))
        .and_then(|l| l.split(':').nth(1).map(|s| s.trim().to_string()))
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    let rustc = std::process::Command::new("rustc")
        .arg("-V")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "rustc (unknown)".into());
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock"))
        .unwrap_or_default();
    let version = |name: &str| {
        let key = format!("name = \"{name}\"\nversion = \"");
        lock.find(&key)
            .map(|i| lock[i + key.len()..].split('"').next().unwrap_or("?").to_string())
            .unwrap_or_else(|| "?".into())
    };
    let profile = if cfg!(debug_assertions) { "debug build" } else { "release build" };
    vec![
        format!("{cpu}, {cores} cores (load average at the start: {load})"),
        format!("{rustc}, {profile}"),
        format!(
            "pctvb {}, shuttle {}, loom {}",
            env!("CARGO_PKG_VERSION"),
            version("shuttle"),
            version("loom")
        ),
    ]
}

fn main() -> ExitCode {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("{e}");
            }
            eprintln!(
                "usage: pctvb-corpus [--all | --quick] [--only a,b] [--tools a,b] [--trials N] \
                 [--headline-trials N] [--budget N] [--loom-secs S] [--jobs N] [--out PATH] \
                 [--verbose]"
            );
            return ExitCode::from(2);
        }
    };
    let programs: Vec<Program> = catalog()
        .into_iter()
        .filter(|p| match &o.only {
            Some(only) => only.contains(&p.name),
            // The smoke test leaves out what it cannot find within its budget.
            None => !o.quick || !run::SMOKE_SKIPPED.contains(&p.name.as_str()),
        })
        .collect();
    let tools: Vec<Tool> = Tool::all()
        .into_iter()
        .filter(|t| {
            o.tools.as_ref().is_none_or(|only| only.iter().any(|s| doc::column_name(t) == *s))
        })
        .collect();
    if programs.is_empty() || tools.is_empty() {
        eprintln!("no program or no tool selected");
        return ExitCode::from(2);
    }
    // The plots need a font: without one, fail now rather than after the trials.
    if o.out.is_some() {
        if let Err(e) = plot::use_font() {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    }
    let environment = environment();
    // Single-threaded here: no other thread reads the environment yet.
    let _traces = run::TraceDir::for_this_process();
    if !o.verbose {
        run::silence_stderr();
    }
    let budget = Budget { executions: o.budget, loom_time: Duration::from_secs_f64(o.loom_secs) };
    // One-time costs (panic hooks, thread-local pools) before anything is measured. shuttle
    // first: each tool wraps the panic hook it finds, and the one installed last runs first, so
    // pctvb's failures do not pass through shuttle's hook (which prints and persists them).
    // Backtraces only slow the shuttle columns down: off.
    std::env::set_var("RUST_BACKTRACE", "0");
    let warmup = catalog().into_iter().find(|p| p.name == "counter").expect("counter");
    for tool in [Tool::ShuttleRandom, Tool::Loom(Some(0)), Tool::Pctvb(pctvb::StrategyKind::Random)]
    {
        run::trial(
            &tool,
            &warmup,
            0,
            Budget { executions: 1, loom_time: Duration::from_millis(10) },
        );
    }
    let started = Instant::now();

    // Every (program, tool) cell, run by `jobs` workers.
    // Programs with many threads first: their cells take longest, and the workers then end
    // together.
    let mut work: Vec<(usize, usize)> = (0..programs.len())
        .flat_map(|p| (0..tools.len()).map(move |t| (p, t)))
        .filter(|&(p, t)| tools[t].supports(&programs[p]))
        .collect();
    work.sort_by_key(|&(p, _)| std::cmp::Reverse(programs[p].threads));
    let work: VecDeque<(usize, usize)> = work.into();
    let total = work.len();
    let work = Arc::new(Mutex::new(work));
    let results: Arc<Mutex<Vec<Vec<Option<Cell>>>>> =
        Arc::new(Mutex::new(vec![vec![None; tools.len()]; programs.len()]));
    let done = Arc::new(Mutex::new(0usize));
    std::thread::scope(|s| {
        for _ in 0..o.jobs {
            let (work, results, done) = (work.clone(), results.clone(), done.clone());
            let (programs, tools) = (&programs, &tools);
            let (trials, headline_trials) = (o.trials, o.headline_trials);
            // Runs cells until the work is done or a tool leaves the thread poisoned
            // (`run::thread_poisoned`); the worker then goes on in a fresh thread.
            let cells = move || loop {
                let Some((p, t)) = work.lock().unwrap().pop_front() else { break true };
                let trials = if doc::headline(&tools[t]) && programs[p].bug {
                    headline_trials
                } else {
                    trials
                };
                let cell = Cell::run(&tools[t], &programs[p], trials, budget);
                let mut n = done.lock().unwrap();
                *n += 1;
                let (mean, capped) = cell.mean();
                println!(
                        "[{:>3}/{total}] {:<16} {:<24} found {:>2}/{:<2} mean {}{:<9.1} cost {:<9.1} {:>7.2} s {:>9.0} exec/s",
                        *n,
                        programs[p].name,
                        tools[t].name(),
                        cell.found(),
                        cell.trials.len(),
                        if capped { ">" } else { " " },
                        mean,
                        cell.cost(budget.executions),
                        cell.elapsed().as_secs_f64(),
                        cell.rate()
                    );
                results.lock().unwrap()[p][t] = Some(cell);
                if run::thread_poisoned() {
                    break false;
                }
            };
            s.spawn(move || {
                std::thread::scope(|inner| loop {
                    let done = std::thread::Builder::new()
                        .stack_size(64 << 20)
                        .spawn_scoped(inner, cells.clone())
                        .expect("spawn a worker")
                        .join()
                        .expect("a worker panicked");
                    if done {
                        break;
                    }
                })
            });
        }
    });
    let trials_secs = started.elapsed().as_secs_f64();
    let cells = std::mem::take(&mut *results.lock().unwrap());
    let shape_budget = if o.quick { 0 } else { o.budget };
    let rows: Vec<Row> = programs
        .iter()
        .zip(cells)
        .map(|(program, cells)| {
            let measured = (program.bug && shape_budget > 0)
                .then(|| run::measured_shape(program, shape_budget))
                .flatten();
            // The speed target's rates: the default strategy and shuttle's schedulers.
            let rates = tools
                .iter()
                .map(|t| {
                    let wanted = *t == Tool::PctvbDefault || t.family() == "shuttle";
                    (wanted && !o.quick && t.supports(program))
                        .then(|| run::rate(t, program, budget, Duration::from_millis(500)))
                })
                .collect();
            Row { program, cells, measured, rates }
        })
        .collect();
    let wall = started.elapsed().as_secs_f64();

    // The smoke test's assertions.
    let mut problems = Vec::new();
    for r in &rows {
        let found = r.cells.iter().flatten().any(|c| c.found() > 0);
        if r.program.bug && !found {
            problems.push(format!("{}: no tool found the bug", r.program.name));
        }
        if !r.program.bug {
            for c in r.cells.iter().flatten().filter(|c| c.found() > 0) {
                problems.push(format!("{}: false alarm under {}", r.program.name, c.tool.name()));
            }
        }
    }

    if let Some(out) = &o.out {
        let dir = out.parent().map(PathBuf::from).unwrap_or_default();
        let mut plots = Vec::new();
        for (group, file, title, x) in [
            (
                Group::ThreadScaling,
                "corpus_thread_scaling.png",
                "Thread scaling: a 2-thread bug among n threads",
                "threads n",
            ),
            (
                Group::AccessFrequency,
                "corpus_access_frequency.png",
                "Access frequency of an uninvolved variable",
                "accesses",
            ),
        ] {
            if let Some((xs, series)) = doc::family_series(&rows, &tools, group) {
                // A document that embeds a missing or stale plot is worse than none.
                if let Err(e) =
                    plot::line_chart(&dir.join(file), plot::SIZE, title, x, &xs, &series)
                {
                    println!("{e}");
                    return ExitCode::FAILURE;
                }
                plots.push((title, file));
            }
        }
        let mut command = String::from("cargo run --release -p pctvb-corpus --");
        for a in std::env::args().skip(1) {
            command += " ";
            command += &a;
        }
        if !std::env::args().skip(1).any(|a| a == "--all" || a == "--quick") {
            command += " --all";
        }
        let setup = Setup {
            command,
            trials: o.trials,
            headline_trials: o.headline_trials,
            budget: o.budget,
            loom_secs: o.loom_secs,
            jobs: o.jobs,
            trials_secs,
            wall_secs: wall,
            environment,
        };
        let text = doc::markdown(&setup, &rows, &tools, &plots);
        match std::fs::write(out, text) {
            Ok(()) => println!("wrote {}", out.display()),
            Err(e) => println!("cannot write {}: {e}", out.display()),
        }
    }
    // What a user pays per column, as the document's cost table has it.
    let buggy = rows.iter().filter(|r| r.program.bug).count();
    if buggy > 0 {
        println!("geomean cost with restarts over the {buggy} buggy programs each column ran:");
        for (t, (ran, _)) in tools.iter().zip(doc::cost_geomeans(&rows, &tools, o.budget)) {
            let found = rows
                .iter()
                .filter(|r| r.program.bug)
                .filter_map(|r| r.cells[tools.iter().position(|x| x == t).unwrap()].as_ref())
                .map(|c| (usize::from(c.found() > 0), 1))
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
            if let Some(g) = ran {
                println!("  {:<24} {g:>9.1}  (found {}/{})", t.name(), found.0, found.1);
            }
        }
    }
    println!("{total} cells in {trials_secs:.1} s, {wall:.1} s in all");
    if problems.is_empty() {
        println!("ok: every buggy program was found by some tool; no correct program failed");
        ExitCode::SUCCESS
    } else {
        for p in &problems {
            println!("FAIL: {p}");
        }
        if o.quick || o.out.is_none() {
            ExitCode::FAILURE
        } else {
            // The full run documents what it found; the document lists the problems.
            ExitCode::SUCCESS
        }
    }
}
