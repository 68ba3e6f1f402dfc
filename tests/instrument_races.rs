//! The data-race check of instrumented pointer accesses (issue #16): under
//! `#[pctvb::instrument]`, raw-pointer reads and writes and dereferences of
//! `std::cell::UnsafeCell::get()` are checked against the happens-before edges of the
//! synchronization, per byte range, like `pctvb::cell::UnsafeCell` accesses: of variables'
//! memory, and of any other memory (the test body's, say), with or without a tracking session.
//!
//! The runs of the first group track every variable of the instrumented code
//! (`instrument::track(All)`); those of `mini_try_lock` and the overlap tests start no session
//! (the run arms the pointer hooks itself). Every run uses a fixed seed, `ignore_env` and the
//! default strategy (the uniform random walk). The racy programs fail on every seed listed;
//! the correct ones pass all their executions.

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

/// A miniature of try-lock 0.2.5 (`TryLock`, `Locked`), written for this test: the guarded
/// value sits in a `std::cell::UnsafeCell` reached through `get()` and a raw dereference in
/// `Deref`/`DerefMut`. `try_lock_split` is the injected bug of `scripts/instrument-crates.sh`:
/// the acquire `swap` split into a load and a store, so two threads can hold the lock.
#[pctvb::instrument(force)]
mod mini_try_lock {
    use std::cell::UnsafeCell;
    use std::ops::{Deref, DerefMut};
    use std::sync::atomic::{AtomicBool, Ordering};

    pub struct TryLock<T> {
        is_locked: AtomicBool,
        value: UnsafeCell<T>,
    }

    // SAFETY: the flag serializes the accesses of `value` (not in `try_lock_split`: the bug).
    unsafe impl<T: Send> Send for TryLock<T> {}
    // SAFETY: as `Send`.
    unsafe impl<T: Send> Sync for TryLock<T> {}

    impl<T> TryLock<T> {
        pub fn new(value: T) -> TryLock<T> {
            TryLock { is_locked: AtomicBool::new(false), value: UnsafeCell::new(value) }
        }

        pub fn try_lock(&self) -> Option<Locked<'_, T>> {
            if !self.is_locked.swap(true, Ordering::Acquire) {
                Some(Locked { lock: self })
            } else {
                None
            }
        }

        pub fn try_lock_split(&self) -> Option<Locked<'_, T>> {
            if !self.is_locked.load(Ordering::Acquire) {
                self.is_locked.store(true, Ordering::Relaxed);
                Some(Locked { lock: self })
            } else {
                None
            }
        }
    }

    pub struct Locked<'a, T> {
        lock: &'a TryLock<T>,
    }

    impl<T> Deref for Locked<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            unsafe { &*self.lock.value.get() }
        }
    }

    impl<T> DerefMut for Locked<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            unsafe { &mut *self.lock.value.get() }
        }
    }

    impl<T> Drop for Locked<'_, T> {
        fn drop(&mut self) {
            self.lock.is_locked.store(false, Ordering::Release);
        }
    }
}

/// Accesses of overlapping memory at different start addresses.
#[pctvb::instrument(force)]
mod overlap {
    use std::thread;

    /// A pointer to a `u64` the test body allocated.
    #[derive(Clone, Copy)]
    pub struct P(pub *mut u64);
    // SAFETY: the threads' accesses are what the tests look at.
    unsafe impl Send for P {}

    /// One thread writes the whole `u64`, another reads its upper half as a `u32`.
    pub fn whole_and_upper_half(p: P) {
        let w = thread::spawn(move || {
            let q = p;
            unsafe { *q.0 = u64::MAX };
        });
        let r = thread::spawn(move || {
            let q = p;
            let half = (q.0 as *const u32).wrapping_add(1);
            unsafe { *half }
        });
        w.join().unwrap();
        let _ = r.join().unwrap();
    }

    /// Two threads write the two halves: disjoint bytes, no race.
    pub fn two_halves(p: P) {
        let lo = thread::spawn(move || {
            let q = p;
            let lo = q.0 as *mut u32;
            unsafe { *lo = 1 };
        });
        let hi = thread::spawn(move || {
            let q = p;
            let hi = (q.0 as *mut u32).wrapping_add(1);
            unsafe { *hi = 2 };
        });
        lo.join().unwrap();
        hi.join().unwrap();
    }
}

/// `&raw mut`/`&raw const` take an address and access nothing, like `ptr::addr_of!`.
/// Written in `unsafe` blocks, as code for older compilers is (where a dereference in unsafe
/// code is a site).
#[pctvb::instrument(force)]
#[allow(static_mut_refs, unused_unsafe)]
mod raw_addr {
    use std::sync::Mutex;
    use std::thread;

    /// Two fields of one heap struct.
    pub struct Node {
        pub a: u64,
        pub b: u64,
    }

    /// A raw pointer that may cross threads.
    #[derive(Clone, Copy)]
    pub struct NP(pub *mut Node);
    // SAFETY: the threads' accesses are what the tests look at.
    unsafe impl Send for NP {}

    pub static mut COUNTER: u64 = 0;
    static LOCK: Mutex<()> = Mutex::new(());

    /// One thread writes `(*p).b`; the other takes its address with `&raw mut`, and
    /// `addr_of!`, and that of the whole node with `&raw const *p`: no access, no race.
    pub fn field_addresses() {
        let p = NP(Box::into_raw(Box::new(Node { a: 0, b: 0 })));
        let w = thread::spawn(move || {
            let q = p;
            unsafe { (*q.0).b = 1 }
        });
        let r = thread::spawn(move || {
            let q = p;
            let b = unsafe { &raw mut (*q.0).b };
            let node = unsafe { &raw const *q.0 };
            let macro_b = unsafe { std::ptr::addr_of!((*q.0).b) };
            assert_eq!(b as usize, macro_b as usize);
            assert!(node as usize <= b as usize);
        });
        w.join().unwrap();
        r.join().unwrap();
        let n = unsafe { Box::from_raw(p.0) };
        assert_eq!(n.a + n.b, 1);
    }

    /// One thread increments a `static mut` under a lock; the other takes its address without
    /// the lock (no access).
    pub fn static_address() {
        let w = thread::spawn(|| {
            let _g = LOCK.lock().unwrap();
            unsafe { COUNTER += 1 }
        });
        let r = thread::spawn(|| unsafe { &raw const COUNTER } as usize);
        w.join().unwrap();
        assert_ne!(r.join().unwrap(), 0);
    }

    /// As `field_addresses`, but the address is then read through: a race.
    pub fn read_through_the_address() {
        let p = NP(Box::into_raw(Box::new(Node { a: 0, b: 0 })));
        let w = thread::spawn(move || {
            let q = p;
            unsafe { (*q.0).b = 1 }
        });
        let r = thread::spawn(move || {
            let q = p;
            let b = unsafe { &raw const (*q.0).b };
            unsafe { *b }
        });
        w.join().unwrap();
        let _ = r.join().unwrap();
        drop(unsafe { Box::from_raw(p.0) });
    }
}

/// Reborrows (`&*p`, `&(*p).field`, `&mut *p` bound to a local) create a reference and access
/// nothing; a read through the reference is an access.
#[pctvb::instrument(force)]
mod reborrow {
    use pctvb::cell::UnsafeCell;
    use std::sync::atomic::{fence, AtomicUsize, Ordering};
    use std::sync::Mutex;
    use std::thread;

    /// What a hand-written `Arc` points to: its count, a lock and the value the lock guards,
    /// in a pctvb `UnsafeCell` whose contents the lock's holder writes through a raw pointer.
    struct Inner {
        count: AtomicUsize,
        lock: Mutex<()>,
        value: UnsafeCell<u64>,
    }

    /// A hand-written `Arc<Inner>`: every method reborrows the shared `Inner` with `&*ptr`,
    /// without the lock, while other threads write inside its cell under the lock.
    pub struct MyArc {
        ptr: *mut Inner,
    }

    // SAFETY: `Inner` is shared as an `Arc` shares its value: the count through atomics, the
    // value under the lock.
    unsafe impl Send for MyArc {}

    impl MyArc {
        pub fn new() -> MyArc {
            let inner = Inner {
                count: AtomicUsize::new(1),
                lock: Mutex::new(()),
                value: UnsafeCell::new(0),
            };
            MyArc { ptr: Box::into_raw(Box::new(inner)) }
        }

        fn inner(&self) -> &Inner {
            unsafe { &*self.ptr }
        }

        /// Adds `v` to the value under the lock, through the cell's raw pointer.
        pub fn add(&self, v: u64) {
            let inner = self.inner();
            let _g = inner.lock.lock().unwrap();
            inner.value.with_mut(|p| unsafe { *p += v });
        }

        /// The value, read under the lock; the lock is reached through `&(*ptr).lock`.
        pub fn get(&self) -> u64 {
            let lock = unsafe { &(*self.ptr).lock };
            let _g = lock.lock().unwrap();
            self.inner().value.with(|p| unsafe { *p })
        }
    }

    impl Clone for MyArc {
        fn clone(&self) -> MyArc {
            self.inner().count.fetch_add(1, Ordering::Relaxed);
            MyArc { ptr: self.ptr }
        }
    }

    impl Drop for MyArc {
        /// The detector records a destructor's accesses without checking them, but checks
        /// later ones against them: another thread's write in the cell after this reborrow
        /// raced with it when a reborrow was a read.
        fn drop(&mut self) {
            let inner = unsafe { &*self.ptr };
            if inner.count.fetch_sub(1, Ordering::Release) == 1 {
                fence(Ordering::Acquire);
                drop(unsafe { Box::from_raw(self.ptr) });
            }
        }
    }

    /// Two threads add to the value and drop their clones; the last drop frees it.
    pub fn two_adders() {
        let a = MyArc::new();
        let handles: Vec<_> = (1..=2)
            .map(|i| {
                let c = a.clone();
                thread::spawn(move || {
                    c.add(i);
                    let v = c.get();
                    assert!((1..=3).contains(&v), "{v}");
                    drop(c);
                })
            })
            .collect();
        let seen = a.get();
        drop(a);
        for h in handles {
            h.join().unwrap();
        }
        assert!(seen <= 3, "{seen}");
    }

    /// Two fields of one heap struct.
    pub struct Node {
        pub a: u64,
        pub b: u64,
    }

    /// A raw pointer that may cross threads.
    #[derive(Clone, Copy)]
    pub struct NP(pub *mut Node);
    // SAFETY: the threads' accesses are what the tests look at.
    unsafe impl Send for NP {}

    /// One thread writes `(*p).b`; the other reborrows the node and its fields (no access),
    /// reads `a` through its reference (another field: no race), and reads `b` through the
    /// node's reference (`node.b`, `through_field` false) or the field's (`*b`), with nothing
    /// ordering it after the write: a race, found at that read.
    pub fn read_through_the_reference(through_field: bool) -> u64 {
        let p = NP(Box::into_raw(Box::new(Node { a: 0, b: 0 })));
        let w = thread::spawn(move || {
            let q = p;
            unsafe { (*q.0).b = 1 }
        });
        let r = thread::spawn(move || {
            let q = p;
            let node = unsafe { &*q.0 };
            let a = unsafe { &(*q.0).a };
            let b = unsafe { &(*q.0).b };
            assert_eq!(*a, 0);
            if through_field {
                *b
            } else {
                node.b
            }
        });
        w.join().unwrap();
        let b = r.join().unwrap();
        drop(unsafe { Box::from_raw(p.0) });
        b
    }
}

/// A value that owns heap memory behind a raw pointer and reads it in its destructor.
#[pctvb::instrument(force)]
mod owner {
    pub struct Owner {
        p: *mut u64,
    }

    // SAFETY: the tests share it through an `Arc` and write it from one thread at a time.
    unsafe impl Send for Owner {}
    // SAFETY: as `Send`.
    unsafe impl Sync for Owner {}

    impl Owner {
        pub fn new() -> Owner {
            Owner { p: Box::into_raw(Box::new(0)) }
        }

        pub fn set(&self, v: u64) {
            unsafe { *self.p = v };
        }
    }

    /// A guard whose destructor does nothing but be instrumented.
    pub struct Guard;

    impl Drop for Guard {
        fn drop(&mut self) {}
    }

    /// Writes through `p`.
    pub fn poke(p: *mut u64) {
        unsafe { *p = 3 };
    }

    impl Drop for Owner {
        fn drop(&mut self) {
            let v = unsafe { *self.p };
            assert!(v <= 2);
            drop(unsafe { Box::from_raw(self.p) });
        }
    }
}

/// A lost update of a `static mut` (reached by name: the pass makes it a pointer access).
#[pctvb::instrument(force)]
#[allow(static_mut_refs)]
mod lost_update {
    use std::thread;

    static mut COUNT: u64 = 0;

    pub fn two_adders() {
        let adders: Vec<_> = (0..2).map(|_| thread::spawn(|| unsafe { COUNT += 1 })).collect();
        for a in adders {
            a.join().unwrap();
        }
    }
}

/// Slots of an array reached through a raw pointer or a `static mut`, indexed by an expression
/// that is not a plain variable (`[i + 1]`, `[i.0]`, `[self.idx]`, `[i % 4]`): the probe is
/// the element's address, with the index evaluated once, where the access evaluates it.
#[pctvb::instrument(force)]
#[allow(static_mut_refs)]
mod indexed {
    use std::sync::Mutex;

    /// Four slots of one heap struct.
    pub struct Slots {
        pub slots: [u64; 4],
    }

    /// A raw pointer that may cross threads.
    #[derive(Clone, Copy)]
    pub struct SP(pub *mut Slots);
    // SAFETY: the threads' accesses are what the tests look at.
    unsafe impl Send for SP {}

    pub fn new() -> SP {
        SP(Box::into_raw(Box::new(Slots { slots: [0; 4] })))
    }

    pub fn slots(p: SP) -> [u64; 4] {
        unsafe { Box::from_raw(p.0) }.slots
    }

    /// Writes slot `i + 1`.
    pub fn write_after(p: SP, i: usize) {
        unsafe { (*p.0).slots[i + 1] = 1 };
    }

    /// Reads slot `j + 1`.
    pub fn read_after(p: SP, j: usize) -> u64 {
        unsafe { (*p.0).slots[j + 1] }
    }

    /// Writes slot 1.
    pub fn write_one(p: SP) {
        unsafe { (*p.0).slots[1] = 1 };
    }

    /// An index in a tuple struct.
    pub struct Index(pub usize);

    /// Writes slot `i.0`.
    pub fn write_at(p: SP, i: Index) {
        unsafe { (*p.0).slots[i.0] = 1 };
    }

    /// A pointer and an index held together.
    pub struct Cursor {
        pub p: *mut Slots,
        pub idx: usize,
    }

    // SAFETY: as `SP`.
    unsafe impl Send for Cursor {}

    impl Cursor {
        /// Writes slot `self.idx`.
        pub fn write(&self) {
            unsafe { (*self.p).slots[self.idx] = 1 };
        }
    }

    pub static mut TABLE: [u64; 4] = [0; 4];

    /// Increments `TABLE[i % 4]`.
    pub fn bump(i: usize) {
        unsafe { TABLE[i % 4] += 1 };
    }

    /// The sum of `TABLE[i..i + 2]` (a method reads the subslice).
    pub fn sum_two(i: usize) -> u64 {
        unsafe { TABLE[i..i + 2].iter().sum() }
    }

    static SLOT: Mutex<usize> = Mutex::new(2);

    /// Increments the slot the lock holds, under the lock: the guard, a temporary of the index
    /// expression, lives until the end of the statement.
    pub fn bump_locked(p: SP) {
        unsafe { (*p.0).slots[*SLOT.lock().unwrap()] += 1 };
    }

    /// Writes `v` to the slot `next()` gives.
    pub fn write_next(p: SP, next: &mut dyn FnMut() -> usize, v: u64) {
        unsafe { (*p.0).slots[next()] = v };
    }

    /// Two rows of two cells of one heap struct.
    pub struct Grid {
        pub cells: [[u64; 2]; 2],
    }

    /// Writes `v` to the cell `cells[row()][col()]` of the grid `grid()` points to: a computed
    /// pointer and two index expressions, each evaluated once, in that order.
    pub fn write_cell(
        grid: &mut dyn FnMut() -> *mut Grid,
        row: &mut dyn FnMut() -> usize,
        col: &mut dyn FnMut() -> usize,
        v: u64,
    ) {
        unsafe { (*grid()).cells[row()][col()] = v };
    }

    /// A raw pointer to a grid that may cross threads.
    #[derive(Clone, Copy)]
    pub struct GP(pub *mut Grid);
    // SAFETY: as `SP`.
    unsafe impl Send for GP {}

    pub fn new_grid() -> GP {
        GP(Box::into_raw(Box::new(Grid { cells: [[0; 2]; 2] })))
    }

    pub fn free_grid(g: GP) {
        drop(unsafe { Box::from_raw(g.0) });
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

/// Two threads of the test body take the miniature try-lock (created by the test body, outside
/// instrumented code), each until it got it once, and increment the value through the guard.
fn contend(split: bool) {
    let lock = std::sync::Arc::new(mini_try_lock::TryLock::new(0u64));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let l = lock.clone();
            pctvb::thread::spawn(move || loop {
                let guard = if split { l.try_lock_split() } else { l.try_lock() };
                if let Some(mut g) = guard {
                    *g += 1;
                    break;
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn try_lock_with_a_split_swap_races_on_memory_of_the_test_body_without_a_session() {
    for seed in 1..=20 {
        let report = config(seed).iterations(1000).run(|| contend(true));
        let f = report
            .failure()
            .unwrap_or_else(|| panic!("seed {seed}: no race found\n{}", report.summary()));
        assert_eq!(f.kind, FailureKind::DataRace, "seed {seed}: {f}");
        assert!(f.message.starts_with("data race on memory at 0x"), "{f}");
        assert!(f.message.contains("reached through `*self.lock.value.get()`"), "{f}");
        // No watching allocator in this test binary: the report says what it cannot rule out.
        assert!(f.message.contains("install pctvb::alloc::WatchFrees"), "{f}");
        assert!(f.message.contains("wrote it at tests/instrument_races.rs:"), "{f}");
    }
}

#[test]
fn try_lock_with_its_swap_has_no_race_without_a_session() {
    // The seeds of scripts/instrument-crates.sh's check of the published crate (which runs
    // 1000 executions per seed in a release build; 300 here keep the debug test short).
    for seed in 1..=20 {
        let report = config(seed).iterations(300).run(|| contend(false));
        if let Some(f) = report.failure() {
            panic!("seed {seed}: expected no race, got:\n{f}");
        }
        assert_eq!(report.executions, 300, "seed {seed}");
    }
}

#[test]
fn try_lock_with_a_split_swap_passes_with_the_detector_off() {
    let report = config(3).race_detection(false).iterations(300).run(|| contend(true));
    assert!(report.failure().is_none(), "{}", report.summary());
}

#[test]
fn raw_addresses_of_fields_and_pointees_are_no_accesses() {
    for seed in 1..=3 {
        let report = run(seed, NO_RACE_RUNS, raw_addr::field_addresses);
        assert_no_race(&report);
    }
}

#[test]
fn a_raw_address_of_a_static_mut_is_no_access() {
    for seed in 1..=3 {
        let report = run(seed, NO_RACE_RUNS, raw_addr::static_address);
        assert_no_race(&report);
    }
}

#[test]
fn a_read_through_a_raw_address_still_races() {
    for seed in 1..=5 {
        let report = run(seed, 1000, raw_addr::read_through_the_address);
        assert_race(&report, &format!("seed {seed}"));
        let f = report.failure().unwrap();
        assert!(f.message.contains("read it at"), "{f}");
    }
}

/// The test body's `u64`, freed when the execution ends.
fn with_u64(f: fn(overlap::P)) {
    let p = overlap::P(Box::into_raw(Box::new(0u64)));
    f(p);
    drop(unsafe { Box::from_raw(p.0) });
}

#[test]
fn a_write_and_a_read_of_its_upper_half_overlap() {
    for seed in 1..=10 {
        let report = config(seed).iterations(1000).run(|| with_u64(overlap::whole_and_upper_half));
        let f = report.failure().unwrap_or_else(|| panic!("seed {seed}: no race"));
        assert_eq!(f.kind, FailureKind::DataRace, "seed {seed}: {f}");
        // Whichever of the two accesses came second reports the race.
        let through = ["reached through `*half`", "reached through `*q.0`"];
        assert!(through.iter().any(|t| f.message.contains(t)), "{f}");
        assert!(f.message.contains("wrote it at tests/instrument_races.rs:"), "{f}");
        assert!(f.message.contains("read it at tests/instrument_races.rs:"), "{f}");
    }
}

#[test]
fn writes_of_the_two_halves_of_a_u64_do_not_race() {
    assert_no_race(&config(0x0dace).iterations(NO_RACE_RUNS).run(|| with_u64(overlap::two_halves)));
}

#[test]
fn a_destructor_run_by_the_last_arc_clone_on_another_thread_does_not_race() {
    // The `Arc`'s reference count (std's, no pctvb atomic) is what orders main's write before
    // the destructor when the spawned thread drops the last clone.
    let dropped_in_thread = std::sync::atomic::AtomicU64::new(0);
    let report = config(0x0dace).iterations(NO_RACE_RUNS).run(|| {
        let o = std::sync::Arc::new(owner::Owner::new());
        let o2 = o.clone();
        let h = pctvb::thread::spawn(move || {
            let last = std::sync::Arc::strong_count(&o2) == 1;
            drop(o2);
            last
        });
        o.set(2);
        drop(o);
        if h.join().unwrap() {
            dropped_in_thread.fetch_add(1, Ordering::Relaxed);
        }
    });
    assert_no_race(&report);
    assert!(dropped_in_thread.load(Ordering::Relaxed) > 0, "the thread never dropped last");
}

#[test]
fn accesses_after_a_destructor_are_still_checked() {
    // The spawned thread writes first (main waits on a Relaxed flag: no happens-before), then
    // main drops an instrumented guard and writes: the destructor must not hide the race.
    for seed in 1..=5 {
        let report = config(seed).iterations(200).run(|| {
            let p = overlap::P(Box::into_raw(Box::new(0u64)));
            let done = std::sync::Arc::new(pctvb::sync::atomic::AtomicBool::new(false));
            let d = done.clone();
            let t = pctvb::thread::spawn(move || {
                let q = p;
                owner::poke(q.0);
                d.store(true, Ordering::Relaxed);
            });
            while !done.load(Ordering::Relaxed) {
                pctvb::thread::yield_now();
            }
            drop(owner::Guard);
            owner::poke(p.0);
            t.join().unwrap();
            drop(unsafe { Box::from_raw(p.0) });
        });
        let f = report.failure().unwrap_or_else(|| panic!("seed {seed}: no race"));
        assert_eq!(f.kind, FailureKind::DataRace, "seed {seed}: {f}");
        assert_eq!(report.executions, 1, "seed {seed}: every execution races");
    }
}

#[pctvb::instrument(force)]
mod first_access {
    /// Written by each thread first thing, before any scheduling point of its own.
    pub static mut SLOT: u64 = 0;

    pub fn write(v: u64) {
        // SAFETY: racy on purpose: the race is what the test looks for.
        unsafe { SLOT = v };
    }
}

#[test]
fn a_race_before_a_threads_first_scheduling_point_names_no_step_of_another_thread() {
    // Without a session a pointer access is no scheduling point: a thread that races first
    // thing has no step of its own yet, and the report says so rather than "step 0" (the test
    // body's spawn). Fixed seed.
    let report = config(3).iterations(200).run(|| {
        let a = pctvb::thread::spawn(|| first_access::write(1));
        let b = pctvb::thread::spawn(|| first_access::write(2));
        a.join().unwrap();
        b.join().unwrap();
    });
    let f = report.failure().expect("the two first writes race");
    assert_eq!(f.kind, FailureKind::DataRace, "{f}");
    assert!(f.message.contains("(before its first scheduling point)"), "{f}");
    assert!(!f.message.contains("(step 0)"), "{f}");
    // A static's memory, never freed: named as such, without the caveat about reused
    // addresses (Linux reads it off the process's mappings).
    if cfg!(target_os = "linux") {
        assert!(f.message.starts_with("data race on static memory at 0x"), "{f}");
        assert!(!f.message.contains("WatchFrees"), "{f}");
    }
}

#[test]
fn a_static_mut_lost_updates_shape_counts_both_racing_threads() {
    // The race is between the two adders: t=3 with the body, counted as the spawner of the
    // second while the first existed, or as preempted if minimization leaves a preemption
    // (it said "t=1 thread" without preemptions: only the second access's thread). Fixed
    // seeds 1..=5.
    for seed in 1..=5 {
        let report = run(seed, 200, lost_update::two_adders);
        let f = report.failure().unwrap_or_else(|| panic!("seed {seed}: no race"));
        assert_eq!(f.kind, FailureKind::DataRace, "seed {seed}: {f}");
        let shape = f.shape.expect("measured");
        assert_eq!(shape.threads, 3, "{f}");
        if shape.preemptions == 0 {
            assert_eq!(shape.spawners, 1, "{f}");
            let text = f.to_string();
            assert!(text.contains("among t=3 threads (counting the one that spawned"), "{text}");
        }
    }
}

#[test]
fn reborrowing_an_arc_like_value_while_another_thread_writes_in_its_cell_is_no_race() {
    // Each thread reborrows the shared `Inner` with `&*ptr` before taking the lock under which
    // the other writes inside `Inner`'s cell: creating a reference accesses nothing (as in
    // Miri), so only the locked accesses count, and they are ordered. Fixed seeds.
    for seed in 1..=3 {
        assert_no_race(&run(seed, NO_RACE_RUNS, reborrow::two_adders));
    }
}

#[test]
fn a_read_through_a_reborrowed_reference_still_races() {
    // The reader reborrows the node and its fields (no access) and reads `b` through a
    // reference: that read races with the writer's. Fixed seeds.
    for through_field in [false, true] {
        for seed in 1..=5 {
            let report = run(seed, 1000, || {
                reborrow::read_through_the_reference(through_field);
            });
            let what = format!("seed {seed}, through the field's reference: {through_field}");
            assert_race(&report, &what);
            let f = report.failure().unwrap();
            assert!(f.message.contains("read it at"), "{what}: {f}");
            assert!(f.message.contains("wrote it at"), "{what}: {f}");
        }
    }
}

#[test]
fn a_tracked_statics_race_names_it_static_in_the_message_and_the_schedule() {
    // A session tracks the `static mut`: its accesses are scheduling points, and the message
    // and the printed schedule name the same object, `static@` its declaration (the schedule
    // said `Heap@`, the message `static@`). Fixed seeds 1..=3.
    for seed in 1..=3 {
        let report = run(seed, 200, lost_update::two_adders);
        let f = report.failure().unwrap_or_else(|| panic!("seed {seed}: no race"));
        assert_eq!(f.kind, FailureKind::DataRace, "seed {seed}: {f}");
        let prefix = "data race on static@tests/instrument_races.rs:";
        assert!(f.message.starts_with(prefix), "seed {seed}: {f}");
        // `static@tests/instrument_races.rs:L:C` in the message; the schedule shortens the path.
        let site = f.message[prefix.len()..].split(':').take(2).collect::<Vec<_>>().join(":");
        let text = f.to_string();
        let in_schedule = format!("write static@instrument_races.rs:{site} ");
        assert_eq!(text.matches(&in_schedule).count(), 2, "seed {seed}: {text}");
        assert!(!text.contains("Heap@"), "seed {seed}: {text}");
    }
}

/// Runs `a` and `b` on two threads over one `indexed::Slots`, and frees it.
fn two_on_slots(a: fn(indexed::SP), b: fn(indexed::SP)) {
    let p = indexed::new();
    let ta = pctvb::thread::spawn(move || a(p));
    let tb = pctvb::thread::spawn(move || b(p));
    ta.join().unwrap();
    tb.join().unwrap();
    indexed::slots(p);
}

/// Two threads increment `indexed::TABLE[i % 4]`, one with each `i`.
fn two_bumps(i: usize, j: usize) {
    let a = pctvb::thread::spawn(move || indexed::bump(i));
    let b = pctvb::thread::spawn(move || indexed::bump(j));
    a.join().unwrap();
    b.join().unwrap();
}

/// Writes `indexed::Cursor { p, idx }.write()` on two threads, one with each index.
fn two_cursors(i: usize, j: usize) {
    let p = indexed::new();
    let spawn = |idx| {
        let c = indexed::Cursor { p: p.0, idx };
        pctvb::thread::spawn(move || c.write())
    };
    let (a, b) = (spawn(i), spawn(j));
    a.join().unwrap();
    b.join().unwrap();
    indexed::slots(p);
}

#[test]
fn different_slots_indexed_by_expressions_do_not_race() {
    // Each form wrote different slots on the two threads and was reported as a race: the probe
    // covered the whole array whenever the index was not a literal or a plain variable. Fixed
    // seed.
    let forms: [(&str, fn()); 7] = [
        ("slots[i + 1], i = 0 and 1", || {
            two_on_slots(|p| indexed::write_after(p, 0), |p| indexed::write_after(p, 1))
        }),
        ("slots[i.0], 0 and 3", || {
            two_on_slots(
                |p| indexed::write_at(p, indexed::Index(0)),
                |p| indexed::write_at(p, indexed::Index(3)),
            )
        }),
        ("(*self.p).slots[self.idx], 1 and 2", || two_cursors(1, 2)),
        ("slots[1] written, slots[j + 1] read with j = 1", || {
            two_on_slots(indexed::write_one, |p| {
                indexed::read_after(p, 1);
            })
        }),
        ("TABLE[i % 4] += 1, i = 1 and 2", || two_bumps(1, 2)),
        ("slots[next()], 0 and 3", || {
            two_on_slots(
                |p| indexed::write_next(p, &mut || 0, 1),
                |p| indexed::write_next(p, &mut || 3, 1),
            )
        }),
        ("slots[*LOCK.lock().unwrap()] += 1 under the lock", || {
            two_on_slots(indexed::bump_locked, indexed::bump_locked)
        }),
    ];
    for (what, body) in forms {
        let report = run(0x0dace, NO_RACE_RUNS, body);
        if let Some(f) = report.failure() {
            panic!("{what}: expected no race, got:\n{f}");
        }
        assert_eq!(report.executions, NO_RACE_RUNS, "{what}");
    }
}

#[test]
fn the_same_slot_indexed_by_expressions_still_races() {
    // The element's probe is still a probe: two unordered writes of one slot (different
    // index values, same slot) race. Fixed seeds 1..=3.
    let forms: [(&str, fn()); 5] = [
        ("slots[i + 1], i = 0 twice", || {
            two_on_slots(|p| indexed::write_after(p, 0), |p| indexed::write_after(p, 0))
        }),
        ("slots[i.0] and slots[i + 1] of slot 2", || {
            two_on_slots(
                |p| indexed::write_at(p, indexed::Index(2)),
                |p| indexed::write_after(p, 1),
            )
        }),
        ("(*self.p).slots[self.idx], 3 twice", || two_cursors(3, 3)),
        ("slots[next()] and slots[1]", || {
            two_on_slots(|p| indexed::write_next(p, &mut || 1, 1), indexed::write_one)
        }),
        ("slots[1] written, slots[j + 1] read with j = 0", || {
            two_on_slots(indexed::write_one, |p| {
                indexed::read_after(p, 0);
            })
        }),
    ];
    for (what, body) in forms {
        for seed in 1..=3 {
            let report = run(seed, 1000, body);
            assert_race(&report, &format!("{what}, seed {seed}"));
        }
    }
    // `TABLE[0]` and `TABLE[4 % 4]`: the static, named as such.
    for seed in 1..=3 {
        let report = run(seed, 1000, || two_bumps(0, 4));
        let f = report.failure().unwrap_or_else(|| panic!("seed {seed}: no race on TABLE[0]"));
        assert_eq!(f.kind, FailureKind::DataRace, "seed {seed}: {f}");
        assert!(f.message.starts_with("data race on static@tests/instrument_races.rs:"), "{f}");
    }
}

#[test]
fn an_index_expression_is_evaluated_once_and_in_order() {
    // Inside an execution, where the race check arms every probe (the race tests show these
    // probes run): the index's side effects happen once, and the access writes the slot (the
    // cell) the evaluation gave. The grid's pointer, row and column are each evaluated once, in
    // that order. One thread: one execution. Fixed seed.
    let report = config(5).iterations(20).run(|| {
        let p = indexed::new();
        let mut calls = 0;
        let mut next = || {
            calls += 1;
            calls
        };
        indexed::write_next(p, &mut next, 7);
        indexed::write_next(p, &mut next, 8);
        assert_eq!(calls, 2);
        assert_eq!(indexed::slots(p), [0, 7, 8, 0]);

        let g = indexed::new_grid();
        let order = std::cell::RefCell::new(Vec::new());
        let mut grid = || {
            order.borrow_mut().push("grid");
            g.0
        };
        let mut row = || {
            order.borrow_mut().push("row");
            1
        };
        let mut col = || {
            order.borrow_mut().push("col");
            0
        };
        indexed::write_cell(&mut grid, &mut row, &mut col, 5);
        assert_eq!(*order.borrow(), ["grid", "row", "col"]);
        assert_eq!(unsafe { (*g.0).cells }, [[0, 0], [5, 0]]);
        indexed::free_grid(g);
    });
    assert!(report.failure().is_none(), "{}", report.summary());
    assert_eq!(report.executions, 1);
}

#[test]
fn cells_of_a_grid_through_a_computed_pointer_are_told_apart() {
    // The grid's pointer is a call's result and both indices are expressions: the probe reads
    // the stashed pointer and row. Different cells do not race; the same cell does. Fixed
    // seeds.
    fn two_cells(a: (usize, usize), b: (usize, usize)) {
        let g = indexed::new_grid();
        let write = move |(r, c): (usize, usize)| {
            pctvb::thread::spawn(move || {
                let g = g;
                indexed::write_cell(&mut || g.0, &mut || r, &mut || c, 1)
            })
        };
        let (ta, tb) = (write(a), write(b));
        ta.join().unwrap();
        tb.join().unwrap();
        indexed::free_grid(g);
    }
    assert_no_race(&run(0x0dace, NO_RACE_RUNS, || two_cells((0, 1), (1, 0))));
    for seed in 1..=3 {
        let report = run(seed, 1000, || two_cells((1, 1), (1, 1)));
        assert_race(&report, &format!("seed {seed}"));
    }
}

#[test]
fn a_subslice_indexed_by_a_range_is_its_elements() {
    // `TABLE[i..i + 2]` read by a method: the probe is the subslice's bytes, neither the whole
    // array (a false race with a write of another slot) nor nothing (a missed race: a
    // subslice's pointer was taken for no pointer). Fixed seeds.
    fn sum_and_bump(sum_from: usize, bump: usize) {
        let a = pctvb::thread::spawn(move || {
            indexed::sum_two(sum_from);
        });
        let b = pctvb::thread::spawn(move || indexed::bump(bump));
        a.join().unwrap();
        b.join().unwrap();
    }
    assert_no_race(&run(0x0dace, NO_RACE_RUNS, || sum_and_bump(2, 1)));
    for seed in 1..=3 {
        let report = run(seed, 1000, || sum_and_bump(2, 3));
        let f = report.failure().unwrap_or_else(|| panic!("seed {seed}: no race on TABLE[3]"));
        assert_eq!(f.kind, FailureKind::DataRace, "seed {seed}: {f}");
        assert!(f.message.starts_with("data race on static@tests/instrument_races.rs:"), "{f}");
    }
}
