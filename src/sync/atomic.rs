//! `std::sync::atomic`, mirrored. Every operation is a scheduling point and an access to the
//! atomic's variable (its creation site). All operations are sequentially consistent whatever
//! `Ordering` is passed: pctvb explores interleavings, not weak-memory reorderings.
//! `compare_exchange_weak` never fails spuriously.

use std::fmt;
use std::panic::Location;
use std::sync::atomic as std_atomic;

pub use std::sync::atomic::Ordering;

use crate::runtime::{with_execution, EventKind, Handle};
use crate::vars::VarKind;

const SC: Ordering = Ordering::SeqCst;

/// A scheduling point for an operation of kind `kind` on the atomic behind `handle`, then the
/// operation itself; the value it read or wrote goes into the trace for failure reports.
#[inline]
fn access<R: Shown>(
    handle: &Handle,
    kind: EventKind,
    operation: &'static str,
    location: &'static Location<'static>,
    perform: impl FnOnce() -> R,
) -> R {
    with_execution(operation, |ex| {
        ex.point(handle, VarKind::Atomic, kind, location);
        let result = perform();
        ex.note_value(result.shown());
        result
    })
}

/// How an atomic operation's result appears in a failure report's trace.
trait Shown {
    fn shown(&self) -> i128;
}

macro_rules! shown_int {
    ($($t:ty),*) => {$(
        impl Shown for $t {
            fn shown(&self) -> i128 {
                *self as i128
            }
        }
    )*};
}
shown_int!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

impl Shown for bool {
    fn shown(&self) -> i128 {
        *self as i128
    }
}

impl<T> Shown for *mut T {
    fn shown(&self) -> i128 {
        *self as usize as i128
    }
}

impl<T: Shown> Shown for Result<T, T> {
    fn shown(&self) -> i128 {
        match self {
            Ok(v) | Err(v) => v.shown(),
        }
    }
}

/// A memory fence; a scheduling point (all operations are already sequentially consistent).
#[track_caller]
pub fn fence(_order: Ordering) {
    let location = Location::caller();
    with_execution("atomic::fence", |ex| ex.schedule(EventKind::Fence, None, location))
}

/// A compiler fence: no effect under pctvb (there is no reordering to prevent).
pub fn compiler_fence(_order: Ordering) {}

macro_rules! atomic_int {
    ($(#[$doc:meta])* $name:ident, $std:ident, $int:ty) => {
        $(#[$doc])*
        pub struct $name {
            handle: Handle,
            value: std_atomic::$std,
        }

        impl $name {
            /// A new atomic; its creation site names it in reports.
            #[track_caller]
            pub const fn new(value: $int) -> $name {
                $name { handle: Handle::new(), value: std_atomic::$std::new(value) }
            }

            /// Loads the value.
            #[track_caller]
            pub fn load(&self, _order: Ordering) -> $int {
                access(&self.handle, EventKind::AtomicLoad, concat!(stringify!($name), "::load"), Location::caller(), || self.value.load(SC))
            }

            /// Stores a value.
            #[track_caller]
            pub fn store(&self, value: $int, _order: Ordering) {
                access(&self.handle, EventKind::AtomicStore, concat!(stringify!($name), "::store"), Location::caller(), || {
                    self.value.store(value, SC);
                    value
                });
            }

            /// Stores a value, returning the previous one.
            #[track_caller]
            pub fn swap(&self, value: $int, _order: Ordering) -> $int {
                access(&self.handle, EventKind::AtomicRmw, concat!(stringify!($name), "::swap"), Location::caller(), || self.value.swap(value, SC))
            }

            /// Stores `new` if the value is `current`; returns the previous value.
            #[track_caller]
            pub fn compare_exchange(&self, current: $int, new: $int, _success: Ordering, _failure: Ordering) -> Result<$int, $int> {
                access(&self.handle, EventKind::AtomicRmw, concat!(stringify!($name), "::compare_exchange"), Location::caller(), || self.value.compare_exchange(current, new, SC, SC))
            }

            /// As `compare_exchange` (never fails spuriously under pctvb).
            #[track_caller]
            pub fn compare_exchange_weak(&self, current: $int, new: $int, success: Ordering, failure: Ordering) -> Result<$int, $int> {
                self.compare_exchange(current, new, success, failure)
            }

            /// Adds, returning the previous value (wrapping).
            #[track_caller]
            pub fn fetch_add(&self, value: $int, _order: Ordering) -> $int {
                access(&self.handle, EventKind::AtomicRmw, concat!(stringify!($name), "::fetch_add"), Location::caller(), || self.value.fetch_add(value, SC))
            }

            /// Subtracts, returning the previous value (wrapping).
            #[track_caller]
            pub fn fetch_sub(&self, value: $int, _order: Ordering) -> $int {
                access(&self.handle, EventKind::AtomicRmw, concat!(stringify!($name), "::fetch_sub"), Location::caller(), || self.value.fetch_sub(value, SC))
            }

            /// Bitwise and, returning the previous value.
            #[track_caller]
            pub fn fetch_and(&self, value: $int, _order: Ordering) -> $int {
                access(&self.handle, EventKind::AtomicRmw, concat!(stringify!($name), "::fetch_and"), Location::caller(), || self.value.fetch_and(value, SC))
            }

            /// Bitwise nand, returning the previous value.
            #[track_caller]
            pub fn fetch_nand(&self, value: $int, _order: Ordering) -> $int {
                access(&self.handle, EventKind::AtomicRmw, concat!(stringify!($name), "::fetch_nand"), Location::caller(), || self.value.fetch_nand(value, SC))
            }

            /// Bitwise or, returning the previous value.
            #[track_caller]
            pub fn fetch_or(&self, value: $int, _order: Ordering) -> $int {
                access(&self.handle, EventKind::AtomicRmw, concat!(stringify!($name), "::fetch_or"), Location::caller(), || self.value.fetch_or(value, SC))
            }

            /// Bitwise xor, returning the previous value.
            #[track_caller]
            pub fn fetch_xor(&self, value: $int, _order: Ordering) -> $int {
                access(&self.handle, EventKind::AtomicRmw, concat!(stringify!($name), "::fetch_xor"), Location::caller(), || self.value.fetch_xor(value, SC))
            }

            /// Maximum, returning the previous value.
            #[track_caller]
            pub fn fetch_max(&self, value: $int, _order: Ordering) -> $int {
                access(&self.handle, EventKind::AtomicRmw, concat!(stringify!($name), "::fetch_max"), Location::caller(), || self.value.fetch_max(value, SC))
            }

            /// Minimum, returning the previous value.
            #[track_caller]
            pub fn fetch_min(&self, value: $int, _order: Ordering) -> $int {
                access(&self.handle, EventKind::AtomicRmw, concat!(stringify!($name), "::fetch_min"), Location::caller(), || self.value.fetch_min(value, SC))
            }

            /// Applies `f` in a compare-exchange loop, as std's `fetch_update`.
            #[track_caller]
            pub fn fetch_update<F>(&self, set_order: Ordering, fetch_order: Ordering, mut f: F) -> Result<$int, $int>
            where
                F: FnMut($int) -> Option<$int>,
            {
                let mut previous = self.load(fetch_order);
                while let Some(next) = f(previous) {
                    match self.compare_exchange(previous, next, set_order, fetch_order) {
                        Ok(v) => return Ok(v),
                        Err(v) => previous = v,
                    }
                }
                Err(previous)
            }

            /// Mutable access to the value (no scheduling point: the borrow is exclusive).
            pub fn get_mut(&mut self) -> &mut $int {
                self.value.get_mut()
            }

            /// Consumes the atomic and returns its value.
            pub fn into_inner(self) -> $int {
                self.value.into_inner()
            }
        }

        impl Default for $name {
            #[track_caller]
            fn default() -> $name {
                $name::new(0)
            }
        }

        impl From<$int> for $name {
            #[track_caller]
            fn from(value: $int) -> $name {
                $name::new(value)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                // Reading for Debug is not a scheduling point: printing must not change the
                // schedule.
                fmt::Debug::fmt(&self.value.load(SC), f)
            }
        }
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

/// An atomic `bool`.
pub struct AtomicBool {
    handle: Handle,
    value: std_atomic::AtomicBool,
}

impl AtomicBool {
    /// A new atomic bool.
    #[track_caller]
    pub const fn new(value: bool) -> AtomicBool {
        AtomicBool { handle: Handle::new(), value: std_atomic::AtomicBool::new(value) }
    }

    /// Loads the value.
    #[track_caller]
    pub fn load(&self, _order: Ordering) -> bool {
        access(&self.handle, EventKind::AtomicLoad, "AtomicBool::load", Location::caller(), || {
            self.value.load(SC)
        })
    }

    /// Stores a value.
    #[track_caller]
    pub fn store(&self, value: bool, _order: Ordering) {
        access(
            &self.handle,
            EventKind::AtomicStore,
            "AtomicBool::store",
            Location::caller(),
            || {
                self.value.store(value, SC);
                value
            },
        );
    }

    /// Stores a value, returning the previous one.
    #[track_caller]
    pub fn swap(&self, value: bool, _order: Ordering) -> bool {
        access(&self.handle, EventKind::AtomicRmw, "AtomicBool::swap", Location::caller(), || {
            self.value.swap(value, SC)
        })
    }

    /// Stores `new` if the value is `current`.
    #[track_caller]
    pub fn compare_exchange(
        &self,
        current: bool,
        new: bool,
        _success: Ordering,
        _failure: Ordering,
    ) -> Result<bool, bool> {
        access(
            &self.handle,
            EventKind::AtomicRmw,
            "AtomicBool::compare_exchange",
            Location::caller(),
            || self.value.compare_exchange(current, new, SC, SC),
        )
    }

    /// As `compare_exchange` (never fails spuriously).
    #[track_caller]
    pub fn compare_exchange_weak(
        &self,
        current: bool,
        new: bool,
        success: Ordering,
        failure: Ordering,
    ) -> Result<bool, bool> {
        self.compare_exchange(current, new, success, failure)
    }

    /// Logical and, returning the previous value.
    #[track_caller]
    pub fn fetch_and(&self, value: bool, _order: Ordering) -> bool {
        access(
            &self.handle,
            EventKind::AtomicRmw,
            "AtomicBool::fetch_and",
            Location::caller(),
            || self.value.fetch_and(value, SC),
        )
    }

    /// Logical nand, returning the previous value.
    #[track_caller]
    pub fn fetch_nand(&self, value: bool, _order: Ordering) -> bool {
        access(
            &self.handle,
            EventKind::AtomicRmw,
            "AtomicBool::fetch_nand",
            Location::caller(),
            || self.value.fetch_nand(value, SC),
        )
    }

    /// Logical or, returning the previous value.
    #[track_caller]
    pub fn fetch_or(&self, value: bool, _order: Ordering) -> bool {
        access(
            &self.handle,
            EventKind::AtomicRmw,
            "AtomicBool::fetch_or",
            Location::caller(),
            || self.value.fetch_or(value, SC),
        )
    }

    /// Logical xor, returning the previous value.
    #[track_caller]
    pub fn fetch_xor(&self, value: bool, _order: Ordering) -> bool {
        access(
            &self.handle,
            EventKind::AtomicRmw,
            "AtomicBool::fetch_xor",
            Location::caller(),
            || self.value.fetch_xor(value, SC),
        )
    }

    /// Mutable access to the value.
    pub fn get_mut(&mut self) -> &mut bool {
        self.value.get_mut()
    }

    /// Consumes the atomic and returns its value.
    pub fn into_inner(self) -> bool {
        self.value.into_inner()
    }
}

impl Default for AtomicBool {
    #[track_caller]
    fn default() -> AtomicBool {
        AtomicBool::new(false)
    }
}

impl fmt::Debug for AtomicBool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.value.load(SC), f)
    }
}

/// An atomic raw pointer.
pub struct AtomicPtr<T> {
    handle: Handle,
    value: std_atomic::AtomicPtr<T>,
}

impl<T> AtomicPtr<T> {
    /// A new atomic pointer.
    #[track_caller]
    pub const fn new(value: *mut T) -> AtomicPtr<T> {
        AtomicPtr { handle: Handle::new(), value: std_atomic::AtomicPtr::new(value) }
    }

    /// Loads the pointer.
    #[track_caller]
    pub fn load(&self, _order: Ordering) -> *mut T {
        access(&self.handle, EventKind::AtomicLoad, "AtomicPtr::load", Location::caller(), || {
            self.value.load(SC)
        })
    }

    /// Stores a pointer.
    #[track_caller]
    pub fn store(&self, value: *mut T, _order: Ordering) {
        access(
            &self.handle,
            EventKind::AtomicStore,
            "AtomicPtr::store",
            Location::caller(),
            || {
                self.value.store(value, SC);
                value
            },
        );
    }

    /// Stores a pointer, returning the previous one.
    #[track_caller]
    pub fn swap(&self, value: *mut T, _order: Ordering) -> *mut T {
        access(&self.handle, EventKind::AtomicRmw, "AtomicPtr::swap", Location::caller(), || {
            self.value.swap(value, SC)
        })
    }

    /// Stores `new` if the pointer is `current`.
    #[track_caller]
    pub fn compare_exchange(
        &self,
        current: *mut T,
        new: *mut T,
        _success: Ordering,
        _failure: Ordering,
    ) -> Result<*mut T, *mut T> {
        access(
            &self.handle,
            EventKind::AtomicRmw,
            "AtomicPtr::compare_exchange",
            Location::caller(),
            || self.value.compare_exchange(current, new, SC, SC),
        )
    }

    /// As `compare_exchange` (never fails spuriously).
    #[track_caller]
    pub fn compare_exchange_weak(
        &self,
        current: *mut T,
        new: *mut T,
        success: Ordering,
        failure: Ordering,
    ) -> Result<*mut T, *mut T> {
        self.compare_exchange(current, new, success, failure)
    }

    /// Applies `f` in a compare-exchange loop.
    #[track_caller]
    pub fn fetch_update<F>(
        &self,
        set_order: Ordering,
        fetch_order: Ordering,
        mut f: F,
    ) -> Result<*mut T, *mut T>
    where
        F: FnMut(*mut T) -> Option<*mut T>,
    {
        let mut previous = self.load(fetch_order);
        while let Some(next) = f(previous) {
            match self.compare_exchange(previous, next, set_order, fetch_order) {
                Ok(v) => return Ok(v),
                Err(v) => previous = v,
            }
        }
        Err(previous)
    }

    /// Mutable access to the pointer.
    pub fn get_mut(&mut self) -> &mut *mut T {
        self.value.get_mut()
    }

    /// Consumes the atomic and returns the pointer.
    pub fn into_inner(self) -> *mut T {
        self.value.into_inner()
    }
}

impl<T> Default for AtomicPtr<T> {
    #[track_caller]
    fn default() -> AtomicPtr<T> {
        AtomicPtr::new(std::ptr::null_mut())
    }
}

impl<T> fmt::Debug for AtomicPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.value.load(SC), f)
    }
}
