//! Parallel executions report what a serial run reports, and shards split the index space.
//! Fixed seeds; the assertions compare runs with each other, not with recorded values.

use pctvb::sync::atomic::{AtomicUsize, Ordering};
use pctvb::sync::Arc;
use pctvb::{thread, Config, StrategyKind};

/// A rare bug under the naive walk: the checker fails only if the worker finishes all eight
/// increments before the checker's single load (about one random schedule in several
/// hundred), so the first failure comes after many executions and workers really race to it.
fn rare_lost_update() {
    rare_check(1);
}

/// For SURW: the checker, spawned first, fails only if it loads after exactly 12 of the three
/// workers' 24 increments (a loop split in its middle); the workers also share a second
/// variable, so SURW's selective executions take turns between the two.
fn rare_middle_check() {
    let n = Arc::new(AtomicUsize::new(0));
    let started = Arc::new(AtomicUsize::new(0));
    let checker = {
        let n = n.clone();
        thread::spawn(move || assert_ne!(n.load(Ordering::SeqCst), 12, "the checker saw 12"))
    };
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let (n, started) = (n.clone(), started.clone());
            thread::spawn(move || {
                started.fetch_add(1, Ordering::SeqCst);
                for _ in 0..8 {
                    n.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    checker.join().unwrap();
}

/// The checker fails only if it loads after all `workers` x 8 increments.
fn rare_check(workers: usize) {
    let n = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || {
                for _ in 0..8 {
                    n.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let checker = thread::spawn(move || {
        assert_ne!(n.load(Ordering::SeqCst), 8 * workers, "the checker ran last");
    });
    for h in handles {
        h.join().unwrap();
    }
    checker.join().unwrap();
}

#[test]
fn parallel_and_serial_runs_report_the_same_first_failure() {
    // The naive walk, the uniform walk and SURW (the default without a target), on seeds whose
    // first failure is past index 10, so several workers run before it. The uniform walk places
    // the checker's load uniformly among the increments, so it gets three workers' 24 to make
    // the bug rare. SURW's executions also depend on their index (its first walk, its rounds of
    // selected variables), which a worker must get right whatever indices it claims.
    let bodies: [(StrategyKind, fn()); 3] = [
        (StrategyKind::Random, rare_lost_update),
        (StrategyKind::UniformWalk, || rare_check(3)),
        (StrategyKind::Surw, rare_middle_check),
    ];
    for (kind, body) in bodies {
        let mut late = 0;
        for seed in 0..40 {
            let config = Config::new()
                .ignore_env()
                .seed(seed)
                .strategy(kind.clone())
                .iterations(5000)
                .minimize_runs(0);
            let serial = config.clone().workers(1).run(body);
            let s = serial.failure().expect("found");
            if s.execution <= 10 {
                continue;
            }
            late += 1;
            let parallel = config.clone().workers(3).run(body);
            let p = parallel.failure().expect("found");
            assert_eq!(s.execution, p.execution, "{kind:?} seed {seed}");
            assert_eq!(s.token, p.token, "{kind:?} seed {seed}");
            assert_eq!(serial.executions, parallel.executions, "{kind:?} seed {seed}");
            assert_eq!(serial.stats.distinct_schedules, parallel.stats.distinct_schedules);
        }
        assert!(late >= 3, "{kind:?}: only {late} of 40 seeds fail after execution 10");
    }
}

/// Two threads increment a counter atomically: a correct program with a choice.
fn two_increments() {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    let h = thread::spawn(move || n2.fetch_add(1, Ordering::SeqCst));
    n.fetch_add(1, Ordering::SeqCst);
    h.join().unwrap();
    assert_eq!(n.load(Ordering::SeqCst), 2);
}

#[test]
fn parallel_passing_runs_count_every_execution() {
    let body = two_increments;
    let config = Config::new().ignore_env().seed(9).iterations(3000);
    let serial = config.clone().workers(1).run(body);
    let parallel = config.workers(4).run(body);
    assert!(serial.is_ok() && parallel.is_ok());
    assert_eq!(parallel.executions, 3000);
    assert_eq!(serial.stats.distinct_schedules, parallel.stats.distinct_schedules);
    assert_eq!(serial.stats.max_steps, parallel.stats.max_steps);
}

#[test]
fn shards_split_the_executions_and_together_find_what_one_run_finds() {
    let config = Config::new().ignore_env().seed(4).iterations(5000).minimize_runs(0);
    let whole = config.clone().workers(1).run(rare_lost_update);
    let first = whole.failure().expect("found").execution;
    let owner = first % 3 + 1;
    for k in 1..=3 {
        let shard = config.clone().shard(k, 3).run(rare_lost_update);
        match shard.failure() {
            Some(f) => {
                assert_eq!(f.execution % 3, k - 1, "a shard only runs its own indices");
                if k == owner {
                    assert_eq!(f.execution, first, "the owning shard finds the same failure");
                }
            }
            None => assert_eq!(shard.executions, (5000 + 3 - k) / 3),
        }
    }
}

#[test]
fn every_shard_of_a_confidence_target_runs_the_strategy_and_its_explorer() {
    // With an even number of shards and the explorer in one execution in two, indices would
    // give one shard nothing but the explorer: it counted no execution, ran until the
    // execution cap and passed with "probability >= 0". Each shard interleaves by its own
    // executions, so each reaches its share's confidence (fixed seed, a correct program).
    let body = two_increments;
    for m in [2, 4] {
        for k in 1..=m {
            let report = Config::new().ignore_env().seed(9).confidence(0.9).shard(k, m).run(body);
            assert!(report.is_ok(), "shard {k}/{m}: {:?}", report.error());
            let g = report.guarantee.as_ref().expect("a statement");
            assert!(g.executions > 0 && g.confidence > 0.0, "shard {k}/{m}: {g}");
            assert!(report.executions < 100_000, "shard {k}/{m} ran {}", report.executions);
        }
    }
}

/// The OS threads a run's executions ran on, and its report.
fn os_threads_of(
    config: Config,
    body: impl Fn() + Sync,
) -> (Vec<std::thread::ThreadId>, pctvb::Report) {
    let seen = std::sync::Mutex::new(Vec::new());
    let report = config.run(|| {
        let id = std::thread::current().id();
        let mut seen = seen.lock().unwrap();
        if !seen.contains(&id) {
            seen.push(id);
        }
        drop(seen);
        body();
    });
    (seen.into_inner().unwrap(), report)
}

#[test]
fn a_run_with_one_schedule_or_a_failing_first_execution_starts_no_worker_threads() {
    let caller = std::thread::current().id();
    let config = Config::new().ignore_env().seed(7).iterations(1000).workers(2).minimize_runs(0);
    // One logical thread: execution 0 offers no choice, so it is the whole run, on this
    // OS thread (each execution runs on the OS thread of its engine).
    let (threads, report) = os_threads_of(config.clone(), || {
        let n = AtomicUsize::new(0);
        n.fetch_add(1, Ordering::SeqCst);
    });
    assert!(report.is_ok() && report.executions == 1, "{report:?}");
    assert_eq!(threads, vec![caller]);
    // A bug in execution 0: reported from this thread, at execution 0.
    let (threads, report) = os_threads_of(config.clone(), || panic!("always"));
    assert_eq!(report.failure().expect("found").execution, 0);
    assert_eq!(threads, vec![caller]);
    // A choice and no bug: the executions spread over the workers' OS threads (so this test
    // sees where executions run).
    let (threads, report) = os_threads_of(config, || {
        let n = Arc::new(AtomicUsize::new(0));
        let m = n.clone();
        let h = thread::spawn(move || {
            m.fetch_add(1, Ordering::SeqCst);
        });
        n.fetch_add(1, Ordering::SeqCst);
        h.join().unwrap();
    });
    assert!(report.is_ok() && report.executions == 1000, "{report:?}");
    assert!(threads.iter().any(|&t| t != caller), "{threads:?}");
}

#[test]
fn a_shards_messages_count_its_share_of_the_executions() {
    // Shard 2 of 4 of 4,000,000 iterations owns 1,000,000 indices: its time-budget note
    // counts those, not the whole run's (fixed seed; a correct program, stopped by a short
    // budget long before the end).
    let body = two_increments;
    let report = Config::new()
        .ignore_env()
        .seed(5)
        .iterations(4_000_000)
        .shard(2, 4)
        .time_budget(std::time::Duration::from_millis(200))
        .run(body);
    assert!(report.is_ok(), "{:?}", report.failure());
    // The note of the spent budget (a slow machine also gets the long-plan note up front,
    // which names the time budget too; it counts the shard's share as well).
    let note = report.notes.iter().find(|n| n.contains("was spent")).expect("a budget note");
    assert!(note.contains("of the 1,000,000 planned"), "{note}");
    for plan in report.notes.iter().filter(|n| n.contains("this run plans")) {
        assert!(plan.contains("plans 1,000,000 executions"), "{plan}");
    }
}
