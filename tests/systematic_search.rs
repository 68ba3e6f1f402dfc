//! The systematic search as a user meets it: bug-free programs are exhausted and the report
//! says what was covered, happens-before pruning saves executions without losing bugs, spin
//! loops end, budgets stop the search with the last completed level, and failures replay.

#[path = "common/paper_figures.rs"]
mod paper_figures;
#[path = "common/replays.rs"]
mod replays;

use paper_figures::{figure_10, figure_12, figure_2_bystanders, figure_3, figure_4};
use pctvb::report::OrderSet;
use pctvb::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use pctvb::sync::{Arc, Condvar, Mutex};
use pctvb::{thread, Config, Report, StrategyKind};

fn config() -> Config {
    Config::new().ignore_env().seed(7).profile_runs(2).iterations(1_000_000)
}

fn run(kind: StrategyKind, body: impl Fn() + Sync) -> Report {
    config().strategy(kind).run(body)
}

/// Three threads increment a Mutex-protected counter and an atomic one: no bug.
fn correct_counters() {
    let m = Arc::new(Mutex::new(0));
    let a = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..3)
        .map(|_| {
            let (m, a) = (m.clone(), a.clone());
            thread::spawn(move || {
                *m.lock().unwrap() += 1;
                a.fetch_add(1, SeqCst);
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*m.lock().unwrap(), 3);
    assert_eq!(a.load(SeqCst), 3);
}

#[test]
fn a_correct_program_is_exhausted_at_c2_v2_and_the_report_says_so() {
    let report = run(StrategyKind::systematic(2, 2, 4), correct_counters);
    report.assert_ok();
    let sys = report.systematic.as_ref().unwrap();
    assert!(sys.complete, "{sys}");
    assert_eq!(sys.shared_variables(), 2, "{sys}");
    assert!(matches!(sys.orders, Some(OrderSet::Exhaustive { threads: 4, orders: 24 })));
    // Every level up to (v=2, c=2) was run to the end.
    for (v, c) in [(0, 0), (1, 1), (1, 2), (2, 1), (2, 2)] {
        let level = sys.levels.iter().find(|l| (l.v, l.c) == (v, c)).expect("level run");
        assert!(level.exhausted && level.executions + level.reused > 0, "{sys}");
    }
    let statement = sys.statement();
    assert!(
        statement.starts_with(
            "exhaustively explored all schedules with <= 2 preemptions at accesses to any <= 2 \
             of Q=2 shared variables, for every priority order of all 4 threads"
        ),
        "{statement}"
    );
    assert!(statement.contains("no probability caveat"), "{statement}");
    assert!(report.summary().contains("exhaustively explored"), "{}", report.summary());
    assert_eq!(report.executions, sys.executions());
    // Level (2, 1) only has schedules of level (1, 1): none is run again, each is reused.
    let level = sys.levels.iter().find(|l| (l.v, l.c) == (2, 1)).unwrap();
    let below = sys.levels.iter().find(|l| (l.v, l.c) == (1, 1)).unwrap();
    assert!(below.executions > 0, "{sys}");
    assert_eq!((level.executions, level.reused), (0, below.executions), "{sys}");
    println!("{}", report.summary());
}

#[test]
fn hb_pruning_runs_fewer_executions_and_finds_the_same_bugs() {
    let programs: [(&str, fn(), u32); 5] = [
        ("figure 3", figure_3, 2),
        ("figure 4", figure_4, 2),
        ("figure 10", figure_10, 3),
        ("figure 12", figure_12, 2),
        ("correct counters", correct_counters, 2),
    ];
    for (name, body, t) in programs {
        let with = run(StrategyKind::systematic(2, 2, t), body);
        let without = run(
            StrategyKind::Systematic {
                preemptions: 2,
                vars: 2,
                threads: t,
                hb_pruning: false,
                max_time: None,
            },
            body,
        );
        let (a, b) = (with.systematic.unwrap(), without.systematic.unwrap());
        println!(
            "{name}: to bug or exhaustion {} executions with pruning ({} pruned), {} without",
            a.executions(),
            a.pruned(),
            b.executions()
        );
        assert_eq!(with.failure.is_some(), without.failure.is_some(), "{name}");
        assert_eq!(a.found_at, b.found_at, "{name}");
        assert!(a.executions() <= b.executions(), "{name}: {a}\n{b}");
        assert_eq!(b.pruned(), 0);
    }
}

#[test]
fn the_search_never_hangs_on_a_spin_loop() {
    let report = run(StrategyKind::systematic(2, 1, 2), || {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let h = thread::spawn(move || f.store(true, SeqCst));
        while !flag.load(SeqCst) {
            thread::yield_now();
        }
        h.join().unwrap();
    });
    report.assert_ok();
    assert!(report.systematic.as_ref().unwrap().complete);
}

#[test]
fn a_budget_stops_the_search_with_the_last_completed_level() {
    let report =
        config().iterations(40).strategy(StrategyKind::systematic(2, 2, 4)).run(correct_counters);
    report.assert_ok();
    let sys = report.systematic.as_ref().unwrap();
    assert!(!sys.complete);
    assert_eq!(report.executions, 40);
    assert_eq!(sys.last_completed(), Some((0, 4, 0)), "{sys}");
    let statement = sys.statement();
    assert!(statement.starts_with("the budget of 40 executions ran out"), "{statement}");
    assert!(statement.contains("up to (v=0, c=0)"), "{statement}");

    let report = config()
        .strategy(StrategyKind::Systematic {
            preemptions: 2,
            vars: 2,
            threads: 2,
            hb_pruning: true,
            max_time: Some(std::time::Duration::ZERO),
        })
        .run(correct_counters);
    assert_eq!(report.executions, 0);
    assert!(report.systematic.unwrap().statement().contains("time budget"));

    // A budget of exactly the executions the search needs completes it.
    let needed = run(StrategyKind::systematic(2, 2, 4), correct_counters).executions;
    let report = config()
        .iterations(needed)
        .strategy(StrategyKind::systematic(2, 2, 4))
        .run(correct_counters);
    let sys = report.systematic.as_ref().unwrap();
    assert!(sys.complete && sys.stopped_by.is_none(), "{sys}");
    let report = config()
        .iterations(needed - 1)
        .strategy(StrategyKind::systematic(2, 2, 4))
        .run(correct_counters);
    let sys = report.systematic.as_ref().unwrap();
    assert!(!sys.complete, "{sys}");
    assert_eq!(sys.executions(), needed - 1);
}

#[test]
fn a_failure_found_by_the_search_replays_from_its_token() {
    let report = run(StrategyKind::systematic(2, 2, 2), figure_4);
    let failure = report.failure().expect("figure 4's bug");
    let token = failure.token.clone().expect("a token");
    let replayed = Config::new().ignore_env().replay(token).run(figure_4);
    let again = replayed.failure().expect("the replay fails the same way");
    assert_eq!(again.message, failure.message);
}

#[test]
fn many_threads_use_randomized_thread_bounding_orders_with_lemma_4_1() {
    // Six threads (three bystanders): 7! fragment orders at c = 1 are more than Lemma 4.1's
    // count for t = 2, so random permutations are drawn and the statement carries eps.
    let report = run(StrategyKind::systematic(1, 1, 2), figure_2_bystanders);
    let sys = report.systematic.as_ref().unwrap();
    let Some(OrderSet::Random { threads: 6, orders, needed, eps }) = sys.orders else {
        panic!("{sys}")
    };
    let expected = pctvb::guarantee::lemma_4_1_executions(7, 3, 0.01).unwrap();
    assert_eq!((orders, needed, eps), (expected, expected, 0.01));
    assert_eq!(sys.found_at, Some((1, 2, 1)), "{sys}");

    // A passing run states the probability caveat.
    let report = run(StrategyKind::systematic(1, 1, 2), || {
        let hs: Vec<_> = (0..5).map(|_| thread::spawn(thread::yield_now)).collect();
        for h in hs {
            h.join().unwrap();
        }
    });
    let statement = report.systematic.unwrap().statement();
    assert!(statement.contains("with probability >= 0.99"), "{statement}");

    // A confidence target sets eps (and lifts the execution cap).
    let report = config()
        .strategy(StrategyKind::systematic(1, 1, 2))
        .confidence(0.9)
        .run(figure_2_bystanders);
    let sys = report.systematic.as_ref().unwrap();
    let Some(OrderSet::Random { orders, .. }) = sys.orders else { panic!("{sys}") };
    assert_eq!(orders, pctvb::guarantee::lemma_4_1_executions(7, 3, 0.1).unwrap());
    assert!(orders < expected);
}

#[test]
fn the_strategy_is_selectable_by_name_and_takes_the_bounds() {
    let kind = StrategyKind::from_name("systematic").unwrap();
    assert_eq!(kind.name(), "systematic");
    let resolved = Config::new().strategy(kind).depth(2).vars(1).threads(3).resolved_strategy();
    assert_eq!(resolved, Ok(StrategyKind::systematic(1, 1, 3)));
}

/// Objects made at one site are separate variables, named by loop-iteration number (their rank
/// among the site's objects in order of first access) and searched lowest iteration first.
#[test]
fn heap_variables_are_named_by_loop_iteration_lowest_first() {
    let report = run(StrategyKind::systematic(1, 1, 2), || {
        let cells: Vec<Arc<AtomicUsize>> = (0..3).map(|_| Arc::new(AtomicUsize::new(0))).collect();
        let (c1, c2) = (cells.clone(), cells);
        let reader = thread::spawn(move || {
            for c in &c1 {
                let (t1, t2) = (c.load(SeqCst), c.load(SeqCst));
                assert!(t1 == t2 || !Arc::ptr_eq(c, &c1[2]), "the third cell changed");
            }
        });
        let writer = thread::spawn(move || {
            for c in &c2 {
                c.fetch_add(1, SeqCst);
            }
        });
        reader.join().unwrap();
        writer.join().unwrap();
    });
    let sys = report.systematic.as_ref().unwrap();
    assert_eq!(sys.found_at, Some((1, 2, 1)), "{sys}");
    assert_eq!(sys.variables.len(), 3, "{sys}");
    for (i, name) in sys.variables.iter().enumerate() {
        assert!(name.starts_with("Atomic@tests/systematic_search.rs:"), "{name}");
        assert!(name.ends_with(&format!("#{i}")), "{sys}");
    }
    // The bug is on the third cell: the subsets {#0} and {#1} were searched before it.
    let level = sys.levels.iter().find(|l| (l.v, l.c) == (1, 1)).unwrap();
    assert_eq!(level.subsets, 3, "{sys}");
}

#[pctvb::test(strategy = "systematic", depth = 2, vars = 1, threads = 3, iterations = 100_000)]
fn the_attribute_runs_a_systematic_search() {
    correct_counters();
}

/// Outcomes (the values threads read) of the programs below, by the execution that saw them.
static OUTCOMES: std::sync::Mutex<std::collections::BTreeSet<Vec<usize>>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Two threads read and write two atomics and a mutex.
fn atomics_and_a_mutex() {
    let (a, b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let m = Arc::new(Mutex::new(0));
    let (a1, b1, m1) = (a.clone(), b.clone(), m.clone());
    let (a2, b2, m2) = (a.clone(), b.clone(), m.clone());
    let h1 = thread::spawn(move || {
        let x = a1.load(SeqCst);
        let y = b1.load(SeqCst);
        let z = {
            let mut g = m1.lock().unwrap();
            *g += 1;
            *g
        };
        vec![x, y, z, a1.load(SeqCst)]
    });
    let h2 = thread::spawn(move || {
        b2.store(1, SeqCst);
        let z = {
            let mut g = m2.lock().unwrap();
            *g += 10;
            *g
        };
        a2.fetch_add(1, SeqCst);
        vec![z, a2.load(SeqCst), b2.load(SeqCst)]
    });
    let mut seen = h1.join().unwrap();
    seen.extend(h2.join().unwrap());
    OUTCOMES.lock().unwrap().insert(seen);
}

/// A condition-variable handoff racing with an atomic read: blocking and waking.
fn condvar_handoff() {
    let pair = Arc::new((Mutex::new(0usize), Condvar::new()));
    let seen = Arc::new(AtomicUsize::new(0));
    let (p1, s1) = (pair.clone(), seen.clone());
    let waiter = thread::spawn(move || {
        let (m, c) = &*p1;
        let mut g = m.lock().unwrap();
        while *g == 0 {
            g = c.wait(g).unwrap();
        }
        s1.store(*g, SeqCst);
        *g += 5;
    });
    let (p2, s2) = (pair.clone(), seen.clone());
    let notifier = thread::spawn(move || {
        let x = s2.load(SeqCst);
        let (m, c) = &*p2;
        *m.lock().unwrap() += 2;
        c.notify_all();
        x
    });
    {
        let (m, c) = &*pair;
        *m.lock().unwrap() += 1;
        c.notify_one();
    }
    waiter.join().unwrap();
    let x = notifier.join().unwrap();
    OUTCOMES.lock().unwrap().insert(vec![x, seen.load(SeqCst), *pair.0.lock().unwrap()]);
}

/// Happens-before pruning only drops schedules that reach states already explored: every
/// outcome the unpruned search reaches, the pruned one reaches (one test: `OUTCOMES` is shared).
#[test]
fn pruning_reaches_every_outcome_of_the_unpruned_search() {
    let programs: [(&str, fn()); 2] =
        [("atomics and a mutex", atomics_and_a_mutex), ("condvar handoff", condvar_handoff)];
    for (name, body) in programs {
        let outcomes = |pruning: bool| {
            OUTCOMES.lock().unwrap().clear();
            let kind = StrategyKind::Systematic {
                preemptions: 2,
                vars: 2,
                threads: 3,
                hb_pruning: pruning,
                max_time: None,
            };
            let report = config().profile_runs(1).strategy(kind).run(body);
            report.assert_ok();
            let sys = report.systematic.unwrap();
            assert!(sys.complete, "{sys}");
            (std::mem::take(&mut *OUTCOMES.lock().unwrap()), sys.executions())
        };
        let (with, runs_with) = outcomes(true);
        let (without, runs_without) = outcomes(false);
        println!(
            "{name}: {} outcomes; {runs_with} executions with pruning, {runs_without} without",
            with.len()
        );
        assert!(runs_with < runs_without, "{name}");
        assert_eq!(with, without, "{name}");
        assert!(with.len() >= 4, "{name}: {with:?}");
    }
}

/// Outcomes of the completeness test below (its own: tests run concurrently).
static SEEN: std::sync::Mutex<std::collections::BTreeSet<Vec<usize>>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Two threads of three operations on two atomics.
fn three_and_three() {
    let (a, b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (a1, b1, a2, b2) = (a.clone(), b.clone(), a.clone(), b.clone());
    let h1 = thread::spawn(move || {
        let x = a1.load(SeqCst);
        b1.store(1, SeqCst);
        vec![x, a1.load(SeqCst)]
    });
    let h2 = thread::spawn(move || {
        a2.store(1, SeqCst);
        let z = b2.load(SeqCst);
        a2.store(2, SeqCst);
        z
    });
    let mut seen = h1.join().unwrap();
    seen.push(h2.join().unwrap());
    SEEN.lock().unwrap().insert(seen);
}

/// Three threads take a ticket and log it under a mutex.
fn tickets() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let next = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..3)
        .map(|i| {
            let (log, next) = (log.clone(), next.clone());
            thread::spawn(move || {
                let ticket = next.fetch_add(1, SeqCst);
                log.lock().unwrap().push(i * 10 + ticket);
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let seen = log.lock().unwrap().clone();
    SEEN.lock().unwrap().insert(seen);
}

/// With enough preemptions the bounded search is complete: it reaches every outcome that
/// many random executions reach (the placements of preempted threads miss no order).
#[test]
fn with_enough_preemptions_the_search_reaches_every_outcome_random_testing_does() {
    // (name, body, preemptions, threads)
    type Program = (&'static str, fn(), u32, u32);
    let programs: [Program; 2] =
        [("three and three", three_and_three, 5, 3), ("tickets", tickets, 3, 4)];
    for (name, body, c, t) in programs {
        SEEN.lock().unwrap().clear();
        config().iterations(5_000).run(body).assert_ok();
        let random = std::mem::take(&mut *SEEN.lock().unwrap());
        let report = run(StrategyKind::systematic(c, 2, t), body);
        report.assert_ok();
        assert!(report.systematic.as_ref().unwrap().complete);
        let systematic = std::mem::take(&mut *SEEN.lock().unwrap());
        assert!(random.len() >= 10, "{name}: {random:?}");
        assert!(random.is_subset(&systematic), "{name}: {random:?}\n{systematic:?}");
    }
}

#[test]
fn a_thread_bound_below_two_is_treated_as_two() {
    let report = run(StrategyKind::systematic(1, 1, 0), figure_2_bystanders);
    let sys = report.systematic.as_ref().unwrap();
    let expected = pctvb::guarantee::lemma_4_1_executions(7, 3, 0.01).unwrap();
    assert!(matches!(sys.orders, Some(OrderSet::Random { orders, .. }) if orders == expected));
    assert!(report.failure().is_some(), "{sys}");
}

#[test]
fn too_many_orders_for_lemma_4_1_are_capped_and_the_statement_drops_the_guarantee() {
    // Ten threads ordered completely (t = n): every order of 10 + 1 fragments would be
    // needed; the search draws MAX_RANDOM_ORDERS and claims no probability. A budget of a few
    // executions keeps the test short.
    let report = config().iterations(3).strategy(StrategyKind::systematic(1, 1, 10)).run(|| {
        let hs: Vec<_> = (0..9).map(|_| thread::spawn(thread::yield_now)).collect();
        for h in hs {
            h.join().unwrap();
        }
    });
    let sys = report.systematic.as_ref().unwrap();
    let Some(OrderSet::Random { threads: 10, orders, needed, .. }) = sys.orders else {
        panic!("{sys}")
    };
    assert_eq!(orders, pctvb::__internals::schedulers::MAX_RANDOM_ORDERS);
    assert!(needed > orders);
    let statement = sys.statement();
    assert!(statement.contains("no probability guarantee"), "{statement}");
}

#[test]
fn a_bug_beyond_the_bounds_found_by_profiling_is_reported_as_such() {
    // Figure 3 needs two preemptions; a search bounded at one does not find it, but some
    // random profiling execution does (40 of them, fixed seed).
    let report = config()
        .profile_runs(40)
        .strategy(StrategyKind::systematic(1, 1, 2))
        .run(paper_figures::figure_3);
    let sys = report.systematic.as_ref().unwrap();
    assert!(report.failure().is_some(), "{sys}");
    assert_eq!(sys.found_at, None);
    assert!(sys.complete);
    assert!(sys.notes.iter().any(|n| n.contains("outside the bounds searched")), "{sys}");
    // Reported as every other failure: minimized (its random schedule had needless
    // preemptions) and replayable from its token.
    let failure = report.failure().unwrap();
    assert!(failure.minimized_from.is_some_and(|from| from > failure.preemptions), "{failure}");
    assert!(failure.preemptions <= 2, "{failure}");
    replays::assert_token_replays(config, figure_3, failure);
}

/// `z` is touched by a second thread only after `t1` is preempted between its two stores to
/// `a`: no schedule without a preemption shares it, so it becomes shared during the v=1 level.
fn shared_after_a_preemption() {
    let a = Arc::new(AtomicUsize::new(0));
    let z = Arc::new(AtomicUsize::new(0));
    let t1 = {
        let a = a.clone();
        thread::spawn(move || {
            a.store(1, SeqCst);
            a.store(0, SeqCst);
        })
    };
    let t2 = {
        let (a, z) = (a.clone(), z.clone());
        thread::spawn(move || {
            if a.load(SeqCst) == 1 {
                z.fetch_add(1, SeqCst);
            }
        })
    };
    z.fetch_add(1, SeqCst);
    t1.join().unwrap();
    t2.join().unwrap();
}

#[test]
fn a_variable_first_shared_in_the_last_level_is_searched_before_the_search_ends() {
    // With v = 1 the v=1 level is the last: `z` joins the list after it, and the level runs
    // again for the subsets that hold it instead of ending with `z` never preempted at.
    let mut late = 0;
    for seed in 0..8 {
        let config = config().seed(seed).profile_runs(1);
        let report =
            config.strategy(StrategyKind::systematic(2, 1, 3)).run(shared_after_a_preemption);
        report.assert_ok();
        let sys = report.systematic.as_ref().unwrap();
        assert!(sys.complete, "{sys}");
        if sys.notes.iter().any(|n| n.contains("became shared during the v=1 level")) {
            late += 1;
            assert_eq!(sys.shared_variables(), 2, "{sys}");
            // Both variables' subsets of the v=1 level ran: `a`'s, then `z`'s.
            let level = sys.levels.iter().find(|l| (l.v, l.c) == (1, 1)).expect("level run");
            assert_eq!(level.subsets, 2, "{sys}");
            assert!(level.exhausted, "{sys}");
        }
    }
    assert!(late >= 1, "no seed's profiling left `z` unshared");
}

#[test]
fn a_program_with_one_schedule_is_profiled_once() {
    // One thread: the first profiling execution had no choice, so the others would repeat it.
    let report = config().profile_runs(10).strategy(StrategyKind::systematic(2, 2, 3)).run(|| {
        let a = AtomicUsize::new(0);
        a.fetch_add(1, SeqCst);
        assert_eq!(a.load(SeqCst), 1);
    });
    report.assert_ok();
    let sys = report.systematic.as_ref().unwrap();
    assert!(sys.complete, "{sys}");
    assert_eq!(sys.profile_runs, 1, "{sys}");
    assert_eq!(sys.executions(), 1, "{sys}");
}

#[test]
fn the_runs_time_budget_stops_the_search_and_the_report_says_so() {
    // PCTVB_TIME / Config::time_budget (and a loom suite's LOOM_MAX_DURATION) bound the
    // systematic search as its own max_time does: the search ran on to the end past them.
    let report = config()
        .strategy(StrategyKind::systematic(2, 2, 4))
        .time_budget(std::time::Duration::from_millis(1))
        .run(correct_counters);
    assert!(report.time_budget_spent, "{}", report.summary());
    let systematic = report.systematic.as_ref().expect("a systematic report");
    assert!(!systematic.complete, "{}", report.summary());
    let why = systematic.stopped_by.as_deref().unwrap_or_default();
    assert!(why.contains("the time budget of 1 ms ran out"), "{why}");
}

/// The interleavings the sharding test's executions ran, with how many times each ran (its
/// own: tests run concurrently).
static INTERLEAVINGS: std::sync::Mutex<std::collections::BTreeMap<Vec<usize>, u64>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// Two threads of two operations on an atomic, and the body's own: each operation is logged
/// as it ends (in a std mutex, outside the model: no scheduling point), so the log is the
/// interleaving the execution ran.
fn logged_interleaving() {
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let a = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (1..=2)
        .map(|id| {
            let (log, a) = (log.clone(), a.clone());
            thread::spawn(move || {
                a.fetch_add(id, SeqCst);
                log.lock().unwrap().push(id);
                let _ = a.load(SeqCst);
                log.lock().unwrap().push(id);
            })
        })
        .collect();
    a.store(7, SeqCst);
    log.lock().unwrap().push(0);
    for h in hs {
        h.join().unwrap();
    }
    let seen = log.lock().unwrap().clone();
    *INTERLEAVINGS.lock().unwrap().entry(seen).or_insert(0) += 1;
}

/// Shard k of m of a systematic search runs the schedules that start from its share of the
/// initial priority orders: without pruning (which is per shard) the shards' executions add
/// up to the whole search's, exactly, and they ran the same interleavings as often; with it,
/// every shard is exhausted and together they reach every interleaving. Each shard's statement
/// says it covered its share, not every schedule. Seed 7, fixed (profiling is the same in
/// every run, so every run measures the same threads).
#[test]
fn shards_split_the_systematic_search_and_together_run_all_of_it() {
    let ran = |pruning: bool, shard: Option<(u64, u64)>| {
        INTERLEAVINGS.lock().unwrap().clear();
        let kind = StrategyKind::Systematic {
            preemptions: 2,
            vars: 1,
            threads: 3,
            hb_pruning: pruning,
            max_time: None,
        };
        let mut config = config().profile_runs(1).strategy(kind);
        if let Some((k, m)) = shard {
            config = config.shard(k, m);
        }
        let report = config.run(logged_interleaving);
        report.assert_ok();
        let seen = std::mem::take(&mut *INTERLEAVINGS.lock().unwrap());
        (report, seen)
    };
    // The one profiling execution, run by every shard as by the whole search (alone in a
    // shard that owns no order).
    let (_, profiled) = ran(true, Some((1_000_000, 1_000_000)));
    assert_eq!(profiled.values().sum::<u64>(), 1);
    for pruning in [false, true] {
        let (whole, whole_seen) = ran(pruning, None);
        let sys = whole.systematic.as_ref().unwrap();
        assert!(sys.complete, "{sys}");
        assert!(matches!(sys.orders, Some(OrderSet::Exhaustive { threads: 3, orders: 6 })));
        assert!(sys.statement().starts_with("exhaustively explored all schedules"), "{sys}");
        for m in [2, 3, 4] {
            let mut executions = 0;
            let mut union: std::collections::BTreeMap<Vec<usize>, u64> = Default::default();
            let mut orders = 0;
            for k in 1..=m {
                let (shard, seen) = ran(pruning, Some((k, m)));
                let part = shard.systematic.as_ref().unwrap();
                assert!(part.complete, "{part}");
                assert_eq!(shard.executions, part.executions());
                assert!(shard.executions < whole.executions, "shard {k}/{m}: {part}");
                executions += shard.executions;
                let share = part.shard.expect("the report names the shard");
                assert_eq!((share.index, share.count), (k, m));
                assert_eq!(share.orders, (6 + m - k) / m, "orders k-1, k-1+m, ... of 6");
                orders += share.orders;
                let statement = part.statement();
                let start = format!("shard {k} of {m}: exhaustively explored its share of the");
                assert!(statement.starts_with(&start), "{statement}");
                assert!(statement.contains(&format!("index is {} modulo {m}", k - 1)));
                assert!(statement.contains("this shard alone does not cover every"));
                assert!(statement.contains(&format!("the {m} shards together")), "{statement}");
                assert!(!statement.contains("explored all schedules"), "{statement}");
                for (interleaving, n) in seen {
                    *union.entry(interleaving).or_insert(0) += n;
                }
                // Less the profiling execution every shard ran.
                for (interleaving, n) in &profiled {
                    *union.get_mut(interleaving).unwrap() -= n;
                }
            }
            assert_eq!(orders, 6);
            let mut whole_searched = whole_seen.clone();
            for (interleaving, n) in &profiled {
                *whole_searched.get_mut(interleaving).unwrap() -= n;
            }
            whole_searched.retain(|_, n| *n > 0);
            union.retain(|_, n| *n > 0);
            if pruning {
                // Each shard prunes against its own states only: together they may run more.
                assert!(executions >= whole.executions, "{m} shards");
                let keys = |s: &std::collections::BTreeMap<Vec<usize>, u64>| {
                    s.keys().cloned().collect::<Vec<_>>()
                };
                assert_eq!(keys(&union), keys(&whole_searched), "{m} shards");
            } else {
                assert_eq!(executions, whole.executions, "{m} shards");
                assert_eq!(union, whole_searched, "{m} shards");
            }
        }
    }
}

/// A shard with no initial order of its own runs nothing and says so; a bug the whole search
/// finds, some shard finds. Seed 7, fixed.
#[test]
fn a_shard_without_orders_says_so_and_the_shards_find_the_bug() {
    // The body and one thread: 2 initial orders, none for shard 3 of 3.
    let two_threads = || {
        let a = Arc::new(AtomicUsize::new(0));
        let a2 = a.clone();
        let h = thread::spawn(move || a2.fetch_add(1, SeqCst));
        a.fetch_add(1, SeqCst);
        h.join().unwrap();
    };
    let report = config().shard(3, 3).strategy(StrategyKind::systematic(2, 2, 2)).run(two_threads);
    report.assert_ok();
    assert_eq!(report.executions, 0);
    let sys = report.systematic.unwrap();
    let statement = sys.statement();
    assert!(statement.starts_with("shard 3 of 3: this shard's share"), "{statement}");
    assert!(statement.contains("is empty") && statement.contains("at most 2 shards"));

    for (name, body) in [("figure 3", figure_3 as fn()), ("figure 12", figure_12)] {
        let whole = run(StrategyKind::systematic(2, 2, 2), body);
        assert!(whole.failure().is_some(), "{name}");
        for m in [2, 3] {
            let found: Vec<u64> = (1..=m)
                .filter(|&k| {
                    let kind = StrategyKind::systematic(2, 2, 2);
                    let shard = config().shard(k, m).strategy(kind).run(body);
                    let Some(failure) = shard.failure() else { return false };
                    let sys = shard.systematic.as_ref().unwrap();
                    let statement = sys.statement();
                    assert!(statement.starts_with(&format!("shard {k} of {m}: ")), "{statement}");
                    failure.execution < u64::MAX / 2 // a search execution, not profiling's
                })
                .collect();
            assert!(!found.is_empty(), "{name}: no shard of {m} found the bug");
        }
    }
}

/// A preemption bound beyond `MAX_DEPTH - 1` could not test, at once: `depth = 100000` (the
/// bound 99,999) spent 20 s walking levels no schedule reached, past a 3 s time budget and 50
/// iterations, growing with the square of the bound (`depth = 4294967295`: no output in
/// 30 s). The largest bound runs within both budgets.
#[test]
fn an_absurd_preemption_bound_could_not_test_and_the_largest_runs_within_budget() {
    let budget = std::time::Duration::from_secs(3);
    let started = std::time::Instant::now();
    for depth in [u32::MAX, 100_000, 101] {
        let report = config()
            .iterations(50)
            .time_budget(budget)
            .strategy(StrategyKind::from_name("systematic").unwrap())
            .depth(depth)
            .run(correct_counters);
        let error = report.error().expect("refused");
        assert!(matches!(error, pctvb::Error::Config { .. }), "{error:?}");
        let needle = format!("depth = {depth} is above the largest depth pctvb takes, 100");
        assert!(error.message().contains(&needle), "{error}");
        assert!(error.message().contains("explores the same schedules"), "{error}");
        assert_eq!(report.executions, 0);
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(1), "{:?}", started.elapsed());
    for kind in [StrategyKind::systematic(99, 2, 4), StrategyKind::systematic(99, 2, 2)] {
        let started = std::time::Instant::now();
        let report = config()
            .iterations(50)
            .time_budget(budget)
            .strategy(kind.clone())
            .run(correct_counters);
        report.assert_ok();
        assert!(report.executions <= 50, "{kind:?}: {}", report.executions);
        assert!(started.elapsed() < budget, "{kind:?}: {:?}", started.elapsed());
    }
}
