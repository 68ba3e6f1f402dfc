//! Parallel executions report what a serial run reports, and shards split the index space.
//! Fixed seeds; the assertions compare runs with each other, not with recorded values.

use pctvb::sync::atomic::{AtomicUsize, Ordering};
use pctvb::sync::Arc;
use pctvb::{thread, Config};

/// A rare bug: the checker fails only if the worker finishes all eight increments before the
/// checker's single load (about one random schedule in several hundred), so the first failure
/// comes after many executions and workers really race to it.
fn rare_lost_update() {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    let worker = thread::spawn(move || {
        for _ in 0..8 {
            n2.fetch_add(1, Ordering::SeqCst);
        }
    });
    let checker = thread::spawn(move || {
        assert_ne!(n.load(Ordering::SeqCst), 8, "the checker ran last");
    });
    worker.join().unwrap();
    checker.join().unwrap();
}

#[test]
fn parallel_and_serial_runs_report_the_same_first_failure() {
    // Seeds whose first failure is past index 10 (checked), so several workers run before it.
    for seed in [1, 3, 5, 8, 11] {
        let config = Config::new().ignore_env().seed(seed).iterations(5000).minimize_runs(0);
        let serial = config.clone().workers(1).run(rare_lost_update);
        let parallel = config.clone().workers(3).run(rare_lost_update);
        let (s, p) = (serial.failure().expect("found"), parallel.failure().expect("found"));
        assert!(s.execution > 10, "seed {seed}: the first failure comes late enough to race for");
        assert_eq!(s.execution, p.execution, "seed {seed}");
        assert_eq!(s.token, p.token, "seed {seed}");
        assert_eq!(serial.executions, parallel.executions, "seed {seed}");
        assert_eq!(serial.stats.distinct_schedules, parallel.stats.distinct_schedules);
    }
}

#[test]
fn parallel_passing_runs_count_every_execution() {
    let body = || {
        let n = Arc::new(AtomicUsize::new(0));
        let n2 = n.clone();
        let h = thread::spawn(move || n2.fetch_add(1, Ordering::SeqCst));
        n.fetch_add(1, Ordering::SeqCst);
        h.join().unwrap();
        assert_eq!(n.load(Ordering::SeqCst), 2);
    };
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
