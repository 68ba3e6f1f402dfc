//! The results document: per program and tool, bugs found, executions to the first failure,
//! wall time and executions per second; the targets of the issue; the data of the families' plots.

use std::fmt::Write as _;

use crate::plot::Series;
use crate::run::{cost_with_restarts, geomean, Cell, Tool};
use crate::{Group, Program};
use pctvb::StrategyKind;

/// The results of one program: one cell per tool that supports it (`None` otherwise).
pub struct Row<'a> {
    /// The program.
    pub program: &'a Program,
    /// One entry per column of [`Tool::all`].
    pub cells: Vec<Option<Cell>>,
    /// The bug's shape as pctvb measured it on a minimized failing schedule.
    pub measured: Option<pctvb::report::BugShape>,
    /// Executions per second measured apart from the trials ([`crate::run::rate`]): one entry
    /// per column, for the default strategy and shuttle's schedulers.
    pub rates: Vec<Option<f64>>,
}

/// How the run was made, for the document's header.
pub struct Setup {
    /// The command line.
    pub command: String,
    /// Trials per cell.
    pub trials: u64,
    /// Trials of the headline ratio's columns ([`headline`]) on the buggy programs (at least
    /// `trials`).
    pub headline_trials: u64,
    /// Executions per trial.
    pub budget: u64,
    /// loom's time cap, seconds.
    pub loom_secs: f64,
    /// Parallel cells.
    pub jobs: usize,
    /// Wall time of the result trials, seconds.
    pub trials_secs: f64,
    /// Wall time of the whole run (with the measured shapes and rates), seconds.
    pub wall_secs: f64,
    /// Machine and versions, one line each.
    pub environment: Vec<String>,
}

/// Whether `tool` is one of the headline ratio's two columns (`default` against `sh-urw`),
/// which run more trials on the buggy programs (`--headline-trials`): with 20 trials the ratio
/// of their geometric means moves by a few percent between runs, as much as the gap to the
/// speed issue's goal.
pub fn headline(tool: &Tool) -> bool {
    matches!(tool, Tool::PctvbDefault | Tool::ShuttleUrw)
}

/// Short column headers, in the order of [`Tool::all`].
pub fn short(tool: &Tool) -> String {
    match tool.name().as_str() {
        "random" => "random".into(),
        "uniform" => "uniform".into(),
        "surw" => "surw".into(),
        "pos" => "pos".into(),
        "greybox" => "greybox".into(),
        "pct d=2" => "pct2".into(),
        "pct d=3" => "pct3".into(),
        "pctvb d=2 v=1" => "pctvb".into(),
        "tb t=3 c=1" => "tb".into(),
        "combined d=2 v=1 t=3" => "comb".into(),
        "pctvb default" => "**default**".into(),
        "pctvb default portfolio" => "default-pf".into(),
        "pctvb default surw" => "default-surw".into(),
        "pctvb default uniform" => "default-uniform".into(),
        "pctvb default reversal" => "default-rev".into(),
        "systematic c=2 v=2 t=2" => "sys".into(),
        "shuttle random" => "sh-rand".into(),
        "shuttle pct d=3" => "sh-pct3".into(),
        "shuttle urw" => "sh-urw".into(),
        "loom pb=2" => "loom-pb2".into(),
        "loom" => "loom".into(),
        other => other.into(),
    }
}

/// The name a command line gives a column (`--tools`, the `first_failures` example): its
/// header without the bold.
pub fn column_name(tool: &Tool) -> String {
    short(tool).trim_matches('*').to_string()
}

fn header(tools: &[Tool]) -> String {
    let mut s = String::from("| program |");
    for t in tools {
        let _ = write!(s, " {} |", short(t));
    }
    s += "\n|---|";
    s += &"---:|".repeat(tools.len());
    s + "\n"
}

fn fmt_count(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

fn fmt_rate(x: f64) -> String {
    if x >= 10_000.0 {
        format!("{:.0}k", x / 1000.0)
    } else if x >= 1000.0 {
        format!("{:.1}k", x / 1000.0)
    } else {
        format!("{x:.0}")
    }
}

fn table(out: &mut String, rows: &[Row], tools: &[Tool], cell: impl Fn(&Cell) -> String) {
    *out += &header(tools);
    for row in rows {
        let _ = write!(out, "| {} |", row.program.name);
        for (c, tool) in row.cells.iter().zip(tools) {
            match c {
                Some(c) => {
                    let _ = write!(out, " {} |", cell(c));
                }
                None => {
                    let _ = write!(out, " {} |", tool.unsupported(row.program).unwrap_or("-"));
                }
            }
        }
        *out += "\n";
    }
}

/// Race-only programs: executions to the first race under pctvb's default and loom.
fn races_section(rows: &[Row], tools: &[Tool]) -> String {
    let races: Vec<&Row> = rows.iter().filter(|r| r.program.group == Group::Races).collect();
    let picked: Vec<usize> = (0..tools.len())
        .filter(|&i| tools[i] == Tool::PctvbDefault || tools[i].family() == "loom")
        .collect();
    if races.is_empty() || picked.is_empty() {
        return String::new();
    }
    let mut d = String::from(
        "## Data races: executions to the first race

Programs whose only symptom is a \
         data race (`corpus/src/programs/races.rs`): no assertion fails, so only a race \
         detector finds them: pctvb's (a race fails the execution, guide section 5a) and \
         loom's (`loom::cell::UnsafeCell`'s causality check). shuttle has no race detection \
         and does not run them. Per column: trials that found the race / trials, and the \
         mean executions to the first race (`>`: some trial found none).\n\n| program |",
    );
    for &i in &picked {
        let _ = write!(d, " {} |", short(&tools[i]));
    }
    d += "\n|---|";
    d += &"---:|".repeat(picked.len());
    d += "\n";
    for r in races {
        let _ = write!(d, "| {} |", r.program.name);
        for &i in &picked {
            match &r.cells[i] {
                Some(c) => {
                    let (m, capped) = c.mean();
                    let capped = if capped { ">" } else { "" };
                    let _ =
                        write!(d, " {}/{}, {capped}{} |", c.found(), c.trials.len(), fmt_count(m));
                }
                None => d += " - |",
            }
        }
        d += "\n";
    }
    d + "\n"
}

/// The column of the default strategy and of shuttle's schedulers.
fn columns(tools: &[Tool]) -> (usize, Vec<usize>) {
    let default = tools.iter().position(|t| *t == Tool::PctvbDefault).expect("default");
    let shuttle = (0..tools.len()).filter(|&i| tools[i].family() == "shuttle").collect();
    (default, shuttle)
}

/// Writes the markdown document.
pub fn markdown(setup: &Setup, rows: &[Row], tools: &[Tool], plots: &[(&str, &str)]) -> String {
    let mut d = String::from("# Corpus results: pctvb's strategies, shuttle and loom\n\n");
    let _ = writeln!(
        d,
        "Regenerate with `{}` (it writes this file and the plots next to it). The programs \
         are in `corpus/src/programs/`, each written once against a std-mirroring facade and \
         compiled against pctvb, shuttle and loom (`corpus/src/lib.rs`).\n",
        setup.command
    );
    let _ = writeln!(
        d,
        "Every program ran under every tool: {} trials with seeds 0..{} and a budget of {} \
         executions each (pctvb's priority strategies spend 10 of them on profiling), loom \
         once per mode (its search takes no seed) with a time cap of {} s. A trial stops at its first failing execution. **Executions** to the first \
         failure count, for a trial that found nothing, every execution it ran: a mean or \
         median marked `>` includes such trials. Wall time is the sum over the trials; \
         executions per second are total executions over total time. A correct program \
         thus runs {} executions under every randomized column. loom runs programs of at \
         most 5 threads, the test body's included (its limit). {} cells ran in parallel; the \
         trials took {:.0} s and the whole command {:.0} s.\n",
        setup.trials,
        setup.trials - 1,
        setup.budget,
        setup.loom_secs,
        setup.trials * setup.budget,
        setup.jobs,
        setup.trials_secs,
        setup.wall_secs
    );
    if setup.headline_trials > setup.trials {
        let _ = writeln!(
            d,
            "On the buggy programs, the two columns of the headline ratio (`default` against \
             `sh-urw`, see the cost section) ran {} trials, seeds 0..{}: with 20 the ratio \
             moved between runs as much as its gap to the goal. Every table uses all of a \
             cell's trials but the wall times, which sum each cell's first {} trials so that \
             the columns compare.\n",
            setup.headline_trials,
            setup.headline_trials - 1,
            setup.trials
        );
    }
    d += "Machine and versions:\n\n";
    for line in &setup.environment {
        let _ = writeln!(d, "- {line}");
    }
    d += "\nColumns: `random` (the naive random walk), `uniform` (the uniform random walk), \
          `surw` (the selectively uniform walk, pctvb's default without a target: the \
          uniform walk over the accesses to one shared variable per execution, the shared \
          variables taken in rounds, the uniform walk itself in the first execution after \
          learning and in one in eight of the others, write loops run whole in three \
          executions in four), `reversal` (race reversal, serial: \
          surw, and in every execution while there is one, a pair of conflicting accesses \
          earlier executions saw in one order only held back to run in the other), `pos` (partial order sampling, Fray's default), \
          `greybox` (coverage-guided schedule fuzzing with surw as its walk, surw alone in its \
          first 500 executions, serial), `revfuzz` (race reversal alone in its first 500 \
          executions, then greybox's fuzzing from its 32 newest kept schedules, one execution \
          in 8 race reversal's, serial), \
          `portfolio` (the walk, POS and PCT d=2/3/5, one per execution: the walk's unless \
          another arm's recent executions add more new pairs of conflicting accesses, each \
          other arm at least 3%), `pct2`/`pct3` (PCT d=2/3), `pctvb` (PCTVB d=2 v=1), `tb` \
          (thread bounding t=3 c=1, `strategy = \"threadbound\"`'s defaults), `comb` (the \
          combined strategy d=2 v=1 t=3, alone, `strategy = \"combined\"`'s defaults), \
          **`default`** (what a test with a target and no named strategy runs: `comb` with \
          revfuzz in profiling and in one search execution in two, most of them first), \
          `default-pf` \
          (`default` with the portfolio in place of revfuzz), `default-surw` \
          (`default` with surw in place of revfuzz: the default before race reversal), \
          `default-uniform` (`default` with the uniform walk in place of revfuzz: the \
          default before surw), `default-rev` (`default` with race reversal in place of \
          revfuzz: the default before revfuzz), `sys` \
          (systematic c<=2 v<=2 t<=2), `sh-rand`, \
          `sh-pct3`, `sh-urw` (shuttle 0.9's random, PCT d=3 and uniform-random-walk \
          schedulers), `loom-pb2` and `loom` (loom 0.7 with preemption bound 2, and \
          unbounded). `tb`, `comb` and `default` use t = 3, the thread bound a user gets \
          (`DEFAULT_THREADS`): pctvb counts the test body, which spawns a bug's two threads \
          one after the other, among the `t` (guide section 3a). `sys` keeps t <= 2, \
          below the `t` of every bug here as pctvb counts it (each has t >= 3), so what it \
          finds is outside its coverage statement; `strategy = \"systematic\"`'s default \
          t <= 3 is not a column.\n\n";

    // Programs.
    d += "## Programs\n\n| program | group | threads | bug | (c, v, t) | measured | PCT depth | what |\n\
          |---|---|---:|---|---|---|---:|---|\n";
    for r in rows {
        let p = r.program;
        let shape = p.shape.map_or("-".into(), |s| format!("({}, {}, {})", s.c, s.v, s.t));
        let measured = r
            .measured
            .map_or("-".into(), |s| format!("({}, {}, {})", s.preemptions, s.variables, s.threads));
        let _ = writeln!(
            d,
            "| {} | {} | {} | {} | {shape} | {measured} | {} | {} |",
            p.name,
            p.group.title(),
            p.threads,
            if p.bug { "yes" } else { "no" },
            p.pct_depth.map_or("-".into(), |x| x.to_string()),
            p.about
        );
    }
    d += "\n`threads` counts the test body's thread. `(c, v, t)`: the preemptions, variables \
          and threads the bug needs, by construction (the paper's labels for its figures and \
          Table 1, with `t` counted as pctvb counts it: the test body, which spawns the bug's \
          threads one after the other, is among the `t`, so `t` is the paper's label plus one; \
          `Config::threads`, guide section 3a); `measured`: the (c, v, t) pctvb's minimizer \
          reports for the smallest failing schedule it found (random strategy, 3 seeds; `t` \
          counted the same way). It is read off one schedule: with preemptions it bounds the \
          bug's shape from above, but with none it counts only the failing thread, the \
          threads whose atomic or cell writes it read, the threads they waited for (joined, \
          a lock's earlier holders) and their spawners, so a bug made by blocking and waking \
          can measure fewer threads than it needs (`prodcons`, `ws-deque-cap` and several \
          SCTBench ports measure t = 1), and one behind a lock many threads took measures \
          them all (`twostage-100`: t = 101); a `-` where unknown \
          (`safestack`: the one failing schedule found, by `pos`, minimizes to c=14, v=4, \
          t=4, an upper bound); `PCT depth`: the depth PCT's bound covers it at (one more than the \
          priority changes that make it fail under one in n initial priority orders: the \
          guarantee's statement says so), where it differs from or is known beside c + 1.\n\n";
    if rows.iter().any(|r| r.program.group == Group::Async) {
        d += "The `Async` programs (`corpus/src/programs/async_programs.rs`) are written with \
              tasks and wakers, compiled against pctvb's `future` and shuttle's `future` \
              (`spawn`, `block_on`: both run each task as a thread of their scheduler); loom 0.7 \
              has `block_on` but no `spawn`, so its columns read `n/a`. `threads` counts the \
              test body and every task; in their `(c, v, t)` the test body is one of the \
              bug's threads only where it takes part (`async-channel`'s receiver).\n\n";
    }

    // The targets compare the default with shuttle: without the default column, none.
    if tools.contains(&Tool::PctvbDefault) {
        d += &targets(rows, tools);
    }
    d += &races_section(rows, tools);

    // Result tables.
    let first = setup.trials as usize;
    type Format<'a> = &'a dyn Fn(&Cell) -> String;
    let sections: [(&str, Format); 5] = [
        ("Bugs found (trials with a failure / trials)", &|c: &Cell| {
            format!("{}/{}", c.found(), c.trials.len())
        }),
        ("Mean executions to the first failure", &|c: &Cell| {
            let (m, capped) = c.mean();
            format!("{}{}", if capped { ">" } else { "" }, fmt_count(m))
        }),
        ("Median executions to the first failure", &|c: &Cell| {
            let capped = c.found() * 2 <= c.trials.len() && c.found() < c.trials.len();
            format!("{}{}", if capped { ">" } else { "" }, fmt_count(c.median()))
        }),
        ("Wall time, seconds (each cell's first trials, as many in every column)", &|c: &Cell| {
            format!("{:.2}", c.elapsed_first(first).as_secs_f64())
        }),
        ("Executions per second", &|c: &Cell| fmt_rate(c.rate())),
    ];
    for (title, f) in sections {
        let _ = writeln!(d, "## {title}\n");
        table(&mut d, rows, tools, f);
        if title.starts_with("Bugs found") {
            // Totals row: programs found by the column, of the programs it ran.
            d += "| **buggy programs found** |";
            for i in 0..tools.len() {
                let (mut found, mut ran) = (0, 0);
                for r in rows.iter().filter(|r| r.program.bug) {
                    if let Some(c) = &r.cells[i] {
                        ran += 1;
                        found += usize::from(c.found() > 0);
                    }
                }
                let _ = write!(d, " {found}/{ran} |");
            }
            d += "\n| **false alarms** |";
            for i in 0..tools.len() {
                let alarms: usize = rows
                    .iter()
                    .filter(|r| !r.program.bug)
                    .filter_map(|r| r.cells[i].as_ref())
                    .map(|c| c.found())
                    .sum();
                let _ = write!(d, " {alarms} |");
            }
            d += "\n";
        }
        if title.starts_with("Mean executions") {
            d += "| **sum over buggy programs** |";
            for i in 0..tools.len() {
                let cells: Vec<&Cell> = rows
                    .iter()
                    .filter(|r| r.program.bug)
                    .filter_map(|r| r.cells[i].as_ref())
                    .collect();
                if cells.is_empty() {
                    // A column that ran no buggy program (shuttle on the race-only ones).
                    d += " - |";
                    continue;
                }
                let capped = cells.iter().any(|c| c.mean().1);
                let sum: f64 = cells.iter().map(|c| c.mean().0).sum();
                let _ = write!(d, " {}{} |", if capped { ">" } else { "" }, fmt_count(sum));
            }
            d += "\n\n";
            // The cost with restarts, from the same trials, beside the means.
            d += &costs(rows, tools, setup.budget);
            continue;
        }
        if title.starts_with("Wall time") {
            d += "| **total** |";
            for i in 0..tools.len() {
                let cells: Vec<&Cell> = rows.iter().filter_map(|r| r.cells[i].as_ref()).collect();
                if cells.is_empty() {
                    d += " - |";
                    continue;
                }
                let s: f64 = cells.iter().map(|c| c.elapsed_first(first).as_secs_f64()).sum();
                let _ = write!(d, " {s:.1} |");
            }
            d += "\n";
        }
        if title.starts_with("Executions per second") {
            d += "| **all programs** |";
            for i in 0..tools.len() {
                let cells: Vec<&Cell> = rows.iter().filter_map(|r| r.cells[i].as_ref()).collect();
                if cells.is_empty() {
                    d += " - |";
                    continue;
                }
                let e: u64 = cells.iter().map(|c| c.executions()).sum();
                let s: f64 = cells.iter().map(|c| c.elapsed().as_secs_f64()).sum();
                let _ = write!(d, " {} |", fmt_rate(e as f64 / s.max(1e-9)));
            }
            d += "\n";
        }
        d += "\n";
    }

    d += &profiling_table(rows, tools);

    if !plots.is_empty() {
        d += "## Families\n\n";
    }
    for (title, file) in plots {
        let _ = writeln!(d, "### {title}\n\n![{title}]({file})\n");
    }

    d += &notes(rows, tools);
    d
}

/// The geometric mean of each column's cost with restarts over the buggy programs in `rows`
/// it ran (`None` for a column that ran none), and over the buggy programs every column ran.
pub fn cost_geomeans(rows: &[Row], tools: &[Tool], budget: u64) -> Vec<(Option<f64>, Option<f64>)> {
    let buggy: Vec<&Row> = rows.iter().filter(|r| r.program.bug).collect();
    let everywhere = |r: &&&Row| r.cells.iter().all(|c| c.is_some());
    (0..tools.len())
        .map(|i| {
            let cost = |r: &&Row| r.cells[i].as_ref().map(|c| c.cost(budget));
            let ran: Vec<f64> = buggy.iter().filter_map(cost).collect();
            let common: Vec<f64> = buggy.iter().filter(everywhere).filter_map(cost).collect();
            (geomean(&ran), geomean(&common))
        })
        .collect()
}

/// The ratio of column `a`'s geometric mean cost to column `b`'s, both over the buggy
/// programs both columns ran (a geomean over different programs would not compare), and how
/// many those are; `None` if either column is absent or they share no buggy program.
pub fn cost_ratio(
    rows: &[Row],
    tools: &[Tool],
    budget: u64,
    a: &Tool,
    b: &Tool,
) -> Option<(f64, usize)> {
    let (i, j) = (tools.iter().position(|t| t == a)?, tools.iter().position(|t| t == b)?);
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for r in rows.iter().filter(|r| r.program.bug) {
        if let (Some(ca), Some(cb)) = (&r.cells[i], &r.cells[j]) {
            x.push(ca.cost(budget));
            y.push(cb.cost(budget));
        }
    }
    Some((geomean(&x)? / geomean(&y)?, x.len()))
}

/// Replicates [`cost_ratio_interval`] draws.
pub const BOOTSTRAP_REPLICATES: usize = 2000;

/// A 95% bootstrap interval of [`cost_ratio`]: how far the ratio moves when each cell's
/// trials are redrawn with replacement (each program and column on its own, as the trials
/// were run), `replicates` times from a fixed seed, so the document is reproduced by its
/// command. The ratio of geometric means over a few dozen programs of 20 trials each moves by
/// several hundredths between seeds: the interval says which of a goal's sides a measured
/// ratio is on, and when it cannot tell. `None` where [`cost_ratio`] is.
pub fn cost_ratio_interval(
    rows: &[Row],
    tools: &[Tool],
    budget: u64,
    a: &Tool,
    b: &Tool,
    replicates: usize,
) -> Option<(f64, f64)> {
    let (i, j) = (tools.iter().position(|t| t == a)?, tools.iter().position(|t| t == b)?);
    // Each program's two cells, as (failed, executions) per trial.
    let pairs: Vec<[Vec<(bool, u64)>; 2]> = rows
        .iter()
        .filter(|r| r.program.bug)
        .filter_map(|r| {
            let trials = |c: &Cell| c.trials.iter().map(|t| (t.failed, t.executions)).collect();
            Some([trials(r.cells[i].as_ref()?), trials(r.cells[j].as_ref()?)])
        })
        .collect();
    if pairs.is_empty() || replicates == 0 {
        return None;
    }
    // splitmix64: a fixed stream, no dependency.
    let mut state = 0x005e_ed0f_b007_u64;
    let mut next = move |n: usize| {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n as u64) as usize
    };
    let mut resampled_cost = |trials: &[(bool, u64)]| {
        let (mut found, mut executions) = (0u64, 0u64);
        for _ in 0..trials.len() {
            let (failed, e) = trials[next(trials.len())];
            found += u64::from(failed);
            executions += e;
        }
        cost_with_restarts(found, executions, budget)
    };
    let mut ratios: Vec<f64> = (0..replicates)
        .map(|_| {
            let log_sum: f64 =
                pairs.iter().map(|[x, y]| (resampled_cost(x) / resampled_cost(y)).ln()).sum();
            (log_sum / pairs.len() as f64).exp()
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((replicates - 1) as f64 * q).round() as usize];
    Some((at(0.025), at(0.975)))
}

/// What no mix of pctvb's columns can beat against column `b`: the geometric mean, over the
/// buggy programs `b` ran, of the cheapest pctvb column on each program (picked after the
/// fact, which no strategy can do), over `b`'s geometric mean; with how many programs those
/// are and on how many of them `b` pays at most two executions (where no tool can pay half,
/// a run costing at least one). `None` if `b` is absent or ran no buggy program.
pub fn oracle_ratio(
    rows: &[Row],
    tools: &[Tool],
    budget: u64,
    b: &Tool,
) -> Option<(f64, usize, usize)> {
    let j = tools.iter().position(|t| t == b)?;
    let ours: Vec<usize> = (0..tools.len()).filter(|&i| tools[i].family() == "pctvb").collect();
    let (mut best, mut theirs, mut cheap) = (Vec::new(), Vec::new(), 0);
    for r in rows.iter().filter(|r| r.program.bug) {
        let Some(cb) = &r.cells[j] else { continue };
        let cost = ours
            .iter()
            .filter_map(|&i| r.cells[i].as_ref().map(|c| c.cost(budget)))
            .fold(f64::INFINITY, f64::min);
        if cost.is_finite() {
            best.push(cost);
            theirs.push(cb.cost(budget));
            cheap += usize::from(cb.cost(budget) <= 2.0);
        }
    }
    Some((geomean(&best)? / geomean(&theirs)?, best.len(), cheap))
}

/// The expected cost with restarts ([`Cell::cost`]) of each buggy program under each column,
/// and its geometric mean per column.
fn costs(rows: &[Row], tools: &[Tool], budget: u64) -> String {
    let buggy: Vec<&Row> = rows.iter().filter(|r| r.program.bug).collect();
    if buggy.is_empty() {
        return String::new();
    }
    let mut d = format!(
        "## Expected cost with restarts\n\n\
         What a user pays to see the bug: rerunning the tool with fresh seeds until a run \
         fails, the expected executions are the executions of all trials (each trial that \
         found nothing ran its whole budget) over the trials that found the bug. A column that \
         never found a program's bug is charged twice the budget, {} executions (marked `>`), \
         so a geometric mean stays finite (a column that found it in one trial of many can pay \
         more than that charge: read the cost with the bugs found). The geometric mean of \
         a column is over the buggy programs it ran; loom runs only programs of at most 5 \
         threads, so the last row compares every column on the programs all of them \
         ran.\n\n",
        2 * budget
    );
    d += &header(tools);
    for r in &buggy {
        let _ = write!(d, "| {} |", r.program.name);
        for c in &r.cells {
            match c {
                Some(c) => {
                    let never = if c.found() == 0 { ">" } else { "" };
                    let _ = write!(d, " {never}{} |", fmt_count(c.cost(budget)));
                }
                None => d += " - |",
            }
        }
        d += "\n";
    }
    let means = cost_geomeans(rows, tools, budget);
    let common = buggy.iter().filter(|r| r.cells.iter().all(|c| c.is_some())).count();
    let fmt = |x: Option<f64>| x.map_or("-".into(), fmt_count);
    d += "| **geomean (programs it ran)** |";
    for (ran, _) in &means {
        let _ = write!(d, " **{}** |", fmt(*ran));
    }
    let _ = write!(d, "\n| **geomean ({common} programs every column ran)** |");
    for (_, all) in &means {
        let _ = write!(d, " {} |", fmt(*all));
    }
    d += "\n";
    if let Some((ratio, n)) =
        cost_ratio(rows, tools, budget, &Tool::PctvbDefault, &Tool::ShuttleUrw)
    {
        let interval = cost_ratio_interval(
            rows,
            tools,
            budget,
            &Tool::PctvbDefault,
            &Tool::ShuttleUrw,
            BOOTSTRAP_REPLICATES,
        );
        let _ = write!(
            d,
            "\n`default` pays {ratio:.2}x what `sh-urw` pays (geometric means over the {n} \
             buggy programs both ran; the speed issue's goal is at most 0.5x)."
        );
        if let Some((lo, hi)) = interval {
            let verdict = if hi <= 0.5 {
                "the goal is met beyond the trials' noise"
            } else if lo > 0.5 {
                "the goal is not met, beyond the trials' noise"
            } else {
                "these trials cannot tell whether the goal is met"
            };
            let _ = write!(
                d,
                " Redrawing each cell's trials with replacement ({BOOTSTRAP_REPLICATES} times, \
                 a fixed seed), 95% of the ratios fall within {lo:.2}x-{hi:.2}x: {verdict}."
            );
        }
        d += "\n";
    }
    // The default without a target, and the explorer alone.
    for (kind, what) in [
        (StrategyKind::Surw, "the default without a target"),
        (StrategyKind::Revfuzz, "the default's explorer with a target, alone"),
    ] {
        if let Some((ratio, n)) =
            cost_ratio(rows, tools, budget, &Tool::Pctvb(kind.clone()), &Tool::ShuttleUrw)
        {
            let name = kind.name();
            let _ = writeln!(
                d,
                "\n`{name}` ({what}) pays {ratio:.2}x what `sh-urw` pays (the same means over \
                 the {n} programs both ran)."
            );
        }
    }
    if let Some((ratio, n, cheap)) = oracle_ratio(rows, tools, budget, &Tool::ShuttleUrw) {
        let _ = writeln!(
            d,
            "\nThe cheapest pctvb column on each program, picked after the fact (no strategy \
             can pick so; drawing each execution from one of these columns pays at least what \
             the cheapest of them pays), pays {ratio:.2}x what `sh-urw` pays over the {n} buggy programs it ran: \
             the floor of any mix of them. On {cheap} of those programs `sh-urw` pays at most \
             two executions, where half would be below the one execution a run costs at least."
        );
    }
    d + "\n"
}

/// The targets, program by program.
fn targets(rows: &[Row], tools: &[Tool]) -> String {
    let (def, shuttle) = columns(tools);
    let mut d = String::from(
        "## Targets\n\n\
         The issue's targets (they are goals, not tests): on every buggy program the default \
         strategy (`default`) finds the bug in at most as many mean executions as shuttle's best \
         scheduler, and in at most half on the thread-scaling and access-frequency families; \
         executions per second at least 1.5x shuttle's (here: `default` against the fastest \
         shuttle scheduler on the program); no correct program ever fails. The executions per \
         second here are measured apart from the result trials, over further trials (seeds \
         1000 on) until each tool has run for at least half a second on the program: where a \
         bug is found within one or two executions a trial takes well under a millisecond, \
         too little to time alone, and the rate then measures setting up a run and reporting \
         its failure more than executing (pctvb builds a report with the schedule, the bug's \
         shape and a replay token, and writes long schedules to a file; shuttle unwinds the \
         panic). A rate also depends on how long a trial runs (a tool that needs more \
         executions spreads the cost of a run over more of them), so the last column puts the \
         two together: the mean time to the bug (mean executions over executions per second) \
         against that of shuttle's scheduler with the shortest one, below 1 when pctvb's \
         default finds the bug sooner.\n\n\
         | program | default found | default mean | best shuttle mean | ratio | goal | met | default exec/s | best shuttle exec/s | speed ratio | met (>= 1.5) | time to bug vs shuttle's best |\n\
         |---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---:|\n",
    );
    let (mut met_execs, mut met_speed, mut n_bug, mut sooner) = (0, 0, 0, 0);
    for r in rows {
        let Some(c) = &r.cells[def] else { continue };
        if r.program.group == Group::Races {
            // No shuttle column to compare with: their own section follows.
            continue;
        }
        let sh: Vec<&Cell> = shuttle.iter().filter_map(|&i| r.cells[i].as_ref()).collect();
        if sh.is_empty() {
            // A run without shuttle's columns (`--tools default`, say): nothing to compare
            // with, where the ratios would read as an infinite lead.
            continue;
        }
        let best_mean = sh.iter().map(|c| c.mean().0).fold(f64::INFINITY, f64::min);
        // The separate throughput measurement where there is one, else the trials' own.
        let rate_of =
            |i: usize| r.rates.get(i).copied().flatten().or(r.cells[i].as_ref().map(|c| c.rate()));
        let best_rate = shuttle.iter().filter_map(|&i| rate_of(i)).fold(0.0, f64::max);
        let default_rate = rate_of(def).unwrap_or(0.0);
        let speed = default_rate / best_rate.max(1e-9);
        let speed_ok = speed >= 1.5;
        if r.program.bug {
            n_bug += 1;
            let goal = if matches!(r.program.group, Group::ThreadScaling | Group::AccessFrequency) {
                0.5
            } else {
                1.0
            };
            let ratio = c.mean().0 / best_mean.max(1e-9);
            let ok = ratio <= goal && c.found() > 0;
            // Mean seconds to the bug: mean executions over executions per second.
            let time_to_bug = |i: usize| {
                let (mean, rate) = (r.cells[i].as_ref()?.mean().0, rate_of(i)?);
                (rate > 0.0).then(|| mean / rate)
            };
            let shuttle_best =
                shuttle.iter().filter_map(|&i| time_to_bug(i)).fold(f64::INFINITY, f64::min);
            let time_ratio = time_to_bug(def).map(|t| t / shuttle_best);
            sooner += usize::from(time_ratio.is_some_and(|t| t < 1.0));
            met_execs += usize::from(ok);
            met_speed += usize::from(speed_ok);
            let _ = writeln!(
                d,
                "| {} | {}/{} | {} | {} | {ratio:.2} | <= {goal} | {} | {} | {} | {speed:.2} | {} | {} |",
                r.program.name,
                c.found(),
                c.trials.len(),
                fmt_count(c.mean().0),
                fmt_count(best_mean),
                if ok { "yes" } else { "**no**" },
                fmt_rate(default_rate),
                fmt_rate(best_rate),
                if speed_ok { "yes" } else { "**no**" },
                time_ratio.filter(|t| t.is_finite()).map_or("-".into(), |t| format!("{t:.2}"))
            );
        } else {
            let alarms: usize = r.cells.iter().flatten().map(|c| c.found()).sum();
            met_speed += usize::from(speed_ok);
            let _ = writeln!(
                d,
                "| {} (correct) | {} false alarms, all tools | - | - | - | - | {} | {} | {} | {speed:.2} | {} | - |",
                r.program.name,
                alarms,
                if alarms == 0 { "yes" } else { "**no**" },
                fmt_rate(default_rate),
                fmt_rate(best_rate),
                if speed_ok { "yes" } else { "**no**" }
            );
        }
    }
    let _ = writeln!(
        d,
        "\n**Summary**: the executions target is met on {met_execs} of {n_bug} buggy programs; \
         the speed target on {met_speed} of {} programs; pctvb's default finds the bug in less \
         mean time than shuttle's quickest scheduler on {sooner} of {n_bug}.\n",
        rows.len()
    );
    d
}

/// What each program's failures said (the tools that reported each message), and what the
/// tools said when they stopped without a failure.
fn notes(rows: &[Row], tools: &[Tool]) -> String {
    let mut d = String::from(
        "## What was found, and why tools stopped\n\n\
         Per program: each distinct failure message and the columns that reported it (`all`: \
         every column that found something), then the reasons columns stopped without a \
         failure other than the budget (`#` stands for any number). A failure of a correct \
         program is marked FALSE ALARM.\n\n",
    );
    for r in rows {
        let mut messages: Vec<(String, Vec<String>)> = Vec::new();
        let mut stops: Vec<(String, Vec<String>)> = Vec::new();
        let mut finders = 0;
        for (i, c) in r.cells.iter().enumerate() {
            let Some(c) = c else { continue };
            finders += usize::from(c.found() > 0);
            for t in &c.trials {
                let (list, text) = match (&t.message, &t.note) {
                    (Some(m), _) => (&mut messages, m.clone()),
                    (None, Some(n)) => (&mut stops, n.clone()),
                    (None, None) => continue,
                };
                let name = short(&tools[i]).trim_matches('*').to_string();
                // Messages that differ only in numbers (which slot, how many seats) are one.
                let text = text.replace(|c: char| c.is_ascii_digit(), "#");
                match list.iter_mut().find(|(m, _)| *m == text) {
                    Some((_, names)) if !names.contains(&name) => names.push(name),
                    Some(_) => {}
                    None => list.push((text, vec![name])),
                }
            }
        }
        let _ = write!(d, "- **{}**:", r.program.name);
        if messages.is_empty() {
            d += " no failure;";
        }
        for (m, names) in &messages {
            let who = if messages.len() == 1 && names.len() == finders {
                "all".to_string()
            } else {
                names.join(", ")
            };
            let alarm = if r.program.bug { "" } else { "FALSE ALARM " };
            let _ = write!(d, " {alarm}`{}` ({who});", m.replace('`', "'"));
        }
        for (n, names) in &stops {
            let _ = write!(d, " {} stopped: {n};", names.join(", "));
        }
        d += "\n";
    }
    d
}

/// How many of each priority strategy's finds came from its random profiling executions.
fn profiling_table(rows: &[Row], tools: &[Tool]) -> String {
    let cols: Vec<usize> = (0..tools.len())
        .filter(|&i| match &tools[i] {
            Tool::Pctvb(k) => k.is_priority(),
            Tool::PctvbDefault
            | Tool::PctvbDefaultPortfolio
            | Tool::PctvbDefaultSurw
            | Tool::PctvbDefaultUniform => true,
            _ => false,
        })
        .collect();
    if cols.is_empty() {
        return String::new();
    }
    let mut d = String::from(
        "## Finds during profiling\n\n\
         pctvb's priority strategies first run 10 executions under the random strategy (the \
         explorer for `default` and its variants: revfuzz, the portfolio, surw, the uniform walk, race reversal) to measure threads, steps and variables; a shallow bug is often found there, before the \
         strategy itself runs. Each cell: trials whose failure came from profiling / trials \
         that found the bug. A strategy that cannot reach a bug (a d=2 strategy on a c=2 bug) \
         shows its finds all from profiling.\n\n| program |",
    );
    for &i in &cols {
        let _ = write!(d, " {} |", short(&tools[i]));
    }
    d += "\n|---|";
    d += &"---:|".repeat(cols.len());
    d += "\n";
    for r in rows.iter().filter(|r| r.program.bug) {
        let _ = write!(d, "| {} |", r.program.name);
        for &i in &cols {
            match &r.cells[i] {
                Some(c) => {
                    let p = c.trials.iter().filter(|t| t.in_profiling).count();
                    let _ = write!(d, " {p}/{} |", c.found());
                }
                None => d += " - |",
            }
        }
        d += "\n";
    }
    d + "\n"
}

/// The data of one family's plot (drawn by [`crate::plot::line_chart`]): the parameters, and
/// the mean executions to the bug at each, one series per tool that ran every member (loom
/// runs only the smallest). `None` for a family of fewer than two members in `rows`.
pub fn family_series(
    rows: &[Row],
    tools: &[Tool],
    group: Group,
) -> Option<(Vec<f64>, Vec<Series>)> {
    let members: Vec<&Row> = rows.iter().filter(|r| r.program.group == group).collect();
    if members.len() < 2 {
        return None;
    }
    let xs: Vec<f64> = members.iter().map(|r| r.program.param as f64).collect();
    let series: Vec<Series> = (0..tools.len())
        .filter(|&i| members.iter().all(|r| r.cells[i].is_some()))
        .map(|i| {
            let ys = members.iter().map(|r| r.cells[i].as_ref().unwrap().mean().0).collect();
            (tools[i].name(), ys)
        })
        .collect();
    Some((xs, series))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(tool: Tool, trials: &[(bool, u64)]) -> Cell {
        crate::run::test_cell(tool, trials)
    }

    #[test]
    fn geomeans_are_over_the_programs_a_column_ran_and_over_the_common_ones() {
        let catalog = crate::catalog();
        let (a, b) = (&catalog[0], &catalog[1]);
        assert!(a.bug && b.bug);
        let tools = [Tool::ShuttleUrw, Tool::Loom(Some(2))];
        let row = |p, urw: Cell, loom: Option<Cell>| Row {
            program: p,
            cells: vec![Some(urw), loom],
            measured: None,
            rates: vec![None, None],
        };
        let rows = [
            // Costs 2 (sh-urw) and 8 (loom).
            row(
                a,
                cell(Tool::ShuttleUrw, &[(true, 2)]),
                Some(cell(tools[1].clone(), &[(true, 8)])),
            ),
            // sh-urw: 100 + 50 executions for one find; loom did not run it.
            row(b, cell(Tool::ShuttleUrw, &[(false, 100), (true, 50)]), None),
        ];
        let g = cost_geomeans(&rows, &tools, 100);
        let close = |x: Option<f64>, y: f64| (x.unwrap() - y).abs() < 1e-9;
        assert!(close(g[0].0, (2.0f64 * 150.0).sqrt()), "{g:?}");
        assert!(close(g[0].1, 2.0), "{g:?}");
        assert!(close(g[1].0, 8.0) && close(g[1].1, 8.0), "{g:?}");
        // The ratio compares the two columns on the one program both ran, 2 / 8, not the
        // geomeans over each column's own programs (sqrt(300) / 8).
        let (ratio, n) = cost_ratio(&rows, &tools, 100, &tools[0], &tools[1]).unwrap();
        assert!((ratio - 0.25).abs() < 1e-9 && n == 1, "{ratio} over {n}");
        assert!(cost_ratio(&rows, &tools, 100, &Tool::PctvbDefault, &tools[1]).is_none());
    }

    #[test]
    fn the_bootstrap_interval_holds_the_ratio_and_widens_with_spread_trials() {
        let catalog = crate::catalog();
        let (a, b) = (&catalog[0], &catalog[1]);
        let tools = [Tool::PctvbDefault, Tool::ShuttleUrw];
        let row = |p, x: &[(bool, u64)], y: &[(bool, u64)]| Row {
            program: p,
            cells: vec![Some(cell(tools[0].clone(), x)), Some(cell(tools[1].clone(), y))],
            measured: None,
            rates: vec![None, None],
        };
        // Trials that all cost the same: every redraw gives the ratio itself, 4 / 8.
        let steady = [row(a, &[(true, 4); 20], &[(true, 8); 20])];
        let (lo, hi) =
            cost_ratio_interval(&steady, &tools, 100, &tools[0], &tools[1], 500).unwrap();
        assert!((lo - 0.5).abs() < 1e-9 && (hi - 0.5).abs() < 1e-9, "{lo} {hi}");
        // Spread trials (costs 1 to 20, and a column that sometimes misses): the interval holds
        // the measured ratio and has a width.
        let spread: Vec<(bool, u64)> = (1..=20).map(|e| (true, e)).collect();
        let missing: Vec<(bool, u64)> = (1..=20).map(|e| (e % 4 != 0, 3 * e)).collect();
        let rows = [row(a, &spread, &missing), row(b, &missing, &spread)];
        let (ratio, _) = cost_ratio(&rows, &tools, 100, &tools[0], &tools[1]).unwrap();
        let (lo, hi) = cost_ratio_interval(&rows, &tools, 100, &tools[0], &tools[1], 500).unwrap();
        assert!(lo < ratio && ratio < hi && hi - lo > 0.05, "{lo} {ratio} {hi}");
        // The same seed, the same interval.
        assert_eq!(
            cost_ratio_interval(&rows, &tools, 100, &tools[0], &tools[1], 500),
            Some((lo, hi))
        );
        assert!(cost_ratio_interval(&rows, &tools, 100, &tools[0], &tools[1], 0).is_none());
    }

    #[test]
    fn the_oracle_takes_the_cheapest_pctvb_column_per_program() {
        let catalog = crate::catalog();
        let (a, b) = (&catalog[0], &catalog[1]);
        let tools = [
            Tool::Pctvb(pctvb::StrategyKind::UniformWalk),
            Tool::Pctvb(pctvb::StrategyKind::Pos),
            Tool::ShuttleUrw,
        ];
        let t = |i: usize, trials: &[(bool, u64)]| Some(cell(tools[i].clone(), trials));
        let row = |p, cells| Row { program: p, cells, measured: None, rates: vec![None; 3] };
        let rows = [
            // Uniform pays 2, pos 8, sh-urw 2: the oracle takes 2, and sh-urw is cheap here.
            row(a, vec![t(0, &[(true, 2)]), t(1, &[(true, 8)]), t(2, &[(true, 2)])]),
            // Uniform pays 32, pos 4, sh-urw 16: the oracle takes 4.
            row(b, vec![t(0, &[(true, 32)]), t(1, &[(true, 4)]), t(2, &[(true, 16)])]),
        ];
        let (ratio, n, cheap) = oracle_ratio(&rows, &tools, 100, &tools[2]).unwrap();
        // sqrt(2 * 4) / sqrt(2 * 16) = 0.5: a per-program pick, not either column's geomean.
        assert!((ratio - 0.5).abs() < 1e-9 && n == 2 && cheap == 1, "{ratio} {n} {cheap}");
        assert!(oracle_ratio(&rows, &tools[..2], 100, &Tool::ShuttleUrw).is_none());
    }
}
