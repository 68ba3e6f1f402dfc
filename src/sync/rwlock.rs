//! `RwLock`: many readers or one writer.

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::{LockResult, TryLockError, TryLockResult};

use super::poison::PoisonFlag;

use crate::runtime::{
    in_execution, with_execution, BlockedOn, EventKind, Execution, FailureCause, Handle, ObjectId,
    ObjectState,
};
use crate::vars::VarKind;

/// A readers-writer lock, as `std::sync::RwLock`. A thread that asks for a lock it already
/// holds in a conflicting way fails the execution as a deadlock.
pub struct RwLock<T: ?Sized> {
    handle: Handle,
    poisoned: PoisonFlag,
    data: UnsafeCell<T>,
}

// SAFETY: as std's RwLock.
unsafe impl<T: ?Sized + Send> Send for RwLock<T> {}
// SAFETY: as std's RwLock.
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}

// As std's: poisoning reports broken invariants.
impl<T: ?Sized> std::panic::UnwindSafe for RwLock<T> {}
impl<T: ?Sized> std::panic::RefUnwindSafe for RwLock<T> {}

/// Shared access; releases the read lock when dropped.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockReadGuard<'a, T: ?Sized + 'a> {
    lock: &'a RwLock<T>,
    object: ObjectId,
    location: &'static Location<'static>,
    _not_send: std::marker::PhantomData<*const ()>,
}

/// Exclusive access; releases the write lock when dropped.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockWriteGuard<'a, T: ?Sized + 'a> {
    lock: &'a RwLock<T>,
    object: ObjectId,
    location: &'static Location<'static>,
    _not_send: std::marker::PhantomData<*const ()>,
}

// SAFETY: as std's guards.
unsafe impl<T: ?Sized + Sync> Sync for RwLockReadGuard<'_, T> {}
// SAFETY: as std's guards.
unsafe impl<T: ?Sized + Sync> Sync for RwLockWriteGuard<'_, T> {}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Read,
    Write,
}

enum Acquire {
    Acquired,
    Busy,
    SelfDeadlock,
}

impl<T> RwLock<T> {
    /// A new unlocked lock.
    #[track_caller]
    pub const fn new(value: T) -> RwLock<T> {
        RwLock { handle: Handle::new(), poisoned: PoisonFlag::new(), data: UnsafeCell::new(value) }
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
        let object = self.acquire(Mode::Read, location, true).expect("blocking acquire");
        self.poisoned.wrap(self.read_guard(object, location))
    }

    /// Acquires exclusive write access, blocking while anyone holds the lock.
    #[track_caller]
    pub fn write(&self) -> LockResult<RwLockWriteGuard<'_, T>> {
        let location = Location::caller();
        let object = self.acquire(Mode::Write, location, true).expect("blocking acquire");
        self.poisoned.wrap(self.write_guard(object, location))
    }

    /// Acquires read access if no writer holds the lock.
    #[track_caller]
    pub fn try_read(&self) -> TryLockResult<RwLockReadGuard<'_, T>> {
        let location = Location::caller();
        let object = self.acquire(Mode::Read, location, false).ok_or(TryLockError::WouldBlock)?;
        Ok(self.poisoned.wrap(self.read_guard(object, location))?)
    }

    /// Acquires write access if nobody holds the lock.
    #[track_caller]
    pub fn try_write(&self) -> TryLockResult<RwLockWriteGuard<'_, T>> {
        let location = Location::caller();
        let object = self.acquire(Mode::Write, location, false).ok_or(TryLockError::WouldBlock)?;
        Ok(self.poisoned.wrap(self.write_guard(object, location))?)
    }

    fn read_guard(
        &self,
        object: ObjectId,
        location: &'static Location<'static>,
    ) -> RwLockReadGuard<'_, T> {
        RwLockReadGuard { lock: self, object, location, _not_send: std::marker::PhantomData }
    }

    fn write_guard(
        &self,
        object: ObjectId,
        location: &'static Location<'static>,
    ) -> RwLockWriteGuard<'_, T> {
        RwLockWriteGuard { lock: self, object, location, _not_send: std::marker::PhantomData }
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

    fn acquire(
        &self,
        mode: Mode,
        location: &'static Location<'static>,
        block: bool,
    ) -> Option<ObjectId> {
        let (op, kind) = match mode {
            Mode::Read => ("RwLock::read", EventKind::ReadLock),
            Mode::Write => ("RwLock::write", EventKind::WriteLock),
        };
        with_execution(op, |ex| {
            let object = ex.point(&self.handle, VarKind::RwLock, kind, location);
            loop {
                match try_acquire(ex, object, mode) {
                    Acquire::Acquired => return Some(object),
                    Acquire::Busy | Acquire::SelfDeadlock if !block => return None,
                    Acquire::Busy => {
                        let on = match mode {
                            Mode::Read => BlockedOn::RwRead(object),
                            Mode::Write => BlockedOn::RwWrite(object),
                        };
                        ex.block(on, false, location);
                    }
                    Acquire::SelfDeadlock => {
                        let cause = ex.with_state(|st| FailureCause::RecursiveLock {
                            thread: st.thread_info(st.current),
                            what: st.describe_object(object),
                        });
                        ex.fail(cause)
                    }
                }
            }
        })
    }
}

fn try_acquire(ex: &Execution, object: ObjectId, mode: Mode) -> Acquire {
    ex.with_state(|st| {
        let me = st.current;
        let ObjectState::RwLock { writer, readers } = &mut st.objects[object.index()].state else {
            unreachable!("rwlock object with non-rwlock state")
        };
        if *writer == Some(me) || (mode == Mode::Write && readers.contains(&me)) {
            return Acquire::SelfDeadlock;
        }
        match mode {
            Mode::Read if writer.is_none() => {
                readers.push(me);
                Acquire::Acquired
            }
            Mode::Write if writer.is_none() && readers.is_empty() => {
                *writer = Some(me);
                Acquire::Acquired
            }
            _ => Acquire::Busy,
        }
    })
}

fn release(object: ObjectId, mode: Mode, location: &'static Location<'static>) {
    if !in_execution() {
        return;
    }
    with_execution("RwLock guard drop", |ex| {
        ex.with_state(|st| {
            let me = st.current;
            if let Some(ObjectState::RwLock { writer, readers }) =
                st.objects.get_mut(object.index()).map(|o| &mut o.state)
            {
                match mode {
                    Mode::Write => *writer = None,
                    Mode::Read => {
                        if let Some(pos) = readers.iter().position(|&r| r == me) {
                            readers.swap_remove(pos);
                        }
                    }
                }
                st.wake_waiters(object);
            }
        });
        ex.schedule(EventKind::RwUnlock, Some(object), location);
    })
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        release(self.object, Mode::Read, self.location);
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.poisoned.done();
        release(self.object, Mode::Write, self.location);
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

impl<T: ?Sized> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RwLock@{} {{ .. }}", self.handle.site())
    }
}

impl<T: Default> Default for RwLock<T> {
    #[track_caller]
    fn default() -> RwLock<T> {
        RwLock::new(T::default())
    }
}
