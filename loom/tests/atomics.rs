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
