//! The data-race check of instrumented pointer accesses (issue #16): under
//! `#[pctvb::instrument]`, raw-pointer reads and writes and dereferences of
//! `std::cell::UnsafeCell::get()` are checked against the happens-before edges of the
//! synchronization, per address, like `pctvb::cell::UnsafeCell` accesses.
//!
//! Every run tracks every variable of the instrumented code (`instrument::track(All)`: the
//! check covers the pointer accesses of armed sites to variables' memory) and uses a fixed
//! seed, `ignore_env` and the default strategy (the uniform random walk). The racy programs
//! fail on every seed listed; the correct ones pass all their executions.

use pctvb::instrument::{self, Selection};
use pctvb::{Config, FailureKind, Report};

#[pctvb::instrument(force)]
mod code {
    use std::cell::UnsafeCell;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::thread;

    /// A try-lock in the shape of try-lock 0.2.5: a flag and the guarded value in a
    /// `std::cell::UnsafeCell`, reached through `get()` and a raw dereference.
    pub struct TryLock {
        locked: AtomicBool,
        data: UnsafeCell<u64>,
    }

    // SAFETY: the lock's flag is meant to serialize the accesses of `data` (the broken
    // variant does not: that is the race the tests look for).
    unsafe impl Sync for TryLock {}

    impl TryLock {
        /// Runs `f` on the value if the lock is free. `split`: the acquire is a load and a
        /// separate store (two threads can both see the lock free), else one `swap`.
        pub fn try_with(&self, split: bool, f: impl FnOnce(&mut u64)) -> bool {
            let was_locked = if split {
                let l = self.locked.load(Ordering::Acquire);
                if !l {
                    self.locked.store(true, Ordering::Relaxed);
                }
                l
            } else {
                self.locked.swap(true, Ordering::Acquire)
            };
            if was_locked {
                return false;
            }
            let p = self.data.get();
            unsafe {
                let v = *p;
                *p = v + 1;
                f(&mut *p);
            }
            self.locked.store(false, Ordering::Release);
            true
        }
    }

    /// Two threads increment the value under the lock, each until it got it once.
    pub fn two_lockers(split: bool) {
        let lock = Arc::new(TryLock { locked: AtomicBool::new(false), data: UnsafeCell::new(0) });
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let l = lock.clone();
                thread::spawn(move || while !l.try_with(split, |_| {}) {})
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }

    /// Two fields of one heap struct.
    pub struct Pair {
        pub a: u64,
        pub b: u64,
    }

    /// A raw pointer that may cross threads.
    #[derive(Clone, Copy)]
    pub struct Ptr(pub *mut Pair);
    // SAFETY: the threads' accesses are what the tests look at.
    unsafe impl Send for Ptr {}
    // SAFETY: as `Send`.
    unsafe impl Sync for Ptr {}

    /// Two threads write different fields of one struct behind a raw pointer: no race.
    pub fn different_fields() {
        let p = Ptr(Box::into_raw(Box::new(Pair { a: 0, b: 0 })));
        let t1 = thread::spawn(move || {
            let q = p;
            unsafe { (*q.0).a = 1 };
            unsafe { (*q.0).a += 1 };
        });
        let t2 = thread::spawn(move || {
            let q = p;
            unsafe { (*q.0).b = 2 };
            let b = unsafe { (*q.0).b };
            assert_eq!(b, 2);
        });
        t1.join().unwrap();
        t2.join().unwrap();
        let pair = unsafe { Box::from_raw(p.0) };
        assert_eq!((pair.a, pair.b), (2, 2));
    }

    /// A writer writes a heap value through a raw pointer and sets a flag with `publish`; a
    /// reader that sees the flag (loaded with `observe`) reads the value.
    pub fn message(publish: Ordering, observe: Ordering) {
        struct Shared {
            ready: AtomicBool,
            value: Ptr,
        }
        let s = Arc::new(Shared {
            ready: AtomicBool::new(false),
            value: Ptr(Box::into_raw(Box::new(Pair { a: 0, b: 0 }))),
        });
        let w = s.clone();
        let writer = thread::spawn(move || {
            let p = w.value;
            unsafe { (*p.0).a = 42 };
            w.ready.store(true, publish);
        });
        let r = s.clone();
        let reader = thread::spawn(move || {
            if r.ready.load(observe) {
                let p = r.value;
                let v = unsafe { (*p.0).a };
                assert_eq!(v, 42);
            }
        });
        writer.join().unwrap();
        reader.join().unwrap();
        unsafe { drop(Box::from_raw(s.value.0)) };
    }
}

use std::sync::atomic::Ordering;

const NO_RACE_RUNS: u64 = 2000;

fn config(seed: u64) -> Config {
    Config::new().ignore_env().seed(seed)
}

fn run(seed: u64, iterations: u64, body: impl Fn() + Sync) -> Report {
    let _tracking = instrument::track(Selection::All);
    config(seed).iterations(iterations).run(body)
}

fn assert_race(report: &Report, what: &str) {
    let f =
        report.failure().unwrap_or_else(|| panic!("{what}: no race found\n{}", report.summary()));
    assert_eq!(f.kind, FailureKind::DataRace, "{what}: {f}");
    assert!(f.message.starts_with("data race on Heap@tests/instrument_races.rs:"), "{f}");
    assert!(f.message.contains("with no happens-before between them"), "{f}");
    assert!(f.message.contains(" it at tests/instrument_races.rs:"), "{f}");
}

fn assert_no_race(report: &Report) {
    if let Some(f) = report.failure() {
        panic!("expected no race, got:\n{f}");
    }
    assert_eq!(report.executions, NO_RACE_RUNS);
}

#[test]
fn a_try_lock_with_a_split_acquire_races_on_every_seed() {
    for seed in 1..=10 {
        let report = run(seed, 1000, || code::two_lockers(true));
        assert_race(&report, &format!("seed {seed}"));
    }
}

#[test]
fn a_try_lock_with_a_swap_acquire_has_no_race() {
    assert_no_race(&run(0x0dace, NO_RACE_RUNS, || code::two_lockers(false)));
}

#[test]
fn different_fields_of_one_struct_do_not_race() {
    assert_no_race(&run(0x0dace, NO_RACE_RUNS, code::different_fields));
}

#[test]
fn release_acquire_message_passing_through_a_raw_pointer_has_no_race() {
    assert_no_race(&run(0x0dace, NO_RACE_RUNS, || {
        code::message(Ordering::Release, Ordering::Acquire)
    }));
}

#[test]
fn a_relaxed_flag_does_not_order_a_raw_pointer_write_and_read() {
    for seed in 1..=10 {
        let report = run(seed, 1000, || code::message(Ordering::Relaxed, Ordering::Relaxed));
        assert_race(&report, &format!("seed {seed}"));
    }
}

#[test]
fn with_the_detector_off_the_split_try_lock_passes() {
    let _tracking = instrument::track(Selection::All);
    let report = config(1).race_detection(false).iterations(200).run(|| code::two_lockers(true));
    assert!(report.failure().is_none(), "{}", report.summary());
}
