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
