//! `Mutex`: mutual exclusion with std's poisoning, and recursive locking reported as the
//! deadlock it is.

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

/// A mutual exclusion lock, as `std::sync::Mutex`.
pub struct Mutex<T: ?Sized> {
    handle: Handle,
    poisoned: PoisonFlag,
    data: UnsafeCell<T>,
}

// SAFETY: as std's Mutex: the lock model guarantees one guard at a time.
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
    object: ObjectId,
    location: &'static Location<'static>,
    _not_send: std::marker::PhantomData<*const ()>,
}

// SAFETY: as std's MutexGuard.
unsafe impl<T: ?Sized + Sync> Sync for MutexGuard<'_, T> {}

enum Acquire {
    Acquired,
    Busy,
    Recursive,
}

impl<T> Mutex<T> {
    /// A new unlocked mutex; its creation site names it in reports.
    #[track_caller]
    pub const fn new(value: T) -> Mutex<T> {
        Mutex { handle: Handle::new(), poisoned: PoisonFlag::new(), data: UnsafeCell::new(value) }
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
    /// deadlock or panic).
    #[track_caller]
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        let location = Location::caller();
        let object = with_execution("Mutex::lock", |ex| {
            let object = ex.point(&self.handle, VarKind::Mutex, EventKind::Lock, location);
            loop {
                match try_acquire(ex, object) {
                    Acquire::Acquired => break object,
                    Acquire::Busy => {
                        ex.block(BlockedOn::Mutex(object), false, location);
                    }
                    Acquire::Recursive => recursive(ex, object),
                }
            }
        });
        self.guard(object, location)
    }

    /// Acquires the lock if it is free.
    #[track_caller]
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        let location = Location::caller();
        let acquired = with_execution("Mutex::try_lock", |ex| {
            let object = ex.point(&self.handle, VarKind::Mutex, EventKind::Lock, location);
            match try_acquire(ex, object) {
                Acquire::Acquired => Some(object),
                Acquire::Busy | Acquire::Recursive => None,
            }
        });
        match acquired {
            Some(object) => self.guard(object, location).map_err(TryLockError::Poisoned),
            None => Err(TryLockError::WouldBlock),
        }
    }

    fn guard(
        &self,
        object: ObjectId,
        location: &'static Location<'static>,
    ) -> LockResult<MutexGuard<'_, T>> {
        self.poisoned.wrap(MutexGuard {
            lock: self,
            object,
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

fn try_acquire(ex: &Execution, object: ObjectId) -> Acquire {
    ex.with_state(|st| {
        let me = st.current;
        match &mut st.objects[object.index()].state {
            ObjectState::Mutex { owner: owner @ None } => {
                *owner = Some(me);
                Acquire::Acquired
            }
            ObjectState::Mutex { owner: Some(o) } if *o == me => Acquire::Recursive,
            _ => Acquire::Busy,
        }
    })
}

fn recursive(ex: &Execution, object: ObjectId) -> ! {
    let cause = ex.with_state(|st| FailureCause::RecursiveLock {
        thread: st.thread_info(st.current),
        what: st.describe_object(object),
    });
    ex.fail(cause)
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.poisoned.done();
        if !in_execution() {
            return;
        }
        let object = self.object;
        with_execution("MutexGuard::drop", |ex| {
            ex.with_state(|st| {
                if let Some(ObjectState::Mutex { owner }) =
                    st.objects.get_mut(object.index()).map(|o| &mut o.state)
                {
                    *owner = None;
                    st.wake_waiters(object);
                }
            });
            ex.schedule(EventKind::Unlock, Some(object), self.location);
        });
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves this thread holds the lock.
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

impl<T: ?Sized> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Mutex@{} {{ .. }}", self.handle.site())
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
    /// The mutex this guard locks (used by `Condvar`).
    pub(crate) fn parts(this: &Self) -> (&'a Mutex<T>, ObjectId, &'static Location<'static>) {
        (this.lock, this.object, this.location)
    }

    /// Rebuilds a guard for a mutex this thread holds again (used by `Condvar`).
    pub(crate) fn relock(
        lock: &'a Mutex<T>,
        object: ObjectId,
        location: &'static Location<'static>,
    ) -> LockResult<MutexGuard<'a, T>> {
        lock.guard(object, location)
    }
}

/// Releases `object` without a scheduling point (the caller makes one), for `Condvar::wait`.
pub(crate) fn release(ex: &Execution, object: ObjectId) {
    ex.with_state(|st| {
        if let ObjectState::Mutex { owner } = &mut st.objects[object.index()].state {
            *owner = None;
        }
        st.wake_waiters(object);
    });
}

/// Re-acquires `object` for the calling thread, blocking as `lock` does.
pub(crate) fn reacquire(ex: &Execution, object: ObjectId, location: &'static Location<'static>) {
    loop {
        match try_acquire(ex, object) {
            Acquire::Acquired => return,
            Acquire::Busy => {
                ex.block(BlockedOn::Mutex(object), false, location);
            }
            Acquire::Recursive => recursive(ex, object),
        }
    }
}
