//! `std::sync::atomic`, mirrored. Every operation is a scheduling point and an access to the
//! atomic's variable (its creation site). All operations are sequentially consistent whatever
//! `Ordering` is passed: pctvb explores interleavings, not weak-memory reorderings. The
//! `Ordering` still matters to the data-race detector: only Release/Acquire (and stronger)
//! operations and fences order a `pctvb::cell::UnsafeCell`'s accesses (see the guide's "Data
//! races"). `compare_exchange_weak` fails spuriously only with `Config::weak_cas_failures` on
//! (at a store-conditional point of its own, when another thread runs there).

use std::fmt;
use std::panic::Location;
use std::sync::atomic as std_atomic;

pub use std::sync::atomic::Ordering;

use crate::runtime::{with_current, AtomicSync, EventKind, Execution, Handle, ObjectId, Value};
use crate::vars::VarKind;

const SC: Ordering = Ordering::SeqCst;

/// A scheduling point for an operation of kind `kind` on the atomic behind `handle`, then the
/// operation itself, which returns its result and whether it changed the value (progress,
/// which lets threads spinning in `yield_now` run again); the value it read or wrote goes into
/// the trace for failure reports, and its orderings (`order`: success and failure) into the
/// race detector's happens-before. Outside executions, the operation alone (the value is a
/// real std atomic).
#[inline]
fn access<R: Shown>(
    handle: &Handle,
    kind: EventKind,
    order: (Ordering, Ordering),
    location: &'static Location<'static>,
    perform: impl FnOnce() -> (R, bool),
) -> R {
    with_current(|ex| match ex {
        Some(ex) => {
            let (object, step) = point(ex, handle, kind, location);
            let (result, changed) = perform();
            let sync = match kind {
                EventKind::AtomicLoad => AtomicSync::Load(order.0),
                EventKind::AtomicStore => AtomicSync::Store(order.0),
                _ if result.wrote() => AtomicSync::Rmw(order.0),
                _ => AtomicSync::Load(order.1),
            };
            done(ex, object, step, result.shown(), sync, changed);
            result
        }
        // Outside executions: the std atomic operation alone.
        None => perform().0,
    })
}

/// A weak compare-exchange that may fail spuriously, as on load-linked/store-conditional
/// hardware (`Config::weak_cas_failures`): its usual point, then the load-linked (`load`); a
/// value other than `current` fails as `compare_exchange` does, with no second point. Then
/// the store-conditional's point (`Execution::store_conditional`): if another thread ran
/// there, the reservation is lost and it fails spuriously, returning the value it loaded
/// and changing nothing; otherwise no thread ran since the load, and `exchange` succeeds.
fn weak_cas<V: Copy + PartialEq + Shown>(
    ex: &Execution,
    handle: &Handle,
    (current, new): (V, V),
    (success, failure): (Ordering, Ordering),
    location: &'static Location<'static>,
    load: impl FnOnce() -> V,
    exchange: impl FnOnce() -> Result<V, V>,
) -> Result<V, V> {
    let (object, step) = point(ex, handle, EventKind::AtomicRmw, location);
    let found = load();
    let failed: Result<V, V> = Err(found);
    // The load-linked is a load, with the failure ordering whatever it found; a successful
    // store adds the success ordering's edges at its own point.
    done(ex, object, step, failed.shown(), AtomicSync::Load(failure), false);
    if found != current {
        return failed;
    }
    let Some(step) = ex.store_conditional(handle, location) else {
        // Nothing is recorded at the store-conditional's step: it stored nothing, and its
        // value is the load-linked's, read before the other threads ran (no new load, so no
        // edge from what they wrote).
        return failed;
    };
    let result = exchange();
    debug_assert!(result.is_ok(), "no thread ran since the load-linked found the value");
    // Recorded at the store-conditional's own point.
    done(ex, object, step, result.shown(), AtomicSync::Rmw(success), current != new);
    result
}

/// The scheduling point of an atomic operation, and the record of what it did: functions of
/// their own, not `#[inline]`, so that the engine is compiled with pctvb wherever `access` is
/// compiled. `AtomicPtr<T>`'s operations are generic, so instantiated in the caller's crate,
/// which `cargo test` leaves unoptimized (docs/RESULTS-debug-build.md). Here rather than by
/// dropping `#[inline]` from `Execution::point` and `atomic_done`: that moved the engine's
/// other callers' code too, and cost 1.1% of the time on the counter (`scripts/ab-runs.sh`,
/// the default, 1,000 executions, 40 x 15 runs).
///
/// One function per kind of operation (`kind` is a constant at every caller, so the match
/// goes with inlining): in each, the engine's tests of the kind (a block, a yield, a sleep, a
/// cell write, an exit) fold away, and fewer values are kept on the stack: ~20 instructions
/// of every atomic operation's point, 4.4% of the work-stealing deque's instructions
/// (`strategy_instructions ws random`), for ~8 KB more code.
#[inline(always)]
fn point(
    ex: &Execution,
    handle: &Handle,
    kind: EventKind,
    location: &'static Location<'static>,
) -> (ObjectId, usize) {
    match kind {
        EventKind::AtomicLoad => load_point(ex, handle, location),
        EventKind::AtomicStore => store_point(ex, handle, location),
        _ => {
            debug_assert_eq!(kind, EventKind::AtomicRmw);
            rmw_point(ex, handle, location)
        }
    }
}

/// [`point`] of a load.
fn load_point(
    ex: &Execution,
    handle: &Handle,
    location: &'static Location<'static>,
) -> (ObjectId, usize) {
    ex.point_at_step(handle, VarKind::Atomic, EventKind::AtomicLoad, location)
}

/// [`point`] of a store.
fn store_point(
    ex: &Execution,
    handle: &Handle,
    location: &'static Location<'static>,
) -> (ObjectId, usize) {
    ex.point_at_step(handle, VarKind::Atomic, EventKind::AtomicStore, location)
}

/// [`point`] of a read-modify-write.
fn rmw_point(
    ex: &Execution,
    handle: &Handle,
    location: &'static Location<'static>,
) -> (ObjectId, usize) {
    ex.point_at_step(handle, VarKind::Atomic, EventKind::AtomicRmw, location)
}

/// See [`point`]; `step` is the operation's trace step, as `point` returned it.
fn done(
    ex: &Execution,
    object: ObjectId,
    step: usize,
    value: Value,
    sync: AtomicSync,
    changed: bool,
) {
    ex.atomic_done(object, step, value, sync, changed)
}

/// How an atomic operation's result appears in a failure report's trace.
trait Shown {
    fn shown(&self) -> Value;

    /// Whether a read-modify-write with this result wrote (a compare-exchange that failed
    /// only read).
    fn wrote(&self) -> bool {
        true
    }
}

macro_rules! shown_int {
    ($variant:ident, $as:ty: $($t:ty),*) => {$(
        impl Shown for $t {
            fn shown(&self) -> Value {
                Value::$variant(*self as $as)
            }
        }
    )*};
}
shown_int!(Unsigned, u64: u8, u16, u32, u64, usize);
shown_int!(Signed, i64: i8, i16, i32, i64, isize);

impl Shown for bool {
    fn shown(&self) -> Value {
        Value::Unsigned(*self as u64)
    }
}

impl<T> Shown for *mut T {
    fn shown(&self) -> Value {
        Value::Unsigned(*self as usize as u64)
    }
}

impl<T: Shown> Shown for Result<T, T> {
    fn shown(&self) -> Value {
        match self {
            Ok(v) | Err(v) => v.shown(),
        }
    }

    fn wrote(&self) -> bool {
        self.is_ok()
    }
}

/// A memory fence; a scheduling point (all operations are already sequentially consistent),
/// and for the data-race detector the happens-before edges C11 gives fences.
#[track_caller]
pub fn fence(order: Ordering) {
    let location = Location::caller();
    with_current(|ex| match ex {
        Some(ex) => ex.fence(order, location),
        None => std_atomic::fence(order),
    })
}

/// A compiler fence: no effect under pctvb (there is no reordering to prevent).
pub fn compiler_fence(_order: Ordering) {}

/// std's deprecated `spin_loop_hint`: as [`crate::hint::spin_loop`], a yield inside an
/// execution (the calling thread waits until another makes progress), std's hint outside.
#[deprecated(since = "1.51.0", note = "use pctvb::hint::spin_loop instead")]
#[track_caller]
pub fn spin_loop_hint() {
    let location = Location::caller();
    with_current(|ex| match ex {
        Some(ex) => ex.schedule(EventKind::Yield, None, location),
        None => std::hint::spin_loop(),
    })
}

/// pctvb-loom's non-atomic accesses of pctvb's atomics (re-exported as `__internals::atomic`,
/// not through this module: they are no part of pctvb's API, whose atomics have none).
pub(crate) mod unsync {
    use std::panic::Location;

    /// loom's `unsync_load` and `with_mut` on a pctvb atomic, checked by the data-race
    /// detector as loom checks them, in an execution that asks for it
    /// (`__internals::execution::check_unsync_atomics`): a data race when an `unsync_load`
    /// does not follow an atomic store, or a `with_mut` an access of the atomic. Neither is a
    /// scheduling point there; with the detector off, or in an execution that does not ask,
    /// `unsync_load` is a load (a point) and `with_mut` the exclusive access alone.
    #[doc(hidden)]
    pub trait UnsyncAccess {
        /// The atomic's value type.
        type Value;

        /// Reads the value non-atomically, at `location` (loom's `unsync_load`).
        fn unsync_load_at(&self, location: &'static Location<'static>) -> Self::Value;

        /// Runs `f` on the value, a non-atomic write at `location` (loom's `with_mut`).
        fn with_mut_at<R>(
            &mut self,
            location: &'static Location<'static>,
            f: impl FnOnce(&mut Self::Value) -> R,
        ) -> R;
    }
}

/// The operations every atomic type has: construction, load, store, swap, compare-exchange,
/// `fetch_update`, exclusive access, `Default` and `Debug`. `$default` is the `Default` value.
macro_rules! atomic_type {
    ($(#[$doc:meta])* $name:ident $(<$g:ident>)?, $std:ty, $val:ty, $default:expr) => {
        $(#[$doc])*
        pub struct $name $(<$g>)? {
            handle: Handle,
            value: $std,
        }

        impl $(<$g>)? $name $(<$g>)? {
            /// A new atomic; its creation site names it in reports.
            #[track_caller]
            pub const fn new(value: $val) -> Self {
                $name { handle: Handle::new(), value: <$std>::new(value) }
            }

            /// Loads the value.
            #[track_caller]
            pub fn load(&self, order: Ordering) -> $val {
                self.op(EventKind::AtomicLoad, (order, order), || (self.value.load(SC), false))
            }

            /// Stores a value.
            #[track_caller]
            pub fn store(&self, value: $val, order: Ordering) {
                self.op(EventKind::AtomicStore, (order, order), || {
                    // A swap, to tell whether the store changed the value.
                    let previous = self.value.swap(value, SC);
                    (value, previous != value)
                });
            }

            /// Stores a value, returning the previous one.
            #[track_caller]
            pub fn swap(&self, value: $val, order: Ordering) -> $val {
                self.op(EventKind::AtomicRmw, (order, order), || {
                    let previous = self.value.swap(value, SC);
                    (previous, previous != value)
                })
            }

            /// Stores `new` if the value is `current`; returns the previous value.
            #[track_caller]
            pub fn compare_exchange(
                &self,
                current: $val,
                new: $val,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$val, $val> {
                self.op(EventKind::AtomicRmw, (success, failure), || {
                    let result = self.value.compare_exchange(current, new, SC, SC);
                    let changed = result.is_ok() && current != new;
                    (result, changed)
                })
            }

            /// As `compare_exchange`, and with
            /// [`Config::weak_cas_failures`](crate::Config::weak_cas_failures) on, it may fail
            /// spuriously: if another thread runs at its store-conditional point.
            #[track_caller]
            pub fn compare_exchange_weak(
                &self,
                current: $val,
                new: $val,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$val, $val> {
                let location = Location::caller();
                let weak = with_current(|ex| match ex {
                    Some(ex) if ex.weak_cas_failures() => Some(weak_cas(
                        ex,
                        &self.handle,
                        (current, new),
                        (success, failure),
                        location,
                        || self.value.load(SC),
                        || self.value.compare_exchange(current, new, SC, SC),
                    )),
                    _ => None,
                });
                match weak {
                    Some(result) => result,
                    None => self.compare_exchange(current, new, success, failure),
                }
            }

            /// Applies `f` in a compare-exchange loop, as std's `fetch_update` (which std 1.95
            /// calls `try_update`): a load, then a compare-exchange for each value `f` maps,
            /// each a scheduling point.
            #[track_caller]
            pub fn fetch_update<F>(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                f: F,
            ) -> Result<$val, $val>
            where
                F: FnMut($val) -> Option<$val>,
            {
                self.try_update(set_order, fetch_order, f)
            }

            /// Replaces the value by `f` of it unless `f` returns `None`, in a compare-exchange
            /// loop: `Ok` with the previous value if it stored one, `Err` with the value `f`
            /// refused otherwise, as std's `try_update` (1.95). A load, then a
            /// compare-exchange for each value `f` maps, each a scheduling point, so another
            /// thread's write between them makes `f` run again, as it can in std.
            #[track_caller]
            pub fn try_update(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                mut f: impl FnMut($val) -> Option<$val>,
            ) -> Result<$val, $val> {
                let mut previous = self.load(fetch_order);
                while let Some(next) = f(previous) {
                    match self.compare_exchange(previous, next, set_order, fetch_order) {
                        Ok(v) => return Ok(v),
                        Err(v) => previous = v,
                    }
                }
                Err(previous)
            }

            /// Replaces the value by `f` of it in a compare-exchange loop and returns the
            /// previous value, as std's `update` (1.95); scheduling points as
            /// [`try_update`](Self::try_update)'s.
            #[track_caller]
            pub fn update(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                mut f: impl FnMut($val) -> $val,
            ) -> $val {
                match self.try_update(set_order, fetch_order, |v| Some(f(v))) {
                    Ok(previous) => previous,
                    Err(_) => unreachable!("`f` maps every value"),
                }
            }

            /// Stores `new` if the value is `current`; returns the previous value either way,
            /// as std's deprecated `compare_and_swap` (a `compare_exchange` whose failure
            /// ordering is derived from `order` as std derives it).
            #[deprecated(
                since = "1.50.0",
                note = "Use `compare_exchange` or `compare_exchange_weak` instead"
            )]
            #[track_caller]
            pub fn compare_and_swap(&self, current: $val, new: $val, order: Ordering) -> $val {
                let failure = match order {
                    Ordering::Release | Ordering::Relaxed => Ordering::Relaxed,
                    Ordering::AcqRel | Ordering::Acquire => Ordering::Acquire,
                    _ => Ordering::SeqCst,
                };
                match self.compare_exchange(current, new, order, failure) {
                    Ok(v) | Err(v) => v,
                }
            }

            /// Mutable access to the value (no scheduling point: the borrow is exclusive).
            pub fn get_mut(&mut self) -> &mut $val {
                self.value.get_mut()
            }

            /// Consumes the atomic and returns its value.
            pub const fn into_inner(self) -> $val {
                self.value.into_inner()
            }

            #[track_caller]
            fn op<R: Shown>(
                &self,
                kind: EventKind,
                order: (Ordering, Ordering),
                perform: impl FnOnce() -> (R, bool),
            ) -> R {
                access(&self.handle, kind, order, Location::caller(), perform)
            }
        }

        impl $(<$g>)? From<$val> for $name $(<$g>)? {
            #[track_caller]
            fn from(value: $val) -> Self {
                Self::new(value)
            }
        }

        impl $(<$g>)? unsync::UnsyncAccess for $name $(<$g>)? {
            type Value = $val;

            fn unsync_load_at(&self, location: &'static Location<'static>) -> $val {
                let checked = with_current(|ex| {
                    ex.is_some_and(|ex| ex.unsync_atomic(&self.handle, false, location))
                });
                if checked {
                    self.value.load(SC)
                } else {
                    // Not checked (the detector off, an execution that does not ask, or none):
                    // a load, a scheduling point in an execution.
                    let relaxed = (Ordering::Relaxed, Ordering::Relaxed);
                    access(&self.handle, EventKind::AtomicLoad, relaxed, location, || {
                        (self.value.load(SC), false)
                    })
                }
            }

            fn with_mut_at<R>(
                &mut self,
                location: &'static Location<'static>,
                f: impl FnOnce(&mut $val) -> R,
            ) -> R {
                with_current(|ex| {
                    if let Some(ex) = ex {
                        ex.unsync_atomic(&self.handle, true, location);
                    }
                });
                f(self.value.get_mut())
            }
        }

        impl $(<$g>)? Default for $name $(<$g>)? {
            #[track_caller]
            fn default() -> Self {
                Self::new($default)
            }
        }

        impl $(<$g>)? fmt::Debug for $name $(<$g>)? {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                // Reading for Debug is not a scheduling point: printing must not change the
                // schedule.
                fmt::Debug::fmt(&self.value.load(SC), f)
            }
        }
    };
}

/// Read-modify-write operations that return the previous value, one method per std name.
macro_rules! fetch_ops {
    ($name:ident, $val:ty: $($(#[$doc:meta])* $op:ident),* $(,)?) => {
        impl $name {
            $(
                $(#[$doc])*
                #[track_caller]
                pub fn $op(&self, value: $val, order: Ordering) -> $val {
                    self.op(EventKind::AtomicRmw, (order, order), || {
                        let previous = self.value.$op(value, SC);
                        (previous, self.value.load(SC) != previous)
                    })
                }
            )*
        }
    };
}

macro_rules! atomic_int {
    ($(#[$doc:meta])* $name:ident, $std:ident, $int:ty) => {
        atomic_type!($(#[$doc])* $name, std_atomic::$std, $int, 0);
        fetch_ops!($name, $int:
            /// Adds, returning the previous value (wrapping).
            fetch_add,
            /// Subtracts, returning the previous value (wrapping).
            fetch_sub,
            /// Bitwise and, returning the previous value.
            fetch_and,
            /// Bitwise nand, returning the previous value.
            fetch_nand,
            /// Bitwise or, returning the previous value.
            fetch_or,
            /// Bitwise xor, returning the previous value.
            fetch_xor,
            /// Maximum, returning the previous value.
            fetch_max,
            /// Minimum, returning the previous value.
            fetch_min,
        );
    };
}

atomic_int!(/// An atomic `u8`.
    AtomicU8, AtomicU8, u8);
atomic_int!(/// An atomic `u16`.
    AtomicU16, AtomicU16, u16);
atomic_int!(/// An atomic `u32`.
    AtomicU32, AtomicU32, u32);
atomic_int!(/// An atomic `u64`.
    AtomicU64, AtomicU64, u64);
atomic_int!(/// An atomic `usize`.
    AtomicUsize, AtomicUsize, usize);
atomic_int!(/// An atomic `i8`.
    AtomicI8, AtomicI8, i8);
atomic_int!(/// An atomic `i16`.
    AtomicI16, AtomicI16, i16);
atomic_int!(/// An atomic `i32`.
    AtomicI32, AtomicI32, i32);
atomic_int!(/// An atomic `i64`.
    AtomicI64, AtomicI64, i64);
atomic_int!(/// An atomic `isize`.
    AtomicIsize, AtomicIsize, isize);

atomic_type!(/// An atomic `bool`.
    AtomicBool, std_atomic::AtomicBool, bool, false);
fetch_ops!(AtomicBool, bool:
    /// Logical and, returning the previous value.
    fetch_and,
    /// Logical nand, returning the previous value.
    fetch_nand,
    /// Logical or, returning the previous value.
    fetch_or,
    /// Logical xor, returning the previous value.
    fetch_xor,
);

impl AtomicBool {
    /// Logical not, returning the previous value (std's `fetch_not`, an `xor` with `true`:
    /// one read-modify-write, one scheduling point).
    #[track_caller]
    pub fn fetch_not(&self, order: Ordering) -> bool {
        self.fetch_xor(true, order)
    }
}

atomic_type!(/// An atomic raw pointer.
    AtomicPtr<T>, std_atomic::AtomicPtr<T>, *mut T, std::ptr::null_mut());

impl<T> fmt::Pointer for AtomicPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // As `Debug`: no scheduling point.
        fmt::Pointer::fmt(&self.value.load(SC), f)
    }
}

/// The pointer read-modify-writes std's `AtomicPtr` has since 1.91, each one scheduling point
/// and one access, as the integers' `fetch_*`. Built on std's `fetch_update` (a
/// compare-exchange loop, atomic all the same), so pctvb's minimum Rust version stays below
/// 1.91; the result is std's, wrapping and keeping the pointer's provenance.
impl<T> AtomicPtr<T> {
    /// Offsets the pointer by `val` elements of `T` (`wrapping_add`), returning the previous
    /// pointer, as std's `fetch_ptr_add`.
    #[track_caller]
    pub fn fetch_ptr_add(&self, val: usize, order: Ordering) -> *mut T {
        self.fetch_map(order, |p| p.wrapping_add(val))
    }

    /// Offsets the pointer back by `val` elements of `T` (`wrapping_sub`), returning the
    /// previous pointer, as std's `fetch_ptr_sub`.
    #[track_caller]
    pub fn fetch_ptr_sub(&self, val: usize, order: Ordering) -> *mut T {
        self.fetch_map(order, |p| p.wrapping_sub(val))
    }

    /// Offsets the pointer by `val` bytes (`wrapping_byte_add`), returning the previous
    /// pointer, as std's `fetch_byte_add`.
    #[track_caller]
    pub fn fetch_byte_add(&self, val: usize, order: Ordering) -> *mut T {
        self.fetch_map(order, |p| p.wrapping_byte_add(val))
    }

    /// Offsets the pointer back by `val` bytes (`wrapping_byte_sub`), returning the previous
    /// pointer, as std's `fetch_byte_sub`.
    #[track_caller]
    pub fn fetch_byte_sub(&self, val: usize, order: Ordering) -> *mut T {
        self.fetch_map(order, |p| p.wrapping_byte_sub(val))
    }

    /// Bitwise or of the pointer's address with `val` (a tag bit, say), returning the previous
    /// pointer, as std's `fetch_or`.
    #[track_caller]
    pub fn fetch_or(&self, val: usize, order: Ordering) -> *mut T {
        self.fetch_map(order, |p| p.map_addr(|a| a | val))
    }

    /// Bitwise and of the pointer's address with `val`, returning the previous pointer, as
    /// std's `fetch_and`.
    #[track_caller]
    pub fn fetch_and(&self, val: usize, order: Ordering) -> *mut T {
        self.fetch_map(order, |p| p.map_addr(|a| a & val))
    }

    /// Bitwise xor of the pointer's address with `val`, returning the previous pointer, as
    /// std's `fetch_xor`.
    #[track_caller]
    pub fn fetch_xor(&self, val: usize, order: Ordering) -> *mut T {
        self.fetch_map(order, |p| p.map_addr(|a| a ^ val))
    }

    /// Replaces the pointer by `f` of it in one read-modify-write; returns the previous one.
    #[track_caller]
    fn fetch_map(&self, order: Ordering, f: impl Fn(*mut T) -> *mut T) -> *mut T {
        self.op(EventKind::AtomicRmw, (order, order), || {
            let Ok(previous) = self.value.fetch_update(SC, SC, |p| Some(f(p))) else {
                unreachable!("the update always returns a pointer")
            };
            (previous, f(previous) != previous)
        })
    }
}
