//! `UnsafeCell` whose reads and writes are variable accesses, for unsafe code such as
//! lock-free data structures: `with` and `with_mut` are scheduling points, so the scheduler can
//! preempt between a check and the write that depends on it, and checked accesses: two of
//! them from different threads, at least one a write, with no happens-before between them
//! fail the execution as a data race (see the guide's "Data races").

use std::fmt;
use std::panic::Location;

use crate::runtime::{with_current, Handle};

/// A cell of shared mutable data, as `std::cell::UnsafeCell`, plus `with`/`with_mut` accessors
/// that tell the scheduler about each access (loom's convention).
pub struct UnsafeCell<T: ?Sized> {
    handle: Handle,
    data: std::cell::UnsafeCell<T>,
}

// SAFETY: this cell is loom's: the user promises, as with a raw `UnsafeCell` in a type they
// declare `Sync`, to synchronize accesses themselves (with pctvb's primitives, whose data locks
// order OS threads too); `with`/`with_mut` only add scheduling points.
unsafe impl<T: ?Sized + Send> Sync for UnsafeCell<T> {}

impl<T> UnsafeCell<T> {
    /// A new cell.
    #[track_caller]
    pub const fn new(value: T) -> UnsafeCell<T> {
        UnsafeCell { handle: Handle::new(), data: std::cell::UnsafeCell::new(value) }
    }

    /// Consumes the cell and returns its value.
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }

    /// A raw pointer to the data of the cell `this` points to, as std's `raw_get`: no
    /// reference to the cell is made, nothing is read, and it is not a scheduling point. (The
    /// data's address is the cell's plus the field's offset, computed without a dereference,
    /// so for sized values only.)
    pub const fn raw_get(this: *const Self) -> *mut T {
        let data = this.cast::<u8>().wrapping_add(std::mem::offset_of!(Self, data));
        std::cell::UnsafeCell::raw_get(data.cast::<std::cell::UnsafeCell<T>>())
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    /// A raw pointer to the data, as std's `get`: not a scheduling point. Prefer `with` and
    /// `with_mut`, which let the scheduler interleave other threads at the access.
    pub const fn get(&self) -> *mut T {
        self.data.get()
    }

    /// Mutable access through an exclusive borrow.
    pub const fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }

    /// Reads through a raw pointer; a scheduling point and a read of this cell's variable,
    /// checked for data races against the cell's writes.
    #[track_caller]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        let location = Location::caller();
        with_current(|ex| {
            if let Some(ex) = ex {
                ex.cell_access(&self.handle, false, location);
            }
        });
        f(self.data.get())
    }

    /// Writes through a raw pointer; a scheduling point and a write of this cell's variable,
    /// checked for data races against the cell's reads and writes.
    #[track_caller]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        let location = Location::caller();
        with_current(|ex| {
            if let Some(ex) = ex {
                ex.cell_access(&self.handle, true, location);
            }
        });
        f(self.data.get())
    }
}

/// pctvb-loom's open accesses (re-exported as `__internals::cell`, not through this module:
/// they are no part of pctvb's API).
pub(crate) mod span {
    use std::marker::PhantomData;
    use std::panic::Location;

    use super::UnsafeCell;
    use crate::runtime::{with_current, LiveSpan};

    /// An access of a cell that stays open while this value lives, for pctvb-loom's pointer
    /// guards (`ConstPtr`, `MutPtr`): see [`access_span`]. Not part of pctvb's API.
    #[doc(hidden)]
    #[must_use]
    pub struct AccessSpan {
        span: Option<LiveSpan>,
        /// Stays on its logical thread, as the guard holding it.
        _not_send: PhantomData<*const ()>,
    }

    /// Starts an access of `cell` (`write`: a write, else a read) that lasts until the returned
    /// value is dropped, as loom's `UnsafeCell::get`/`get_mut` guards do: the race check of
    /// `with`/`with_mut` now, and while the access is open a conflicting access of the cell
    /// (by any thread, the same one too) is a data race; each use of the pointer
    /// ([`AccessSpan::used`]) and its end are recorded as accesses too. As in loom, no
    /// scheduling point: the synchronising operations decide the order
    /// of a race-free execution's cell accesses (the cell's variable is a
    /// `VarKind::CheckedCell`, which the bounds do not count). Outside an execution nothing
    /// happens; with the detector off, only a scheduling point (as `with`/`with_mut`'s).
    #[doc(hidden)]
    #[track_caller]
    pub fn access_span<T: ?Sized>(cell: &UnsafeCell<T>, write: bool) -> AccessSpan {
        let location = Location::caller();
        let span =
            with_current(|ex| ex.and_then(|ex| ex.begin_span(&cell.handle, write, location)));
        AccessSpan { span, _not_send: PhantomData }
    }

    impl AccessSpan {
        /// A use of the open access (a dereference of the guard's pointer): recorded as an
        /// access with the thread's clock now, so that a release since the access began does
        /// not order it. Outside an execution, or with the detector off, nothing happens.
        #[doc(hidden)]
        pub fn used(&self) {
            if let Some(span) = &self.span {
                with_current(|ex| {
                    if let Some(ex) = ex {
                        ex.use_span(span);
                    }
                });
            }
        }
    }

    impl Drop for AccessSpan {
        fn drop(&mut self) {
            // By reference: moving the span out (`take`) copied it through the stack in pieces
            // the CPU could not forward, which cost more than the rest of this drop.
            if let Some(span) = &self.span {
                let unwinding = std::thread::panicking();
                with_current(|ex| match ex {
                    // Unwinding: the panic may be caught inside the execution, which goes on.
                    Some(ex) if unwinding => ex.end_span_unwinding(span),
                    Some(ex) => ex.end_span(span),
                    None => {}
                });
            }
        }
    }
}

impl<T: Default> Default for UnsafeCell<T> {
    #[track_caller]
    fn default() -> UnsafeCell<T> {
        UnsafeCell::new(T::default())
    }
}

impl<T> From<T> for UnsafeCell<T> {
    /// A new cell holding `value`, as std's; created at the caller's location.
    #[track_caller]
    fn from(value: T) -> UnsafeCell<T> {
        UnsafeCell::new(value)
    }
}

impl<T: ?Sized> fmt::Debug for UnsafeCell<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UnsafeCell@{}", self.handle.site())
    }
}
