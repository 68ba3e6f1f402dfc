//! `std::sync::atomic`, as loom mocks it: pctvb's atomics (sequentially consistent whatever
//! `Ordering` is passed), wrapped so they also have loom's inherent methods `with_mut`,
//! `unsync_load` and `compare_and_swap`. Every other method is pctvb's, reached through
//! `Deref` (so `load`, `fetch_add`, ... report the caller's location as pctvb's do).

use std::fmt;
use std::ops::{Deref, DerefMut};

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
            /// `get_mut`); not a scheduling point, since the borrow is exclusive.
            pub fn with_mut<R>(&mut self, f: impl FnOnce(&mut $val) -> R) -> R {
                f(self.0.get_mut())
            }

            /// Reads the value without synchronization (loom: the caller promises no thread
            /// writes it concurrently). Under pctvb it is a load, so it is also a scheduling
            /// point.
            ///
            /// # Safety
            /// As loom's: no other thread may modify the atomic concurrently.
            #[track_caller]
            pub unsafe fn unsync_load(&self) -> $val {
                self.0.load(Ordering::Relaxed)
            }

            /// Consumes the atomic and returns its value.
            pub fn into_inner(self) -> $val {
                self.0.into_inner()
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

loom_atomic!(/// An atomic `bool`, as loom's.
    AtomicBool, bool);
loom_atomic!(/// An atomic `u8`, as loom's.
    AtomicU8, u8);
loom_atomic!(/// An atomic `u16`, as loom's.
    AtomicU16, u16);
loom_atomic!(/// An atomic `u32`, as loom's.
    AtomicU32, u32);
loom_atomic!(/// An atomic `u64`, as loom's.
    AtomicU64, u64);
loom_atomic!(/// An atomic `usize`, as loom's.
    AtomicUsize, usize);
loom_atomic!(/// An atomic `i8`, as loom's.
    AtomicI8, i8);
loom_atomic!(/// An atomic `i16`, as loom's.
    AtomicI16, i16);
loom_atomic!(/// An atomic `i32`, as loom's.
    AtomicI32, i32);
loom_atomic!(/// An atomic `i64`, as loom's.
    AtomicI64, i64);
loom_atomic!(/// An atomic `isize`, as loom's.
    AtomicIsize, isize);
loom_atomic!(/// An atomic raw pointer, as loom's.
    AtomicPtr<T>, *mut T);
