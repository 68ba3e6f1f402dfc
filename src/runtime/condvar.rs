//! The model of a condition variable (the paper's wait/notify emulation, Figure 11): waiting
//! releases the mutex and blocks until a notification, then re-acquires the mutex. Waiters are
//! woken in the order they started waiting (the object's `waiters`); a wait may also end in a
//! spurious wake-up, as std allows (at most once per other thread's progress:
//! `Execution::block_or_wake_spuriously`), and a timed wait times out only when no thread can
//! run.
//!
//! Outside any execution a wait is a real one in the condition variable's [`WaitRoom`], with a
//! real timeout; a notification inside an execution also wakes OS threads waiting there.
//!
//! This file owns the condition variable's waiters; it reaches the mutex only through
//! `RawMutex::release_for_wait` and `RawMutex::acquire`.

use std::panic::Location;
use std::time::Duration;

use super::context::with_current;
use super::mutex::{MutexHold, RawMutex};
use super::outside::WaitRoom;
use super::time::real_now;
use super::{BlockedOn, EventKind, Handle};
use crate::vars::VarKind;

/// The engine's part of a `sync::Condvar`.
#[derive(Debug)]
pub(crate) struct RawCondvar {
    handle: Handle,
    room: WaitRoom,
}

impl RawCondvar {
    /// A condition variable created at the caller's location.
    #[track_caller]
    pub(crate) const fn new() -> RawCondvar {
        RawCondvar { handle: Handle::new(), room: WaitRoom::new() }
    }

    /// Where it was created.
    pub(crate) fn site(&self) -> &'static Location<'static> {
        self.handle.site()
    }

    /// Releases `mutex` (held as `hold`), waits for a notification, and locks `mutex` again;
    /// returns the new hold and whether the wait timed out. With a `timeout`, inside an
    /// execution the wait times out only when no thread can run; outside, after `timeout`.
    pub(crate) fn wait(
        &self,
        mutex: &RawMutex,
        hold: MutexHold,
        timeout: Option<Duration>,
        location: &'static Location<'static>,
    ) -> (MutexHold, bool) {
        with_current(|ex| match ex {
            Some(ex) if hold.taken_by(ex) => {
                let object =
                    ex.point(&self.handle, VarKind::Condvar, EventKind::CondvarWait, location);
                mutex.release_for_wait(ex, hold);
                // Notified, it waits for the mutex without a step of its own (`notified`).
                ex.with_state(|st| {
                    let me = st.current;
                    st.threads[me.index()].reacquire = Some(hold.object());
                });
                let (timed_out, spurious) =
                    ex.block_or_wake_spuriously(BlockedOn::Condvar(object), timeout, location);
                if timed_out {
                    ex.with_state(|st| {
                        let me = st.current;
                        st.threads[me.index()].reacquire = None;
                    });
                } else if !spurious {
                    // Woken by a notification: it happens before the wake-up.
                    ex.with_state(|st| {
                        let me = st.current;
                        st.races.acquire(me, object)
                    });
                }
                (mutex.acquire(ex, hold.object(), location), timed_out)
            }
            None if !hold.inside() => {
                let deadline = timeout.and_then(|t| real_now().checked_add(t));
                // Enter the room before releasing the mutex: a notifier that changed the state
                // under the mutex afterwards finds this thread waiting.
                let entered = self.room.enter();
                mutex.unlock_outside(hold);
                let timed_out = self.room.wait(entered, deadline);
                (mutex.lock_outside(), timed_out)
            }
            _ => panic!(
                "pctvb: Condvar::wait at {location} with a guard that was locked {} a pctvb \
                 execution, called {} one",
                if hold.inside() { "inside" } else { "outside" },
                if hold.inside() { "outside" } else { "inside" },
            ),
        })
    }

    /// Wakes the longest-waiting thread, if any.
    pub(crate) fn notify_one(&self, location: &'static Location<'static>) {
        with_current(|ex| {
            if let Some(ex) = ex {
                let object =
                    ex.point(&self.handle, VarKind::Condvar, EventKind::CondvarNotify, location);
                ex.with_state(|st| {
                    st.progress();
                    let waiters = &mut st.objects[object.index()].waiters;
                    if !waiters.is_empty() {
                        let first = waiters.remove(0);
                        if let Some(mutex) = st.notified(first) {
                            st.refresh_waiters(mutex);
                        }
                        let me = st.current;
                        st.races.release(me, object);
                    }
                });
            }
            self.room.notify_one();
        })
    }

    /// Wakes every waiting thread.
    pub(crate) fn notify_all(&self, location: &'static Location<'static>) {
        with_current(|ex| {
            if let Some(ex) = ex {
                let object =
                    ex.point(&self.handle, VarKind::Condvar, EventKind::CondvarNotify, location);
                ex.with_state(|st| {
                    if !st.objects[object.index()].waiters.is_empty() {
                        let me = st.current;
                        st.races.release(me, object);
                    }
                    st.progress();
                    st.notify_all(object)
                });
            }
            self.room.notify_all();
        })
    }
}
