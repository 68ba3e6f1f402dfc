//! Spin-waits and yields (issue #14, item 2). A thread that yields (`yield_now`,
//! `hint::spin_loop`, or a `sleep` with no other thread's progress since its previous sleep or
//! yield) is not enabled until another thread makes progress; when only spinning threads are
//! left, they all run again. A first `sleep` leaves the thread enabled (a sleep is no synchronization). So:
//!
//! - correct retry loops that yield (a compare-exchange lock, a test-and-set lock with `swap`,
//!   `try_lock`, a single-producer single-consumer ring that waits on its indices) pass under
//!   every strategy, with a confidence target for the priority strategies, without running
//!   into `max_steps`;
//! - bugs behind a yield spin-wait are found at least as often as the printed bound says: the
//!   Wilson 99.9% upper limit of the measured per-execution rate is at least the bound;
//! - a real livelock (every runnable thread spins, nobody makes progress) fails as a livelock
//!   that names each spinning thread and where it yields;
//! - a lone thread polling a real clock with `yield_now` terminates;
//! - a test that sleeps to let another thread finish fails where that thread has not, under
//!   every strategy and at least at the printed bound, while a loop that sleeps until a flag
//!   is set passes.
//!
//! Every run has a fixed seed.

use std::time::{Duration, Instant};

use pctvb::cell::UnsafeCell;
use pctvb::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use pctvb::sync::{Arc, Mutex};
use pctvb::{hint, thread, Config, FailureKind, Report, StrategyKind};

#[path = "common/bounds.rs"]
mod bounds;
use bounds::assert_rate_reaches_bound;

const SEED: u64 = 0x5b1d;

fn config() -> Config {
    Config::new().ignore_env().seed(SEED)
}

/// Every strategy, with the parameters the tests use.
fn every_strategy() -> Vec<StrategyKind> {
    vec![
        StrategyKind::Random,
        StrategyKind::UniformWalk,
        StrategyKind::Pct { depth: 2 },
        StrategyKind::Pctvb { depth: 2, vars: 1 },
        StrategyKind::ThreadBound { threads: 2, preemptions: 1 },
        StrategyKind::Combined { depth: 2, vars: 1, threads: 2 },
        StrategyKind::systematic(1, 1, 2),
    ]
}

/// Runs `body` under `kind`: a confidence target of 0.9 for the strategies with a bound, 300
/// executions for the random ones, at most 2000 for the systematic search.
fn run_correct(kind: &StrategyKind, body: fn()) -> Report {
    let c = config().strategy(kind.clone());
    let c = match kind {
        StrategyKind::Random | StrategyKind::UniformWalk => c.iterations(300),
        StrategyKind::Systematic { .. } => c.iterations(2000),
        _ => c.confidence(0.9),
    };
    c.run(body)
}

fn assert_passes_everywhere(name: &str, body: fn()) {
    for kind in every_strategy() {
        let report = run_correct(&kind, body);
        if let Some(f) = report.failure() {
            panic!("{name} under {kind:?} failed:\n{f}");
        }
        report.assert_ok();
        assert!(report.executions >= 1, "{name} under {kind:?}");
        // A spinning thread waits for the others: no execution burns steps in its loop.
        assert!(report.stats.max_steps < 500, "{name} {kind:?}: {}", report.stats.max_steps);
    }
}

/// Two threads increment a counter (a load and a store) under a compare-exchange spin lock.
fn cas_lock() {
    let lock = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let (lock, count) = (lock.clone(), count.clone());
            thread::spawn(move || {
                while lock.compare_exchange(false, true, Acquire, Relaxed).is_err() {
                    thread::yield_now();
                }
                let v = count.load(Relaxed);
                count.store(v + 1, Relaxed);
                lock.store(false, Release);
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(count.load(SeqCst), 2);
}

/// The same with a test-and-set lock: `swap(true)` on a held lock writes the same value.
fn swap_lock() {
    let lock = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let (lock, count) = (lock.clone(), count.clone());
            thread::spawn(move || {
                while lock.swap(true, Acquire) {
                    hint::spin_loop();
                }
                let v = count.load(Relaxed);
                count.store(v + 1, Relaxed);
                lock.store(false, Release);
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(count.load(SeqCst), 2);
}

/// Three threads (the test body among them) take a mutex with `try_lock` and a yield; the
/// critical section has a scheduling point (an atomic increment), so `try_lock` can fail.
fn try_lock_loop() {
    let m = Arc::new(Mutex::new(0));
    let inside = Arc::new(AtomicUsize::new(0));
    let add = |m: &Mutex<i32>, inside: &AtomicUsize| loop {
        match m.try_lock() {
            Ok(mut g) => {
                inside.fetch_add(1, Relaxed);
                *g += 1;
                break;
            }
            Err(_) => thread::yield_now(),
        }
    };
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let (m, inside) = (m.clone(), inside.clone());
            thread::spawn(move || add(&m, &inside))
        })
        .collect();
    add(&m, &inside);
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*m.lock().unwrap(), 3);
}

/// A single-producer single-consumer ring of two slots (concurrent-queue's spsc shape): the
/// producer waits while it is full, the consumer while it is empty.
fn spsc_ring() {
    struct Ring {
        // One cell per slot: the race check works per cell, and the two threads touch
        // different slots at once.
        slots: [UnsafeCell<usize>; 2],
        head: AtomicUsize,
        tail: AtomicUsize,
    }
    let ring = Arc::new(Ring {
        slots: [UnsafeCell::new(0), UnsafeCell::new(0)],
        head: AtomicUsize::new(0),
        tail: AtomicUsize::new(0),
    });
    const ITEMS: usize = 4;
    let r = ring.clone();
    let producer = thread::spawn(move || {
        for i in 0..ITEMS {
            let tail = r.tail.load(Relaxed);
            while tail - r.head.load(Acquire) == 2 {
                hint::spin_loop();
            }
            // SAFETY: the slot is free (the consumer has moved past it) and only we write it.
            r.slots[tail % 2].with_mut(|p| unsafe { *p = i + 1 });
            r.tail.store(tail + 1, Release);
        }
    });
    let r = ring.clone();
    let consumer = thread::spawn(move || {
        for i in 0..ITEMS {
            let head = r.head.load(Relaxed);
            while r.tail.load(Acquire) == head {
                thread::yield_now();
            }
            // SAFETY: the producer published this slot and does not write it until we move on.
            let v = r.slots[head % 2].with(|p| unsafe { *p });
            assert_eq!(v, i + 1);
            r.head.store(head + 1, Release);
        }
    });
    producer.join().unwrap();
    consumer.join().unwrap();
}

#[test]
fn a_compare_exchange_spin_lock_with_yield_passes_under_every_strategy() {
    assert_passes_everywhere("cas lock", cas_lock);
}

#[test]
fn a_swap_test_and_set_lock_with_spin_loop_passes_under_every_strategy() {
    assert_passes_everywhere("swap lock", swap_lock);
}

#[test]
fn a_try_lock_retry_loop_passes_under_every_strategy() {
    assert_passes_everywhere("try_lock loop", try_lock_loop);
}

#[test]
fn an_spsc_ring_waiting_on_its_indices_passes_under_every_strategy() {
    assert_passes_everywhere("spsc ring", spsc_ring);
}

/// Code written against std: `#[pctvb::instrument]` rewrites `std::hint::spin_loop` to
/// `pctvb::hint::spin_loop`, a yield, so the test-and-set loop lets the holder run.
#[pctvb::instrument(force)]
mod std_code {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::thread;

    pub fn spin_lock() {
        let lock = Arc::new(AtomicBool::new(false));
        let count = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let (lock, count) = (lock.clone(), count.clone());
                thread::spawn(move || {
                    while lock.swap(true, Ordering::Acquire) {
                        std::hint::spin_loop();
                    }
                    let v = count.load(Ordering::Relaxed);
                    count.store(v + 1, Ordering::Relaxed);
                    lock.store(false, Ordering::Release);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(count.load(Ordering::SeqCst), 2);
    }
}

#[test]
fn std_hint_spin_loop_in_instrumented_code_is_a_yield() {
    assert_passes_everywhere("instrumented spin lock", std_code::spin_lock);
}

/// Two threads that yield many times without waiting for anything: yields that are not waits
/// cost a few scheduling points each and are never taken for a livelock.
#[test]
fn threads_that_only_yield_are_not_a_livelock() {
    for kind in [StrategyKind::Random, StrategyKind::Pct { depth: 2 }] {
        let report = config().strategy(kind.clone()).iterations(20).run(|| {
            let h = thread::spawn(|| {
                for _ in 0..3000 {
                    thread::yield_now();
                }
            });
            for _ in 0..3000 {
                thread::yield_now();
            }
            h.join().unwrap();
        });
        report.assert_ok();
    }
}

/// A depth-1 bug behind a yield spin-wait: the checker waits (yielding) for a flag, then reads
/// data a third thread writes without synchronization. One ordering constraint (the check
/// before the write) exposes it: depth 1. n = 4 with the test body.
fn depth_1_behind_a_spin_wait() {
    let flag = Arc::new(AtomicBool::new(false));
    let data = Arc::new(AtomicUsize::new(0));
    let (f, d) = (flag.clone(), data.clone());
    let checker = thread::spawn(move || {
        while !f.load(Acquire) {
            thread::yield_now();
        }
        assert_eq!(d.load(Acquire), 1, "the data was not written when the flag was set");
    });
    let setter = thread::spawn(move || flag.store(true, Release));
    let writer = thread::spawn(move || data.store(1, Release));
    for h in [checker, setter, writer] {
        h.join().unwrap();
    }
}

/// A depth-2 bug behind a yield spin-wait: the writer waits (yielding) for a flag, then writes
/// an intermediate value and the final one; the checker must read between the two writes (two
/// ordering constraints: depth 2). n = 4 with the test body.
fn depth_2_behind_a_spin_wait() {
    let flag = Arc::new(AtomicBool::new(false));
    let data = Arc::new(AtomicUsize::new(0));
    let (f, d) = (flag.clone(), data.clone());
    let writer = thread::spawn(move || {
        while !f.load(Acquire) {
            thread::yield_now();
        }
        d.store(1, Release);
        d.store(2, Release);
    });
    let setter = thread::spawn(move || flag.store(true, Release));
    let checker = thread::spawn(move || {
        assert_ne!(data.load(Acquire), 1, "saw the intermediate value");
    });
    for h in [writer, setter, checker] {
        h.join().unwrap();
    }
}

/// Runs `executions` executions of `body` under `kind` counting failures, and checks that the
/// bound the run printed is at most the Wilson 99.9% upper limit of the measured rate.
/// Returns (failures, executions, bound).
fn check_bound(kind: StrategyKind, executions: u64, body: fn()) -> (u64, u64, f64) {
    let report = config()
        .strategy(kind.clone())
        .iterations(executions)
        .stop_at_first_failure(false)
        .run(body);
    assert_eq!(report.executions, executions, "{kind:?}");
    if let Some(f) = report.failure() {
        assert_eq!(f.kind, FailureKind::Panic, "{kind:?}: only the bug fails:\n{f}");
    }
    let p = assert_rate_reaches_bound(&kind, &report);
    (report.failures, report.executions, p)
}

/// Measured with this seed: PCT and PCTVB d=1 1028/2000 = 0.514 (bound 1/4); thread bounding
/// and the combined strategy with t=3, c=0 (the checker, the setter and the writer are
/// ordered) 1563/3000 = 0.521 (bound 1/6). Before spinning threads waited for progress (they
/// were demoted after 100 yields), PCT found it at 0.081.
#[test]
fn a_depth_1_bug_behind_a_spin_wait_is_found_at_least_at_the_bound() {
    for kind in [StrategyKind::Pct { depth: 1 }, StrategyKind::Pctvb { depth: 1, vars: 1 }] {
        let (_, _, p) = check_bound(kind, 2000, depth_1_behind_a_spin_wait);
        assert!((p - 0.25).abs() < 1e-9, "1/n with n = 4: {p}");
    }
    for kind in [
        StrategyKind::ThreadBound { threads: 3, preemptions: 0 },
        StrategyKind::Combined { depth: 1, vars: 1, threads: 3 },
    ] {
        check_bound(kind, 3000, depth_1_behind_a_spin_wait);
    }
}

/// Measured with this seed: PCT d=2 67/4000 = 0.0168 (bound 1/112), PCTVB d=2 v=1 333/4000
/// = 0.083 (bound 1/48); thread bounding t=3 c=1 23/6000 = 0.0038 (bound 1/672), combined
/// d=2 v=1 t=3 103/6000 = 0.017 (bound 1/288). Before, PCT found it in 0 of 4000 executions.
#[test]
fn a_depth_2_bug_behind_a_spin_wait_is_found_at_least_at_the_bound() {
    for kind in [StrategyKind::Pct { depth: 2 }, StrategyKind::Pctvb { depth: 2, vars: 1 }] {
        let (failures, _, _) = check_bound(kind, 4000, depth_2_behind_a_spin_wait);
        assert!(failures > 0);
    }
    for kind in [
        StrategyKind::ThreadBound { threads: 3, preemptions: 1 },
        StrategyKind::Combined { depth: 2, vars: 1, threads: 3 },
    ] {
        let (failures, _, _) = check_bound(kind, 6000, depth_2_behind_a_spin_wait);
        assert!(failures > 0);
    }
}

/// End to end: a run with a 0.99 confidence target for depth 2 finds the depth-2 bug behind
/// the spin-wait instead of printing that no such bug was missed (before, 99 of 99 such runs
/// passed). Five seeds, each fixed.
#[test]
fn a_confidence_run_finds_the_depth_2_bug_behind_a_spin_wait() {
    for kind in [StrategyKind::Pct { depth: 2 }, StrategyKind::Pctvb { depth: 2, vars: 1 }] {
        for seed in 1..=5 {
            let report = config()
                .seed(seed)
                .strategy(kind.clone())
                .confidence(0.99)
                .run(depth_2_behind_a_spin_wait);
            let f = report.failure().unwrap_or_else(|| {
                panic!("{kind:?} seed {seed} missed the bug: {}", report.summary())
            });
            assert!(f.message.contains("saw the intermediate value"), "{f}");
        }
    }
}

/// The systematic search, whose happens-before pruning now also tells states apart by which
/// threads are spinning, still finds both bugs: the depth-1 one with no preemption, the
/// depth-2 one with one.
#[test]
fn the_systematic_search_finds_the_bugs_behind_spin_waits() {
    for (body, preemptions) in
        [(depth_1_behind_a_spin_wait as fn(), 0), (depth_2_behind_a_spin_wait as fn(), 1)]
    {
        let report = config().strategy(StrategyKind::systematic(preemptions, 1, 3)).run(body);
        let f = report.failure().unwrap_or_else(|| panic!("c={preemptions}: missed"));
        assert_eq!(f.kind, FailureKind::Panic, "{f}");
    }
}

// ---------------------------------------------------------------------------------------------
// Sleeps. A sleep is no synchronization: the sleeping thread stays enabled, so a test that
// sleeps "to let the other thread finish" fails in the schedules where it has not; a second
// sleep (or yield) with no progress since the first spins as a yield does, so a polling loop
// never livelocks.

/// The test body spawns a writer and sleeps to let it write, then checks the write: a bug
/// (the writer may not have run). One ordering constraint (the check before the write): depth
/// 1, no preemption, t = 2 (the body and the writer). n = 2.
fn sleep_as_synchronization() {
    let data = Arc::new(AtomicUsize::new(0));
    let d = data.clone();
    let writer = thread::spawn(move || d.store(1, Release));
    thread::sleep(Duration::from_millis(10));
    assert_eq!(data.load(Acquire), 1, "the writer had not run when the sleep ended");
    writer.join().unwrap();
}

/// A correct wait: the body sleeps in a loop until the writer's flag is set.
fn sleep_polling_loop() {
    let flag = Arc::new(AtomicBool::new(false));
    let data = Arc::new(AtomicUsize::new(0));
    let (f, d) = (flag.clone(), data.clone());
    let writer = thread::spawn(move || {
        d.store(1, Relaxed);
        f.store(true, Release);
    });
    while !flag.load(Acquire) {
        thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(data.load(Relaxed), 1);
    writer.join().unwrap();
}

/// The body sleeps twice with nothing in between, then checks the writer's store: the first
/// sleep may go on at once, the second (nothing changed since the first) waits until the
/// writer has made progress, so the check always sees the write.
fn two_sleeps_in_a_row() {
    let data = Arc::new(AtomicUsize::new(0));
    let d = data.clone();
    let writer = thread::spawn(move || d.store(1, Release));
    thread::sleep(Duration::from_millis(1));
    thread::sleep(Duration::from_millis(1));
    assert_eq!(data.load(Acquire), 1, "the second sleep did not wait for progress");
    writer.join().unwrap();
}

#[test]
fn a_sleep_polling_loop_passes_under_every_strategy() {
    assert_passes_everywhere("sleep polling loop", sleep_polling_loop);
}

/// A correct wait that reads its flag under a mutex, then sleeps: each round locks and unlocks
/// the mutex, which changes shared state. That the polling thread's own changes counted as
/// progress kept its sleeps from ever spinning, so under a priority strategy it ran its loop
/// until `max_steps` (and failed with a message asking for a yield the loop already had).
fn locked_sleep_polling_loop() {
    let flag = Arc::new(Mutex::new(false));
    let f = flag.clone();
    let writer = thread::spawn(move || *f.lock().unwrap() = true);
    loop {
        if *flag.lock().unwrap() {
            break;
        }
        thread::sleep(Duration::from_millis(1));
    }
    writer.join().unwrap();
}

#[test]
fn a_sleep_polling_loop_that_locks_to_read_its_flag_passes_under_every_strategy() {
    assert_passes_everywhere("locked sleep polling loop", locked_sleep_polling_loop);
}

/// The same loop waiting for a flag nobody sets (the writer sets another one): a livelock,
/// named as one (the loop sleeps and changes nothing another thread made), not a runaway
/// loop told to add a yield.
fn locked_sleep_polling_forever() {
    let flag = Arc::new(Mutex::new(false));
    let other = Arc::new(Mutex::new(false));
    let o = other.clone();
    let writer = thread::spawn(move || *o.lock().unwrap() = true);
    while !*flag.lock().unwrap() {
        thread::sleep(Duration::from_millis(1));
    }
    writer.join().unwrap();
}

#[test]
fn a_sleep_polling_loop_that_locks_and_waits_forever_is_a_livelock() {
    for kind in every_strategy() {
        let report = config()
            .strategy(kind.clone())
            .iterations(5)
            .max_steps(5_000)
            .run(locked_sleep_polling_forever);
        let f = report.failure().unwrap_or_else(|| panic!("{kind:?}: the livelock is missed"));
        assert_eq!(f.kind, FailureKind::Livelock, "{kind:?}:\n{f}");
        assert!(f.message.contains("thread 0 (main) spins at tests/spin_waits.rs:"), "{f}");
    }
}

#[test]
fn a_second_sleep_with_nothing_changed_waits_for_progress_under_every_strategy() {
    assert_passes_everywhere("two sleeps in a row", two_sleeps_in_a_row);
}

/// Before sleeps stayed enabled, no strategy could find this bug (the sleeper spun until the
/// writer had written), while PCT printed a bound of 1/2 for its class.
#[test]
fn a_sleep_used_as_synchronization_is_found_under_every_strategy() {
    for kind in every_strategy() {
        let report = config().strategy(kind.clone()).iterations(200).run(sleep_as_synchronization);
        let f = report.failure().unwrap_or_else(|| panic!("{kind:?} missed the bug"));
        assert!(f.message.contains("the writer had not run"), "{kind:?}: {f}");
    }
}

/// Measured with this seed: PCT and PCTVB d=1 (bound 1/2) about half the executions, thread
/// bounding and the combined strategy with t=2, c=0 the same.
#[test]
fn a_depth_1_bug_behind_a_sleep_is_found_at_least_at_the_bound() {
    for kind in [
        StrategyKind::Pct { depth: 1 },
        StrategyKind::Pctvb { depth: 1, vars: 1 },
        StrategyKind::ThreadBound { threads: 2, preemptions: 0 },
        StrategyKind::Combined { depth: 1, vars: 1, threads: 2 },
    ] {
        let (failures, _, _) = check_bound(kind, 2000, sleep_as_synchronization);
        assert!(failures > 0);
    }
}

/// Two threads each spin until the other sets a flag it never sets.
fn mutual_spin() {
    let a = Arc::new(AtomicBool::new(false));
    let b = Arc::new(AtomicBool::new(false));
    let (a1, b1) = (a.clone(), b.clone());
    let first = thread::Builder::new()
        .name("first".into())
        .spawn(move || {
            while !b1.load(Acquire) {
                thread::yield_now();
            }
            a1.store(true, Release);
        })
        .unwrap();
    let second = thread::spawn(move || {
        while !a.load(Acquire) {
            hint::spin_loop();
        }
        b.store(true, Release);
    });
    first.join().unwrap();
    second.join().unwrap();
}

#[test]
fn a_real_livelock_is_reported_as_one_naming_each_spinning_thread() {
    for kind in [
        StrategyKind::Random,
        StrategyKind::UniformWalk,
        StrategyKind::Pct { depth: 2 },
        StrategyKind::Combined { depth: 2, vars: 1, threads: 2 },
    ] {
        let report =
            config().strategy(kind.clone()).iterations(10).max_steps(20_000).run(mutual_spin);
        let f = report.failure().unwrap_or_else(|| panic!("{kind:?}: the livelock is missed"));
        assert_eq!(f.kind, FailureKind::Livelock, "{kind:?}:\n{f}");
        let m = &f.message;
        assert!(m.starts_with("livelock: every thread that can run spins"), "{m}");
        assert!(m.contains("thread 1 'first' spins at tests/spin_waits.rs:"), "{m}");
        assert!(m.contains("thread 2 spins at tests/spin_waits.rs:"), "{m}");
        assert!(m.contains("thread 0 (main) waits to join thread 1 'first'"), "{m}");
    }
    // With the default max_steps too; and its replay line reproduces it.
    let report = config().iterations(1).run(mutual_spin);
    let f = report.failure().unwrap();
    assert_eq!(f.kind, FailureKind::Livelock);
    let replayed = config().replay(f.token.clone().unwrap()).run(mutual_spin);
    assert_eq!(replayed.failure().unwrap().kind, FailureKind::Livelock);
}

/// A thread that polls std's clock with `yield_now` while no other thread can run (the test
/// body waits to join it): each yield returns at once, and the loop ends when the time is up
/// (on Linux with glibc after 1,000 reads of the execution's virtual clock, elsewhere after
/// 1 ms of real time).
#[test]
fn a_yield_loop_on_real_time_terminates() {
    for kind in [
        StrategyKind::Random,
        StrategyKind::UniformWalk,
        StrategyKind::Pct { depth: 2 },
        StrategyKind::Combined { depth: 2, vars: 1, threads: 2 },
    ] {
        let report = config().strategy(kind.clone()).iterations(5).run(|| {
            let h = thread::spawn(|| {
                let start = Instant::now();
                while start.elapsed() < Duration::from_millis(1) {
                    thread::yield_now();
                }
            });
            h.join().unwrap();
        });
        if let Some(f) = report.failure() {
            panic!("{kind:?}:\n{f}");
        }
        report.assert_ok();
    }
}
