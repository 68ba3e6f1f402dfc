//! What a run explores with when no strategy is named. Without a target or bound the run is
//! SURW's (the selectively uniform random walk), unless `Config::explorer` names another; with
//! one (as `#[pctvb::test]` with `confidence` or `depth`), the priority strategy it selects
//! runs with the explorer, revfuzz (race reversal, then schedule fuzzing) unless
//! `Config::explorer` names another, in profiling
//! and in one search execution in two (most of them first): the strategy's executions carry
//! the guarantee, the explorer's find bugs outside its class. A named strategy runs alone.
//!
//! Every run uses a fixed seed and `ignore_env`; where a bug must be found the budget is far
//! above what the explorers need for these seeds (their mean on figure 4 is tens of
//! executions).

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

/// The explorer's note in a report, if the run explored.
fn explorer_note(report: &pctvb::Report) -> Option<String> {
    let profile = report.profile.as_ref()?;
    profile.notes.iter().find(|n| n.contains("search executions ran")).cloned()
}

/// The strategy a failure's replay token records (the one that ran the failing execution).
fn token_strategy(report: &pctvb::Report) -> String {
    let token = report.failure().expect("a failure").token.clone().expect("a replay token");
    pctvb::__internals::replay::decode(&token).expect("a valid token").strategy
}

/// What identifies a run's outcome: its executions, distinct schedules, and the failing
/// execution with its schedule (the token's choices; not the token, whose strategy label
/// would tell two strategies' runs apart even when they ran the same schedules).
fn outcome(report: &pctvb::Report) -> (u64, u64, Option<(u64, Vec<u32>)>) {
    let failure = report.failure().map(|f| {
        let token = f.token.as_deref().expect("a replay token");
        (f.execution, pctvb::__internals::replay::decode(token).expect("a valid token").choices)
    });
    (report.executions, report.stats.distinct_schedules, failure)
}

#[test]
fn the_default_finds_a_bug_that_needs_more_preemptions_than_its_depth() {
    // Figure 4 needs two preemptions; the guarantee's class (depth 2) has one.
    for seed in 0..6 {
        let report = default_target(seed).iterations(2000).minimize_runs(0).run(figure_4);
        assert_eq!(report.strategy, "combined(d=2,v=1,t=3) + revfuzz 1 in 2");
        let failure = report.failure().unwrap_or_else(|| panic!("seed {seed}: not found"));
        // Found by the explorer (in profiling or in the search), never by the combined
        // strategy at depth 2 within this budget for these seeds.
        assert_eq!(token_strategy(&report), "revfuzz", "seed {seed}");
        let token = failure.token.clone().expect("a replay token");
        let replay = Config::new().ignore_env().replay(token).run(figure_4);
        assert_eq!(replay.failure().expect("fails again").message, failure.message);
    }
}

#[test]
fn the_default_without_a_target_runs_surw() {
    // The run is SURW's: the same as naming it, execution for execution, and not the uniform
    // walk's (which the default ran before): on some of these seeds the walk's first failure
    // is another execution or schedule.
    let mut differs = 0;
    for seed in 0..6 {
        let config = || Config::new().ignore_env().seed(seed).workers(1).iterations(2000);
        let default = config().minimize_runs(0).run(figure_4);
        assert_eq!(default.strategy, "surw", "seed {seed}");
        assert!(default.guarantee.is_none() && default.profile.is_none(), "no profiling");
        assert_eq!(token_strategy(&default), "surw", "seed {seed}");
        let named = config().minimize_runs(0).strategy(StrategyKind::Surw).run(figure_4);
        assert_eq!(outcome(&default), outcome(&named), "seed {seed}");
        let walk = config().minimize_runs(0).strategy(StrategyKind::UniformWalk).run(figure_4);
        assert_eq!(walk.strategy, "uniform");
        differs += usize::from(outcome(&default) != outcome(&walk));
        // `explorer` changes the default without a target too: the walk, as before.
        let old = config().minimize_runs(0).explorer(StrategyKind::UniformWalk).run(figure_4);
        assert_eq!(outcome(&old), outcome(&walk), "seed {seed}");
    }
    assert!(differs > 0, "the default ran the uniform walk's executions on every seed");
}

#[test]
fn the_default_with_a_target_runs_revfuzz_beside_the_strategy() {
    // The explorer's executions are revfuzz's: the run is the one `explorer(Revfuzz)` asks
    // for. Its first 500 executions are race reversal's (the explorer before), so a bug
    // found within them is found at the same execution with the same schedule as with
    // `explorer(Reversal)` (where they differ: tests/safestack.rs); and not the one with SURW
    // (the explorer before reversal) on some of these seeds.
    let mut differs = 0;
    for seed in 0..6 {
        let config = || default_target(seed).iterations(2000).minimize_runs(0);
        let default = config().run(figure_4);
        assert_eq!(token_strategy(&default), "revfuzz", "seed {seed}");
        let named = config().explorer(StrategyKind::Revfuzz).run(figure_4);
        assert_eq!(outcome(&default), outcome(&named), "seed {seed}");
        let reversal = config().explorer(StrategyKind::Reversal).run(figure_4);
        assert_eq!(token_strategy(&reversal), "reversal", "seed {seed}");
        assert_eq!(outcome(&default), outcome(&reversal), "seed {seed}");
        let surw = config().explorer(StrategyKind::Surw).run(figure_4);
        assert_eq!(surw.strategy, "combined(d=2,v=1,t=3) + surw 1 in 2");
        assert_eq!(token_strategy(&surw), "surw", "seed {seed}");
        differs += usize::from(outcome(&default) != outcome(&surw));
    }
    assert!(differs > 0, "the default explored with SURW on every seed");
}

#[test]
fn the_guarantee_counts_only_the_strategys_executions() {
    let report = default_target(1).iterations(200).run(fixed_update);
    assert!(report.is_ok(), "{}", report.summary());
    let note = explorer_note(&report).expect("the run notes its explorer's executions");
    let ran = "100 of the 200 search executions ran race reversal with schedule fuzzing";
    assert!(note.starts_with(ran), "{note}");
    let g = report.guarantee.as_ref().expect("a guarantee");
    assert!(g.executions <= 100, "{g}");
    assert_eq!(g.executions, report.profile.as_ref().unwrap().covered);

    // A confidence target plans the strategy's executions; the explorer's come on top. (The
    // sampled plan: `enumerate(false)`, or the run would enumerate this small class instead.)
    let report = default_target(2).confidence(0.9).enumerate(false).run(fixed_update);
    let g = report.guarantee.as_ref().expect("a guarantee");
    assert!(g.confidence >= 0.9, "{g}");
    assert!(report.executions + 1 >= 2 * g.executions, "{} runs, {g}", report.executions);
    // The same plan with the uniform walk as the explorer: the bound counts the strategy's
    // executions only, whichever explores beside them.
    let walk = default_target(2).confidence(0.9).enumerate(false);
    let walk = walk.explorer(StrategyKind::UniformWalk);
    let walk = walk.run(fixed_update);
    let gw = walk.guarantee.as_ref().expect("a guarantee");
    assert_eq!((gw.executions, walk.planned), (g.executions, report.planned), "{gw} / {g}");
}

#[test]
fn a_named_strategy_or_a_zero_share_runs_alone() {
    let combined = StrategyKind::Combined { depth: 2, vars: 1, threads: 2 };
    let named = Config::new().ignore_env().seed(1).strategy(combined.clone()).iterations(200);
    let zero = default_target(1).explore_every(0).iterations(200);
    for report in [named.run(fixed_update), zero.run(fixed_update)] {
        assert!(!report.strategy.contains(" + "), "{}", report.strategy);
        assert_eq!(explorer_note(&report), None);
        let g = report.guarantee.as_ref().expect("a guarantee");
        assert!(g.executions > 100, "{g}");
    }
    // And a named strategy can ask for the explorer.
    let every_third = Config::new().ignore_env().seed(1).strategy(combined).explore_every(3);
    let report = every_third.clone().iterations(300).run(fixed_update);
    let note = explorer_note(&report).expect("a note");
    assert!(note.starts_with("100 of the 300"), "{note}");
    // The former name does the same.
    #[allow(deprecated)]
    let old = every_third.uniform_walk_every(0).uniform_walk_every(3);
    let old = old.iterations(300).run(fixed_update);
    assert_eq!(outcome(&old), outcome(&report));
    assert_eq!(explorer_note(&old), Some(note));
}

#[test]
fn explorer_settings_a_named_strategy_does_not_use_are_noted() {
    // A named strategy runs alone: an explorer it was given is unused unless explore_every
    // interleaves it with a priority strategy, and explore_every means nothing beside a
    // strategy without a guarantee. Each says so rather than being ignored without a word.
    let has = |report: &pctvb::Report, text: &str| report.notes.iter().any(|n| n.contains(text));
    let base = Config::new().ignore_env().seed(1).iterations(20);
    let pct = StrategyKind::Pct { depth: 2 };
    let report =
        base.clone().strategy(pct.clone()).explorer(StrategyKind::UniformWalk).run(fixed_update);
    assert!(has(&report, "explorer = \"uniform\" has no effect"), "{:?}", report.notes);
    let report = base.clone().strategy(StrategyKind::Random).explore_every(5).run(fixed_update);
    assert!(has(&report, "explore_every = 5 has no effect"), "{:?}", report.notes);
    // Used: no note.
    let used = base.clone().strategy(pct).explorer(StrategyKind::UniformWalk).explore_every(2);
    let report = used.run(fixed_update);
    assert!(!has(&report, "has no effect"), "{:?}", report.notes);
    let report = base.explorer(StrategyKind::UniformWalk).run(fixed_update);
    assert!(!has(&report, "has no effect"), "{:?}", report.notes);
}

#[test]
fn an_exploring_every_execution_is_a_clear_configuration_error() {
    let report = default_target(1).explore_every(1).confidence(0.9).run(fixed_update);
    let error = report.error().expect("a configuration error, not a run");
    assert!(matches!(error, pctvb::Error::Config { .. }), "{error:?}");
    assert!(error.message().contains("explore_every(1)"), "{error}");
    assert!(error.message().contains("strategy = \"revfuzz\""), "{error}");
    assert_eq!(report.executions, 0);
}

#[test]
fn an_explorer_with_a_guarantee_is_a_clear_configuration_error() {
    let pct = StrategyKind::Pct { depth: 2 };
    for config in [default_target(1), Config::new().ignore_env().seed(1)] {
        let report = config.explorer(pct.clone()).iterations(10).run(fixed_update);
        let error = report.error().expect("a configuration error, not a run");
        assert!(matches!(error, pctvb::Error::Config { .. }), "{error:?}");
        let message = error.message();
        assert!(message.contains("explorer = \"pct\" is a strategy with a guarantee"), "{error}");
        assert!(message.contains("uniform, pos, portfolio, greybox, surw"), "{error}");
        assert_eq!(report.executions, 0);
    }
}

#[test]
fn the_note_names_the_strategy_that_explored() {
    // `explorer` puts another strategy in SURW's place; the note and the strategy's
    // description name that one.
    let report =
        default_target(1).iterations(200).explorer(StrategyKind::UniformWalk).run(fixed_update);
    assert!(report.is_ok(), "{}", report.summary());
    assert_eq!(report.strategy, "combined(d=2,v=1,t=3) + uniform 1 in 2");
    let note = explorer_note(&report).expect("an explorer note");
    assert!(note.contains("ran the uniform random walk (1 in 2"), "{note}");
}

#[test]
fn a_token_of_the_uniform_walk_default_still_replays() {
    // Tokens record the choices of the failing execution, and the strategy only as a label:
    // a token the former default made (its explorer, the uniform walk, found the bug) replays
    // under the new default, with or without a target.
    for seed in 0..3 {
        let old = default_target(seed).iterations(2000).explorer(StrategyKind::UniformWalk);
        let report = old.minimize_runs(0).run(figure_4);
        let failure = report.failure().unwrap_or_else(|| panic!("seed {seed}: not found"));
        assert_eq!(token_strategy(&report), "uniform", "seed {seed}");
        let token = failure.token.clone().expect("a replay token");
        for now in [Config::new().ignore_env(), default_target(99)] {
            let replay = now.replay(token.clone()).run(figure_4);
            assert!(replay.replayed, "seed {seed}");
            assert_eq!(replay.executions, 1);
            let again = replay.failure().expect("fails again");
            assert_eq!(again.message, failure.message, "seed {seed}");
            assert_eq!(again.execution, failure.execution, "seed {seed}");
        }
    }
}

#[test]
fn a_default_run_ends_before_its_explorer_starts_fuzzing() {
    // A run of the default length (1,000 executions: 10 profiling ones, which revfuzz runs,
    // then revfuzz in one search execution in two) gives revfuzz 495 search executions; its
    // fuzzing starts after 500, so such a run is race reversal's throughout, and the coverage
    // only the fuzzing reads is never computed (src/schedulers/greybox.rs). A longer one
    // fuzzes. Fixed seed.
    let fuzzing = |report: &pctvb::Report| {
        report.notes.iter().find(|n| n.contains("schedule fuzzing")).cloned().unwrap_or_default()
    };
    let report = default_target(3).run(fixed_update);
    assert!(report.is_ok(), "{}", report.summary());
    assert_eq!(report.executions, 1000);
    let note = fuzzing(&report);
    assert!(
        note.ends_with("schedule fuzzing: not started (it starts after 500 search executions)"),
        "{note}"
    );
    let longer = default_target(3).iterations(1100).run(fixed_update);
    assert!(longer.is_ok(), "{}", longer.summary());
    let note = fuzzing(&longer);
    assert!(note.contains("executions followed a kept schedule"), "{note}");
}
