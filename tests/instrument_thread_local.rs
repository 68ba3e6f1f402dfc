//! `thread_local!` inside `#[pctvb::instrument]` is pctvb's: one value per logical thread and
//! per execution.
//!
//! All logical threads of a pctvb run share one OS thread, so a std `thread_local!` is one value
//! for all of them, carried from one execution to the next. Its failures look like the user's
//! bug (`left: 15, right: 2`). The instrument attribute rewrites `thread_local!` (and
//! `std::thread_local!`) in the item it annotates to `pctvb::thread_local!`; these tests fail
//! without that rewrite.
//!
//! Every run uses a fixed seed (`SEED`), so a failure here replays exactly.

use pctvb::Config;

/// The seed of every run in this file: the schedules, and so the outcome, are reproducible.
const SEED: u64 = 0x7157_10ca1;

#[pctvb::instrument(force)]
mod counters {
    use std::cell::{Cell, RefCell};
    use std::thread;

    // The prelude's `thread_local!`: several declarations in one call, attributes, `pub`, and
    // a `const { .. }` initializer.
    thread_local! {
        /// How many times the current logical thread called `bump`.
        pub static COUNT: Cell<u32> = const { Cell::new(0) };
        /// What the current logical thread bumped.
        static LOG: RefCell<Vec<u32>> = RefCell::new(Vec::new());
    }

    // The std path, with one declaration and no trailing semicolon.
    std::thread_local!(static SEEN: Cell<bool> = Cell::new(false));

    /// Increments the calling thread's counter and returns its new value.
    pub fn bump() -> u32 {
        LOG.with(|l| l.borrow_mut().push(1));
        COUNT.with(|c| {
            c.set(c.get() + 1);
            c.get()
        })
    }

    /// Two logical threads each bump their own counter `n` times and check their own count;
    /// returns the main thread's count afterwards (it bumped `n` times too).
    pub fn two_threads(n: u32) -> u32 {
        let other = thread::spawn(move || {
            for i in 1..=n {
                assert_eq!(bump(), i, "the spawned thread sees only its own bumps");
                thread::yield_now();
            }
            COUNT.with(|c| c.get())
        });
        for i in 1..=n {
            assert_eq!(bump(), i, "the main thread sees only its own bumps");
            thread::yield_now();
        }
        assert_eq!(other.join().unwrap(), n);
        LOG.with(|l| assert_eq!(l.borrow().len(), n as usize));
        COUNT.with(|c| c.get())
    }

    /// Whether an earlier execution (or thread) left its mark; leaves one.
    pub fn first_visit() -> bool {
        SEEN.with(|s| !s.replace(true))
    }

    thread_local! {
        static PRESET: Cell<u32> = panic!("`set` before first use does not run the initializer");
        // A `const` block with statements, as std accepts.
        static STEP: Cell<u32> = const {
            let step = 2;
            Cell::new(step)
        }
    }

    /// std's `LocalKey` shorthands compile and work on the rewritten thread-locals.
    pub fn shorthands() {
        assert_eq!(STEP.get(), 2);
        PRESET.set(5);
        assert_eq!(PRESET.get(), 5);
        COUNT.set(10);
        assert_eq!(COUNT.replace(11), 10);
        assert_eq!(COUNT.take(), 11);
        assert_eq!(COUNT.get(), 0);
        LOG.with_borrow_mut(|l| l.push(7));
        LOG.with_borrow(|l| assert_eq!(l, &[7]));
        LOG.set(vec![1, 2]);
        assert_eq!(LOG.replace(vec![3]), [1, 2]);
        assert_eq!(LOG.take(), [3]);
    }
}

#[test]
fn each_logical_thread_has_its_own_value() {
    let report = Config::new().ignore_env().seed(SEED).iterations(50).run(|| {
        assert_eq!(counters::two_threads(3), 3);
    });
    assert!(report.is_ok(), "unexpected failure:\n{}", report.failure().unwrap());
    assert!(report.stats.distinct_schedules > 1, "the schedule must vary");
}

#[test]
fn an_execution_does_not_see_the_previous_ones_value() {
    let report = Config::new().ignore_env().seed(SEED).iterations(20).run(|| {
        assert!(counters::first_visit(), "a value left by an earlier execution");
        assert_eq!(counters::bump(), 1, "a count left by an earlier execution");
        let h = pctvb::thread::spawn(|| (counters::first_visit(), counters::bump()));
        assert_eq!(h.join().unwrap(), (true, 1), "a spawned thread starts from the initializer");
    });
    assert!(report.is_ok(), "unexpected failure:\n{}", report.failure().unwrap());
    assert_eq!(report.executions, 20);
}

#[test]
fn std_shorthands_work_on_the_rewritten_keys() {
    let report = Config::new().ignore_env().seed(SEED).iterations(5).run(|| {
        counters::shorthands();
        pctvb::thread::spawn(counters::shorthands).join().unwrap();
    });
    assert!(report.is_ok(), "unexpected failure:\n{}", report.failure().unwrap());
}
