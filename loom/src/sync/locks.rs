//! loom's `Mutex`, `RwLock` and `Condvar`: pctvb's, except that, as loom's, they are never
//! poisoned. A guard dropped while its thread panics poisons a std (and pctvb) lock, and
//! every later `lock().unwrap()` panics; loom's locks always return `Ok`. Code written for
//! loom unwraps freely, so under pctvb's locks a failed assertion in a model went on to a
//! second panic in a destructor that locks (a `Drop` that unwraps a lock the unwinding
//! thread released), which Rust turns into a process abort: the test binary died with
//! SIGABRT, its other tests unreported, and the report named the `PoisonError`, not the
//! assertion (`loom/tests/sync.rs`). The guards are pctvb's.

use std::fmt;
use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};
use std::time::Duration;

use pctvb::sync::{MutexGuard, RwLockReadGuard, RwLockWriteGuard, WaitTimeoutResult};

/// Unwraps a lock result as loom does: a poisoned lock is taken as it is.
fn unpoisoned<G>(r: LockResult<G>) -> LockResult<G> {
    Ok(r.unwrap_or_else(PoisonError::into_inner))
}

fn unpoisoned_try<G>(r: TryLockResult<G>) -> TryLockResult<G> {
    match r {
        Err(TryLockError::Poisoned(p)) => Ok(p.into_inner()),
        other => other,
    }
}

/// loom's `Mutex`: [`pctvb::sync::Mutex`], never poisoned (see the module docs).
pub struct Mutex<T: ?Sized>(pctvb::sync::Mutex<T>);

impl<T> Mutex<T> {
    /// A new unlocked mutex; its creation site names it in reports.
    #[track_caller]
    pub const fn new(value: T) -> Mutex<T> {
        Mutex(pctvb::sync::Mutex::new(value))
    }

    /// Consumes the mutex and returns its data.
    pub fn into_inner(self) -> LockResult<T> {
        unpoisoned(self.0.into_inner())
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Acquires the lock, blocking the logical thread until it is free (always `Ok`).
    #[track_caller]
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        unpoisoned(self.0.lock())
    }

    /// Acquires the lock if it is free (never `Poisoned`).
    #[track_caller]
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        unpoisoned_try(self.0.try_lock())
    }

    /// Mutable access without locking (always `Ok`).
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        unpoisoned(self.0.get_mut())
    }

    /// Always `false`: loom's locks are never poisoned.
    pub fn is_poisoned(&self) -> bool {
        false
    }

    /// Does nothing: loom's locks are never poisoned.
    pub fn clear_poison(&self) {}
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
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

/// loom's `RwLock`: [`pctvb::sync::RwLock`], never poisoned (see the module docs).
pub struct RwLock<T: ?Sized>(pctvb::sync::RwLock<T>);

impl<T> RwLock<T> {
    /// A new unlocked rwlock; its creation site names it in reports.
    #[track_caller]
    pub const fn new(value: T) -> RwLock<T> {
        RwLock(pctvb::sync::RwLock::new(value))
    }

    /// Consumes the lock and returns its data.
    pub fn into_inner(self) -> LockResult<T> {
        unpoisoned(self.0.into_inner())
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Acquires a read lock (always `Ok`).
    #[track_caller]
    pub fn read(&self) -> LockResult<RwLockReadGuard<'_, T>> {
        unpoisoned(self.0.read())
    }

    /// Acquires the write lock (always `Ok`).
    #[track_caller]
    pub fn write(&self) -> LockResult<RwLockWriteGuard<'_, T>> {
        unpoisoned(self.0.write())
    }

    /// Acquires a read lock if no writer holds the lock (never `Poisoned`).
    #[track_caller]
    pub fn try_read(&self) -> TryLockResult<RwLockReadGuard<'_, T>> {
        unpoisoned_try(self.0.try_read())
    }

    /// Acquires the write lock if the lock is free (never `Poisoned`).
    #[track_caller]
    pub fn try_write(&self) -> TryLockResult<RwLockWriteGuard<'_, T>> {
        unpoisoned_try(self.0.try_write())
    }

    /// Mutable access without locking (always `Ok`).
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        unpoisoned(self.0.get_mut())
    }

    /// Always `false`: loom's locks are never poisoned.
    pub fn is_poisoned(&self) -> bool {
        false
    }

    /// Does nothing: loom's locks are never poisoned.
    pub fn clear_poison(&self) {}
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
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

/// loom's `Condvar`: [`pctvb::sync::Condvar`], whose waits re-acquire the mutex unpoisoned,
/// as loom's (see the module docs).
pub struct Condvar(pctvb::sync::Condvar);

impl Default for Condvar {
    #[track_caller]
    fn default() -> Condvar {
        Condvar::new()
    }
}

impl Condvar {
    /// A new condition variable.
    #[track_caller]
    pub const fn new() -> Condvar {
        Condvar(pctvb::sync::Condvar::new())
    }

    /// Blocks until notified (always `Ok`).
    #[track_caller]
    pub fn wait<'a, T: ?Sized>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        unpoisoned(self.0.wait(guard))
    }

    /// Blocks while `condition` holds (always `Ok`).
    #[track_caller]
    pub fn wait_while<'a, T, F>(
        &self,
        guard: MutexGuard<'a, T>,
        condition: F,
    ) -> LockResult<MutexGuard<'a, T>>
    where
        F: FnMut(&mut T) -> bool,
    {
        unpoisoned(self.0.wait_while(guard, condition))
    }

    /// Blocks until notified or `timeout` passes (always `Ok`).
    #[track_caller]
    pub fn wait_timeout<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        unpoisoned(self.0.wait_timeout(guard, timeout))
    }

    /// Blocks while `condition` holds, at most `timeout` (always `Ok`).
    #[track_caller]
    pub fn wait_timeout_while<'a, T, F>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
        condition: F,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)>
    where
        F: FnMut(&mut T) -> bool,
    {
        unpoisoned(self.0.wait_timeout_while(guard, timeout, condition))
    }

    /// Wakes one waiting thread.
    #[track_caller]
    pub fn notify_one(&self) {
        self.0.notify_one()
    }

    /// Wakes every waiting thread.
    #[track_caller]
    pub fn notify_all(&self) {
        self.0.notify_all()
    }
}

impl fmt::Debug for Condvar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}
