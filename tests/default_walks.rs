//! A run whose priority strategy was chosen by default (a target or bound given without
//! `Config::strategy`, as `#[pctvb::test]` does) runs every second search execution, and its
//! profiling, with the uniform random walk: the strategy's executions carry the guarantee, the
//! walk's find bugs outside its class. A named strategy runs alone.
//!
//! Every run uses a fixed seed and `ignore_env`; where a bug must be found the budget is far
//! above what the walk needs for these seeds (its mean on figure 4 is about 16 executions).

use pctvb::{Config, StrategyKind};

#[path = "common/paper_figures.rs"]
mod paper_figures;
#[path = "common/programs.rs"]
mod programs;
use paper_figures::figure_4;
use programs::fixed_update;

fn default_target(seed: u64) -> Config {
    Config::new().ignore_env().seed(seed).depth(2).vars(1).workers(1)
}

/// The walk's note in a report, if the run walked.
fn walk_note(report: &pctvb::Report) -> Option<String> {
    let profile = report.profile.as_ref()?;
    profile.notes.iter().find(|n| n.contains("uniform random walk")).cloned()
}

#[test]
fn the_default_finds_a_bug_that_needs_more_preemptions_than_its_depth() {
    // Figure 4 needs two preemptions; the guarantee's class (depth 2) has one.
    for seed in 0..6 {
        let report = default_target(seed).iterations(2000).minimize_runs(0).run(figure_4);
        assert!(report.strategy.ends_with(" + uniform walk 1 in 2"), "{}", report.strategy);
        let failure = report.failure().unwrap_or_else(|| panic!("seed {seed}: not found"));
        let token = failure.token.clone().expect("a replay token");
        let strategy = pctvb::__internals::replay::decode(&token).expect("a valid token").strategy;
        // Found by the walk (in profiling or in the search), never by the combined strategy
        // at depth 2 within this budget for these seeds.
        assert_eq!(strategy, "uniform", "seed {seed}");
        let replay = Config::new().ignore_env().replay(token).run(figure_4);
        assert_eq!(replay.failure().expect("fails again").message, failure.message);
    }
}

#[test]
fn the_guarantee_counts_only_the_strategys_executions() {
    let report = default_target(1).iterations(200).run(fixed_update);
    assert!(report.is_ok(), "{}", report.summary());
    let note = walk_note(&report).expect("the run notes its walks");
    assert!(note.starts_with("100 of the 200 search executions"), "{note}");
    let g = report.guarantee.as_ref().expect("a guarantee");
    assert!(g.executions <= 100, "{g}");
    assert_eq!(g.executions, report.profile.as_ref().unwrap().covered);

    // A confidence target plans the strategy's executions; the walk's come on top.
    let report = default_target(2).confidence(0.9).run(fixed_update);
    let g = report.guarantee.as_ref().expect("a guarantee");
    assert!(g.confidence >= 0.9, "{g}");
    assert!(report.executions + 1 >= 2 * g.executions, "{} runs, {g}", report.executions);
}

#[test]
fn a_named_strategy_or_a_zero_share_runs_alone() {
    let combined = StrategyKind::Combined { depth: 2, vars: 1, threads: 2 };
    let named = Config::new().ignore_env().seed(1).strategy(combined.clone()).iterations(200);
    let zero = default_target(1).uniform_walk_every(0).iterations(200);
    for report in [named.run(fixed_update), zero.run(fixed_update)] {
        assert!(!report.strategy.contains("uniform walk"), "{}", report.strategy);
        assert_eq!(walk_note(&report), None);
        let g = report.guarantee.as_ref().expect("a guarantee");
        assert!(g.executions > 100, "{g}");
    }
    // And a named strategy can ask for the walk.
    let every_third = Config::new().ignore_env().seed(1).strategy(combined).uniform_walk_every(3);
    let report = every_third.iterations(300).run(fixed_update);
    assert!(walk_note(&report).unwrap().starts_with("100 of the 300"), "{:?}", walk_note(&report));
}

#[test]
fn a_walk_every_execution_is_a_clear_configuration_error() {
    let report = default_target(1).uniform_walk_every(1).confidence(0.9).run(fixed_update);
    let error = report.error().expect("a configuration error, not a run");
    assert!(matches!(error, pctvb::Error::Config { .. }), "{error:?}");
    assert!(error.message().contains("uniform_walk_every(1)"), "{error}");
    assert_eq!(report.executions, 0);
}

#[test]
fn the_note_names_the_strategy_that_explored() {
    // The hidden `__explorer` (the corpus's `default-surw` column) puts another strategy in
    // the walk's place; the note and the strategy's description name that one.
    let report = default_target(1).iterations(200).__explorer(StrategyKind::Surw).run(fixed_update);
    assert!(report.is_ok(), "{}", report.summary());
    assert!(report.strategy.ends_with(" + surw 1 in 2"), "{}", report.strategy);
    let notes = &report.profile.as_ref().expect("a profile").notes;
    let note = notes.iter().find(|n| n.contains("search executions ran")).expect("a walk note");
    assert!(note.contains("ran the selectively uniform walk (1 in 2"), "{note}");
    assert!(walk_note(&report).is_none(), "{notes:?}");
}
