//! `Condvar`: the std-shaped condition variable over the engine's `RawCondvar` (the paper's
//! wait/notify emulation, Figure 11: waiting releases the mutex and blocks until a
//! notification, then re-acquires the mutex).

use std::fmt;
use std::panic::Location;
use std::sync::LockResult;
use std::time::{Duration, Instant};

use super::mutex::MutexGuard;
use crate::runtime::RawCondvar;

/// A condition variable, as `std::sync::Condvar`.
///
/// Inside an execution, waiters are woken in the order they started waiting, a wait may end
/// in a spurious wake-up as std's may (the strategy may choose the waiting thread at the
/// start of its wait: at most once per change another thread makes, so a waiting loop never
/// livelocks; the schedule shows `spurious-wakeup`), and a timed wait times out only when no
/// thread can run (time passes only then). Outside any execution it is a real condition
/// variable, as std's.
pub struct Condvar {
    raw: RawCondvar,
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
        Condvar { raw: RawCondvar::new() }
    }

    /// Releases the guard's mutex, waits for a notification, and locks the mutex again.
    #[track_caller]
    pub fn wait<'a, T: ?Sized>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        self.wait_inner(guard, None, Location::caller()).0
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
            guard = self.wait_inner(guard, None, location).0?;
        }
        Ok(guard)
    }

    /// Like [`Condvar::wait`], but returns with `timed_out()` when no thread can run any more.
    #[track_caller]
    pub fn wait_timeout<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        let (guard, timed_out) = self.wait_inner(guard, Some(timeout), Location::caller());
        match guard {
            Ok(g) => Ok((g, WaitTimeoutResult(timed_out))),
            Err(e) => {
                Err(std::sync::PoisonError::new((e.into_inner(), WaitTimeoutResult(timed_out))))
            }
        }
    }

    /// As [`Condvar::wait_timeout`] with a timeout in milliseconds, returning whether it timed
    /// out, as std's deprecated `wait_timeout_ms`.
    #[deprecated(since = "1.6.0", note = "replaced by `pctvb::sync::Condvar::wait_timeout`")]
    #[track_caller]
    pub fn wait_timeout_ms<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        ms: u32,
    ) -> LockResult<(MutexGuard<'a, T>, bool)> {
        let timeout = Duration::from_millis(u64::from(ms));
        let (guard, timed_out) = self.wait_inner(guard, Some(timeout), Location::caller());
        match guard {
            Ok(g) => Ok((g, timed_out)),
            Err(e) => Err(std::sync::PoisonError::new((e.into_inner(), timed_out))),
        }
    }

    /// Like [`Condvar::wait_while`] with a timeout (see [`Condvar::wait_timeout`]).
    #[track_caller]
    pub fn wait_timeout_while<'a, T, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        timeout: Duration,
        mut condition: F,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)>
    where
        F: FnMut(&mut T) -> bool,
    {
        let location = Location::caller();
        // Outside executions the timeout is real time, for the whole call.
        let start = Instant::now();
        while condition(&mut *guard) {
            let left = timeout.saturating_sub(start.elapsed());
            let (g, timed_out) = self.wait_inner(guard, Some(left), location);
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
        timeout: Option<Duration>,
        location: &'static Location<'static>,
    ) -> (LockResult<MutexGuard<'a, T>>, bool) {
        // The wait releases the lock itself; the guard's unlock must not run.
        let (mutex, hold, lock_location) = MutexGuard::into_parts(guard);
        let (hold, timed_out) = self.raw.wait(MutexGuard::raw(mutex), hold, timeout, location);
        (MutexGuard::relock(mutex, hold, lock_location), timed_out)
    }

    /// Wakes the longest-waiting thread, if any.
    #[track_caller]
    pub fn notify_one(&self) {
        self.raw.notify_one(Location::caller())
    }

    /// Wakes every waiting thread.
    #[track_caller]
    pub fn notify_all(&self) {
        self.raw.notify_all(Location::caller())
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
        write!(f, "Condvar@{}", self.raw.site())
    }
}
