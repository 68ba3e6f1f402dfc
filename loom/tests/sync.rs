//! loom-style tests of the blocking primitives: Mutex, Condvar, Notify, mpsc, RwLock, and
//! `future::block_on`.
extern crate pctvb_loom as loom;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use loom::future::{block_on, AtomicWaker};
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use loom::sync::{mpsc, Arc, Condvar, Mutex, Notify, RwLock};
use loom::thread;

#[test]
fn condvar_handoff() {
    loom::model(|| {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let p = pair.clone();
        thread::spawn(move || {
            *p.0.lock().unwrap() = true;
            p.1.notify_one();
        });
        let mut ready = pair.0.lock().unwrap();
        while !*ready {
            ready = pair.1.wait(ready).unwrap();
        }
    });
}

#[test]
fn notify_wakes_the_waiter() {
    loom::model(|| {
        let notify = Arc::new(Notify::new());
        let done = Arc::new(AtomicBool::new(false));
        let (n, d) = (notify.clone(), done.clone());
        thread::spawn(move || {
            d.store(true, Release);
            n.notify();
        });
        // loom's `wait` may return spuriously, once per `Notify`: a loop, as under loom.
        while !done.load(Acquire) {
            notify.wait();
        }
    });
}

#[test]
fn channel_and_rwlock() {
    loom::model(|| {
        let (tx, rx) = mpsc::channel();
        let lock = Arc::new(RwLock::new(0));
        let l = lock.clone();
        thread::spawn(move || {
            *l.write().unwrap() += 1;
            tx.send(()).unwrap();
        });
        rx.recv().unwrap();
        assert_eq!(*lock.read().unwrap(), 1);
    });
}

/// A future that is ready once another thread has set a flag and woken it.
struct Flag {
    set: Arc<AtomicBool>,
    waker: Arc<AtomicWaker>,
}

impl Future for Flag {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.waker.register_by_ref(cx.waker());
        if self.set.load(Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

#[test]
fn block_on_parks_until_woken() {
    loom::model(|| {
        let set = Arc::new(AtomicBool::new(false));
        let waker = Arc::new(AtomicWaker::new());
        let (s, w) = (set.clone(), waker.clone());
        thread::spawn(move || {
            s.store(true, Release);
            w.wake();
        });
        block_on(Flag { set, waker });
    });
}

/// An injected bug: the counter is read under the lock but written back after releasing it.
#[test]
#[should_panic(expected = "pctvb found a bug in this model")]
fn unlocked_write_back_is_found() {
    loom::model(|| {
        let lock = Arc::new(Mutex::new(()));
        let n = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let (lock, n) = (lock.clone(), n.clone());
                thread::spawn(move || {
                    let v = {
                        let _g = lock.lock().unwrap();
                        n.load(SeqCst)
                    };
                    n.store(v + 1, SeqCst);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(n.load(SeqCst), 2);
    });
}

/// loom's `thread::spawn` takes closures and results that are not `Send`, as loom's does.
#[test]
fn spawn_takes_values_that_are_not_send() {
    use std::rc::Rc;
    loom::model(|| {
        let shared = Rc::new(std::cell::Cell::new(1));
        let s2 = Rc::clone(&shared);
        let h = thread::spawn(move || {
            s2.set(s2.get() + 1);
            Rc::new(s2.get())
        });
        let result = h.join().unwrap();
        assert_eq!(*result, 2);
        assert_eq!(shared.get(), 2);
    });
    let err = std::panic::catch_unwind(|| thread::spawn(|| ())).expect_err("outside a model");
    let msg = err.downcast_ref::<&str>().map(|s| s.to_string()).unwrap_or_default();
    assert!(msg.contains("outside loom::model"), "{msg}");
}

/// A value whose `Drop` locks a mutex twice, unwrapping each lock, as loom code does (loom's
/// locks are never poisoned). When a model panics with it live, the unwinding runs the `Drop`:
/// under a std-style lock the first guard, dropped while the thread panics, poisoned the
/// mutex, the second `unwrap` panicked inside the unwinding, and Rust aborted the whole test
/// process, reporting a `PoisonError` rather than the model's failure.
struct LocksTwiceOnDrop(Arc<Mutex<u32>>);

impl Drop for LocksTwiceOnDrop {
    fn drop(&mut self) {
        *self.0.lock().unwrap() += 1;
        *self.0.lock().unwrap() += 1;
    }
}

#[test]
fn a_failing_model_unwinds_through_a_drop_that_locks_without_aborting() {
    let report = pctvb::Config::new().ignore_env().seed(3).iterations(10).run(|| {
        let shared = Arc::new(Mutex::new(0));
        let s = shared.clone();
        thread::spawn(move || *s.lock().unwrap() += 1).join().unwrap();
        let _live = LocksTwiceOnDrop(shared);
        panic!("the model's own assertion");
    });
    let failure = report.failure().expect("the panic is reported");
    assert_eq!(failure.kind, pctvb::FailureKind::Panic, "{failure}");
    assert!(failure.message.contains("the model's own assertion"), "{failure}");
}

#[test]
fn locks_are_never_poisoned_as_in_loom() {
    loom::model(|| {
        let m = Arc::new(Mutex::new(1u32));
        let rw = Arc::new(RwLock::new(2u32));
        let (m2, rw2) = (m.clone(), rw.clone());
        // A thread panics while holding both locks; the panic is caught inside the model.
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let _g = m2.lock().unwrap();
            let _w = rw2.write().unwrap();
            panic!("caught below");
        }));
        assert!(caught.is_err());
        assert!(!m.is_poisoned() && !rw.is_poisoned());
        assert_eq!(*m.lock().unwrap(), 1);
        assert_eq!(*m.try_lock().unwrap(), 1);
        assert_eq!(*rw.read().unwrap(), 2);
        assert_eq!(*rw.try_write().unwrap(), 2);
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let p = pair.clone();
        thread::spawn(move || {
            let _g = p.0.lock().unwrap();
            p.1.notify_one();
        });
        let g = pair.0.lock().unwrap();
        let (_g, _) = pair.1.wait_timeout(g, std::time::Duration::from_millis(1)).unwrap();
    });
}

/// A thread the body does not join, left waiting forever when the body returns (here it waits
/// for a notification no one sends): loom requires every thread to finish and reports a
/// deadlock. pctvb ended such an execution normally, as a process exit would end the thread,
/// so a lost wake-up in a thread the body did not join went unreported under pctvb-loom.
#[test]
#[should_panic(expected = "threads it spawned can never finish")]
fn a_thread_left_waiting_forever_after_the_body_returns_is_a_deadlock() {
    loom::model(|| {
        let pair = Arc::new((Mutex::new(()), Condvar::new()));
        let p = pair.clone();
        thread::spawn(move || {
            let g = p.0.lock().unwrap();
            drop(p.1.wait(g).unwrap());
        });
    });
}

/// The same with a thread of `thread::Builder`, which is tracked as `thread::spawn`'s; the
/// failure names its spawn site.
#[test]
fn a_builder_thread_left_waiting_forever_is_a_deadlock_too() {
    let failure = std::panic::catch_unwind(|| {
        loom::model(|| {
            let pair = Arc::new((Mutex::new(()), Condvar::new()));
            let p = pair.clone();
            let spawned = thread::Builder::new().name("waiter".into()).spawn(move || {
                let g = p.0.lock().unwrap();
                drop(p.1.wait(g).unwrap());
            });
            assert!(spawned.is_ok());
        })
    })
    .expect_err("the waiting Builder thread fails the execution");
    let message = failure
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| failure.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(message.contains("threads it spawned can never finish"), "{message}");
    assert!(message.contains(&format!("spawned at {}", file!())), "{message}");
}

/// A `Builder` thread the body does not join that finishes after the body returned: no
/// failure.
#[test]
fn a_builder_thread_that_finishes_after_the_body_returned_passes() {
    loom::model(|| {
        let count = Arc::new(Mutex::new(0));
        let c = count.clone();
        let spawned = thread::Builder::new().stack_size(1 << 16).spawn(move || {
            *c.lock().unwrap() += 1;
        });
        assert!(spawned.is_ok());
        *count.lock().unwrap() += 1;
    });
}

/// A thread the body does not join that finishes after the body returned: no failure.
#[test]
fn a_thread_that_finishes_after_the_body_returns_passes() {
    loom::model(|| {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let p = pair.clone();
        thread::spawn(move || {
            let mut ready = p.0.lock().unwrap();
            while !*ready {
                ready = p.1.wait(ready).unwrap();
            }
        });
        *pair.0.lock().unwrap() = true;
        pair.1.notify_one();
    });
}
