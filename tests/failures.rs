//! Failure detection of the runtime core: panics, deadlocks, runaways, replay.
//!
//! Every run here uses a fixed seed (and `ignore_env`, so a developer's `PCTVB_*` variables
//! cannot change the outcome); where a bug must be found, the seed was checked to find it well
//! within the budget, and the assertion is on the behaviour, not on the seed's particulars.

#[path = "common/programs.rs"]
mod programs;
#[path = "common/replays.rs"]
mod replays;

use pctvb::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use pctvb::sync::{Arc, Mutex, Once, OnceLock};
use pctvb::{thread, Config, Error, FailureKind};
use programs::lost_update;

fn config() -> Config {
    Config::new().ignore_env().seed(0x5eed)
}

#[test]
fn lost_update_is_found_and_its_token_replays_on_the_first_execution() {
    let report = config().name("failures::lost_update").iterations(1000).run(lost_update);
    let failure = report.failure().expect("lost update found within 1000 executions");
    assert_eq!(failure.kind, FailureKind::Panic);
    assert!(failure.message.contains("assertion `left == right` failed"), "{}", failure.message);
    assert!(report.executions <= 1000);
    let token = failure.token.clone().expect("a token");
    let command = failure.replay_command.clone().unwrap();
    assert!(command.starts_with(&format!("PCTVB_REPLAY={token} cargo test")), "{command}");
    assert!(failure.to_string().contains(&command));

    for _ in 0..3 {
        let replay = config().name("failures::lost_update").replay(token.clone()).run(lost_update);
        replays::assert_reproduces(&replay, failure);
    }
}

#[test]
fn same_seed_same_first_failure() {
    let a = config().iterations(1000).run(lost_update);
    let b = config().iterations(1000).run(lost_update);
    let (fa, fb) = (a.failure().unwrap(), b.failure().unwrap());
    assert_eq!(fa.execution, fb.execution);
    assert_eq!(fa.token, fb.token);
}

#[test]
fn lock_order_deadlock_names_both_mutexes() {
    let line_a = line!() + 2;
    let report = config().iterations(1000).run(|| {
        let a = Arc::new(Mutex::new(0));
        let b = Arc::new(Mutex::new(0));
        let (a2, b2) = (a.clone(), b.clone());
        let t = thread::spawn(move || {
            let _x = b2.lock().unwrap();
            let _y = a2.lock().unwrap();
        });
        {
            let _x = a.lock().unwrap();
            let _y = b.lock().unwrap();
        }
        t.join().unwrap();
    });
    let failure = report.failure().expect("deadlock found");
    assert_eq!(failure.kind, FailureKind::Deadlock);
    let m = &failure.message;
    assert!(m.contains("deadlock"), "{m}");
    let site_a = format!("Mutex@tests/failures.rs:{line_a}:");
    let site_b = format!("Mutex@tests/failures.rs:{}:", line_a + 1);
    assert!(m.contains(&site_a), "names the first mutex's creation site: {m}");
    assert!(m.contains(&site_b), "names the second mutex's creation site: {m}");
    assert!(m.contains("held by thread 1") && m.contains("held by thread 0 (main)"), "{m}");
}

#[test]
fn recursive_locking_is_a_deadlock_with_that_cause() {
    let report = config().iterations(1).run(|| {
        let m = Mutex::new(1);
        let _g = m.lock().unwrap();
        let _h = m.lock().unwrap();
    });
    let failure = report.failure().unwrap();
    assert_eq!(failure.kind, FailureKind::Deadlock);
    assert!(failure.message.contains("already holds"), "{}", failure.message);
}

/// A publisher sets its flag after the one-time value a waiter waits for (`Once::wait` with
/// `once`, else `OnceLock::wait`): the waiter may run between the two.
fn flag_after_the_one_time_value(once: bool) {
    let (done, cell) = (Arc::new(Once::new()), Arc::new(OnceLock::new()));
    let ready = Arc::new(AtomicBool::new(false));
    let (d, c, r) = (done.clone(), cell.clone(), ready.clone());
    let publisher = thread::spawn(move || {
        if once {
            d.call_once(|| ());
        } else {
            c.set(7u32).unwrap();
        }
        r.store(true, Ordering::SeqCst);
    });
    if once {
        done.wait();
    } else {
        assert_eq!(*cell.wait(), 7);
    }
    assert!(ready.load(Ordering::SeqCst), "ready once initialized");
    publisher.join().unwrap();
}

#[test]
fn a_bug_behind_a_wait_for_a_one_time_value_is_found() {
    for (once, named) in [(true, "once Once@failures.rs:"), (false, "once OnceLock@failures.rs:")] {
        // Fixed seed: the waiter runs between the initialization and the flag in some
        // execution of the thousand.
        let report = config().iterations(1000).run(move || flag_after_the_one_time_value(once));
        let failure = report.failure().expect("the waiter reads the flag too early");
        assert_eq!(failure.kind, FailureKind::Panic);
        assert!(failure.message.contains("ready once initialized"), "{failure}");
        assert!(failure.schedule.iter().any(|s| s.operation.starts_with(named)), "{failure}");
    }
}

#[test]
fn a_wait_no_thread_ends_is_a_deadlock_naming_the_one_time_value() {
    let line = line!() + 2;
    let report = config().iterations(10).run(|| {
        let cell = Arc::new(OnceLock::<u32>::new());
        let once = Once::new();
        let c = cell.clone();
        let t = thread::spawn(move || *c.wait());
        once.wait(); // nobody initializes either
        t.join().unwrap();
    });
    let failure = report.failure().expect("both waits wait for good");
    assert_eq!(failure.kind, FailureKind::Deadlock);
    let m = &failure.message;
    let lock = format!("thread 1 waits for OnceLock@tests/failures.rs:{line}:");
    let once = format!("thread 0 (main) waits for Once@tests/failures.rs:{}:", line + 1);
    assert!(m.contains(&lock) && m.contains(&once), "{m}");
    assert_eq!(m.matches("to be initialized (`wait`), and no thread initializes it").count(), 2);

    // A wait inside the initializer it waits for: as std's, it never returns.
    let report = config().iterations(10).run(|| {
        let once = Once::new();
        once.call_once(|| once.wait());
    });
    let failure = report.failure().expect("the initializer waits for itself");
    assert_eq!(failure.kind, FailureKind::Deadlock);
    assert!(failure.message.contains("to be initialized by thread 0 (main)"), "{failure}");
}

/// The writer downgrades its lock and assumes it still reads alone: a reader waiting for the
/// lock may read beside it.
fn alone_after_downgrade() {
    let lock = Arc::new(pctvb::sync::RwLock::new(0));
    let readers = Arc::new(AtomicUsize::new(0));
    let (l, n) = (lock.clone(), readers.clone());
    let reader = thread::spawn(move || {
        let _g = l.read().unwrap();
        n.fetch_add(1, Ordering::SeqCst);
    });
    let mut w = lock.write().unwrap();
    *w = 1;
    let r = pctvb::sync::RwLockWriteGuard::downgrade(w);
    let before = readers.load(Ordering::SeqCst);
    assert_eq!(readers.load(Ordering::SeqCst), before, "no reader while I hold the lock");
    drop(r);
    reader.join().unwrap();
}

#[test]
fn a_bug_behind_a_downgrade_is_found() {
    // Fixed seed: the reader runs between the two loads in some execution of the thousand.
    let report = config().iterations(1000).run(alone_after_downgrade);
    let failure = report.failure().expect("the reader reads beside the downgraded guard");
    assert_eq!(failure.kind, FailureKind::Panic);
    assert!(failure.message.contains("no reader while I hold the lock"), "{failure}");
    let ops: Vec<&str> = failure.schedule.iter().map(|s| s.operation.as_str()).collect();
    assert!(ops.iter().any(|op| op.starts_with("downgrade RwLock@failures.rs:")), "{ops:?}");
}

#[test]
fn a_downgraded_guard_still_keeps_writers_out_a_deadlock_if_they_are_waited_for() {
    let line = line!() + 2;
    let report = config().iterations(100).run(|| {
        let lock = Arc::new(pctvb::sync::RwLock::new(0));
        let l = lock.clone();
        let writer = thread::spawn(move || *l.write().unwrap() += 1);
        let w = lock.write().unwrap();
        let _r = pctvb::sync::RwLockWriteGuard::downgrade(w);
        writer.join().unwrap(); // the writer waits for the read lock this thread holds
    });
    let failure = report.failure().expect("the join waits for a writer that waits for it");
    assert_eq!(failure.kind, FailureKind::Deadlock);
    let m = &failure.message;
    let waits = format!("thread 1 waits to write-lock RwLock@tests/failures.rs:{line}:");
    assert!(m.contains(&waits), "{m}");
    assert!(m.contains("thread 0 (main) waits to join thread 1"), "{m}");

    // And its own write lock: it holds the lock for reading.
    let report = config().iterations(1).run(|| {
        let lock = pctvb::sync::RwLock::new(0);
        let r = pctvb::sync::RwLockWriteGuard::downgrade(lock.write().unwrap());
        let _w = lock.write().unwrap();
        drop(r);
    });
    let failure = report.failure().expect("a write lock of its own read lock");
    assert_eq!(failure.kind, FailureKind::Deadlock);
    assert!(failure.message.contains("RwLock@tests/failures.rs:"), "{failure}");
}

/// A bump allocator that checks for room, then claims with `fetch_ptr_add`: two threads may
/// both see the last slot free and both claim, one past the end.
fn bump_past_the_end() {
    use pctvb::sync::atomic::AtomicPtr;
    static SLOTS: [u64; 2] = [0; 2];
    let slots = SLOTS.as_ptr() as *mut u64;
    let end = slots.wrapping_add(2) as usize;
    let cursor = Arc::new(AtomicPtr::new(slots.wrapping_add(1)));
    let claim = move |cursor: &AtomicPtr<u64>| {
        if (cursor.load(Ordering::SeqCst) as usize) < end {
            let slot = cursor.fetch_ptr_add(1, Ordering::SeqCst) as usize;
            assert!(slot < end, "claimed a slot past the end");
        }
    };
    let c = cursor.clone();
    let t = thread::spawn(move || claim(&c));
    claim(&cursor);
    t.join().unwrap();
}

#[test]
fn a_bug_behind_a_pointer_fetch_add_is_found() {
    // Fixed seed: both threads check before either claims in some execution of the thousand.
    let report = config().iterations(1000).run(bump_past_the_end);
    let failure = report.failure().expect("two claims of the last slot");
    assert_eq!(failure.kind, FailureKind::Panic);
    assert!(failure.message.contains("claimed a slot past the end"), "{failure}");
    let ops: Vec<&str> = failure.schedule.iter().map(|s| s.operation.as_str()).collect();
    assert!(ops.iter().any(|op| op.starts_with("rmw Atomic@failures.rs:")), "{ops:?}");
}

/// A reader takes the lock again while a writer may be waiting for it.
fn recursive_read() {
    let lock = Arc::new(pctvb::sync::RwLock::new(0));
    let l = lock.clone();
    let writer = thread::spawn(move || *l.write().unwrap() += 1);
    let first = lock.read().unwrap();
    let second = lock.read().unwrap();
    assert_eq!(*first + *second, 2 * *first);
    drop((first, second));
    writer.join().unwrap();
}

#[test]
fn a_recursive_read_while_a_writer_waits_is_a_deadlock() {
    // std's RwLock may queue a new reader behind a waiting writer (it does on Linux), so the
    // second read lock waits for the writer, which waits for the first: found in the
    // executions where the writer reaches its lock between the two reads (fixed seed).
    let report = config().iterations(1000).run(recursive_read);
    let failure = report.failure().expect("the writer waits between the reads in some execution");
    assert_eq!(failure.kind, FailureKind::Deadlock);
    assert!(
        failure.message.contains("read-locked RwLock@tests/failures.rs:"),
        "{}",
        failure.message
    );
    assert!(failure.message.contains("while thread 1 waits to write it"), "{}", failure.message);
    // Without a waiting writer, two read locks of one thread are fine, and `try_read` never
    // waits: in a single thread both pass.
    let report = config().iterations(10).run(|| {
        let lock = pctvb::sync::RwLock::new(1);
        let a = lock.read().unwrap();
        let b = lock.read().unwrap();
        let c = lock.try_read().unwrap();
        assert_eq!(*a + *b + *c, 3);
    });
    assert!(report.is_ok(), "{}", report.failure().unwrap());
}

#[test]
fn a_panicking_spawned_thread_fails_the_execution_and_is_named() {
    let report = config().iterations(10).run(|| {
        let h = thread::Builder::new()
            .name("worker".into())
            .spawn(|| panic!("worker gave up"))
            .unwrap();
        let _ = h.join();
    });
    let failure = report.failure().unwrap();
    assert_eq!(failure.kind, FailureKind::Panic);
    assert_eq!(failure.message, "worker gave up");
    let thread = failure.thread.as_ref().unwrap();
    assert_eq!(thread.name.as_deref(), Some("worker"));
    assert!(failure.to_string().starts_with("thread 1 'worker' panicked at tests/failures.rs:"));
}

#[test]
fn a_panic_while_holding_a_lock_poisons_it() {
    let report = config().iterations(100).run(|| {
        let m = Arc::new(Mutex::new(5));
        let m2 = m.clone();
        let h = thread::spawn(move || {
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _g = m2.lock().unwrap();
                panic!("inside the critical section");
            }));
            assert!(caught.is_err());
        });
        h.join().unwrap();
        assert!(m.is_poisoned());
        let err = m.lock().expect_err("the lock is poisoned");
        assert_eq!(*err.into_inner(), 5);
    });
    assert!(report.is_ok(), "{:?}", report.failure());
}

#[test]
fn a_spin_loop_without_yield_hits_max_steps_with_advice() {
    let report = config().iterations(1).max_steps(5_000).run(|| {
        let flag = AtomicBool::new(false);
        while !flag.load(Ordering::SeqCst) {}
    });
    let failure = report.failure().unwrap();
    assert_eq!(failure.kind, FailureKind::MaxSteps);
    assert!(failure.message.contains("max_steps = 5000"), "{}", failure.message);
    assert!(failure.message.contains("yield_now"), "{}", failure.message);
}

#[test]
fn a_thread_left_running_after_the_body_returned_is_named_when_steps_run_out() {
    // A detached worker that never ends: under std it would die with the process; pctvb runs
    // every thread to its end, so the execution runs out of steps, and the report says the
    // body had returned, which thread it left running and where that one was spawned.
    let report = config().iterations(1).max_steps(3_000).run(|| {
        let ticks = Arc::new(AtomicUsize::new(0));
        let t = ticks.clone();
        let _detached = thread::spawn(move || loop {
            t.fetch_add(1, Ordering::SeqCst);
        });
    });
    let failure = report.failure().expect("the worker never ends");
    assert_eq!(failure.kind, FailureKind::MaxSteps);
    assert!(failure.message.contains("after the test body had returned"), "{}", failure.message);
    assert!(
        failure.message.contains("leaving thread 1 (spawned at tests/failures.rs:"),
        "{}",
        failure.message
    );
    assert!(!failure.message.contains("add a yield"), "{}", failure.message);
    // One that spins without progress is a livelock, with the same advice.
    let report = config().iterations(1).max_steps(3_000).run(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let _detached = thread::spawn(move || {
            while !f.load(Ordering::SeqCst) {
                thread::yield_now();
            }
        });
    });
    let failure = report.failure().expect("the spinner never ends");
    assert_eq!(failure.kind, FailureKind::Livelock);
    assert!(failure.message.contains("The test body had returned"), "{}", failure.message);
    // So is a ticker that sleeps between its own changes: no other thread's change ends its
    // loop (its own do not count).
    let report = config().iterations(1).max_steps(3_000).run(|| {
        let ticks = Arc::new(AtomicUsize::new(0));
        let t = ticks.clone();
        let _detached = thread::spawn(move || loop {
            t.fetch_add(1, Ordering::SeqCst);
            thread::sleep(std::time::Duration::from_millis(10));
        });
    });
    let failure = report.failure().expect("the ticker never ends");
    assert_eq!(failure.kind, FailureKind::Livelock, "{failure}");
    assert!(failure.message.contains("thread 1 spins at tests/failures.rs:"), "{failure}");
    assert!(failure.message.contains("The test body had returned"), "{failure}");
}

#[test]
fn a_spin_loop_with_yield_terminates() {
    let report = config().iterations(300).run(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f2 = flag.clone();
        let h = thread::spawn(move || f2.store(true, Ordering::SeqCst));
        while !flag.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        h.join().unwrap();
    });
    assert!(report.is_ok(), "{:?}", report.failure());
    assert_eq!(report.executions, 300);
}

#[test]
fn too_many_threads_is_a_clear_error() {
    let report = config().iterations(1).max_threads(8).run(|| {
        let hs: Vec<_> = (0..10).map(|_| thread::spawn(|| {})).collect();
        for h in hs {
            h.join().unwrap();
        }
    });
    let failure = report.failure().unwrap();
    assert_eq!(failure.kind, FailureKind::TooManyThreads);
    assert!(failure.message.contains("max_threads = 8"), "{}", failure.message);
    // Eight threads ran, the body's included: the ninth is the one refused.
    assert!(failure.message.contains("the test body's own thread included"), "{failure}");
    assert!(failure.message.contains("would make them 9"), "{failure}");
}

#[test]
fn six_hundred_threads_run() {
    let report = config().iterations(3).run(|| {
        let total = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..600)
            .map(|_| {
                let total = total.clone();
                thread::spawn(move || {
                    total.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(total.load(Ordering::SeqCst), 600);
    });
    assert!(report.is_ok(), "{:?}", report.failure());
    assert_eq!(report.stats.max_threads, 601);
}

#[test]
fn a_tampered_token_is_rejected_with_a_reason() {
    let report = config().name("failures::lost_update").iterations(1000).run(lost_update);
    let token = report.failure().unwrap().token.clone().unwrap();
    let mut chars: Vec<char> = token.chars().collect();
    let last = chars.len() - 3;
    chars[last] = if chars[last] == 'A' { 'B' } else { 'A' };
    let tampered: String = chars.into_iter().collect();
    let replay = config().replay(tampered).run(lost_update);
    assert!(replay.failure().is_none(), "a bad token is not a bug");
    let error = replay.error().unwrap();
    assert!(
        matches!(error, Error::Token { origin, .. } if origin == "Config::replay"),
        "{error:?}"
    );
    assert!(error.message().contains("checksum"), "{error}");
    assert_eq!(replay.executions, 0);

    let garbage = config().replay("not-a-token").run(lost_update);
    let error = garbage.error().unwrap();
    assert!(matches!(error, Error::Token { .. }), "{error:?}");
    assert!(error.message().contains("invalid replay token in Config::replay"), "{error}");
    // Said once how to get a good token, then the way out.
    assert_eq!(error.message().matches("again").count(), 2, "{error}");
    assert!(error.message().ends_with("or drop Config::replay to search again"), "{error}");
    let error = config().replay("not-a-token").try_run(lost_update).unwrap_err();
    assert!(matches!(error, Error::Token { .. }), "{error:?}");
}

#[test]
fn replaying_against_a_changed_body_reports_divergence() {
    let report = config().iterations(1000).run(lost_update);
    let token = report.failure().unwrap().token.clone().unwrap();
    let changed = || {
        let extra = AtomicUsize::new(0);
        extra.fetch_add(1, Ordering::SeqCst);
        lost_update();
    };
    let replay = config().replay(token).run(changed);
    assert!(replay.failure().is_none(), "a divergence is not a bug: the token no longer applies");
    let error = replay.error().unwrap();
    assert!(matches!(error, Error::ReplayDiverged { .. }), "{error:?}");
    assert!(error.message().starts_with("replay diverged"), "{error}");
    assert!(error.message().contains("without PCTVB_REPLAY"), "{error}");
}

#[test]
fn primitives_outside_an_execution_behave_like_std() {
    // No longer a panic: outside executions the primitives are std's (more in
    // tests/outside_execution.rs).
    let m = Mutex::new(0);
    *m.lock().unwrap() += 1;
    assert_eq!(thread::spawn(|| 2).join().unwrap(), 2);
    assert_eq!(*m.lock().unwrap(), 1);
}

#[test]
fn bad_environment_values_are_reported_not_ignored() {
    // Exercised through the parser the runner uses; setting real env vars would race with the
    // other tests of this binary.
    let report = Config::new().ignore_env().replay("pctvb9-AAAA").run(|| {});
    let error = report.error().unwrap();
    assert!(matches!(error, Error::Token { .. }), "{error:?}");
    assert!(error.message().contains("version"), "{error}");
}

/// A run started inside an execution ends the outer run as one that could not test, whether
/// the body looks at the inner report or not: ignored, the inner run would pass without
/// testing anything; asserted, its panic was reported as a bug found (and saved as a
/// regression).
#[test]
fn a_run_inside_a_run_is_an_unsupported_use_not_a_bug() {
    let ignored = config().iterations(3).run(|| {
        let _ = config().iterations(1).run(|| {});
    });
    let asserted = config().iterations(3).run(|| {
        config().iterations(1).run(|| {}).assert_ok();
    });
    for (what, report) in [("ignored", ignored), ("asserted", asserted)] {
        assert!(report.failure().is_none(), "{what}: {:?}", report.failure());
        let error = report.error().unwrap_or_else(|| panic!("{what}: no error"));
        assert!(matches!(error, Error::Unsupported { .. }), "{what}: {error:?}");
        assert!(error.message().contains("nested runs are not supported"), "{what}: {error}");
        assert!(error.message().contains("tests/failures.rs"), "{what}: {error}");
        assert_eq!(report.executions, 1, "{what}: the run stops at its first execution");
    }
}

#[test]
fn a_strategy_that_cannot_continue_is_an_error_not_a_bug() {
    // Depends on state pctvb does not control (a real atomic counting executions): the
    // systematic search's replay of a recorded prefix runs another thread than recorded.
    static EXECUTIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let kind = pctvb::StrategyKind::systematic(2, 2, 2);
    let report = config().strategy(kind).iterations(200).run(|| {
        let odd = EXECUTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2 == 1;
        let m = Arc::new(Mutex::new(0));
        // In odd executions the main thread holds the lock while the others start.
        let held = odd.then(|| m.lock().unwrap());
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let m = m.clone();
                thread::spawn(move || *m.lock().unwrap() += 1)
            })
            .collect();
        for _ in 0..3 {
            thread::yield_now();
        }
        drop(held);
        for h in hs {
            h.join().unwrap();
        }
    });
    assert!(report.failure().is_none(), "{:?}", report.failure());
    let error = report.error().unwrap_or_else(|| panic!("{}", report.summary()));
    assert!(matches!(error, Error::Strategy { .. }), "{error:?}");
    assert!(error.message().contains("diverged"), "{error}");
}

/// A lock-order deadlock between two spawned threads that yield between their locks needs no
/// preemption (a yield is a voluntary switch): its shape counts the two blocked threads and the
/// body that spawned the second while the first existed, never t=0.
#[test]
fn a_deadlock_without_preemptions_counts_its_blocked_threads() {
    let report = config().name("failures::yield_deadlock").iterations(1000).run(|| {
        let locks = Arc::new((Mutex::new(()), Mutex::new(())));
        let spawn = |forward: bool| {
            let locks = locks.clone();
            thread::spawn(move || {
                let (first, second) =
                    if forward { (&locks.0, &locks.1) } else { (&locks.1, &locks.0) };
                let _a = first.lock().unwrap();
                thread::yield_now();
                let _b = second.lock().unwrap();
            })
        };
        let (a, b) = (spawn(true), spawn(false));
        a.join().unwrap();
        b.join().unwrap();
    });
    let failure = report.failure().expect("the lock-order deadlock is found");
    assert_eq!(failure.kind, FailureKind::Deadlock);
    let shape = failure.shape.expect("a shape");
    let text = failure.to_string();
    assert!(!text.contains("t=0"), "{text}");
    if shape.preemptions == 0 {
        assert_eq!((shape.threads, shape.spawners), (3, 1), "{shape}");
    }
    assert!(shape.threads >= 2, "{shape}");
}

/// Two threads handing a token back and forth 40 times, then a panic: every execution fails
/// with a schedule too long to print whole.
fn long_ping_pong() {
    use pctvb::sync::mpsc::channel;
    let (to_echo, echo_in) = channel::<()>();
    let (echo_out, back) = channel::<()>();
    let echo = thread::spawn(move || {
        for _ in 0..40 {
            echo_in.recv().unwrap();
            echo_out.send(()).unwrap();
        }
    });
    for _ in 0..40 {
        to_echo.send(()).unwrap();
        back.recv().unwrap();
    }
    echo.join().unwrap();
    panic!("always fails");
}

#[test]
fn trace_files_can_be_switched_off_and_unnamed_runs_do_not_overwrite_each_other() {
    let file = |seed: u64| {
        let report = config().seed(seed).iterations(10).run(long_ping_pong);
        let failure = report.failure().expect("always fails");
        failure.trace_file.clone().expect("a long schedule is written to a file")
    };
    let (a, b) = (file(1), file(2));
    assert_ne!(a, b, "unnamed runs with other seeds write other files");
    let pid = std::process::id().to_string();
    assert!(a.contains(&pid), "{a}");
    assert!(std::path::Path::new(&a).exists(), "{a}");

    let off = config().trace_files(false).iterations(10).run(long_ping_pong);
    let failure = off.failure().expect("always fails");
    assert_eq!(failure.trace_file, None);
    assert!(!failure.to_string().contains("target/pctvb"), "{failure}");
}

/// Bugs that depend on std items the facade mirrors since std 1.89-1.95: each is a scheduling
/// point (or a loop of them) where std's operation synchronizes, so a search finds the bug.
mod std_additions {
    use super::*;
    use pctvb::sync::LazyLock;

    /// Fixed seed: every bug below is found well within the budget.
    fn finds(body: fn(), message: &str) {
        let report = config().iterations(1000).run(body);
        let failure = report.failure().unwrap_or_else(|| panic!("not found: {message}"));
        assert_eq!(failure.kind, FailureKind::Panic);
        assert!(failure.message.contains(message), "{failure}");
    }

    /// `update` (std 1.95) calls its closure again when another thread wrote between its load
    /// and its compare-exchange, as std's may: code that counts on one call is wrong.
    fn update_called_once() {
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        let t = thread::spawn(move || c.fetch_add(1, Ordering::SeqCst));
        let mut calls = 0;
        count.update(Ordering::SeqCst, Ordering::SeqCst, |v| {
            calls += 1;
            v + 10
        });
        t.join().unwrap();
        assert_eq!(calls, 1, "update ran its closure again");
    }

    #[test]
    fn an_update_whose_closure_runs_twice_is_found() {
        finds(update_called_once, "update ran its closure again");
    }

    /// Two threads ask `LazyLock::get` (std 1.94) whether the value is there yet, then force
    /// it: both may see it missing, so "I initialized it" is true for both.
    fn lazy_check_then_force() {
        static LAZY: LazyLock<u32> = LazyLock::new(|| 1);
        let first = || {
            let missing = LazyLock::get(&LAZY).is_none();
            assert_eq!(*LAZY, 1);
            missing
        };
        let t = thread::spawn(first);
        let mine = first();
        let theirs = t.join().unwrap();
        assert!(!(mine && theirs), "both threads think they initialized the LazyLock");
    }

    #[test]
    fn a_lazy_lock_checked_with_get_then_forced_is_found() {
        finds(lazy_check_then_force, "both threads think they initialized");
    }

    /// A clone of a `OnceLock` (std's `Clone`) is a snapshot: taken while another thread may
    /// still set the original, it may be empty.
    fn clone_before_set() {
        let cell = Arc::new(OnceLock::new());
        let c = cell.clone();
        let t = thread::spawn(move || c.set(1).unwrap());
        let snapshot = OnceLock::clone(&cell);
        t.join().unwrap();
        assert!(snapshot == *cell, "the clone missed the value");
    }

    #[test]
    fn a_once_lock_cloned_before_it_is_set_is_found() {
        finds(clone_before_set, "the clone missed the value");
    }

    /// Threads of `Builder::spawn_unchecked` (std 1.82) borrow the spawner's stack and are
    /// logical threads: their lost update is found as any thread's.
    fn unchecked_lost_update() {
        let count = AtomicUsize::new(0);
        let add = || {
            let v = count.load(Ordering::SeqCst);
            count.store(v + 1, Ordering::SeqCst);
        };
        // SAFETY: both threads are joined before `count` ends.
        let handles: Vec<_> = (0..2)
            .map(|_| unsafe { thread::Builder::new().spawn_unchecked(add) }.unwrap())
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(count.load(Ordering::SeqCst), 2, "lost an update");
    }

    #[test]
    fn a_lost_update_between_unchecked_threads_is_found() {
        finds(unchecked_lost_update, "lost an update");
    }
}
