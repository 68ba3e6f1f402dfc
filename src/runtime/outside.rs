//! Blocking outside any execution: a waiting room of real OS threads.
//!
//! Outside an execution the primitives behave like std's (see `crate::sync`'s docs): a thread
//! that must wait for a condition variable's notification or a channel's message sleeps in the
//! object's [`WaitRoom`] (a std `Mutex<()>` and `Condvar`), and whoever changes the object's
//! state wakes the room. The state itself is under the object's data lock; a waiter checks it
//! while holding the room's mutex, and the changer notifies while holding it, so no wakeup is
//! lost. The room is touched only when an OS thread waits outside an execution: inside one,
//! an operation reads one atomic counter (`notify_*` below) and nothing else.
//!
//! Logical threads of an execution never wait here (the model blocks them), and an outside
//! notification or message does not wake a logical thread blocked in an execution.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar as StdCondvar, Mutex as StdMutex, MutexGuard as StdMutexGuard};
use std::time::Instant;

use super::time::real_now;

/// Where OS threads outside any execution wait for an object.
#[derive(Debug)]
pub(crate) struct WaitRoom {
    waiters: AtomicUsize,
    lock: StdMutex<()>,
    changed: StdCondvar,
}

impl WaitRoom {
    pub(crate) const fn new() -> WaitRoom {
        WaitRoom {
            waiters: AtomicUsize::new(0),
            lock: StdMutex::new(()),
            changed: StdCondvar::new(),
        }
    }

    /// Enters the room: from here until [`WaitRoom::wait`] returns, a change of the object
    /// notifies this thread. Check the object's state after entering, then wait.
    pub(super) fn enter(&self) -> StdMutexGuard<'_, ()> {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        self.lock.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Leaves the room without waiting.
    pub(super) fn leave(&self, entered: StdMutexGuard<'_, ()>) {
        drop(entered);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
    }

    /// Waits for a notification (or `deadline`) and leaves the room; returns whether the
    /// deadline passed. Spurious wakeups are possible, as with std's `Condvar`.
    pub(super) fn wait(&self, entered: StdMutexGuard<'_, ()>, deadline: Option<Instant>) -> bool {
        let timed_out = match deadline {
            None => {
                drop(self.changed.wait(entered).unwrap_or_else(|e| e.into_inner()));
                false
            }
            Some(deadline) => {
                let left = deadline.saturating_duration_since(real_now());
                let (g, r) =
                    self.changed.wait_timeout(entered, left).unwrap_or_else(|e| e.into_inner());
                drop(g);
                r.timed_out()
            }
        };
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        timed_out
    }

    /// Wakes one waiting OS thread, if any waits.
    #[inline]
    pub(super) fn notify_one(&self) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.changed.notify_one();
        }
    }

    /// Wakes every waiting OS thread, if any waits.
    #[inline]
    pub(super) fn notify_all(&self) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.changed.notify_all();
        }
    }
}
