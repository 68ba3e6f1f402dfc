//! loom-style atomics tests: loom's inherent `with_mut`, `unsync_load`, `compare_and_swap`.
extern crate pctvb_loom as loom;

use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering::*};
use loom::sync::Arc;
use loom::thread;

fn message(err: Box<dyn std::any::Any + Send>) -> String {
    err.downcast_ref::<String>().cloned().unwrap_or_default()
}

#[test]
fn fetch_add_is_atomic() {
    loom::model(|| {
        let n = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let n = n.clone();
                thread::spawn(move || {
                    n.fetch_add(1, Relaxed);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(n.load(SeqCst), 2);
    });
}

#[test]
fn with_mut_and_unsync_load() {
    loom::model(|| {
        let mut n = AtomicUsize::new(1);
        n.with_mut(|v| *v += 1);
        assert_eq!(unsafe { n.unsync_load() }, 2);
        let flag = AtomicBool::new(false);
        assert!(!flag.compare_and_swap(false, true, AcqRel));
        assert!(flag.load(Acquire));
        let mut p = AtomicPtr::new(std::ptr::null_mut::<u8>());
        p.with_mut(|p| assert!(p.is_null()));
        assert_eq!(n.into_inner(), 2);
    });
}

/// A lost update between a load and a store: an injected bug the model must find.
#[test]
fn lost_update_is_found() {
    let err = std::panic::catch_unwind(|| {
        loom::model(|| {
            let n = Arc::new(AtomicUsize::new(0));
            let n2 = n.clone();
            let h = thread::spawn(move || {
                let v = n2.load(SeqCst);
                n2.store(v + 1, SeqCst);
            });
            let v = n.load(SeqCst);
            n.store(v + 1, SeqCst);
            h.join().unwrap();
            assert_eq!(n.load(SeqCst), 2, "lost update");
        })
    })
    .expect_err("the lost update is found");
    let msg = message(err);
    assert!(msg.contains("pctvb found a bug in this model"), "{msg}");
    assert!(msg.contains("lost update"), "{msg}");
    assert!(msg.contains("PCTVB_REPLAY="), "{msg}");
    // The schedule names the test's own lines (the atomics' methods pass the caller's
    // location through), not pctvb-loom's.
    assert!(msg.contains("tests/atomics.rs:"), "{msg}");
    assert!(!msg.contains("src/sync/atomic.rs"), "{msg}");
}

/// loom's `unsync_load` is a non-atomic read: a store by another thread that does not happen
/// before it races with it, and loom reports the race ("Causality violation: Concurrent
/// `unsync_load` and atomic store"); pctvb-loom read it as a relaxed load and passed. Nothing
/// orders the two here, so every execution races, whatever the seed.
#[test]
fn an_unsync_load_concurrent_with_a_store_is_a_data_race() {
    let err = std::panic::catch_unwind(|| {
        loom::model(|| {
            let a = Arc::new(AtomicUsize::new(0));
            let b = a.clone();
            let h = thread::spawn(move || {
                b.store(1, Release);
            });
            let _ = unsafe { a.unsync_load() };
            h.join().unwrap();
        })
    })
    .expect_err("the race is found");
    let msg = message(err);
    assert!(msg.contains("pctvb found a bug in this model"), "{msg}");
    // The atomic, by its creation site, and both accesses, by what they did and where.
    assert!(msg.contains("data race on Atomic@loom/tests/atomics.rs:"), "{msg}");
    assert!(msg.contains("stored to it atomically at loom/tests/atomics.rs:"), "{msg}");
    assert!(
        msg.contains("read it non-atomically (`unsync_load`) at loom/tests/atomics.rs:"),
        "{msg}"
    );
    assert!(msg.contains("`unsync_load` may not run concurrently with a store"), "{msg}");
    // Replayable: a report prints the line only after its token reproduced the race.
    assert!(msg.contains("PCTVB_REPLAY="), "{msg}");
}

/// `unsync_load` after what orders every store before it (a join, an Acquire load that read
/// the Release store), `with_mut` once the other handles are gone, and `into_inner` are no
/// races, under every schedule.
#[test]
fn unsync_accesses_ordered_after_the_stores_pass() {
    loom::model(|| {
        let a = Arc::new(AtomicUsize::new(0));
        let b = a.clone();
        let h = thread::spawn(move || {
            b.store(1, Release);
        });
        if a.load(Acquire) == 1 {
            assert_eq!(unsafe { a.unsync_load() }, 1);
        }
        h.join().unwrap();
        assert_eq!(unsafe { a.unsync_load() }, 1);
        let mut a = a;
        Arc::get_mut(&mut a).expect("the thread's handle is gone").with_mut(|v| *v += 1);
        assert_eq!(Arc::try_unwrap(a).expect("the only handle").into_inner(), 2);
    });
}

/// The orderings decide, as in loom: a Relaxed load that reads the store orders nothing, so
/// the `unsync_load` after it races in the executions where the load sees the store; with
/// Acquire/Release it never does. Run through pctvb's `Config` with fixed seeds (the race is
/// in some executions only), with the check `loom::model` turns on in each execution.
#[test]
fn only_an_acquire_of_the_store_orders_an_unsync_load() {
    use pctvb::{Config, FailureKind};
    use std::sync::atomic::{AtomicUsize as StdUsize, Ordering as StdOrdering};

    static SAW_STORE: StdUsize = StdUsize::new(0);
    fn flag_then_unsync_load(
        load: loom::sync::atomic::Ordering,
        store: loom::sync::atomic::Ordering,
    ) {
        pctvb::__internals::execution::check_unsync_atomics();
        let a = Arc::new(AtomicUsize::new(0));
        let b = a.clone();
        let h = thread::spawn(move || b.store(1, store));
        if a.load(load) == 1 {
            SAW_STORE.fetch_add(1, StdOrdering::Relaxed);
            assert_eq!(unsafe { a.unsync_load() }, 1);
        }
        h.join().unwrap();
    }
    let config = |seed| Config::new().ignore_env().seed(seed).iterations(300).name("atomics");
    let relaxed = || flag_then_unsync_load(Relaxed, Release);
    let report = config(0x10ad).run(relaxed);
    let failure = report.failure().expect("the race is found on seed 0x10ad");
    assert_eq!(failure.kind, FailureKind::DataRace, "{failure}");
    assert!(failure.message.starts_with("data race on Atomic@loom/tests/atomics.rs:"), "{failure}");
    let again = config(0x10ad).replay(failure.token.clone().expect("a token")).run(relaxed);
    assert_eq!(again.failure().expect("the replay races again").message, failure.message);

    // With the detector off (`PCTVB_RACES=0`) nothing is checked: `unsync_load` is a load.
    let report = config(0x10ad).race_detection(false).run(relaxed);
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());

    SAW_STORE.store(0, StdOrdering::Relaxed);
    let report = config(0xacc).run(|| flag_then_unsync_load(Acquire, Release));
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());
    assert_eq!(report.executions, 300);
    assert!(SAW_STORE.load(StdOrdering::Relaxed) > 0, "some executions read the store first");
}
