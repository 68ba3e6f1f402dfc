//! The model of a readers-writer lock: many readers or one writer, a thread that asks for a
//! lock it already holds in a conflicting way reported as a deadlock; and the data lock that
//! keeps OS threads out of its data (readers of one execution share it, see `data_lock.rs`).
//!
//! `sync::RwLock` embeds a [`RawRwLock`]: [`RawRwLock::read`] and [`RawRwLock::write`] each
//! run the scheduling point, acquire in the model (blocking, or not for the `try_` forms),
//! take the data lock and return the [`RwHold`] the guard keeps; the `unlock_*` calls undo
//! both and run the unlock's scheduling point, and [`RawRwLock::downgrade`] turns a write hold
//! into a read hold in both. Outside any execution they lock the data lock for the OS thread,
//! as std's lock.
//!
//! This file owns the `ObjectState::RwLock` model and the lock's data lock; it does not touch
//! the data, the poisoned flag or the guards.

use std::panic::Location;

use super::context::with_current;
use super::data_lock::{DataLock, LockError, Owner};
use super::state::{describe_object, State};
use super::{
    BlockedOn, EventKind, Execution, FailureCause, Handle, ObjectId, ObjectState, ThreadId,
};
use crate::vars::VarKind;

/// The engine's part of a `sync::RwLock`.
#[derive(Debug)]
pub(crate) struct RawRwLock {
    handle: Handle,
    data: DataLock,
}

/// What a guard keeps of its lock.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RwHold {
    owner: Owner,
    object: ObjectId,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Read,
    Write,
}

enum Acquire {
    Acquired(u64),
    Busy,
    /// The thread asks for a lock it holds in a conflicting way; or (with the thread that
    /// waits to write it) for a read lock it holds for reading while a writer waits.
    SelfDeadlock(Option<ThreadId>),
}

impl RawRwLock {
    /// A lock created at the caller's location.
    #[track_caller]
    pub(crate) const fn new() -> RawRwLock {
        RawRwLock { handle: Handle::new(), data: DataLock::new() }
    }

    /// Where the lock was created.
    pub(crate) fn site(&self) -> &'static Location<'static> {
        self.handle.site()
    }

    /// Shared access; `None` only when `block` is false and a writer holds the lock.
    #[inline]
    pub(crate) fn read(&self, block: bool, location: &'static Location<'static>) -> Option<RwHold> {
        self.acquire(Mode::Read, block, location)
    }

    /// Exclusive access; `None` only when `block` is false and anyone holds the lock.
    #[inline]
    pub(crate) fn write(
        &self,
        block: bool,
        location: &'static Location<'static>,
    ) -> Option<RwHold> {
        self.acquire(Mode::Write, block, location)
    }

    /// Releases a read hold; inside its execution, a scheduling point.
    pub(crate) fn unlock_read(&self, hold: RwHold, location: &'static Location<'static>) {
        self.release(hold, Mode::Read, location)
    }

    /// Releases a write hold; inside its execution, a scheduling point.
    pub(crate) fn unlock_write(&self, hold: RwHold, location: &'static Location<'static>) {
        self.release(hold, Mode::Write, location)
    }

    /// Turns a write hold into a read hold, the lock never free in between (std's
    /// `RwLockWriteGuard::downgrade`): readers waiting for it may go on, writers still wait.
    /// Inside its execution, a scheduling point after the change, and for the data-race check a
    /// write unlock (the readers that follow see the writes) with the read lock still held.
    pub(crate) fn downgrade(&self, hold: RwHold, location: &'static Location<'static>) -> RwHold {
        if !hold.owner.is_execution() {
            // The OS thread's own exclusive hold becomes one of the outside readers' holds.
            let downgraded = self.data.downgrade(hold.owner, Owner::OUTSIDE_SHARED);
            debug_assert!(downgraded, "a live owner's hold is never stolen");
            return RwHold { owner: Owner::OUTSIDE_SHARED, object: hold.object };
        }
        with_current(|ex| match ex {
            Some(ex) if ex.generation() == hold.owner.generation() => {
                ex.with_state(|st| {
                    let me = st.current;
                    if let Some(ObjectState::RwLock { writer, readers }) =
                        st.objects.get_mut(hold.object.index()).map(|o| &mut o.state)
                    {
                        *writer = None;
                        readers.push(me);
                        st.races.release(me, hold.object);
                        st.progress();
                        // Waiting readers are enabled; waiting writers stay waiting.
                        st.refresh_waiters(hold.object);
                    }
                });
                if !self.data.downgrade(hold.owner, hold.owner) {
                    ex.fail_lock(LockError::Disagreement, VarKind::RwLock, self.site());
                }
                ex.schedule(EventKind::Downgrade, Some(hold.object), location);
                hold
            }
            // A guard that outlived its execution: only the data lock is left (if it was not
            // stolen meanwhile; its release then finds no hold, as an unlock would).
            _ => {
                self.data.downgrade(hold.owner, hold.owner);
                hold
            }
        })
    }

    fn acquire(
        &self,
        mode: Mode,
        block: bool,
        location: &'static Location<'static>,
    ) -> Option<RwHold> {
        with_current(|ex| match ex {
            Some(ex) => self.acquire_in(ex, mode, block, location),
            None => self.acquire_outside(mode, block),
        })
    }

    fn acquire_in(
        &self,
        ex: &Execution,
        mode: Mode,
        block: bool,
        location: &'static Location<'static>,
    ) -> Option<RwHold> {
        let kind = match mode {
            Mode::Read => EventKind::ReadLock,
            Mode::Write => EventKind::WriteLock,
        };
        // A blocking acquisition waits for the lock at its point (see `RawMutex::lock`).
        let object = if block {
            let waits = |st: &State, object: ObjectId| {
                let me = st.current;
                let ObjectState::RwLock { writer, readers } = &st.objects[object.index()].state
                else {
                    return None;
                };
                if *writer == Some(me) || (mode == Mode::Write && readers.contains(&me)) {
                    return None; // a self-deadlock, reported below
                }
                Some(match mode {
                    Mode::Read => BlockedOn::RwRead(object),
                    Mode::Write => BlockedOn::RwWrite(object),
                })
            };
            ex.lock_point(&self.handle, VarKind::RwLock, kind, location, waits)
        } else {
            ex.point(&self.handle, VarKind::RwLock, kind, location)
        };
        loop {
            match try_acquire(ex, object, mode) {
                Acquire::Acquired(gen) => {
                    let owner = Owner::execution(gen);
                    let taken = match mode {
                        Mode::Read => self.data.lock_shared(owner),
                        Mode::Write => self.data.lock_exclusive(owner),
                    };
                    if let Err(e) = taken {
                        ex.fail_lock(e, VarKind::RwLock, self.site());
                    }
                    return Some(RwHold { owner, object });
                }
                // `try_read` and `try_write` do not wait: std's `WouldBlock` at worst.
                Acquire::Busy | Acquire::SelfDeadlock(_) if !block => return None,
                Acquire::Busy => {
                    let on = match mode {
                        Mode::Read => BlockedOn::RwRead(object),
                        Mode::Write => BlockedOn::RwWrite(object),
                    };
                    ex.block(on, None, location);
                }
                Acquire::SelfDeadlock(writer) => {
                    let cause = ex.with_state(|st| FailureCause::RecursiveLock {
                        thread: st.thread_info(st.current),
                        what: st.describe_object(object),
                        behind: writer.map(|w| st.thread_info(w)),
                    });
                    ex.fail(cause)
                }
            }
        }
    }

    fn acquire_outside(&self, mode: Mode, block: bool) -> Option<RwHold> {
        let owner = match mode {
            Mode::Read => Owner::OUTSIDE_SHARED,
            Mode::Write => Owner::outside(),
        };
        let hold = RwHold { owner, object: ObjectId(u32::MAX) };
        if !block {
            let taken = match mode {
                Mode::Read => self.data.try_lock_shared(owner),
                Mode::Write => self.data.try_lock_exclusive(owner),
            };
            return taken.then_some(hold);
        }
        let taken = match mode {
            Mode::Read => self.data.lock_shared(owner),
            Mode::Write => self.data.lock_exclusive(owner),
        };
        if let Err(e) = taken {
            panic!("{}", e.message(&describe_object(VarKind::RwLock, self.site())));
        }
        Some(hold)
    }

    fn release(&self, hold: RwHold, mode: Mode, location: &'static Location<'static>) {
        let unlock_data = |hold: RwHold| match mode {
            Mode::Read => self.data.unlock_shared(hold.owner),
            Mode::Write => self.data.unlock_exclusive(hold.owner),
        };
        if !hold.owner.is_execution() {
            unlock_data(hold);
            return;
        }
        with_current(|ex| match ex {
            Some(ex) if ex.generation() == hold.owner.generation() => {
                let point = ex.with_state(|st| {
                    let point = st.unlock_points;
                    let me = st.current;
                    if let Some(ObjectState::RwLock { writer, readers }) =
                        st.objects.get_mut(hold.object.index()).map(|o| &mut o.state)
                    {
                        match mode {
                            Mode::Write => *writer = None,
                            Mode::Read => {
                                if let Some(pos) = readers.iter().position(|&r| r == me) {
                                    readers.swap_remove(pos);
                                }
                            }
                        }
                        st.progress();
                        st.refresh_waiters(hold.object);
                        if point {
                            match mode {
                                Mode::Write => st.races.release(me, hold.object),
                                Mode::Read => st.races.release_read(me, hold.object),
                            }
                        } else {
                            // No point of its own (`State::unlock_points`): as a mutex's.
                            let step = st.threads[me.index()].last_step as u64;
                            let read = mode == Mode::Read;
                            st.races.release_unlock(me, hold.object, read, step);
                        }
                    }
                    point
                });
                let released = match mode {
                    Mode::Read => self.data.unlock_shared(hold.owner),
                    Mode::Write => {
                        self.data.unlock_exclusive_live(hold.owner);
                        true
                    }
                };
                if !released {
                    ex.fail_lock(LockError::Disagreement, VarKind::RwLock, self.site());
                }
                if point {
                    ex.schedule(EventKind::RwUnlock, Some(hold.object), location);
                }
            }
            // A guard that outlived its execution: only the data lock is left to release.
            _ => {
                unlock_data(hold);
            }
        })
    }
}

fn try_acquire(ex: &Execution, object: ObjectId, mode: Mode) -> Acquire {
    ex.with_state(|st| {
        let me = st.current;
        let gen = st.gen;
        let ObjectState::RwLock { writer, readers } = &st.objects[object.index()].state else {
            unreachable!("rwlock object with non-rwlock state")
        };
        if *writer == Some(me) || (mode == Mode::Write && readers.contains(&me)) {
            return Acquire::SelfDeadlock(None);
        }
        // A second read lock of a reader while a writer waits: a reader-preferring lock lets
        // it in, a writer-preferring one (std's on Linux) queues it behind the writer, which
        // waits for the first read lock to go: a deadlock on some platforms, so reported.
        if mode == Mode::Read && readers.contains(&me) {
            let writer = st.waiter_blocked_on(object, BlockedOn::RwWrite(object));
            if writer.is_some() {
                return Acquire::SelfDeadlock(writer);
            }
        }
        let ObjectState::RwLock { writer, readers } = &mut st.objects[object.index()].state else {
            unreachable!("rwlock object with non-rwlock state")
        };
        match mode {
            Mode::Read if writer.is_none() => {
                readers.push(me);
                st.races.acquire(me, object);
                st.progress();
                // Waiting writers, ready while it was free, wait again.
                st.refresh_waiters(object);
                Acquire::Acquired(gen)
            }
            Mode::Write if writer.is_none() && readers.is_empty() => {
                *writer = Some(me);
                st.races.acquire_write(me, object);
                st.progress();
                st.refresh_waiters(object);
                Acquire::Acquired(gen)
            }
            _ => Acquire::Busy,
        }
    })
}
