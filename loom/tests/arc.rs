//! `loom::sync::Arc`: loom's `from_std` for unsized values, its panic on a shared `std` Arc,
//! its methods, and loom's leak report for an `Arc` still owned when the execution ends.
extern crate pctvb_loom as loom;

use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;

fn message(err: Box<dyn std::any::Any + Send>) -> String {
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn from_std_makes_unsized_arcs_shared_across_threads() {
    loom::model(|| {
        let bytes: Arc<[u8]> = Arc::from_std(std::sync::Arc::from(&[1u8, 2, 3][..]));
        let hits = Arc::new(AtomicUsize::new(0));
        let f: std::sync::Arc<dyn Fn(usize) + Send + Sync> = {
            let hits = hits.clone();
            std::sync::Arc::new(move |n| {
                hits.fetch_add(n, SeqCst);
            })
        };
        let f: Arc<dyn Fn(usize) + Send + Sync> = Arc::from_std(f);
        let (b2, f2) = (bytes.clone(), f.clone());
        let h = thread::spawn(move || f2(b2.len()));
        f(bytes[2] as usize);
        h.join().unwrap();
        assert_eq!(hits.load(SeqCst), 6);
        assert_eq!(Arc::strong_count(&bytes), 1);
    });
}

#[test]
fn from_std_of_a_shared_arc_panics_as_in_loom() {
    let err = std::panic::catch_unwind(|| {
        loom::model(|| {
            let std = std::sync::Arc::new(1);
            let _keep = std.clone();
            let _ = Arc::from_std(std);
        })
    })
    .expect_err("a shared std Arc is refused");
    let msg = message(err);
    assert!(msg.contains("Arc provided to `from_std` is not unique"), "{msg}");
}

#[test]
fn methods_as_std() {
    loom::model(|| {
        let mut a = Arc::new(String::from("a"));
        Arc::get_mut(&mut a).unwrap().push('b');
        let b = a.clone();
        assert!(Arc::get_mut(&mut a).is_none());
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(Arc::strong_count(&a), 2);
        let a = Arc::try_unwrap(a).expect_err("shared");
        drop(b);
        assert_eq!(Arc::try_unwrap(a).unwrap(), "ab");

        let c = Arc::new(5u32);
        let p = Arc::into_raw(c.clone());
        assert_eq!(p, Arc::as_ptr(&c));
        unsafe {
            Arc::increment_strong_count(p);
            assert_eq!(Arc::strong_count(&c), 3);
            Arc::decrement_strong_count(p);
            drop(Arc::from_raw(p));
        }
        assert_eq!(Arc::strong_count(&c), 1);
        assert_eq!(*c, 5);
        assert_eq!(c, Arc::from(5));
        assert_eq!(format!("{c} {c:?}"), "5 5");
        let _pinned = Arc::pin(1);
        let d: Arc<Vec<u8>> = Arc::default();
        assert!(d.is_empty());
    });
}

#[test]
fn an_arc_dropped_by_a_thread_after_the_body_is_not_a_leak() {
    loom::model(|| {
        let a = Arc::new(1);
        thread::spawn(move || assert_eq!(*a, 1));
    });
}

#[test]
#[should_panic(expected = "leaked: Arc<u64> created at")]
fn a_forgotten_arc_is_reported() {
    loom::model(|| {
        let a = Arc::new(7u64);
        let b = a.clone();
        thread::spawn(move || drop(b)).join().unwrap();
        std::mem::forget(a);
    });
}

#[test]
#[should_panic(expected = "leaked: Arc<u8> created at")]
fn a_raw_pointer_never_rebuilt_is_reported() {
    loom::model(|| {
        let _p = Arc::into_raw(Arc::new(1u8));
    });
}

// Reference counting as scheduling points (loom's `Arc` branches at each clone, drop,
// `get_mut`, `try_unwrap` and `strong_count`), and the happens-before its operations give the
// race detector (std's orderings). These run through pctvb's `Config` on fixed seeds with
// `ignore_env` and the default strategy (SURW, the selectively uniform random walk); the bug
// below is seen in a good share of executions, and each seed listed was checked to find it
// within the budget. The correct programs must pass all their executions.

mod counting {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::atomic::Ordering::Relaxed;
    use pctvb::{Config, FailureKind};

    fn config(seed: u64) -> Config {
        Config::new().ignore_env().seed(seed).name("arc_counting")
    }

    /// A thread clones its `Arc` and drops the clone at once: only a preemption between the
    /// clone and the drop lets another thread see three `Arc`s. With counting outside the
    /// scheduling points, no schedule shows it.
    fn transient_clone() {
        let a = Arc::new(0u8);
        let a1 = a.clone();
        let h = thread::spawn(move || {
            let b = a1.clone();
            drop(b);
            drop(a1);
        });
        let seen = Arc::strong_count(&a);
        h.join().unwrap();
        assert!(seen != 3, "saw the other thread's transient clone");
    }

    #[test]
    fn a_clone_and_a_drop_are_scheduling_points() {
        for seed in [1, 2, 3] {
            let report = config(seed).iterations(1000).run(transient_clone);
            let failure = report.failure().unwrap_or_else(|| panic!("not found on seed {seed}"));
            assert_eq!(failure.kind, FailureKind::Panic, "{failure}");
            assert!(failure.message.contains("transient clone"), "{failure}");
            let token = failure.token.clone().expect("a replay token");
            let again = config(seed).replay(token).run(transient_clone);
            assert_eq!(again.failure().expect("the replay fails again").message, failure.message);
        }
    }

    /// A value whose drop reads its cell.
    struct ReadOnDrop(UnsafeCell<u64>);

    // SAFETY: the programs below order the cell's accesses through the `Arc`s (or show they
    // do not).
    unsafe impl Sync for ReadOnDrop {}

    impl Drop for ReadOnDrop {
        fn drop(&mut self) {
            self.0.with(|p| unsafe { *p });
        }
    }

    /// What a thread did before dropping its `Arc` happens before the value's drop by the
    /// last `Arc` (std's Release decrement and Acquire on the last one): not a race, whichever
    /// thread drops last.
    #[test]
    fn the_last_drop_is_ordered_after_the_other_drops() {
        let report = config(0xa2c).iterations(2000).run(|| {
            let a = Arc::new(ReadOnDrop(UnsafeCell::new(0)));
            let a1 = a.clone();
            let h = thread::spawn(move || {
                a1.0.with_mut(|p| unsafe { *p = 1 });
                drop(a1);
            });
            drop(a);
            h.join().unwrap();
        });
        if let Some(f) = report.failure() {
            panic!("expected no race, got:\n{f}");
        }
        assert_eq!(report.executions, 2000);
    }

    /// A drop that is not the last acquires nothing (std's), so reading the cell after it
    /// races with the other thread's write although that thread dropped its `Arc` before
    /// (seen through a Relaxed flag, which orders nothing either): the detector must not
    /// order them. Every execution reaches the read after the write, so every one races.
    #[test]
    fn a_drop_that_is_not_the_last_orders_nothing() {
        for seed in [4, 5, 6] {
            let report = config(seed).iterations(1000).run(|| {
                let a = Arc::new(UnsafeCell::new(0u64));
                let done = Arc::new(AtomicUsize::new(0));
                let (a1, a2, d) = (a.clone(), a.clone(), done.clone());
                let h = thread::spawn(move || {
                    a1.with_mut(|p| unsafe { *p = 1 });
                    drop(a1);
                    d.store(1, Relaxed);
                });
                while done.load(Relaxed) == 0 {
                    thread::yield_now();
                }
                drop(a2);
                a.with(|p| unsafe { *p });
                h.join().unwrap();
            });
            let failure = report.failure().unwrap_or_else(|| panic!("not found on seed {seed}"));
            assert_eq!(failure.kind, FailureKind::DataRace, "{failure}");
        }
    }

    #[test]
    fn raw_pointers_keep_the_count() {
        let report = config(7).iterations(200).run(|| {
            let a = Arc::new(3u32);
            let p = Arc::into_raw(a.clone());
            let q = p as usize;
            let h = thread::spawn(move || unsafe {
                let p = q as *const u32;
                Arc::increment_strong_count(p);
                Arc::decrement_strong_count(p);
                drop(Arc::from_raw(p));
            });
            assert_eq!(*a, 3);
            h.join().unwrap();
            assert_eq!(Arc::strong_count(&a), 1);
            assert_eq!(Arc::try_unwrap(a), Ok(3));
        });
        if let Some(f) = report.failure() {
            panic!("{f}");
        }
        assert_eq!(report.executions, 200);
    }
}

#[test]
fn a_pointer_from_as_ptr_rebuilds_an_arc_as_with_std() {
    // std lets `from_raw`, `increment_strong_count` and `decrement_strong_count` take
    // `as_ptr`'s pointer while an `Arc` lives: tokio builds its wakers that way, from a
    // thread the waker is sent to. loom's knows every Arc; this one did only `into_raw`'s.
    loom::model(|| {
        let task = Arc::new(7u32);
        let ptr = Arc::as_ptr(&task);
        // SAFETY: `task` keeps the value alive; the count taken here is given back below.
        unsafe { Arc::increment_strong_count(ptr) };
        let waker = loom::sync::atomic::AtomicUsize::new(ptr as usize);
        let waker = Arc::new(waker);
        let w = waker.clone();
        let t = thread::spawn(move || {
            let ptr = w.load(loom::sync::atomic::Ordering::Acquire) as *const u32;
            // SAFETY: the count taken above.
            let woken = unsafe { Arc::from_raw(ptr) };
            assert_eq!(*woken, 7);
        });
        t.join().unwrap();
        assert_eq!(Arc::strong_count(&task), 1);
        // SAFETY: `task` is alive; balanced at once.
        unsafe {
            Arc::increment_strong_count(Arc::as_ptr(&task));
            Arc::decrement_strong_count(Arc::as_ptr(&task));
        }
        assert_eq!(Arc::strong_count(&task), 1);
    });
}
