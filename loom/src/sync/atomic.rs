//! `std::sync::atomic`, as loom mocks it: pctvb's atomics (sequentially consistent whatever
//! `Ordering` is passed), wrapped so they also have loom's inherent methods `with_mut`,
//! `unsync_load` and `compare_and_swap` (and loom 0.7.3's `try_update` and `update`).
//!
//! `unsync_load` (and `into_inner`, loom's is one) and `with_mut` are non-atomic accesses,
//! checked by pctvb's data-race detector as loom checks them: an `unsync_load` that another
//! thread's store to the atomic does not happen before, or a `with_mut` that any other access
//! does not happen before, fails the model with a data race (`pctvb::FailureKind::DataRace`)
//! naming the atomic (its creation site) and both accesses. Neither is a scheduling point, as
//! in loom (with the detector off, `PCTVB_RACES=0`, `unsync_load` is a load and one). Unlike
//! loom's, an atomic's creation is not checked as a write against its first accesses. loom's
//! other methods (`load`, `fetch_add`, ...) are inherent too, so path calls such as
//! `AtomicUsize::load(&a, order)` resolve, and delegate to pctvb's (reporting the caller's location as pctvb's do); what loom's atomics do not have
//! (`get_mut`) is pctvb's, reached through `Deref`.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::panic::Location;

use pctvb::__internals::atomic::UnsyncAccess;

pub use pctvb::sync::atomic::{compiler_fence, fence, Ordering};

/// loom's deprecated spin-loop hint: a yield, as [`crate::hint::spin_loop`].
#[deprecated(note = "use `loom::hint::spin_loop` instead")]
#[track_caller]
pub fn spin_loop_hint() {
    pctvb::thread::yield_now()
}

macro_rules! loom_atomic {
    ($(#[$doc:meta])* $name:ident $(<$g:ident>)?, $val:ty) => {
        $(#[$doc])*
        pub struct $name $(<$g>)? (pctvb::sync::atomic::$name $(<$g>)?);

        impl $(<$g>)? $name $(<$g>)? {
            /// A new atomic; its creation site names it in pctvb's reports.
            #[track_caller]
            pub const fn new(value: $val) -> Self {
                $name(pctvb::sync::atomic::$name::new(value))
            }

            /// Runs `f` with exclusive access to the value (loom's replacement for
            /// `get_mut`): a non-atomic write, which every earlier access of the atomic must
            /// happen before (else the model fails with a data race, as loom's does); not a
            /// scheduling point.
            #[track_caller]
            pub fn with_mut<R>(&mut self, f: impl FnOnce(&mut $val) -> R) -> R {
                self.0.with_mut_at(Location::caller(), f)
            }

            /// Reads the value without synchronization: a non-atomic read, which every
            /// atomic store to it must happen before (else the model fails with a data race,
            /// as loom's does); not a scheduling point.
            ///
            /// # Safety
            /// As loom's: no other thread may modify the atomic concurrently.
            #[track_caller]
            pub unsafe fn unsync_load(&self) -> $val {
                self.0.unsync_load_at(Location::caller())
            }

            /// Consumes the atomic and returns its value: an `unsync_load`, as loom's.
            #[track_caller]
            pub fn into_inner(self) -> $val {
                self.0.unsync_load_at(Location::caller())
            }

            /// Loads the value (pctvb's `load`, here inherent as loom's, so that
            /// `AtomicUsize::load(&a, order)` resolves too).
            #[track_caller]
            pub fn load(&self, order: Ordering) -> $val {
                self.0.load(order)
            }

            /// Stores a value.
            #[track_caller]
            pub fn store(&self, value: $val, order: Ordering) {
                self.0.store(value, order)
            }

            /// Stores a value, returning the previous one.
            #[track_caller]
            pub fn swap(&self, value: $val, order: Ordering) -> $val {
                self.0.swap(value, order)
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
                self.0.compare_exchange(current, new, success, failure)
            }

            /// As `compare_exchange` (never fails spuriously under pctvb).
            #[track_caller]
            pub fn compare_exchange_weak(
                &self,
                current: $val,
                new: $val,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$val, $val> {
                self.0.compare_exchange_weak(current, new, success, failure)
            }

            /// Applies `f` in a compare-exchange loop, as std's `fetch_update`.
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
                self.0.fetch_update(set_order, fetch_order, f)
            }

            /// loom 0.7.3's (and std's) `try_update`: `fetch_update` under its new name. Applies
            /// `f` in a compare-exchange loop until it stores `f`'s value (`Ok` with the
            /// previous value) or `f` returns `None` (`Err` with the value `f` saw last). Each
            /// load and compare-exchange is a scheduling point (pctvb's `try_update`).
            #[track_caller]
            pub fn try_update(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                f: impl FnMut($val) -> Option<$val>,
            ) -> Result<$val, $val> {
                self.0.try_update(set_order, fetch_order, f)
            }

            /// loom 0.7.3's (and std's) `update`: applies `f` in a compare-exchange loop until
            /// it stores `f`'s value, and returns the previous value. Each load and
            /// compare-exchange is a scheduling point (pctvb's `update`).
            #[track_caller]
            pub fn update(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                f: impl FnMut($val) -> $val,
            ) -> $val {
                self.0.update(set_order, fetch_order, f)
            }

            /// Stores `new` if the value is `current`; returns the previous value
            /// (std's deprecated method, which loom keeps).
            #[track_caller]
            pub fn compare_and_swap(&self, current: $val, new: $val, order: Ordering) -> $val {
                let failure = match order {
                    Ordering::Release | Ordering::Relaxed => Ordering::Relaxed,
                    Ordering::AcqRel => Ordering::Acquire,
                    other => other,
                };
                match self.0.compare_exchange(current, new, order, failure) {
                    Ok(v) | Err(v) => v,
                }
            }
        }

        impl $(<$g>)? Deref for $name $(<$g>)? {
            type Target = pctvb::sync::atomic::$name $(<$g>)?;

            fn deref(&self) -> &Self::Target {
                &self.0
            }
        }

        impl $(<$g>)? DerefMut for $name $(<$g>)? {
            fn deref_mut(&mut self) -> &mut Self::Target {
                &mut self.0
            }
        }

        impl $(<$g>)? Default for $name $(<$g>)? {
            #[track_caller]
            fn default() -> Self {
                $name(Default::default())
            }
        }

        impl $(<$g>)? From<$val> for $name $(<$g>)? {
            #[track_caller]
            fn from(value: $val) -> Self {
                $name::new(value)
            }
        }

        impl $(<$g>)? fmt::Debug for $name $(<$g>)? {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }
    };
}

/// loom's read-modify-write methods, inherent as loom's (pctvb's, delegated).
macro_rules! loom_fetch_ops {
    ($name:ident, $val:ty: $($op:ident),*) => {
        impl $name {
            $(
                #[doc = concat!("pctvb's `", stringify!($op), "`: returns the previous value.")]
                #[track_caller]
                pub fn $op(&self, value: $val, order: Ordering) -> $val {
                    self.0.$op(value, order)
                }
            )*
        }
    };
}

macro_rules! loom_int {
    ($($(#[$doc:meta])* $name:ident, $val:ty;)*) => {$(
        loom_atomic!($(#[$doc])* $name, $val);
        loom_fetch_ops!($name, $val: fetch_add, fetch_sub, fetch_and, fetch_nand, fetch_or,
            fetch_xor, fetch_max, fetch_min);
    )*};
}

loom_atomic!(/// An atomic `bool`, as loom's.
    AtomicBool, bool);
loom_fetch_ops!(AtomicBool, bool: fetch_and, fetch_nand, fetch_or, fetch_xor);
loom_int! {
    /// An atomic `u8`, as loom's.
    AtomicU8, u8;
    /// An atomic `u16`, as loom's.
    AtomicU16, u16;
    /// An atomic `u32`, as loom's.
    AtomicU32, u32;
    /// An atomic `u64`, as loom's.
    AtomicU64, u64;
    /// An atomic `usize`, as loom's.
    AtomicUsize, usize;
    /// An atomic `i8`, as loom's.
    AtomicI8, i8;
    /// An atomic `i16`, as loom's.
    AtomicI16, i16;
    /// An atomic `i32`, as loom's.
    AtomicI32, i32;
    /// An atomic `i64`, as loom's.
    AtomicI64, i64;
    /// An atomic `isize`, as loom's.
    AtomicIsize, isize;
}
loom_atomic!(/// An atomic raw pointer, as loom's.
    AtomicPtr<T>, *mut T);
