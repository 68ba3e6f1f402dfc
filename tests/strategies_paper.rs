//! The priority strategies as a user meets them: every one finds every bug of the paper's
//! figures within its budget, spin loops terminate, and `#[pctvb::test]` takes the guarantee
//! arguments.

#[path = "common/paper_figures.rs"]
mod paper_figures;

use paper_figures::{Figure, FIGURES};
use pctvb::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use pctvb::sync::{Arc, Mutex};
use pctvb::{thread, Config, FailureKind, StrategyKind};

fn kinds(f: &Figure) -> Vec<StrategyKind> {
    let t = f.threads_with_main();
    vec![
        StrategyKind::Pct { depth: f.pct_depth },
        StrategyKind::Pctvb { depth: f.pct_depth, vars: f.v.max(1) },
        StrategyKind::ThreadBound { threads: t, preemptions: f.c },
        StrategyKind::Combined { depth: f.depth(), vars: f.v.max(1), threads: t },
    ]
}

#[test]
fn every_priority_strategy_finds_every_figure() {
    for f in FIGURES {
        for kind in kinds(f) {
            if f.name == "figure 10" && matches!(kind, StrategyKind::ThreadBound { .. }) {
                // Two change points on exact steps out of ~23 and one order of 6 fragments:
                // a bound of 1 in 380,880 and a measured rate too low for this budget.
                continue;
            }
            let report = Config::new()
                .ignore_env()
                .seed(0xf1)
                // No profiling executions would find it by chance: profile once.
                .profile_runs(1)
                .strategy(kind.clone())
                .iterations(20_000)
                .run(f.body);
            let failure =
                report.failure().unwrap_or_else(|| panic!("{} not found by {kind:?}", f.name));
            assert_eq!(failure.kind, FailureKind::Panic, "{}", failure.message);
            assert!(failure.message.contains(f.name), "{}: {}", f.name, failure.message);
        }
    }
}

/// The guarantee at work: the executions a 99% confidence target plans find each figure's
/// bug (PCTVB at the figure's PCT depth, whose bounds keep the plans to a few thousand).
#[test]
fn a_confidence_target_plans_enough_executions_to_find_every_figure() {
    for f in FIGURES {
        let kind = StrategyKind::Pctvb { depth: f.pct_depth, vars: f.v.max(1) };
        let report = Config::new()
            .ignore_env()
            .seed(0xc0)
            .strategy(kind.clone())
            .confidence(0.99)
            .stop_at_first_failure(false)
            .run(f.body);
        assert!(report.planned <= 5000, "{}: {}", f.name, report.planned);
        assert!(report.failures > 0, "{} not found in {} executions", f.name, report.executions);
        let first = report.failure().unwrap();
        assert!(first.message.contains(f.name), "{}", first.message);
    }
}

/// Waits for a flag in a yield loop: a strict priority scheduler that gave the waiter the
/// higher priority would spin forever without the demotion rule.
fn spin_wait() {
    let ready = Arc::new(AtomicBool::new(false));
    let r = ready.clone();
    let waiter = thread::spawn(move || {
        while !r.load(SeqCst) {
            thread::yield_now();
        }
    });
    let setter = thread::spawn(move || ready.store(true, SeqCst));
    waiter.join().unwrap();
    setter.join().unwrap();
}

#[test]
fn spin_loops_terminate_under_every_priority_strategy() {
    for kind in [
        StrategyKind::Pct { depth: 2 },
        StrategyKind::Pctvb { depth: 2, vars: 1 },
        StrategyKind::ThreadBound { threads: 2, preemptions: 1 },
        StrategyKind::Combined { depth: 2, vars: 1, threads: 2 },
    ] {
        let report = Config::new()
            .ignore_env()
            .seed(5)
            .strategy(kind.clone())
            .iterations(200)
            .run(spin_wait);
        report.assert_ok();
        // The waiter spins (is not enabled) from its first yield until the setter's store:
        // no execution burns steps in the loop.
        assert!(report.stats.max_steps < 30, "{kind:?}: {}", report.stats.max_steps);
    }
}

/// A correct counter: the attribute computes the executions for 99% confidence and passes.
#[pctvb::test(confidence = 0.99, depth = 2, vars = 1, seed = 1)]
fn attribute_with_a_confidence_target_passes_a_correct_program() {
    let n = Arc::new(Mutex::new(0));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || *n.lock().unwrap() += 1)
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*n.lock().unwrap(), 2);
}

#[pctvb::test(
    strategy = "pctvb",
    depth = 2,
    vars = 1,
    iterations = 2000,
    seed = 3,
    regressions = false
)]
#[should_panic(expected = "figure 2: a changed between the reads")]
fn attribute_with_a_named_strategy_finds_figure_2() {
    paper_figures::figure_2();
}

#[pctvb::test(
    strategy = "threadbound",
    threads = 3,
    depth = 1,
    profile_runs = 2,
    seed = 4,
    regressions = false
)]
#[should_panic(expected = "figure 8: both increments ran")]
fn attribute_with_thread_bounding_finds_figure_8() {
    paper_figures::figure_8();
}

#[test]
fn the_attribute_default_for_guarantee_arguments_is_the_combined_strategy() {
    let report = Config::new().ignore_env().seed(9).depth(2).vars(1).iterations(50).run(|| {
        let a = Arc::new(AtomicUsize::new(0));
        let a2 = a.clone();
        let h = thread::spawn(move || a2.fetch_add(1, SeqCst));
        a.fetch_add(1, SeqCst);
        h.join().unwrap();
    });
    report.assert_ok();
    // With one search execution in two revfuzz's (the explorer), for bugs outside the class.
    assert_eq!(report.strategy, "combined(d=2,v=1,t=3) + revfuzz 1 in 2");
    assert!(report.guarantee.is_some());
}
