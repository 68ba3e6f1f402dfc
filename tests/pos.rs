//! Partial order sampling (`strategy = "pos"`, `StrategyKind::Pos`) through the public API: it
//! finds every paper-figure bug and the quickstart's lost update within a modest budget, never
//! fails a correct program, replays its failures exactly from their token, runs the same on
//! any number of workers, and is a strategy without guarantee, parameters or profiling.
//!
//! Every run uses a fixed seed (seeds 0-4 unless a test says otherwise) and `ignore_env`;
//! where a bug must be found the budget is well above what the seeds need (measured when the
//! test was written: at most 161 executions for a figure, figure 10; POS is slower than the
//! random walk on these small figures, whose bugs need one thread to overtake another twice),
//! and assertions are on behaviour, not on a seed's particulars.

use pctvb::{Config, FailureKind, StrategyKind};

#[path = "common/correct_programs.rs"]
mod correct_programs;
#[path = "common/no_guarantee.rs"]
mod no_guarantee;
#[path = "common/paper_figures.rs"]
mod paper_figures;
#[path = "common/programs.rs"]
mod programs;
#[path = "common/replays.rs"]
mod replays;
use correct_programs::assert_never_fails;
use no_guarantee::{
    assert_runs_without_guarantee, assert_same_run_on_workers, correct_pair, executions_to_bug,
    BOUND_REFUSALS,
};
use paper_figures::{figure_10, figure_3, FIGURES};
use programs::lost_update; // the quickstart's lost update

fn config(seed: u64) -> Config {
    Config::new().ignore_env().seed(seed).strategy(StrategyKind::Pos).workers(1)
}

#[test]
fn finds_every_paper_figure_bug() {
    for figure in FIGURES {
        for seed in 0..5 {
            let found = executions_to_bug(StrategyKind::Pos, figure.body, seed, 1000);
            assert!(found.is_some(), "{}, seed {seed}: not found in 1000 executions", figure.name);
        }
    }
}

#[test]
fn finds_the_quickstart_lost_update_within_a_few_executions() {
    let mut total = 0;
    for seed in 0..5 {
        let found = executions_to_bug(StrategyKind::Pos, lost_update, seed, 100);
        total += found.unwrap_or_else(|| panic!("seed {seed}: not found in 100 executions"));
    }
    // The bug is one of the few partial orders of the program: a few executions each.
    assert!(total <= 5 * 20, "{total} executions over 5 seeds");
}

#[test]
fn never_fails_a_correct_program() {
    assert_never_fails(config, 300);
}

#[test]
fn failures_replay_exactly_from_their_token() {
    let bodies: [(&str, fn()); 3] = [
        ("pos::figure_3", figure_3),
        ("pos::figure_10", figure_10),
        ("pos::lost_update", lost_update),
    ];
    for (name, body) in bodies {
        let report = config(4).name(name).iterations(1000).run(body);
        let failure = report.failure().unwrap_or_else(|| panic!("{name}: not found"));
        assert_eq!(failure.kind, FailureKind::Panic);
        assert_eq!(report.strategy, "pos");
        replays::assert_token_replays(|| config(99).name(name), body, failure);
    }
}

#[test]
fn same_seed_same_run_on_any_number_of_workers() {
    // Each execution depends only on the seed and its index.
    assert_same_run_on_workers(config(1).iterations(1000), figure_10, &[2, 4]);
}

#[test]
fn is_a_strategy_without_guarantee_parameters_or_profiling() {
    assert_runs_without_guarantee(StrategyKind::Pos, "pos", BOUND_REFUSALS, false);
}

#[pctvb::test(strategy = "pos", iterations = 200, seed = 3)]
fn the_attribute_takes_the_pos_strategy() {
    correct_pair();
}
