//! `Mutex`: the std-shaped mutex (data, poisoning, guards) over the engine's `RawMutex`, which
//! owns the model, the scheduling points and the data lock.

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::{LockResult, TryLockError, TryLockResult};

use super::poison::PoisonFlag;

use crate::runtime::{MutexHold, RawMutex};

/// A mutual exclusion lock, as `std::sync::Mutex`.
///
/// Inside an execution, locking is a scheduling point and blocks the logical thread in the
/// model; the data is also under a real lock, so executions running at the same time on other
/// OS threads (parallel workers, other tests sharing a static) never reach it at once. Outside
/// any execution it is a real mutex, as std's.
pub struct Mutex<T: ?Sized> {
    raw: RawMutex,
    poisoned: PoisonFlag,
    data: UnsafeCell<T>,
}

// SAFETY: the data is reached only through a guard, and a guard exists only while its holder
// (a logical thread of one execution, or an OS thread outside executions) holds the mutex's
// data lock (`RawMutex::lock`), which no two OS threads hold at once; within an execution the
// model lets one logical thread at a time hold it. So, as std's: `T: Send` suffices.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}

// As std's: a poisoned flag, not unwind safety, tells users about broken invariants.
impl<T: ?Sized> std::panic::UnwindSafe for Mutex<T> {}
impl<T: ?Sized> std::panic::RefUnwindSafe for Mutex<T> {}

/// Access to a locked mutex's data; unlocks when dropped.
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MutexGuard<'a, T: ?Sized + 'a> {
    lock: &'a Mutex<T>,
    hold: MutexHold,
    location: &'static Location<'static>,
    _not_send: std::marker::PhantomData<*const ()>,
}

// SAFETY: as std's MutexGuard: sharing the guard shares `&T`.
unsafe impl<T: ?Sized + Sync> Sync for MutexGuard<'_, T> {}

impl<T> Mutex<T> {
    /// A new unlocked mutex; its creation site names it in reports.
    #[track_caller]
    pub const fn new(value: T) -> Mutex<T> {
        Mutex { raw: RawMutex::new(), poisoned: PoisonFlag::new(), data: UnsafeCell::new(value) }
    }

    /// Consumes the mutex and returns its data.
    pub fn into_inner(self) -> LockResult<T> {
        let poisoned = self.poisoned;
        poisoned.wrap(self.data.into_inner())
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Acquires the lock, blocking the logical thread until it is free.
    ///
    /// Locking a mutex the thread already holds fails the execution as a deadlock (std may
    /// deadlock or panic; outside executions it panics).
    #[track_caller]
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        let location = Location::caller();
        let hold = self.raw.lock(location);
        self.guard(hold, location)
    }

    /// Acquires the lock if it is free.
    #[track_caller]
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        let location = Location::caller();
        match self.raw.try_lock(location) {
            Some(hold) => self.guard(hold, location).map_err(TryLockError::Poisoned),
            None => Err(TryLockError::WouldBlock),
        }
    }

    fn guard(
        &self,
        hold: MutexHold,
        location: &'static Location<'static>,
    ) -> LockResult<MutexGuard<'_, T>> {
        self.poisoned.wrap(MutexGuard {
            lock: self,
            hold,
            location,
            _not_send: std::marker::PhantomData,
        })
    }

    /// Whether a thread panicked while holding the lock.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned.get()
    }

    /// Clears the poisoned flag.
    pub fn clear_poison(&self) {
        self.poisoned.clear();
    }

    /// Mutable access without locking (the borrow proves exclusivity).
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        self.poisoned.wrap(self.data.get_mut())
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.poisoned.done();
        self.lock.raw.unlock(self.hold, self.location);
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves this thread holds the lock, data lock included.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: ?Sized> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Mutex@{} {{ .. }}", self.raw.site())
    }
}

impl<T: Default> Default for Mutex<T> {
    #[track_caller]
    fn default() -> Mutex<T> {
        Mutex::new(T::default())
    }
}

impl<T> From<T> for Mutex<T> {
    #[track_caller]
    fn from(value: T) -> Mutex<T> {
        Mutex::new(value)
    }
}

impl<'a, T: ?Sized> MutexGuard<'a, T> {
    /// Takes the guard apart without unlocking (for `Condvar::wait`, which unlocks itself).
    pub(crate) fn into_parts(this: Self) -> (&'a Mutex<T>, MutexHold, &'static Location<'static>) {
        let parts = (this.lock, this.hold, this.location);
        std::mem::forget(this);
        parts
    }

    /// The engine's part of the guard's mutex.
    pub(crate) fn raw(lock: &Mutex<T>) -> &RawMutex {
        &lock.raw
    }

    /// Rebuilds a guard for a mutex this thread holds again (for `Condvar::wait`).
    pub(crate) fn relock(
        lock: &'a Mutex<T>,
        hold: MutexHold,
        location: &'static Location<'static>,
    ) -> LockResult<MutexGuard<'a, T>> {
        lock.guard(hold, location)
    }
}
