//! The runner's side of the guarantee: profiling, confidence targets, the statement, counted
//! failures, exceeded counts and configuration errors.

#[path = "common/paper_figures.rs"]
mod paper_figures;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use paper_figures::{figure_1, figure_3};
use pctvb::guarantee::{self, GuaranteeStatement};
use pctvb::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use pctvb::sync::{Arc, Mutex};
use pctvb::{thread, Config, Error, FailureKind, StrategyKind};

fn config() -> Config {
    Config::new().ignore_env().seed(0xc0ffee)
}

/// Two threads that each add to a counter under a lock: correct, three variables, two shared.
fn locked_counter() {
    let m = Arc::new(Mutex::new(0));
    let hits = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let (m, hits) = (m.clone(), hits.clone());
            thread::spawn(move || {
                *m.lock().unwrap() += 1;
                hits.fetch_add(1, SeqCst);
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*m.lock().unwrap(), 2);
    let _private = AtomicUsize::new(0).load(SeqCst);
}

#[test]
fn confidence_target_computes_the_executions_and_the_statement_reaches_it() {
    // Sampled (`enumerate(false)`): the plan and statement are the sampled bound's.
    let report = config().confidence(0.99).depth(2).vars(1).enumerate(false).run(locked_counter);
    report.assert_ok();
    assert_eq!(report.strategy, "combined(d=2,v=1,t=3) + revfuzz 1 in 2");
    let profile = report.profile.clone().unwrap();
    assert_eq!(profile.runs, pctvb::__internals::runner::DEFAULT_PROFILE_RUNS);
    assert_eq!(profile.n, 3);
    assert_eq!(profile.shared_variables, 2, "the mutex and the counter; not the private atomic");
    let bound = report.bound.clone().unwrap();
    let expected = guarantee::combined_bound(
        &report
            .stats
            .variables
            .iter()
            .filter(|(_, p)| p.shared)
            .map(|(_, p)| p.max_accesses)
            .collect::<Vec<_>>(),
        1,
        2,
        3,
    )
    .unwrap();
    assert_eq!(bound, expected);
    assert_eq!(report.planned, bound.executions_for_confidence(0.99).unwrap());
    // Executions up to the last one that raised the counts are not covered; the search ran
    // until the planned number were.
    assert_eq!(profile.covered, report.planned);
    assert!(report.executions >= report.planned);
    println!("{}", report.summary());
    let g = report.guarantee.clone().unwrap();
    assert_eq!(g.executions, report.planned);
    assert!(g.confidence >= 0.99);
    assert_eq!((g.depth, g.variables, g.threads, g.n, g.shared_variables), (2, 1, 3, 3, 2));
    assert_eq!(g.profiling_runs, 10);
    let summary = report.summary();
    assert!(summary.contains("no bug of depth <= 2 (at most 1 priority change, which a failure report may show as fewer preemptions) involving <= 1 of the Q=2 shared variables (preempted only at their accesses) and <= 3 threads (counting a thread that spawns them or that they wait for) was missed, with probability >= 0.99"), "{summary}");
    assert!(summary.contains("counts measured over 10 profiling executions"), "{summary}");
    assert!(summary.contains("Mutex@tests/guarantee_runner.rs"), "{summary}");
}

#[test]
fn iterations_report_the_confidence_they_reach() {
    let report =
        config().strategy(StrategyKind::Pct { depth: 2 }).iterations(300).run(locked_counter);
    report.assert_ok();
    assert_eq!(report.executions, 300);
    let profile = report.profile.clone().unwrap();
    let g = report.guarantee.clone().unwrap();
    assert_eq!(g.strategy, guarantee::BoundKind::Pct);
    assert_eq!(g.executions, profile.covered);
    let bound = report.bound.clone().unwrap();
    assert_eq!(g.confidence, bound.confidence_after(profile.covered));
    assert!(g.confidence > 0.0 && g.confidence < 1.0);
    assert_eq!(g.k, profile.final_k);
}

#[test]
fn an_unreachable_confidence_is_a_config_error_naming_the_dominant_factor() {
    let report = config().confidence(0.999_999).depth(6).vars(3).threads(6).run(locked_counter);
    assert!(report.failure().is_none(), "an unreachable confidence is not a bug");
    let error = report.error().expect("unreachable");
    assert!(matches!(error, Error::Config { what, .. } if what == "confidence"), "{error:?}");
    assert!(error.message().contains("more than the cap of 10,000,000"), "{error}");
    assert!(error.message().contains("the largest factor of the bound is"), "{error}");
    assert_eq!(report.executions, 0, "no search execution ran");
}

#[test]
fn configuration_mistakes_are_reported_not_guessed() {
    let cases: Vec<(Config, &str)> = vec![
        (config().strategy(StrategyKind::Random).confidence(0.9), "no probability bound"),
        (config().strategy(StrategyKind::Pct { depth: 2 }).vars(1), "does not take a vars bound"),
        (config().strategy(StrategyKind::Pctvb { depth: 2, vars: 1 }).threads(2), "threads"),
        (config().depth(0), "depth must be at least 1"),
        (config().depth(2).vars(0), "vars must be at least 1"),
        (config().depth(2).profile_runs(0), "at least one profiling execution"),
        (config().confidence(1.0), "strictly between 0 and 1"),
    ];
    for (cfg, needle) in cases {
        let report = cfg.run(|| {});
        let error = report.error().expect("a config error");
        assert!(matches!(error, Error::Config { .. }), "{error:?}");
        assert!(error.message().contains(needle), "{needle}: {error}");
        assert!(report.failure().is_none() && !report.is_ok());
    }
}

#[test]
fn defaults_pick_the_combined_strategy_only_when_a_guarantee_is_asked_for() {
    // Without a target: the explorer, SURW unless another is named.
    assert_eq!(Config::new().resolved_strategy(), Ok(StrategyKind::Surw));
    let walk = Config::new().explorer(StrategyKind::UniformWalk);
    assert_eq!(walk.resolved_strategy(), Ok(StrategyKind::UniformWalk));
    assert_eq!(
        Config::new().depth(3).resolved_strategy(),
        Ok(StrategyKind::Combined { depth: 3, vars: 1, threads: 3 })
    );
    assert_eq!(
        Config::new().confidence(0.9).resolved_strategy(),
        Ok(StrategyKind::Combined { depth: 2, vars: 1, threads: 3 })
    );
    assert_eq!(
        Config::new()
            .threads(3)
            .strategy(StrategyKind::ThreadBound { threads: 2, preemptions: 1 })
            .depth(3)
            .resolved_strategy(),
        Ok(StrategyKind::ThreadBound { threads: 3, preemptions: 2 })
    );
}

#[test]
fn counting_mode_runs_every_execution_and_counts_failures() {
    let (executions, failures) =
        config().strategy(StrategyKind::Pct { depth: 1 }).iterations(600).count_failures(figure_1);
    assert_eq!(executions, 600);
    // Figure 1 fails exactly when the checking thread has the lowest of 3 priorities.
    assert!((150..250).contains(&failures), "{failures}");
    let report = config()
        .strategy(StrategyKind::Pct { depth: 1 })
        .iterations(600)
        .stop_at_first_failure(false)
        .run(figure_1);
    assert_eq!(report.failures, failures, "deterministic given the seed");
    assert!(report.failure().is_some());
    assert!(report.guarantee.is_none(), "a failing run proves nothing");
    // The default (the uniform walk, no guarantee) counts too.
    let (_, random_failures) = config().iterations(300).count_failures(figure_1);
    assert!(random_failures > 1);
}

#[test]
fn every_strategy_is_deterministic_given_the_seed_and_replays_its_failures() {
    for kind in [
        StrategyKind::Pct { depth: 3 },
        StrategyKind::Pctvb { depth: 3, vars: 1 },
        StrategyKind::ThreadBound { threads: 3, preemptions: 2 },
        StrategyKind::Combined { depth: 3, vars: 1, threads: 3 },
    ] {
        // Counting mode: failures of the (random) profiling executions are not recorded, so
        // the first failure is the strategy's own. Seed 3: thread bounding, the rarest of the
        // four on figure 3 (about one execution in 2,000), finds it within the 3000 under it.
        let run = || {
            config()
                .seed(3)
                .strategy(kind.clone())
                .iterations(3000)
                .stop_at_first_failure(false)
                .run(figure_3)
        };
        let (a, b) = (run(), run());
        let fa = a.failure().unwrap_or_else(|| panic!("{kind:?} finds figure 3"));
        let fb = b.failure().unwrap();
        assert_eq!((fa.execution, &fa.token), (fb.execution, &fb.token), "{kind:?}");
        assert_eq!(a.failures, b.failures, "{kind:?}");
        assert!(
            fa.execution < pctvb::__internals::runner::PROFILE_INDEX_BASE,
            "found by the search"
        );
        let replay = config().replay(fa.token.clone().unwrap()).run(figure_3);
        let fr = replay.failure().expect("the replay fails too");
        assert_eq!(fr.kind, FailureKind::Panic);
        assert_eq!(fr.message, fa.message);
    }
}

static EXECUTION_COUNT: AtomicU64 = AtomicU64::new(0);

/// `locked_counter`, plus a thread from the 16th execution on (10 profiling + 6 searched):
/// that execution exceeds the measured n, which the report must say and not cover.
fn grows_a_thread_late() {
    let grow = EXECUTION_COUNT.fetch_add(1, Relaxed) >= 15;
    let h = grow.then(|| thread::spawn(|| {}));
    locked_counter();
    if let Some(h) = h {
        h.join().unwrap();
    }
}

#[test]
fn executions_exceeding_the_measured_counts_are_counted_and_not_covered() {
    let report = config()
        .strategy(StrategyKind::Combined { depth: 1, vars: 1, threads: 3 })
        .iterations(40)
        .run(grows_a_thread_late);
    report.assert_ok();
    let p = report.profile.clone().unwrap();
    assert_eq!((p.n, p.final_n), (3, 4));
    assert_eq!(p.exceeded, 1);
    assert_eq!(p.covered, 40 - 6);
    assert!(
        p.notes.iter().any(|n| n.contains("execution 5 exceeded") && n.contains("n 3 -> 4")),
        "{:?}",
        p.notes
    );
    let g: GuaranteeStatement = report.guarantee.clone().unwrap();
    assert_eq!((g.executions, g.exceeded_runs, g.n), (34, 1, 4));
    assert!(report.summary().contains("1 execution exceeded them"), "{}", report.summary());
}

#[test]
fn a_program_without_shared_variables_gets_a_note_not_a_guarantee() {
    let report = config().depth(2).iterations(5).run(|| {
        let h = thread::spawn(|| {
            AtomicUsize::new(0).fetch_add(1, SeqCst);
        });
        h.join().unwrap();
    });
    report.assert_ok();
    assert!(report.guarantee.is_none());
    let notes = report.profile.unwrap().notes;
    assert!(notes.iter().any(|n| n.contains("no guarantee") && n.contains("Q=0")), "{notes:?}");
}

#[test]
fn a_bug_found_while_profiling_is_reported_as_such_and_replays() {
    // Figure 1 fails in about half of the random executions: profiling finds it.
    let report = config().depth(2).run(figure_1);
    let failure = report.failure().expect("found");
    assert!(failure.execution >= pctvb::__internals::runner::PROFILE_INDEX_BASE);
    let text = failure.to_string();
    // Said as one of the executions the run ran (and the summary counts), not as "0".
    let nth = failure.execution - pctvb::__internals::runner::PROFILE_INDEX_BASE + 1;
    let which = format!("pctvb: failing execution {nth} of the run (a profiling execution");
    assert!(text.contains(&which), "{text}");
    assert_eq!(report.executions, nth, "the profiling executions ran");
    assert!(report.summary().contains(&format!("FAILED {}", report.executions)));
    assert!(!report.summary().contains("FAILED 0 executions"));
    let replay = config().replay(failure.token.clone().unwrap()).run(figure_1);
    assert_eq!(replay.failure().unwrap().message, failure.message);
}

#[test]
fn a_target_on_a_body_with_no_shared_variable_says_why_there_is_no_bound() {
    // Spawn and join only: no variable two threads share, so no depth-2 bound exists. The
    // report says so in those terms (not "invalid v", a parameter the user never gave) and
    // says what the run did instead of a plan (fixed seed).
    let report = pctvb::Config::new()
        .ignore_env()
        .seed(1)
        .no_regressions()
        .confidence(0.99)
        .run(|| pctvb::thread::spawn(|| {}).join().unwrap());
    assert!(report.is_ok(), "{}", report.failure().unwrap());
    let text = report.summary();
    assert!(text.contains("met no variable two threads share (Q=0"), "{text}");
    assert!(text.contains("the search ran the default 1000 executions"), "{text}");
    assert!(!text.contains("invalid v"), "{text}");
}

/// A depth above `MAX_DEPTH` (100), or one whose `d - 1` changes no execution could have
/// (more than `max_steps`), could not test, and says so before any execution: `depth =
/// 4294967295` with PCT or the combined strategy aborted the test binary ("memory allocation of
/// 34359738352 bytes failed"), and `depth = 1000000` ran 4 executions a second.
#[test]
fn a_depth_no_execution_can_use_could_not_test() {
    let max = pctvb::__internals::runner::MAX_DEPTH;
    assert_eq!(max, 100);
    let named = |name: &str| StrategyKind::from_name(name).unwrap();
    let mut cases: Vec<(Config, &str)> = Vec::new();
    for name in ["pct", "pctvb", "threadbound", "combined", "systematic"] {
        for depth in [u32::MAX, 1_000_000, max + 1] {
            let message = format!("depth = {depth} is above the largest depth pctvb takes, 100");
            cases.push((config().iterations(50).strategy(named(name)).depth(depth), leak(message)));
        }
    }
    // The strategy's own preemption bound, as `StrategyKind` spells it.
    let bound = StrategyKind::ThreadBound { threads: 2, preemptions: u32::MAX };
    cases.push((config().strategy(bound), "preemptions = 4294967295 (depth 4294967296) is above"));
    let search = StrategyKind::systematic(100, 2, 3);
    cases.push((config().strategy(search), "preemptions = 100 (depth 101) is above"));
    // The default strategy with a bound (the combined one), and the attribute's route.
    cases.push((config().depth(u32::MAX), "depth = 4294967295 is above"));
    cases.push((config().confidence(0.9).depth(max + 1), "depth = 101 is above"));
    // More changes than scheduling points an execution may have.
    cases.push((
        config().max_steps(10).depth(12),
        "depth = 12 asks for 11 priority changes per execution, more than the max_steps = 10",
    ));
    cases.push((
        config().max_steps(3).strategy(StrategyKind::systematic(4, 1, 2)),
        "preemptions = 4 (depth 5) asks for 4 preemptions per execution, more than the \
         max_steps = 3",
    ));
    let started = std::time::Instant::now();
    for (cfg, needle) in cases {
        let report = cfg.run(locked_counter);
        let error = report.error().expect("a config error");
        assert!(matches!(error, Error::Config { .. }), "{error:?}");
        assert!(error.message().contains(needle), "{needle}: {error}");
        assert!(error.message().contains("use a depth of at most"), "{error}");
        assert!(report.failure().is_none() && report.executions == 0);
    }
    assert!(started.elapsed().as_secs() < 5, "refused before any execution ran");
    // Within the limits, every strategy runs, fast: the largest depth, and d - 1 = max_steps.
    for name in ["pct", "pctvb", "threadbound", "combined", "systematic"] {
        let started = std::time::Instant::now();
        let report = config().iterations(50).strategy(named(name)).depth(max).run(locked_counter);
        assert!(report.is_ok(), "{name}: {}", report.summary());
        assert!(started.elapsed().as_secs() < 5, "{name}: {:?}", started.elapsed());
    }
    let report = config().iterations(20).max_steps(40).depth(41).run(locked_counter);
    assert!(report.is_ok(), "{}", report.summary());
}

fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// A thread bound up to u32::MAX is the class it says, in the summary of a passing run: the
/// summary's Lemma 4.1 clause added `t + c` in u32 and panicked ("attempt to add with
/// overflow") once the run had passed, with thread bounding and the combined strategy.
#[test]
fn the_largest_bounds_print_the_summary_of_a_passing_run() {
    let cases = [
        (StrategyKind::ThreadBound { threads: u32::MAX, preemptions: 1 }, "<= 4294967295 threads"),
        (StrategyKind::ThreadBound { threads: u32::MAX - 1, preemptions: 99 }, "<= 4294967294"),
        (StrategyKind::Combined { depth: 100, vars: u32::MAX, threads: u32::MAX }, "4294967295"),
        (StrategyKind::Pctvb { depth: 100, vars: u32::MAX }, "<= 2 of the Q=2 shared"),
    ];
    for (kind, needle) in cases {
        let report = config().iterations(50).strategy(kind.clone()).run(locked_counter);
        assert!(report.is_ok(), "{kind:?}: {:?}", report.error());
        let summary = report.summary();
        let statement = report.guarantee.as_ref().expect("a guarantee").to_string();
        assert!(statement.contains(needle), "{kind:?}: {statement}");
        assert!(summary.contains(&statement), "{summary}");
    }
}
