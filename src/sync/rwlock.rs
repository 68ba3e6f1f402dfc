//! `RwLock`: the std-shaped readers-writer lock (data, poisoning, guards) over the engine's
//! `RawRwLock`, which owns the model, the scheduling points and the data lock.

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::{LockResult, TryLockError, TryLockResult};

use super::poison::PoisonFlag;

use crate::runtime::{RawRwLock, RwHold};

/// A readers-writer lock, as `std::sync::RwLock`. A thread that asks for a lock it already
/// holds in a conflicting way fails the execution as a deadlock. Outside any execution it is a
/// real lock, as std's.
pub struct RwLock<T: ?Sized> {
    raw: RawRwLock,
    poisoned: PoisonFlag,
    data: UnsafeCell<T>,
}

// SAFETY: the data is reached only through guards, which exist only while their holders hold
// the lock's data lock (`RawRwLock::read`/`write`): a writer alone, readers only together with
// readers (of one execution, or outside executions), never two OS threads with a writer among
// them. So, as std's: `Send` needs `T: Send`, `Sync` also `T: Sync` (readers share `&T`).
unsafe impl<T: ?Sized + Send> Send for RwLock<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}

// As std's: poisoning reports broken invariants.
impl<T: ?Sized> std::panic::UnwindSafe for RwLock<T> {}
impl<T: ?Sized> std::panic::RefUnwindSafe for RwLock<T> {}

/// Shared access; releases the read lock when dropped.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockReadGuard<'a, T: ?Sized + 'a> {
    lock: &'a RwLock<T>,
    hold: RwHold,
    location: &'static Location<'static>,
    _not_send: std::marker::PhantomData<*const ()>,
}

/// Exclusive access; releases the write lock when dropped.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockWriteGuard<'a, T: ?Sized + 'a> {
    lock: &'a RwLock<T>,
    hold: RwHold,
    location: &'static Location<'static>,
    _not_send: std::marker::PhantomData<*const ()>,
}

// SAFETY: as std's guards.
unsafe impl<T: ?Sized + Sync> Sync for RwLockReadGuard<'_, T> {}
// SAFETY: as std's guards.
unsafe impl<T: ?Sized + Sync> Sync for RwLockWriteGuard<'_, T> {}

impl<T> RwLock<T> {
    /// A new unlocked lock.
    #[track_caller]
    pub const fn new(value: T) -> RwLock<T> {
        RwLock { raw: RawRwLock::new(), poisoned: PoisonFlag::new(), data: UnsafeCell::new(value) }
    }

    /// Consumes the lock and returns its data.
    pub fn into_inner(self) -> LockResult<T> {
        let poisoned = self.poisoned;
        poisoned.wrap(self.data.into_inner())
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Acquires shared read access, blocking while a writer holds the lock.
    #[track_caller]
    pub fn read(&self) -> LockResult<RwLockReadGuard<'_, T>> {
        let location = Location::caller();
        let hold = self.raw.read(true, location).expect("blocking acquire");
        self.poisoned.wrap(self.read_guard(hold, location))
    }

    /// Acquires exclusive write access, blocking while anyone holds the lock.
    #[track_caller]
    pub fn write(&self) -> LockResult<RwLockWriteGuard<'_, T>> {
        let location = Location::caller();
        let hold = self.raw.write(true, location).expect("blocking acquire");
        self.poisoned.wrap(self.write_guard(hold, location))
    }

    /// Acquires read access if no writer holds the lock.
    #[track_caller]
    pub fn try_read(&self) -> TryLockResult<RwLockReadGuard<'_, T>> {
        let location = Location::caller();
        let hold = self.raw.read(false, location).ok_or(TryLockError::WouldBlock)?;
        Ok(self.poisoned.wrap(self.read_guard(hold, location))?)
    }

    /// Acquires write access if nobody holds the lock.
    #[track_caller]
    pub fn try_write(&self) -> TryLockResult<RwLockWriteGuard<'_, T>> {
        let location = Location::caller();
        let hold = self.raw.write(false, location).ok_or(TryLockError::WouldBlock)?;
        Ok(self.poisoned.wrap(self.write_guard(hold, location))?)
    }

    fn read_guard(
        &self,
        hold: RwHold,
        location: &'static Location<'static>,
    ) -> RwLockReadGuard<'_, T> {
        RwLockReadGuard { lock: self, hold, location, _not_send: std::marker::PhantomData }
    }

    fn write_guard(
        &self,
        hold: RwHold,
        location: &'static Location<'static>,
    ) -> RwLockWriteGuard<'_, T> {
        RwLockWriteGuard { lock: self, hold, location, _not_send: std::marker::PhantomData }
    }

    /// Whether a writer panicked while holding the lock.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned.get()
    }

    /// Clears the poisoned flag.
    pub fn clear_poison(&self) {
        self.poisoned.clear();
    }

    /// Mutable access without locking.
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        self.poisoned.wrap(self.data.get_mut())
    }
}

impl<'a, T: ?Sized> RwLockWriteGuard<'a, T> {
    /// Turns the write lock into a read lock without releasing it, as std's (1.92): no writer
    /// gets in between, readers waiting for the lock may go on, writers still wait. Inside an
    /// execution, a scheduling point after the change.
    #[track_caller]
    pub fn downgrade(s: Self) -> RwLockReadGuard<'a, T> {
        let location = Location::caller();
        // Not dropped: that would unlock. Nor does it poison, as std's, which forgets it too.
        let s = std::mem::ManuallyDrop::new(s);
        let hold = s.lock.raw.downgrade(s.hold, location);
        s.lock.read_guard(hold, location)
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.raw.unlock_read(self.hold, self.location);
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.poisoned.done();
        self.lock.raw.unlock_write(self.hold, self.location);
    }
}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves shared access.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves exclusive access.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard proves exclusive access.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockWriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for RwLockWriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: ?Sized> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RwLock@{} {{ .. }}", self.raw.site())
    }
}

impl<T: Default> Default for RwLock<T> {
    #[track_caller]
    fn default() -> RwLock<T> {
        RwLock::new(T::default())
    }
}

impl<T> From<T> for RwLock<T> {
    #[track_caller]
    fn from(value: T) -> RwLock<T> {
        RwLock::new(value)
    }
}
