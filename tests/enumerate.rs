//! A confidence target's class enumerated instead of sampled (`Config::enumerate`, on by
//! default): after profiling, the combined strategy's class (depth `d`, `v` variables, `t`
//! threads) is given to the systematic search `(d-1, d-1, t)` with a quarter of the executions
//! sampling would need; a search that explores every level decides the run, one that does
//! not leaves the run to sample as before.
//!
//! Every run uses `ignore_env`, one worker and a fixed seed, so each outcome is one fixed
//! schedule sequence: no assertion here can fail by chance.

use pctvb::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use pctvb::sync::Arc;
use pctvb::thread;
use pctvb::{Config, StrategyKind};

#[path = "common/paper_figures.rs"]
mod paper_figures;
#[path = "common/programs.rs"]
mod programs;
use paper_figures::figure_4;
use programs::{fixed_update, lost_update};

fn target(seed: u64) -> Config {
    Config::new().ignore_env().seed(seed).workers(1).minimize_runs(0).confidence(0.99)
}

/// Replays `failure`'s token on `body` and checks it fails again the same way.
fn assert_replays(failure: &pctvb::Failure, body: fn()) {
    let token = failure.token.clone().expect("a replay token");
    let replay = Config::new().ignore_env().replay(token).run(body);
    assert_eq!(replay.failure().expect("fails again").message, failure.message);
}

/// The note a run that enumerated begins with.
fn enumerated_note(report: &pctvb::Report) -> Option<&String> {
    report.notes.iter().find(|n| n.contains("was enumerated by the systematic search in"))
}

#[test]
fn a_passing_run_enumerates_the_class_then_explores() {
    for seed in 0..4 {
        let report = target(seed).run(fixed_update);
        assert!(report.is_ok(), "{}", report.summary());
        let search = report.systematic.as_ref().expect("the class was enumerated");
        assert!(search.complete, "{}", report.summary());
        assert_eq!((search.max_preemptions, search.max_vars, search.max_threads), (1, 1, 3));
        // The statement is the search's; no sampled bound was counted.
        assert!(report.guarantee.is_none(), "{}", report.summary());
        let enumerated = search.executions();
        assert!(enumerated >= 1, "{}", report.summary());
        // The explorer: one execution after each of the search's, then the rest of its
        // share after it, as many as the enumeration took and at least 1,000.
        assert!(enumerated < 1000, "{}", report.summary());
        let explored = enumerated.max(1000); // what a run without a target runs
        assert_eq!(report.executions, enumerated + explored, "{}", report.summary());
        assert_eq!(report.strategy, "combined(d=2,v=1,t=3) enumerated + revfuzz");
        let note = enumerated_note(&report).expect("the run says it enumerated");
        assert!(note.contains(&format!("in {enumerated} executions")), "{note}");
        let summary = report.summary();
        assert!(summary.contains("exhaustively explored all schedules"), "{summary}");
        let explorer = format!(
            "revfuzz ran {enumerated} executions between the search's and {} after it",
            1000 - enumerated
        );
        assert!(summary.contains(&explorer), "{summary}");
    }
}

#[test]
fn without_an_explorer_the_enumeration_is_the_run() {
    let report = target(1).explore_every(0).run(fixed_update);
    assert!(report.is_ok(), "{}", report.summary());
    let search = report.systematic.as_ref().expect("enumerated");
    assert_eq!(report.executions, search.executions());
    assert_eq!(report.strategy, "combined(d=2,v=1,t=3) enumerated");
}

#[test]
fn the_enumeration_finds_an_in_class_bug_and_its_token_replays() {
    // A lost update is depth 2 on one variable: in the class. One profiling execution, so
    // most seeds reach the search; the explorer is off, so only the search can find it.
    let mut by_search = 0;
    for seed in 0..8 {
        let report = target(seed).explore_every(0).profile_runs(1).run(lost_update);
        let failure = report.failure().unwrap_or_else(|| panic!("seed {seed}: not found"));
        let Some(search) = report.systematic.as_ref() else {
            continue; // found by the profiling execution
        };
        assert!(search.found_at.is_some(), "seed {seed}: {}", report.summary());
        assert!(!search.complete, "a search that found a bug did not exhaust its levels");
        by_search += 1;
        assert_replays(failure, lost_update);
    }
    assert!(by_search >= 4, "only {by_search} of 8 seeds reached the search");
}

#[test]
fn a_bug_outside_the_class_is_found_by_the_explorer_between_the_searchs_executions() {
    // Figure 4 needs two preemptions; the class (depth 2) has one, so only the explorer can
    // find it. It runs between the search's executions: the run stops at its failure, before
    // the enumeration ends, not after it.
    let mut between = 0;
    for seed in 0..4 {
        let report = target(seed).run(figure_4);
        let failure = report.failure().unwrap_or_else(|| panic!("seed {seed}: not found"));
        let token = failure.token.clone().expect("a replay token");
        let strategy = pctvb::__internals::replay::decode(&token).expect("a token").strategy;
        assert_eq!(strategy, "revfuzz", "seed {seed}");
        if let Some(search) = report.systematic.as_ref() {
            // Found during the enumeration (not while profiling): the run says so.
            assert_eq!(report.strategy, "combined(d=2,v=1,t=3) being enumerated + revfuzz 1 in 2");
            assert!(!search.complete, "seed {seed}: the search was stopped by the failure");
            assert!(search.found_at.is_none(), "seed {seed}: the explorer found it");
            let note = &report.notes[0];
            assert!(note.contains("revfuzz, which runs between its executions, failed"), "{note}");
            assert!(!note.contains('\n'), "one line: {note}");
            // One explorer execution after each of the search's.
            assert!(report.executions <= 2 * search.executions(), "{}", report.summary());
            between += 1;
        }
        assert_replays(failure, figure_4);
    }
    assert!(between >= 1, "every seed found it while profiling");
}

#[test]
fn a_bug_outside_the_class_is_found_after_the_enumeration_when_it_ends_first() {
    // With the explorer in one execution of 1,000, none runs during this small enumeration:
    // its share runs after it, and finds figure 4's bug there.
    let mut after = 0;
    for seed in 0..4 {
        let report = target(seed).explore_every(1000).run(figure_4);
        let failure = report.failure().unwrap_or_else(|| panic!("seed {seed}: not found"));
        if report.systematic.is_none() && !report.strategy.starts_with("revfuzz after") {
            continue; // found while profiling
        }
        assert!(report.strategy.starts_with("revfuzz after"), "{}", report.strategy);
        let note = &report.notes[0];
        assert!(note.contains("was enumerated first"), "{note}");
        assert!(note.contains("none failed: exhaustively explored"), "{note}");
        assert!(!note.contains("between them"), "no explorer execution ran between: {note}");
        after += 1;
        assert_replays(failure, figure_4);
    }
    assert!(after >= 1, "every seed found it while profiling");
}

#[test]
fn a_failure_in_the_searchs_profiling_ends_the_enumeration_at_once() {
    // The systematic search profiles with random schedules before its levels. Enumerating a
    // target's class, it stops at such a failure (a standalone search keeps it in case its
    // levels find none): the user waits for the bug, not for the levels.
    let mut stopped = 0;
    for seed in 0..32 {
        // SURW profiles here: revfuzz, the default explorer (race reversal in its first 500
        // executions), finds this lost update in
        // the target's own profiling on every one of these seeds, before the search profiles.
        let report = target(seed).profile_runs(2).explorer(StrategyKind::Surw).run(lost_update);
        let failure = report.failure().unwrap_or_else(|| panic!("seed {seed}: not found"));
        let Some(search) = report.systematic.as_ref() else { continue };
        if search.stopped_by.as_deref() != Some("a profiling execution failed") {
            continue;
        }
        stopped += 1;
        assert_eq!(search.executions(), 0, "seed {seed}: no level ran");
        assert!(failure.execution >= pctvb::__internals::runner::PROFILE_INDEX_BASE, "seed {seed}");
        let summary = report.summary();
        assert!(summary.contains("failed before the search began"), "{summary}");
        assert_replays(failure, lost_update);
    }
    assert!(stopped >= 1, "no seed of 32 failed in the search's profiling");
}

#[test]
fn at_depth_3_the_enumeration_finds_a_two_preemption_bug() {
    // Figure 4 (two preemptions, two variables) is in the depth-3 class: the search
    // (2 preemptions at the accesses of any 2 objects) finds it, with the explorer off.
    let mut by_search = 0;
    for seed in 0..4 {
        let report = target(seed).depth(3).vars(2).explore_every(0).profile_runs(1).run(figure_4);
        report.failure().unwrap_or_else(|| panic!("seed {seed}: not found\n{}", report.summary()));
        if let Some(search) = report.systematic.as_ref() {
            assert_eq!((search.max_preemptions, search.max_vars), (2, 2));
            let (_, _, c) = search.found_at.expect("found by the search");
            assert!(c <= 2, "found at level c={c}");
            by_search += 1;
        }
    }
    assert!(by_search >= 2, "only {by_search} of 4 seeds reached the search");
}

/// A thread that spawns another only when it sees a flag another thread set: the number of
/// threads depends on the schedule.
fn spawns_when_it_sees_the_flag() {
    let flag = Arc::new(AtomicUsize::new(0));
    let setter = {
        let flag = flag.clone();
        thread::spawn(move || flag.store(1, SeqCst))
    };
    let watcher = {
        let flag = flag.clone();
        thread::spawn(move || {
            if flag.load(SeqCst) == 1 {
                thread::spawn(|| {}).join().unwrap();
            }
        })
    };
    setter.join().unwrap();
    watcher.join().unwrap();
}

#[test]
fn more_threads_than_profiling_saw_is_no_proof() {
    // Profiled by one execution, some seeds see no extra thread; the search then meets one and
    // must not call the class enumerated (the extra thread's orders were not all explored).
    let mut fell_back = 0;
    for seed in 0..16 {
        let report =
            target(seed).explore_every(0).profile_runs(1).run(spawns_when_it_sees_the_flag);
        assert!(report.is_ok(), "{}", report.summary());
        if let Some(search) = report.systematic.as_ref() {
            assert!(search.complete);
            assert!(report.stats.max_threads <= search.threads, "{}", report.summary());
        } else if report.notes.iter().any(|n| n.contains("threads, more than the")) {
            assert!(report.guarantee.is_some(), "sampled instead: {}", report.summary());
            fell_back += 1;
        }
    }
    assert!(fell_back >= 1, "no seed's profiling missed the extra thread");
}

/// Six threads adding to one counter: seven threads in all, more than the class's three, so
/// the search draws priority orders by Lemma 4.1, many more than a quarter of the sampled plan.
fn six_adders() {
    let n = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..6)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || {
                for _ in 0..3 {
                    n.fetch_add(1, SeqCst);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(n.load(SeqCst), 18);
}

#[test]
fn a_class_too_large_to_enumerate_is_sampled() {
    let report = target(3).explore_every(0).run(six_adders);
    assert!(report.is_ok(), "{}", report.summary());
    assert!(report.systematic.is_none(), "{}", report.summary());
    let g = report.guarantee.as_ref().expect("the sampled guarantee");
    assert!(g.confidence >= 0.99, "{g}");
    let note = report
        .notes
        .iter()
        .find(|n| n.contains("was not enumerated within"))
        .unwrap_or_else(|| panic!("no note: {}", report.summary()));
    assert!(note.contains(&format!("a quarter of the {}", report.planned)), "{note}");
}

#[test]
fn enumerate_false_samples() {
    let report = target(1).enumerate(false).run(fixed_update);
    assert!(report.is_ok(), "{}", report.summary());
    assert!(report.systematic.is_none());
    assert!(enumerated_note(&report).is_none());
    let g = report.guarantee.as_ref().expect("the sampled guarantee");
    assert_eq!(g.executions, report.planned);
}

#[test]
fn an_iteration_budget_or_a_named_other_strategy_never_enumerates() {
    let budget = Config::new().ignore_env().seed(1).workers(1).depth(2).iterations(300);
    let pct = target(1).strategy(pctvb::StrategyKind::Pct { depth: 2 });
    for report in [budget.run(fixed_update), pct.run(fixed_update)] {
        assert!(report.is_ok(), "{}", report.summary());
        assert!(report.systematic.is_none(), "{}", report.summary());
        assert!(report.guarantee.is_some(), "{}", report.summary());
    }
}
