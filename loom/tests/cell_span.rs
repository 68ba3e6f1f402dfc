//! The access span of loom's `UnsafeCell` pointers: an access lasts from `get`/`get_mut` until
//! the `ConstPtr`/`MutPtr` is dropped (and for `with`/`with_mut` while the closure runs), as
//! in loom. Races only visible through a live pointer are found as `FailureKind::DataRace`
//! with a replayable token; correctly synchronized uses of live pointers are not reported.
//!
//! Every run goes through pctvb's `Config` with a fixed seed and `ignore_env` (a developer's
//! `PCTVB_*` variables cannot change the outcome) and the default strategy, the uniform random
//! walk. In each racy program every execution in which the second thread sees the flag races,
//! about half of them; each seed listed was checked to find it within its budget. The
//! correct programs must pass all their executions.
extern crate pctvb_loom as loom;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, Ordering::*};
use loom::sync::{Arc, Mutex};
use loom::thread;
use pctvb::{Config, FailureKind, Report};

const NO_RACE_RUNS: u64 = 2000;

fn config(seed: u64) -> Config {
    Config::new().ignore_env().seed(seed).name("cell_span")
}

/// A cell and a flag that publishes it.
struct Slot {
    value: UnsafeCell<u64>,
    ready: AtomicBool,
}

// SAFETY: the tests synchronize the cell's accesses (or show that they do not).
unsafe impl Sync for Slot {}

fn slot() -> Arc<Slot> {
    Arc::new(Slot { value: UnsafeCell::new(0), ready: AtomicBool::new(false) })
}

/// Whether the race message `m` gives the access at `at` its thread's step, or says the thread
/// had none yet (a pctvb-loom cell access is no scheduling point of its own).
fn names_step(m: &str, at: &str) -> bool {
    ["step ", "before its first scheduling point"].iter().any(|s| m.contains(&format!("{at} ({s}")))
}

/// Runs `body` on `seed`, expects a data race whose first access is the pointer taken at line
/// `live_line` and still live or ended after the flag's release, and checks that the token
/// replays it.
fn expect_race(seed: u64, live_line: u32, body: fn()) -> Report {
    let report = config(seed).iterations(1000).run(body);
    let failure = report.failure().unwrap_or_else(|| panic!("no race found on seed {seed}"));
    assert_eq!(failure.kind, FailureKind::DataRace, "{failure}");
    let m = &failure.message;
    assert!(m.starts_with("data race on UnsafeCell@loom/tests/cell_span.rs:"), "{m}");
    assert!(names_step(m, &format!("loom/tests/cell_span.rs:{live_line}")), "{m}");
    let token = failure.token.clone().expect("a replay token");
    let again = config(seed).replay(token).run(body);
    let again = again.failure().expect("the replay fails again");
    assert_eq!(again.kind, FailureKind::DataRace);
    assert_eq!(again.message, failure.message);
    report
}

fn assert_passes(body: fn()) {
    let report = config(0x5be4).iterations(NO_RACE_RUNS).run(body);
    if let Some(f) = report.failure() {
        panic!("expected no race, got:\n{f}");
    }
    assert_eq!(report.executions, NO_RACE_RUNS);
}

/// The writer takes its `MutPtr`, publishes the flag, and only then writes through the
/// pointer: a reader that sees the flag is ordered after the pointer was taken, not after the
/// write. Checked only when the pointer is taken, this is no race; it is one.
const MUT_PTR_LINE: u32 = line!() + 5;
fn write_through_a_pointer_taken_before_publishing() {
    let slot = slot();
    let s = slot.clone();
    let writer = thread::spawn(move || {
        let p = s.value.get_mut();
        s.ready.store(true, Release);
        unsafe { *p.deref() = 42 };
        drop(p);
    });
    if slot.ready.load(Acquire) {
        slot.value.with(|p| unsafe { *p });
    }
    writer.join().unwrap();
}

#[test]
fn a_write_through_a_live_mut_ptr_races_with_a_reader_after_the_flag() {
    for seed in [1, 2, 3] {
        let _ = expect_race(seed, MUT_PTR_LINE, write_through_a_pointer_taken_before_publishing);
    }
}

/// The mirror case: the reader takes its `ConstPtr`, signals that it is done, then reads
/// through it; a writer waiting for the signal writes while the pointer is live (or after it
/// is dropped, but unordered with its end).
const CONST_PTR_LINE: u32 = line!() + 5;
fn read_through_a_pointer_after_signalling_done() {
    let slot = slot();
    let s = slot.clone();
    let reader = thread::spawn(move || {
        let p = s.value.get();
        s.ready.store(true, Release);
        let _ = unsafe { *p.deref() };
    });
    if slot.ready.load(Acquire) {
        unsafe { *slot.value.get_mut().deref() = 7 };
    }
    reader.join().unwrap();
}

#[test]
fn a_write_while_another_threads_const_ptr_is_live_is_a_race() {
    for seed in [4, 5, 6] {
        let _ = expect_race(seed, CONST_PTR_LINE, read_through_a_pointer_after_signalling_done);
    }
}

/// The closure form covers the closure: a scheduling point inside it (here the flag's store)
/// lets the reader in while the write is still to come.
const WITH_MUT_LINE: u32 = line!() + 5;
fn publish_inside_with_mut() {
    let slot = slot();
    let s = slot.clone();
    let writer = thread::spawn(move || {
        s.value.with_mut(|p| {
            s.ready.store(true, Release);
            unsafe { *p = 42 };
        });
    });
    if slot.ready.load(Acquire) {
        slot.value.with(|p| unsafe { *p });
    }
    writer.join().unwrap();
}

#[test]
fn with_mut_stays_open_while_its_closure_runs() {
    for seed in [7, 8, 9] {
        let _ = expect_race(seed, WITH_MUT_LINE, publish_inside_with_mut);
    }
}

/// As in loom, a live `MutPtr` claims the cell: a read by another thread while it lives is
/// reported even when the write through it comes later, ordered after the read (by `ack`).
/// Here the read always falls inside the writer's span, so the report says so.
const CLAIM_LINE: u32 = line!() + 6;
fn read_while_a_mut_ptr_is_held() {
    let slot = slot();
    let ack = Arc::new(AtomicBool::new(false));
    let (s, a) = (slot.clone(), ack.clone());
    let writer = thread::spawn(move || {
        let p = s.value.get_mut();
        s.ready.store(true, Release);
        while !a.load(Acquire) {
            thread::yield_now();
        }
        unsafe { *p.deref() = 42 };
    });
    while !slot.ready.load(Acquire) {
        thread::yield_now();
    }
    slot.value.with(|p| unsafe { *p });
    ack.store(true, Release);
    writer.join().unwrap();
}

#[test]
fn the_report_names_the_live_pointer() {
    let report = expect_race(10, CLAIM_LINE, read_while_a_mut_ptr_is_held);
    let m = &report.failure().unwrap().message;
    assert!(
        names_step(
            m,
            &format!("wrote it through a pointer taken at loom/tests/cell_span.rs:{CLAIM_LINE}")
        ) && m.contains("and still live"),
        "{m}"
    );
}

#[test]
fn pointers_dropped_before_the_release_do_not_race() {
    assert_passes(|| {
        let slot = slot();
        let s = slot.clone();
        let writer = thread::spawn(move || {
            let p = s.value.get_mut();
            unsafe { *p.deref() = 42 };
            drop(p);
            s.ready.store(true, Release);
        });
        if slot.ready.load(Acquire) {
            let p = slot.value.get();
            assert_eq!(unsafe { *p.deref() }, 42);
        }
        writer.join().unwrap();
    });
}

#[test]
fn pointers_held_under_a_lock_do_not_race() {
    assert_passes(|| {
        let shared = Arc::new((Mutex::new(()), UnsafeCell::new(0u64)));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let s = shared.clone();
                thread::spawn(move || {
                    let _g = s.0.lock().unwrap();
                    let p = s.1.get_mut();
                    // A scheduling point while the pointer is live: the other thread may
                    // run, but it waits for the lock.
                    thread::yield_now();
                    unsafe { *p.deref() += 1 };
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(unsafe { *shared.1.get().deref() }, 2);
    });
}

#[test]
fn live_const_ptrs_of_two_threads_do_not_race() {
    assert_passes(|| {
        let cell = Arc::new(UnsafeCell::new(5u64));
        let c = cell.clone();
        let reader = thread::spawn(move || {
            let p = c.get();
            thread::yield_now();
            assert_eq!(unsafe { *p.deref() }, 5);
        });
        let p = cell.get();
        thread::yield_now();
        assert_eq!(unsafe { *p.deref() }, 5);
        drop(p);
        reader.join().unwrap();
    });
}

/// A thread's own conflicting access while it holds a live pointer of the cell: as loom (whose
/// cell panics when a write starts while any access of the cell is live, or a read while a
/// write is), a data race whose report names both accesses and says the first pointer was
/// still live. Every execution has it (one thread, or the conflict is within the spawned
/// thread whatever the order), so the first execution fails on any seed.
fn expect_own_race(live_line: u32, second_line: u32, body: fn()) {
    let report = expect_race(11, live_line, body);
    let failure = report.failure().unwrap();
    assert_eq!(failure.execution, 0, "{failure}");
    let m = &failure.message;
    assert!(names_step(m, &format!("cell_span.rs:{live_line}")), "{m}");
    assert!(names_step(m, &format!("cell_span.rs:{second_line}")), "{m}");
    assert!(m.contains("and still live"), "{m}");
    assert!(m.ends_with("the same thread accessed it while its own pointer was live"), "{m}");
}

const OWN_MUT_PTR_LINE: u32 = line!() + 3;
fn with_mut_while_its_own_mut_ptr_lives() {
    let cell = UnsafeCell::new(0u64);
    let p = cell.get_mut();
    cell.with_mut(|q| unsafe { *q = 1 });
    unsafe { *p.deref() = 2 };
}

#[test]
fn with_mut_while_the_threads_own_mut_ptr_lives_is_a_race() {
    expect_own_race(OWN_MUT_PTR_LINE, OWN_MUT_PTR_LINE + 1, with_mut_while_its_own_mut_ptr_lives);
}

const OWN_WITH_LINE: u32 = line!() + 3;
fn get_mut_inside_its_own_with() {
    let cell = UnsafeCell::new(0u64);
    cell.with(|_| {
        let p = cell.get_mut();
        unsafe { *p.deref() = 1 };
    });
}

#[test]
fn get_mut_inside_a_with_of_the_same_cell_is_a_race() {
    expect_own_race(OWN_WITH_LINE, OWN_WITH_LINE + 1, get_mut_inside_its_own_with);
}

/// A read while the same thread's write is live, in a spawned thread (the other thread does
/// not touch the cell): reported whatever the interleaving.
const OWN_READ_LINE: u32 = line!() + 5;
fn read_while_its_own_mut_ptr_lives_in_a_spawned_thread() {
    let cell = Arc::new(UnsafeCell::new(0u64));
    let c = cell.clone();
    let t = thread::spawn(move || {
        let p = c.get_mut();
        let _ = c.get();
        unsafe { *p.deref() = 1 };
    });
    t.join().unwrap();
}

#[test]
fn a_read_while_the_threads_own_mut_ptr_lives_is_a_race() {
    expect_own_race(
        OWN_READ_LINE,
        OWN_READ_LINE + 1,
        read_while_its_own_mut_ptr_lives_in_a_spawned_thread,
    );
}

/// One thread's overlapping reads of a cell, then its writes one after another once they
/// have ended: no conflict.
fn own_reads_then_writes() {
    let cell = UnsafeCell::new(3u64);
    let p = cell.get();
    let q = cell.get();
    cell.with(|r| {
        let s = cell.get();
        assert_eq!(unsafe { *r + *s.deref() + *p.deref() + *q.deref() }, 12);
    });
    drop((p, q));
    // Every read has ended: a write may start, and after it ends, another.
    let w = cell.get_mut();
    unsafe { *w.deref() = 4 };
    drop(w);
    cell.with_mut(|v| unsafe { *v += 1 });
    assert_eq!(cell.with(|v| unsafe { *v }), 5);
}

#[test]
fn a_threads_own_overlapping_reads_and_later_writes_do_not_race() {
    // In two threads at once (each with its cell), so that the run has interleavings to try.
    assert_passes(|| {
        let t = thread::spawn(own_reads_then_writes);
        own_reads_then_writes();
        t.join().unwrap();
    });
}

/// A panic caught inside the execution ends the accesses of the pointers it unwinds past, as
/// loom's guards do (they count the access out whether or not the thread panics): the cell is
/// not left claimed, so later accesses of the same thread and of others are no races.
#[test]
fn a_caught_panic_ends_the_pointers_it_unwinds_past() {
    assert_passes(|| {
        let cell = Arc::new(UnsafeCell::new(0u64));
        let c = cell.clone();
        let t = thread::spawn(move || {
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let p = c.get_mut();
                unsafe { *p.deref() = 1 };
                panic!("caught below");
            }));
            assert!(caught.is_err());
            // The same thread again, after its pointer's access ended in the unwinding.
            c.with_mut(|v| unsafe { *v += 1 });
        });
        t.join().unwrap();
        // Another thread, ordered after the spawned one by the join.
        assert_eq!(cell.with(|v| unsafe { *v }), 2);
    });
}

/// A guard holding a `MutPtr` into a slot whose `Drop` publishes the slot with a release
/// store: its pointer field is dropped after `Drop::drop` returns, so the pointer's access
/// ends after the release, with no scheduling point in between. loom takes that end at the
/// thread's latest synchronising operation, the release, which covers it: a reader that
/// acquires the flag and then reads the slot does not race. (pctvb-loom recorded the end with
/// the clock after the release and reported a race in every execution where the reader saw
/// the flag: a ring buffer whose slot guards publish on drop failed 28 of its 44 loom tests.)
struct Publish<'a> {
    slot: &'a Slot,
    value: loom::cell::MutPtr<u64>,
}

impl Drop for Publish<'_> {
    fn drop(&mut self) {
        self.slot.ready.store(true, Release);
    }
}

#[test]
fn a_pointer_dropped_right_after_the_release_that_publishes_it_does_not_race() {
    assert_passes(|| {
        let slot = slot();
        let s = slot.clone();
        let writer = thread::spawn(move || {
            let guard = Publish { slot: &s, value: s.value.get_mut() };
            unsafe { *guard.value.deref() = 42 };
            drop(guard);
        });
        if slot.ready.load(Acquire) {
            assert_eq!(unsafe { *slot.value.get().deref() }, 42);
        }
        writer.join().unwrap();
    });
}

/// The guard's pointer is used after the release that publishes the slot (a write in the
/// guard's `Drop` after the store): that use is no longer covered, so the reader races with
/// it, whether the pointer is dropped at the release's scheduling point or not.
const USE_AFTER_RELEASE_LINE: u32 = line!() + 17;
struct PublishThenWrite<'a> {
    slot: &'a Slot,
    value: loom::cell::MutPtr<u64>,
}

impl Drop for PublishThenWrite<'_> {
    fn drop(&mut self) {
        self.slot.ready.store(true, Release);
        unsafe { *self.value.deref() = 7 };
    }
}

fn write_through_a_guard_after_its_release() {
    let slot = slot();
    let s = slot.clone();
    let writer = thread::spawn(move || {
        let guard = PublishThenWrite { slot: &s, value: s.value.get_mut() };
        drop(guard);
    });
    if slot.ready.load(Acquire) {
        slot.value.with(|p| unsafe { *p });
    }
    writer.join().unwrap();
}

#[test]
fn a_use_of_the_pointer_after_the_release_races_with_the_reader() {
    for seed in [12, 13, 14] {
        let _ = expect_race(seed, USE_AFTER_RELEASE_LINE, write_through_a_guard_after_its_release);
    }
}

/// A cell access between the release and the pointer's end (loom advances the thread's
/// clock there): the end is no longer covered by the release, as under loom, so the reader
/// races with it.
const ACCESS_AFTER_RELEASE_LINE: u32 = line!() + 6;
fn another_cell_access_between_the_release_and_the_end() {
    let slot = slot();
    let other = Arc::new(UnsafeCell::new(0u64));
    let (s, o) = (slot.clone(), other.clone());
    let writer = thread::spawn(move || {
        let p = s.value.get_mut();
        unsafe { *p.deref() = 1 };
        s.ready.store(true, Release);
        o.with_mut(|v| unsafe { *v = 1 });
        drop(p);
    });
    if slot.ready.load(Acquire) {
        slot.value.with(|p| unsafe { *p });
    }
    writer.join().unwrap();
}

#[test]
fn a_cell_access_after_the_release_uncovers_the_pointers_end() {
    for seed in [15, 16, 17] {
        let _ = expect_race(
            seed,
            ACCESS_AFTER_RELEASE_LINE,
            another_cell_access_between_the_release_and_the_end,
        );
    }
}

/// A lock's guard declared before the pointer beside it: the guard is dropped first, then the
/// pointer, with no scheduling point in between (loom's unlock is none, nor is pctvb-loom's).
/// loom takes the pointer's end at the unlock, which covers it: the next holder of the lock
/// does not race with it. (pctvb-loom made the unlock a scheduling point after the release, so
/// the next holder could run while the pointer was live, and reported a race.)
struct Locked<'a> {
    _guard: loom::sync::MutexGuard<'a, ()>,
    value: loom::cell::MutPtr<u64>,
}

struct WriteLocked<'a> {
    _guard: loom::sync::RwLockWriteGuard<'a, ()>,
    value: loom::cell::MutPtr<u64>,
}

/// As `loom::model` runs a body (these tests run theirs through `Config`, for fixed seeds):
/// unlocks are no scheduling points.
fn as_model() {
    pctvb::__internals::execution::set_unlock_points(false);
}

/// The writer's `Locked` drops its guard, then its pointer; the main thread then (or before)
/// writes the cell under the lock.
fn mutex_guard_then_pointer() {
    let shared = Arc::new((Mutex::new(()), UnsafeCell::new(0u64)));
    let s = shared.clone();
    let writer = thread::spawn(move || {
        let locked = Locked { _guard: s.0.lock().unwrap(), value: s.1.get_mut() };
        unsafe { *locked.value.deref() += 1 };
        drop(locked);
    });
    {
        let _g = shared.0.lock().unwrap();
        shared.1.with_mut(|v| unsafe { *v += 1 });
    }
    writer.join().unwrap();
}

#[test]
fn a_pointer_dropped_right_after_its_guards_unlock_does_not_race() {
    assert_passes(|| {
        as_model();
        mutex_guard_then_pointer();
    });
    assert_passes(|| {
        as_model();
        let shared = Arc::new((loom::sync::RwLock::new(()), UnsafeCell::new(0u64)));
        let s = shared.clone();
        let writer = thread::spawn(move || {
            let locked = WriteLocked { _guard: s.0.write().unwrap(), value: s.1.get_mut() };
            unsafe { *locked.value.deref() += 1 };
            drop(locked);
        });
        {
            let _g = shared.0.read().unwrap();
            shared.1.with(|v| unsafe { *v });
        }
        writer.join().unwrap();
    });
    // `loom::model` itself turns the unlock's point off (its 1000 executions, on pctvb's
    // default seed unless PCTVB_SEED is set; with the point, the race is reported whenever the
    // writer locks first, as `with_unlock_points_the_pointer_ends_after_the_release` shows).
    loom::model(mutex_guard_then_pointer);
}

/// With unlocks as pctvb's scheduling points (pctvb's own default, outside `loom::model`), the
/// end comes after the unlock's release and its point: the next holder races with it, as the
/// report says.
#[test]
fn with_unlock_points_the_pointer_ends_after_the_release() {
    let report = config(21).iterations(1000).run(|| {
        pctvb::__internals::execution::set_unlock_points(true);
        mutex_guard_then_pointer();
    });
    let failure = report.failure().expect("the race is found on seed 21");
    assert_eq!(failure.kind, FailureKind::DataRace, "{failure}");
    assert!(failure.schedule.iter().any(|s| s.operation.starts_with("unlock")), "{failure}");
}

/// The same guard, but an atomic operation (a scheduling point) comes between the unlock and
/// the pointer's end: the end is no longer covered by the unlock, as under loom (whose clock
/// advances at that operation), so the next holder races with it.
const AFTER_UNLOCK_LINE: u32 = line!() + 9;
fn a_point_between_the_unlock_and_the_end() {
    as_model();
    let shared = Arc::new((Mutex::new(()), UnsafeCell::new(0u64), AtomicBool::new(false)));
    let s = shared.clone();
    let writer = thread::spawn(move || {
        let p;
        {
            let _g = s.0.lock().unwrap();
            p = s.1.get_mut();
            unsafe { *p.deref() += 1 };
        }
        s.2.load(Relaxed);
        drop(p);
    });
    {
        let _g = shared.0.lock().unwrap();
        shared.1.with_mut(|v| unsafe { *v += 1 });
    }
    writer.join().unwrap();
}

#[test]
fn a_point_after_the_unlock_uncovers_the_pointers_end() {
    for seed in [18, 19, 20] {
        let _ = expect_race(seed, AFTER_UNLOCK_LINE, a_point_between_the_unlock_and_the_end);
    }
}
