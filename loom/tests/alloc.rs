//! loom-style leak tests: `Track` and `alloc`/`dealloc` must be freed by the end of each
//! execution.
extern crate pctvb_loom as loom;

use loom::alloc::{alloc, dealloc, Layout, Track};
use loom::sync::atomic::{AtomicPtr, Ordering::*};
use loom::sync::Arc;
use loom::thread;

/// A one-element stack that may forget to drop what it holds.
struct Stack {
    head: AtomicPtr<Track<u32>>,
    leaky: bool,
}

impl Drop for Stack {
    fn drop(&mut self) {
        let leaky = self.leaky;
        self.head.with_mut(|p| {
            if !p.is_null() && !leaky {
                drop(unsafe { Box::from_raw(*p) });
            }
        });
    }
}

fn push_from_a_thread(leaky: bool) {
    let stack = Arc::new(Stack { head: AtomicPtr::new(std::ptr::null_mut()), leaky });
    let s = stack.clone();
    let h = thread::spawn(move || {
        let node = Box::into_raw(Box::new(Track::new(7)));
        if s.head.compare_exchange(std::ptr::null_mut(), node, AcqRel, Acquire).is_err() {
            drop(unsafe { Box::from_raw(node) });
        }
    });
    h.join().unwrap();
    drop(stack);
}

#[test]
fn tracked_values_dropped() {
    loom::model(|| push_from_a_thread(false));
}

#[test]
#[should_panic(expected = "leaked: Track<u32> created at")]
fn leaked_track_is_reported() {
    loom::model(|| push_from_a_thread(true));
}

#[test]
fn a_thread_not_joined_may_drop_its_track_after_the_body() {
    loom::model(|| {
        let t = Track::new(String::from("late"));
        thread::spawn(move || drop(t));
    });
}

/// The check runs when the execution ends, not when the body returns: a thread the body
/// does not join may run long after it (here 2000 scheduling points, more than a body-end
/// check that yields up to 1000 times would wait for) and drop its `Track` last. Every
/// execution of every schedule must pass (no randomness decides it); 100 executions keep the
/// test short.
#[test]
fn a_track_dropped_by_a_thread_finishing_after_the_body_is_not_a_leak() {
    let mut builder = loom::model::Builder::new();
    builder.max_permutations = Some(100);
    builder.check(|| {
        let t = Track::new(3u8);
        thread::spawn(move || {
            let steps = loom::sync::atomic::AtomicUsize::new(0);
            for _ in 0..2000 {
                // A write of a new value each time: progress, not a livelock.
                steps.fetch_add(1, Relaxed);
                thread::yield_now();
            }
            drop(t);
        });
    });
}

/// ... and a thread that leaks after the body returned is reported: in every execution, so
/// the run fails in its first one.
#[test]
#[should_panic(expected = "leaked: Track<i64> created at")]
fn a_track_leaked_by_a_thread_finishing_after_the_body_is_reported() {
    loom::model(|| {
        thread::spawn(|| {
            for _ in 0..10 {
                thread::yield_now();
            }
            std::mem::forget(Track::new(-1i64));
        });
    });
}

/// A `Track` in a thread-local is dropped when its thread exits, before the check.
#[test]
fn a_track_in_a_thread_local_is_dropped_before_the_check() {
    loom::thread_local! {
        static LOCAL: std::cell::RefCell<Option<Track<u16>>> = const { std::cell::RefCell::new(None) };
    }
    loom::model(|| {
        thread::spawn(|| LOCAL.with(|l| *l.borrow_mut() = Some(Track::new(9))));
        LOCAL.with(|l| *l.borrow_mut() = Some(Track::new(8)));
    });
}

#[test]
fn alloc_and_dealloc() {
    loom::model(|| {
        let layout = Layout::new::<u64>();
        let p = unsafe { alloc(layout) };
        let p2 = p as usize;
        thread::spawn(move || unsafe { dealloc(p2 as *mut u8, layout) }).join().unwrap();
        assert_eq!(Track::new(5).into_inner(), 5);
    });
}

#[test]
#[should_panic(expected = "leaked: allocation of 8 bytes")]
fn leaked_allocation_is_reported() {
    loom::model(|| {
        let _p = unsafe { alloc(Layout::new::<u64>()) };
    });
}
