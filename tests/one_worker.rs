//! A run whose worker count is left to pctvb and resolves to one (`--test-threads=1` or
//! `RUST_TEST_THREADS=1`, as some crates' CI runs their loom suites; or one core): execution 0
//! runs first on the calling thread, and the serial search goes on after it rather than
//! running it again. Fixed seeds; the assertions compare with a run given `workers(1)`.
//!
//! This binary has one test, which sets `RUST_TEST_THREADS=1` for the process before any run
//! (no other test reads the environment meanwhile).

use pctvb::sync::atomic::{AtomicUsize, Ordering};
use pctvb::sync::Arc;
use pctvb::{thread, Config};

/// Two threads add to a counter; `lost` makes one of the updates a load and a store, so an
/// interleaving loses it.
fn adders(lost: bool) {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    let h = thread::spawn(move || {
        n2.fetch_add(1, Ordering::SeqCst);
    });
    if lost {
        let v = n.load(Ordering::SeqCst);
        n.store(v + 1, Ordering::SeqCst);
    } else {
        n.fetch_add(1, Ordering::SeqCst);
    }
    h.join().unwrap();
    assert_eq!(n.load(Ordering::SeqCst), 2, "an update was lost");
}

#[test]
fn one_resolved_worker_runs_each_execution_once_and_as_workers_1() {
    std::env::set_var("RUST_TEST_THREADS", "1");
    // More executions than a run needs to consider going parallel (256).
    let config = Config::new().ignore_env().seed(9).iterations(300).minimize_runs(0);

    // A passing run: the body runs once per execution, execution 0 included.
    let bodies = std::sync::atomic::AtomicU64::new(0);
    let counted = |lost: bool| {
        let bodies = &bodies;
        move || {
            bodies.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            adders(lost);
        }
    };
    let resolved = config.clone().run(counted(false));
    assert!(resolved.is_ok(), "{resolved:?}");
    assert_eq!(resolved.executions, 300);
    assert_eq!(bodies.swap(0, std::sync::atomic::Ordering::Relaxed), 300, "execution 0 ran twice");
    let explicit = config.clone().workers(1).run(counted(false));
    assert_eq!(bodies.swap(0, std::sync::atomic::Ordering::Relaxed), 300);
    assert_eq!(resolved.stats.distinct_schedules, explicit.stats.distinct_schedules);
    assert_eq!(resolved.stats.max_steps, explicit.stats.max_steps);

    // A failing run finds the same first failure as `workers(1)`, after execution 0 (seeds
    // whose first failure is execution 0 end there, before the worker count is asked).
    let mut later = 0;
    for seed in 1..=20 {
        let config = config.clone().seed(seed);
        let resolved = config.clone().run(counted(true));
        let ran = bodies.swap(0, std::sync::atomic::Ordering::Relaxed);
        let explicit = config.workers(1).run(counted(true));
        let ran_explicit = bodies.swap(0, std::sync::atomic::Ordering::Relaxed);
        let (r, e) = (resolved.failure().expect("found"), explicit.failure().expect("found"));
        assert_eq!((r.execution, &r.token), (e.execution, &e.token), "seed {seed}");
        // Each execution up to the failure once, and what the report of a failure runs.
        assert_eq!(ran, ran_explicit, "seed {seed}: the body ran more often");
        assert!(ran > r.execution, "seed {seed}");
        later += u32::from(r.execution > 0);
    }
    assert!(later >= 5, "only {later} of 20 seeds fail after execution 0");
}
