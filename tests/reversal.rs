//! Race reversal (`strategy = "reversal"`, `StrategyKind::Reversal`) through the public API:
//! it finds, by reversing a race seen in an earlier execution, a bug the walks order the
//! wrong way almost always; never fails a correct program; replays its failures from their
//! token; runs the same on any number of workers (serially); is a strategy without guarantee,
//! parameters or profiling; and can be the exploring half of a run with a target.
//!
//! Every run uses a fixed seed and `ignore_env`, so each assertion is about fixed schedules;
//! the budgets and margins are those the measured runs need, with room (see each test).

use pctvb::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use pctvb::sync::Arc;
use pctvb::{thread, Config, StrategyKind};

#[path = "common/correct_programs.rs"]
mod correct_programs;
#[path = "common/no_guarantee.rs"]
mod no_guarantee;
#[path = "common/programs.rs"]
mod programs;
#[path = "common/replays.rs"]
mod replays;
use correct_programs::assert_never_fails;
use no_guarantee::{
    assert_explores_beside_a_target, assert_runs_without_guarantee, assert_same_run_on_workers,
    correct_pair, executions_to_bug, BOUND_REFUSALS,
};
use programs::spin_until_raised;

fn config(seed: u64) -> Config {
    Config::new().ignore_env().seed(seed).strategy(StrategyKind::Reversal).workers(1)
}

/// Accesses the early thread makes to the flag after setting it, and steps the late thread
/// makes before reading it.
const AFTER: usize = 30;

/// An early thread sets a flag at once and then reads it `AFTER` times; a late thread does
/// `AFTER` increments of a counter of its own, then reads the flag, which must be set. The bug
/// is the late thread's read before the early thread's store. The walks rarely order them so:
/// the uniform walk needs the late thread's `AFTER + 1` steps before the early thread's first
/// (about one interleaving in `C(2 AFTER + 2, AFTER + 1)`), the selective walk with the flag
/// selected the late read first among the flag's `AFTER + 2` accesses (1 in 32, in the seven
/// executions in eight that select). Race reversal sees the pair (store, late read) in one order in execution 0,
/// and in execution 1 holds the early thread at its store until the late read has run.
fn late_reader() {
    let flag = Arc::new(AtomicUsize::new(0));
    let f2 = flag.clone();
    let early = thread::spawn(move || {
        f2.store(1, SeqCst);
        for _ in 0..AFTER {
            f2.load(SeqCst);
        }
    });
    let late = thread::spawn(move || {
        let own = AtomicUsize::new(0);
        for _ in 0..AFTER {
            own.fetch_add(1, SeqCst);
        }
        assert_eq!(flag.load(SeqCst), 1, "the late thread read the flag before it was set");
    });
    early.join().unwrap();
    late.join().unwrap();
}

/// Executions `kind` runs to `body`'s bug over `seeds`, a seed that does not find it within
/// `budget` counting the whole budget.
fn executions_over_seeds(
    kind: StrategyKind,
    body: fn(),
    seeds: std::ops::Range<u64>,
    budget: u64,
) -> u64 {
    seeds.map(|seed| executions_to_bug(kind.clone(), body, seed, budget).unwrap_or(budget)).sum()
}

#[test]
fn reverses_a_race_the_walks_order_one_way() {
    // Measured on these seeds (fixed: the result is deterministic): race reversal finds the
    // bug in execution 1 of each (20 executions in all, execution 0 included), the selective
    // walk in 203 (761 when it walked in half its executions), the uniform walk in none within
    // 300 executions per seed.
    let seeds = 0..10;
    let budget = 300;
    for seed in seeds.clone() {
        let found = executions_to_bug(StrategyKind::Reversal, late_reader, seed, budget);
        assert!(found.is_some_and(|n| n <= 3), "seed {seed}: {found:?}");
    }
    let total = |kind| executions_over_seeds(kind, late_reader, seeds.clone(), budget);
    let (surw, uniform) = (total(StrategyKind::Surw), total(StrategyKind::UniformWalk));
    // Five and fifteen times what race reversal spends.
    assert!(surw > 100 && uniform > 300, "surw {surw}, uniform {uniform}");
}

/// Increments a setter makes before it raises the flag.
const LOOP: usize = 10;

/// The thread-scaling shape (a bug at a loop's end): a setter increments a counter `LOOP`
/// times and then raises a flag; a checker that sees every increment must see the flag. The
/// bug is the checker running between the loop's last increment and the flag store. A walk
/// that may stop the setter after any increment puts the checker's read after the last one in
/// about one execution in `LOOP + 1`; one that runs the loop whole puts it there whenever the
/// read follows the loop, and then reads the flag first about half the time.
fn loop_then_flag() {
    let a = Arc::new(AtomicUsize::new(0));
    let flag = Arc::new(AtomicUsize::new(0));
    let (a1, flag1) = (a.clone(), flag.clone());
    let setter = thread::spawn(move || {
        for _ in 0..LOOP {
            a1.fetch_add(1, SeqCst);
        }
        flag1.store(1, SeqCst);
    });
    let checker = thread::spawn(move || {
        if a.load(SeqCst) == LOOP {
            assert_eq!(flag.load(SeqCst), 1, "saw the loop's work but not the flag");
        }
    });
    setter.join().unwrap();
    checker.join().unwrap();
}

#[test]
fn runs_write_loops_whole_in_most_executions() {
    // Measured on these seeds (fixed: the result is deterministic): race reversal took 57
    // executions in all to the bug (about 3 per seed), 147 before it ran write loops whole
    // (its reversals alone); the selective walk, which runs them whole too, 135 (446 before);
    // the uniform walk, which may split a loop anywhere, 219. Both bounds fail on the code
    // before the rule.
    let seeds = 0..20;
    let budget = 500;
    let total = |kind| executions_over_seeds(kind, loop_then_flag, seeds.clone(), budget);
    let (reversal, surw) = (total(StrategyKind::Reversal), total(StrategyKind::Surw));
    assert!(reversal <= 100 && surw <= 200, "reversal {reversal}, surw {surw}");
}

#[test]
fn a_write_loop_waiting_for_another_thread_gives_way() {
    // Run whole without bound, the spinner's loop would keep the raiser out until the
    // execution's step limit, and fail it as a runaway; it gives way after a bounded run.
    let report = config(0).iterations(300).run(spin_until_raised);
    assert!(report.is_ok(), "{:?}", report.failure());
    assert_eq!(report.executions, 300);
}

#[test]
fn notes_how_many_executions_tried_a_reversal() {
    let report = config(0).iterations(40).run(correct_pair);
    assert!(report.is_ok(), "{:?}", report.failure());
    let note = report
        .notes
        .iter()
        .find(|n| n.starts_with("race reversal: "))
        .unwrap_or_else(|| panic!("no note: {:?}", report.notes));
    // The pair's two increments conflict: execution 0 sees one order, a later execution the
    // other, and then nothing is left to try.
    assert!(note.ends_with("; 0 pairs left to try"), "{note}");
    let tried: u64 = note["race reversal: ".len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{note}"));
    assert!((1..40).contains(&tried), "{note}");
}

#[test]
fn never_fails_a_correct_program() {
    assert_never_fails(config, 200);
}

#[test]
fn replays_a_failure_from_its_token() {
    let report = config(3).iterations(300).run(late_reader);
    let failure = report.failure().expect("found");
    assert_eq!(failure.kind, pctvb::FailureKind::Panic);
    replays::assert_token_replays(|| config(99), late_reader, failure);
}

#[test]
fn runs_the_same_on_any_number_of_workers() {
    // Serial: each execution depends on the pairs the earlier ones saw, so a run with more
    // workers runs on one and finds the same failure.
    assert_same_run_on_workers(config(1).iterations(300).minimize_runs(0), late_reader, &[2, 4]);
}

#[test]
fn is_a_strategy_without_guarantee() {
    assert_runs_without_guarantee(StrategyKind::Reversal, "reversal", BOUND_REFUSALS, true);
}

#[test]
fn explores_beside_a_target() {
    let _ = assert_explores_beside_a_target(StrategyKind::Reversal, "reversal", "race reversal");
}
