//! `Condvar`: the paper's wait/notify emulation (Figure 11): waiting releases the mutex and
//! blocks until a notification, then re-acquires the mutex.

use std::fmt;
use std::panic::Location;
use std::sync::LockResult;
use std::time::Duration;

use super::mutex::{reacquire, release, MutexGuard};
use crate::runtime::{with_execution, BlockedOn, EventKind, Handle};
use crate::vars::VarKind;

/// A condition variable, as `std::sync::Condvar`.
///
/// Waiters are woken in the order they started waiting, there are no spurious wakeups, and a
/// timed wait times out only when no thread can run (time passes only then).
pub struct Condvar {
    handle: Handle,
}

/// Whether a timed wait returned because of its timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitTimeoutResult(bool);

impl WaitTimeoutResult {
    /// True when the wait timed out.
    pub fn timed_out(&self) -> bool {
        self.0
    }
}

impl Condvar {
    /// A new condition variable.
    #[track_caller]
    pub const fn new() -> Condvar {
        Condvar { handle: Handle::new() }
    }

    /// Releases the guard's mutex, waits for a notification, and locks the mutex again.
    #[track_caller]
    pub fn wait<'a, T: ?Sized>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        self.wait_inner(guard, false, Location::caller()).0
    }

    /// Waits while `condition` holds, as std's `wait_while`.
    #[track_caller]
    pub fn wait_while<'a, T, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        mut condition: F,
    ) -> LockResult<MutexGuard<'a, T>>
    where
        F: FnMut(&mut T) -> bool,
    {
        let location = Location::caller();
        while condition(&mut *guard) {
            guard = self.wait_inner(guard, false, location).0?;
        }
        Ok(guard)
    }

    /// Like [`Condvar::wait`], but returns with `timed_out()` when no thread can run any more.
    #[track_caller]
    pub fn wait_timeout<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        _timeout: Duration,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        let (guard, timed_out) = self.wait_inner(guard, true, Location::caller());
        match guard {
            Ok(g) => Ok((g, WaitTimeoutResult(timed_out))),
            Err(e) => {
                Err(std::sync::PoisonError::new((e.into_inner(), WaitTimeoutResult(timed_out))))
            }
        }
    }

    /// Like [`Condvar::wait_while`] with a timeout (see [`Condvar::wait_timeout`]).
    #[track_caller]
    pub fn wait_timeout_while<'a, T, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        _timeout: Duration,
        mut condition: F,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)>
    where
        F: FnMut(&mut T) -> bool,
    {
        let location = Location::caller();
        while condition(&mut *guard) {
            let (g, timed_out) = self.wait_inner(guard, true, location);
            guard = match g {
                Ok(g) => g,
                Err(e) => {
                    return Err(std::sync::PoisonError::new((
                        e.into_inner(),
                        WaitTimeoutResult(timed_out),
                    )))
                }
            };
            if timed_out {
                let still = condition(&mut *guard);
                return Ok((guard, WaitTimeoutResult(still)));
            }
        }
        Ok((guard, WaitTimeoutResult(false)))
    }

    fn wait_inner<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout_able: bool,
        location: &'static Location<'static>,
    ) -> (LockResult<MutexGuard<'a, T>>, bool) {
        let (mutex, mutex_object, lock_location) = MutexGuard::parts(&guard);
        // The wait releases the lock itself; the guard's unlock must not run.
        std::mem::forget(guard);
        let timed_out = with_execution("Condvar::wait", |ex| {
            let object = ex.point(&self.handle, VarKind::Condvar, EventKind::CondvarWait, location);
            release(ex, mutex_object);
            let timed_out = ex.block(BlockedOn::Condvar(object), timeout_able, location);
            reacquire(ex, mutex_object, location);
            timed_out
        });
        (MutexGuard::relock(mutex, mutex_object, lock_location), timed_out)
    }

    /// Wakes the longest-waiting thread, if any.
    #[track_caller]
    pub fn notify_one(&self) {
        let location = Location::caller();
        with_execution("Condvar::notify_one", |ex| {
            let object =
                ex.point(&self.handle, VarKind::Condvar, EventKind::CondvarNotify, location);
            ex.with_state(|st| {
                let waiters = &mut st.objects[object.index()].waiters;
                if !waiters.is_empty() {
                    let first = waiters.remove(0);
                    st.wake(first);
                }
            });
        })
    }

    /// Wakes every waiting thread.
    #[track_caller]
    pub fn notify_all(&self) {
        let location = Location::caller();
        with_execution("Condvar::notify_all", |ex| {
            let object =
                ex.point(&self.handle, VarKind::Condvar, EventKind::CondvarNotify, location);
            ex.with_state(|st| st.wake_waiters(object));
        })
    }
}

impl Default for Condvar {
    #[track_caller]
    fn default() -> Condvar {
        Condvar::new()
    }
}

impl fmt::Debug for Condvar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Condvar@{}", self.handle.site())
    }
}
