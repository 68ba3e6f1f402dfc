//! `std::cell`, as loom mocks it: an [`UnsafeCell`] whose accesses are race checks (those of
//! [`pctvb::cell::UnsafeCell`]) but, as in loom, no scheduling points, with loom's pointer
//! types [`ConstPtr`] and [`MutPtr`], and a [`Cell`] built on it.
//!
//! Why no scheduling point: whether two conflicting accesses race depends on the
//! happens-before order alone, which the synchronising operations (atomics, locks, spawn,
//! join, ...; each a scheduling point) decide; and in an execution with no race, what an
//! access reads is fixed by that order too. So scheduling at cell accesses would reach no
//! behaviour that ordering the synchronising operations does not, and a race is reported
//! wherever the accesses fall. The cells are then no variables of pctvb's bounds (a passing
//! run with a guarantee says so), which keeps `k` and `k_q` to the synchronising operations.
//! With pctvb's race detector off (`PCTVB_RACES=0`), accesses are scheduling points again,
//! as [`pctvb::cell::UnsafeCell`]'s: the argument needs the check. A thread that polls a cell
//! for another thread's write with no synchronising operation in the loop (a data race, which
//! a scheduling point at the read used to let pctvb report) now loops without a scheduling
//! point, as under loom: pctvb's watchdog ends the process after `PCTVB_WATCHDOG` seconds
//! (10 by default) with its diagnosis, which names a spin loop on a plain variable.
//!
//! As in loom, an access lasts: from `get`/`get_mut` until the pointer is dropped, and for
//! `with`/`with_mut` while the closure runs. A conflicting access of the cell in that time is
//! reported as a data race even when each dereference is short: another thread's, or the
//! same thread's own (its `with_mut` while its `MutPtr` lives, where loom panics too). Each
//! use of a pointer (`deref`, `with`) counts as an access at that time, so a write through a
//! pointer after a release that published the cell races with the reader; the pointer's end
//! counts as an access too, as loom's does, at the thread's latest synchronising operation: a
//! pointer dropped right after a release (a guard whose `Drop` publishes the cell, then drops
//! its pointer field) is covered by that release, as under loom (pctvb's hidden
//! `access_span` hook).

use std::fmt;
use std::marker::PhantomData;

/// loom's `UnsafeCell`: [`UnsafeCell::with`] and [`UnsafeCell::get`] are reads of the cell,
/// [`UnsafeCell::with_mut`] and [`UnsafeCell::get_mut`] writes; each goes through
/// [`pctvb::cell::UnsafeCell`]'s race check when it starts (no scheduling point, as in loom:
/// see the module docs), and stays open until the closure returns or the
/// [`ConstPtr`]/[`MutPtr`] is dropped, as in loom: a conflicting access meanwhile, by another
/// thread or by the same one, is a data race.
///
/// As loom's (and std's), it is `Send` when `T` is, and never `Sync`: a type that shares one
/// between threads declares `unsafe impl Sync`, and pctvb checks that promise.
pub struct UnsafeCell<T: ?Sized> {
    /// Not `Sync`, as loom's (pctvb's own `UnsafeCell` is, to report the races of code that
    /// shares it directly).
    _not_sync: PhantomData<std::cell::Cell<()>>,
    cell: pctvb::cell::UnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    /// A new cell.
    #[track_caller]
    pub const fn new(data: T) -> UnsafeCell<T> {
        UnsafeCell { _not_sync: PhantomData, cell: pctvb::cell::UnsafeCell::new(data) }
    }

    /// Consumes the cell and returns its value.
    pub fn into_inner(self) -> T {
        self.cell.into_inner()
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    /// Reads through a raw pointer: a read of the cell that lasts while `f` runs.
    #[track_caller]
    pub fn with<F, R>(&self, f: F) -> R
    where
        F: FnOnce(*const T) -> R,
    {
        // `f` may reach scheduling points, where other threads run: the span covers them.
        let span = pctvb::__internals::cell::access_span(&self.cell, false);
        let r = f(self.cell.get());
        // The closure may use the pointer until it returns (after a release inside it, say).
        span.used();
        r
    }

    /// Writes through a raw pointer: a write of the cell that lasts while `f` runs.
    #[track_caller]
    pub fn with_mut<F, R>(&self, f: F) -> R
    where
        F: FnOnce(*mut T) -> R,
    {
        let span = pctvb::__internals::cell::access_span(&self.cell, true);
        let r = f(self.cell.get());
        span.used();
        r
    }

    /// An immutable access to the cell: a read of the cell that lasts until the pointer is
    /// dropped.
    #[track_caller]
    pub fn get(&self) -> ConstPtr<T> {
        let span = pctvb::__internals::cell::access_span(&self.cell, false);
        ConstPtr { ptr: self.cell.get(), _span: span }
    }

    /// A mutable access to the cell: a write of the cell that lasts until the pointer is
    /// dropped.
    #[track_caller]
    pub fn get_mut(&self) -> MutPtr<T> {
        let span = pctvb::__internals::cell::access_span(&self.cell, true);
        MutPtr { ptr: self.cell.get(), _span: span }
    }
}

impl<T: Default> Default for UnsafeCell<T> {
    #[track_caller]
    fn default() -> UnsafeCell<T> {
        UnsafeCell::new(T::default())
    }
}

impl<T> From<T> for UnsafeCell<T> {
    #[track_caller]
    fn from(value: T) -> UnsafeCell<T> {
        UnsafeCell::new(value)
    }
}

impl<T: ?Sized> fmt::Debug for UnsafeCell<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.cell, f)
    }
}

/// An immutable pointer into an [`UnsafeCell`], from [`UnsafeCell::get`]: the cell is being
/// read while it lives.
pub struct ConstPtr<T: ?Sized> {
    ptr: *const T,
    _span: pctvb::__internals::cell::AccessSpan,
}

impl<T: ?Sized> ConstPtr<T> {
    /// Dereferences the pointer.
    ///
    /// # Safety
    /// As dereferencing a `*const T` from `std::cell::UnsafeCell::get`: no mutable access to
    /// the cell may exist while the reference lives.
    pub unsafe fn deref(&self) -> &T {
        self._span.used();
        // SAFETY: the caller's promise; the pointer came from a live cell.
        unsafe { &*self.ptr }
    }

    /// Runs `f` with the raw pointer.
    pub fn with<F, R>(&self, f: F) -> R
    where
        F: FnOnce(*const T) -> R,
    {
        self._span.used();
        f(self.ptr)
    }
}

impl<T: ?Sized> fmt::Debug for ConstPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Pointer::fmt(&self.ptr, f)
    }
}

/// A mutable pointer into an [`UnsafeCell`], from [`UnsafeCell::get_mut`]: the cell is being
/// written while it lives.
pub struct MutPtr<T: ?Sized> {
    ptr: *mut T,
    _span: pctvb::__internals::cell::AccessSpan,
}

impl<T: ?Sized> MutPtr<T> {
    /// Dereferences the pointer mutably.
    ///
    /// # Safety
    /// As dereferencing a `*mut T` from `std::cell::UnsafeCell::get`: no other access to the
    /// cell may exist while the reference lives.
    // loom names this method `deref`, returning `&mut T`, so users' code calls it so.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn deref(&self) -> &mut T {
        self._span.used();
        // SAFETY: the caller's promise; the pointer came from a live cell.
        unsafe { &mut *self.ptr }
    }

    /// Runs `f` with the raw pointer.
    pub fn with<F, R>(&self, f: F) -> R
    where
        F: FnOnce(*mut T) -> R,
    {
        self._span.used();
        f(self.ptr)
    }
}

impl<T: ?Sized> fmt::Debug for MutPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Pointer::fmt(&self.ptr, f)
    }
}

/// loom's `Cell`: `std::cell::Cell` whose `get` is a read and whose `set`, `replace`, `swap`
/// and `take` are writes of an [`UnsafeCell`], each race-checked.
pub struct Cell<T> {
    cell: UnsafeCell<T>,
    /// Not `Sync`, as std's `Cell`.
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

impl<T> Cell<T> {
    /// A new cell.
    #[track_caller]
    pub const fn new(value: T) -> Cell<T> {
        Cell { cell: UnsafeCell::new(value), _not_sync: PhantomData }
    }

    /// Stores a value, dropping the old one.
    #[track_caller]
    pub fn set(&self, value: T) {
        drop(self.replace(value));
    }

    /// Swaps the values of two cells.
    #[track_caller]
    pub fn swap(&self, other: &Cell<T>) {
        if std::ptr::eq(self, other) {
            return;
        }
        self.cell.with_mut(|a| {
            other.cell.with_mut(|b| {
                // SAFETY: a `Cell` is not `Sync`, so no other thread reaches either cell, and
                // the two are distinct.
                unsafe { std::ptr::swap(a, b) }
            })
        })
    }

    /// Stores a value and returns the old one.
    #[track_caller]
    pub fn replace(&self, value: T) -> T {
        // SAFETY: a `Cell` is not `Sync`, and no reference into it escapes its methods.
        self.cell.with_mut(|p| unsafe { std::mem::replace(&mut *p, value) })
    }

    /// A copy of the value.
    #[track_caller]
    pub fn get(&self) -> T
    where
        T: Copy,
    {
        // SAFETY: as in `replace`.
        self.cell.with(|p| unsafe { *p })
    }

    /// Takes the value, leaving `T::default()`.
    #[track_caller]
    pub fn take(&self) -> T
    where
        T: Default,
    {
        self.replace(T::default())
    }

    /// Consumes the cell and returns its value.
    pub fn into_inner(self) -> T {
        self.cell.into_inner()
    }
}

impl<T: Default> Default for Cell<T> {
    #[track_caller]
    fn default() -> Cell<T> {
        Cell::new(T::default())
    }
}

impl<T: Copy> Clone for Cell<T> {
    #[track_caller]
    fn clone(&self) -> Cell<T> {
        Cell::new(self.get())
    }
}

impl<T> From<T> for Cell<T> {
    #[track_caller]
    fn from(value: T) -> Cell<T> {
        Cell::new(value)
    }
}

impl<T: PartialEq + Copy> PartialEq for Cell<T> {
    fn eq(&self, other: &Cell<T>) -> bool {
        self.get() == other.get()
    }
}

impl<T: Eq + Copy> Eq for Cell<T> {}

impl<T: PartialOrd + Copy> PartialOrd for Cell<T> {
    fn partial_cmp(&self, other: &Cell<T>) -> Option<std::cmp::Ordering> {
        self.get().partial_cmp(&other.get())
    }
}

impl<T: Ord + Copy> Ord for Cell<T> {
    fn cmp(&self, other: &Cell<T>) -> std::cmp::Ordering {
        self.get().cmp(&other.get())
    }
}

// For every `T`, as loom's derived `Debug` (which needs only `T: Debug`), and without the
// value: reading it would be an access of the cell (a race check), and printing must not
// change what an execution checks.
impl<T> fmt::Debug for Cell<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cell").field("cell", &self.cell).finish()
    }
}
