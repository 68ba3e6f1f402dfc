//! Spurious wake-ups under pctvb-loom: `Notify::wait` may return without a permit (at most
//! once per `Notify` per execution, as loom's), and `Condvar::wait` and `thread::park` may
//! wake spuriously as std's may (loom's never do). A caller that takes a return as proof of a
//! notification fails; one that loops passes. `loom::model` runs pctvb's default search with
//! its fixed seed.

extern crate pctvb_loom as loom;

use loom::sync::atomic::{AtomicBool, Ordering::SeqCst};
use loom::sync::{Arc, Condvar, Mutex, Notify};
use loom::thread;

/// The waiter takes `wait` returning as the notifier's signal.
#[test]
#[should_panic(expected = "returned with no notify")]
fn a_notify_wait_taken_as_proof_of_a_notify_fails() {
    loom::model(|| {
        let notify = Arc::new(Notify::new());
        let done = Arc::new(AtomicBool::new(false));
        let (n, d) = (notify.clone(), done.clone());
        let notifier = thread::spawn(move || {
            d.store(true, SeqCst);
            n.notify();
        });
        notify.wait();
        assert!(done.load(SeqCst), "returned with no notify");
        notifier.join().unwrap();
    });
}

/// The waiter loops until the flag is set: at most one spurious return per `Notify`, and every
/// later `wait` consumes the permit.
#[test]
fn a_notify_wait_in_a_loop_passes() {
    loom::model(|| {
        let notify = Arc::new(Notify::new());
        let done = Arc::new(AtomicBool::new(false));
        let (n, d) = (notify.clone(), done.clone());
        let notifier = thread::spawn(move || {
            d.store(true, SeqCst);
            n.notify();
        });
        while !done.load(SeqCst) {
            notify.wait();
        }
        notifier.join().unwrap();
    });
}

/// A condition variable's wait with `if` where a loop is needed.
#[test]
#[should_panic(expected = "woke with the flag unset")]
fn a_condvar_wait_with_if_fails() {
    loom::model(|| {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let p = pair.clone();
        let setter = thread::spawn(move || {
            *p.0.lock().unwrap() = true;
            p.1.notify_one();
        });
        let mut ready = pair.0.lock().unwrap();
        if !*ready {
            ready = pair.1.wait(ready).unwrap();
        }
        assert!(*ready, "woke with the flag unset");
        drop(ready);
        setter.join().unwrap();
    });
}

/// A park taken as proof of the unpark.
#[test]
#[should_panic(expected = "park returned before the unpark")]
fn a_park_taken_as_proof_of_an_unpark_fails() {
    loom::model(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let parked = thread::spawn(move || {
            thread::park();
            assert!(f.load(SeqCst), "park returned before the unpark");
        });
        flag.store(true, SeqCst);
        parked.thread().unpark();
        parked.join().unwrap();
    });
}
