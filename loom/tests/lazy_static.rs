//! loom-style `lazy_static!` and `thread_local!` tests: statics are fresh in every execution.
extern crate pctvb_loom as loom;

use std::cell::RefCell;

use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::Mutex;
use loom::thread;

loom::lazy_static! {
    static ref NEXT_ID: AtomicUsize = AtomicUsize::new(1);
    pub static ref LOG: Mutex<Vec<usize>> = Mutex::new(Vec::new());
}

loom::thread_local! {
    static MINE: RefCell<Vec<usize>> = RefCell::new(Vec::new());
}

#[test]
fn lazy_statics_are_reset_per_execution() {
    loom::model(|| {
        let h = thread::spawn(|| NEXT_ID.fetch_add(1, SeqCst));
        let mine = NEXT_ID.fetch_add(1, SeqCst);
        let theirs = h.join().unwrap();
        // Both ids come from this execution's counter, which starts at 1 every time.
        let mut ids = [mine, theirs];
        ids.sort();
        assert_eq!(ids, [1, 2]);
        LOG.lock().unwrap().push(mine);
        assert_eq!(LOG.lock().unwrap().len(), 1);
    });
}

#[test]
fn thread_locals_are_per_thread() {
    loom::model(|| {
        MINE.with(|v| v.borrow_mut().push(1));
        let h = thread::spawn(|| MINE.with(|v| v.borrow().len()));
        assert_eq!(h.join().unwrap(), 0);
        assert_eq!(MINE.with(|v| v.borrow().len()), 1);
    });
}

/// An injected bug: a check-then-act initialisation that two threads can both perform.
#[test]
#[should_panic(expected = "initialised twice")]
fn racy_initialisation_is_found() {
    loom::lazy_static! {
        static ref INITS: AtomicUsize = AtomicUsize::new(0);
    }
    loom::model(|| {
        let init = || {
            if INITS.load(SeqCst) == 0 {
                INITS.fetch_add(1, SeqCst);
            }
        };
        let h = thread::spawn(init);
        init();
        h.join().unwrap();
        assert_eq!(INITS.load(SeqCst), 1, "initialised twice");
    });
}
