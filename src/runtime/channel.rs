//! The model of a channel (`mpsc`): an unbounded, bounded or rendezvous queue with
//! disconnection when every sender or the receiver is gone.
//!
//! The channel's internals (queue, sender count, receiver alive, send and receive counters)
//! sit under one [`DataLock`], held only during an operation's check-and-change and never
//! across a scheduling point, so executions that share a channel (one created before the run
//! and captured by the body) or OS threads outside executions never touch them at once.
//! Inside an execution a thread that must wait blocks in the model (woken through the object's
//! waiters); outside, an OS thread waits in the channel's [`WaitRoom`]. Every change wakes
//! both.
//!
//! This file owns the channel's internals and model; the facade (`sync::mpsc`) owns the
//! std-shaped endpoints (and which of them are `Send`/`Sync`).

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::panic::Location;
use std::time::{Duration, Instant};

pub(crate) use std::sync::mpsc::{RecvTimeoutError, TrySendError};

use super::context::with_current;
use super::data_lock::{DataLock, Owner};
use super::outside::WaitRoom;
use super::state::{describe_object, Status};
use super::time::real_now;
use super::{BlockedOn, EventKind, Execution, Handle, ObjectId};
use crate::vars::VarKind;

/// A channel's internals, reached only under the channel's data lock.
struct Inner<T> {
    queue: VecDeque<T>,
    senders: usize,
    receiver_alive: bool,
    sent: u64,
    received: u64,
}

/// The engine's part of a channel, shared by its endpoints.
pub(crate) struct Channel<T> {
    handle: Handle,
    /// `None` for `channel`, `Some(0)` for a rendezvous channel.
    bound: Option<usize>,
    data: DataLock,
    inner: UnsafeCell<Inner<T>>,
    room: WaitRoom,
}

// SAFETY: `inner` is only reached in `Channel::locked`, under the data lock, which no two OS
// threads (executions or outside threads) hold at once and which is released before `locked`
// returns; values of `T` move between the threads that send and receive, hence `T: Send`.
unsafe impl<T: Send> Send for Channel<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Channel<T> {}

/// The value a send failed to send.
fn unsent<T>(value: &mut Option<T>) -> T {
    value.take().expect("a failed send keeps its value")
}

/// How a receive waits.
#[derive(Clone, Copy)]
pub(crate) enum RecvWait {
    /// Not at all (`try_recv`).
    No,
    /// Until a message or disconnection (`recv`).
    Forever,
    /// Also until time passes: inside an execution, when no thread can run; outside, after the
    /// duration (`recv_timeout`).
    Timeout(Duration),
}

/// What changed in a channel, for `Channel::changed`.
#[derive(Clone, Copy)]
enum Change {
    Sent,
    Received,
    Disconnected,
}

enum Sent {
    /// Sent as message number `ticket`; whether the queue still has room.
    Done {
        ticket: u64,
        room: bool,
    },
    Full,
    Disconnected,
}

enum Received<T> {
    /// The message, its number among the channel's received messages (its ticket), and
    /// whether the queue has room now (a bounded channel's senders may take it).
    Got(T, u64, bool),
    Empty,
    Disconnected,
}

impl<T> Channel<T> {
    /// A channel created at the caller's location, with one sender and its receiver.
    #[track_caller]
    pub(crate) fn new(bound: Option<usize>) -> Channel<T> {
        Channel {
            handle: Handle::new(),
            bound,
            data: DataLock::new(),
            inner: UnsafeCell::new(Inner {
                queue: VecDeque::new(),
                senders: 1,
                receiver_alive: true,
                sent: 0,
                received: 0,
            }),
            room: WaitRoom::new(),
        }
    }

    /// Where it was created.
    pub(crate) fn site(&self) -> &'static Location<'static> {
        self.handle.site()
    }

    /// Runs `f` on the internals under the data lock, for `ex`'s execution or, outside any,
    /// for the calling OS thread. `f` must not reach a scheduling point or run user code that
    /// could use this channel (it only moves values in and out of the queue and counts).
    fn locked<R>(&self, ex: Option<&Execution>, f: impl FnOnce(&mut Inner<T>) -> R) -> R {
        let owner = match ex {
            Some(ex) => Owner::execution(ex.generation()),
            None => Owner::outside(),
        };
        if let Err(e) = self.data.lock_exclusive(owner) {
            match ex {
                Some(ex) => ex.fail_lock(e, VarKind::Channel, self.site()),
                None => panic!("{}", e.message(&describe_object(VarKind::Channel, self.site()))),
            }
        }
        // SAFETY: the data lock is held (see the `Sync` impl), and the reference does not
        // outlive `f`.
        let result = f(unsafe { &mut *self.inner.get() });
        self.data.unlock_exclusive_live(owner);
        result
    }

    /// Wakes whoever waits for a change of kind `what`: the execution's threads blocked for
    /// it and outside OS threads. A send can only help the receiver and a receive only senders
    /// (room in a bounded channel, a rendezvous taken), so the other side is left blocked: a
    /// thread woken for nothing would take a step only to block again. `room`: whether the
    /// queue has room after the change. Senders waiting for room are not woken but enabled
    /// while there is room (`State::refresh_waiters`): the strategy picks which of them takes
    /// a freed slot, and the others go on waiting without a step.
    fn changed(&self, ex: Option<&Execution>, object: Option<ObjectId>, what: Change, room: bool) {
        if let Some(ex) = ex {
            let object = object.unwrap_or_else(|| ex.object(&self.handle, VarKind::Channel));
            ex.with_state(|st| {
                st.progress();
                match what {
                    Change::Sent => st.wake_waiters_where(object, |t| {
                        matches!(t.status, Status::Blocked(BlockedOn::Recv(_)))
                    }),
                    // Rendezvous senders waiting for their message to be taken; senders
                    // waiting for room stay waiting (`set_room`).
                    Change::Received => st.wake_waiters_where(object, |t| {
                        matches!(t.status, Status::Blocked(BlockedOn::Send(_))) && t.awaits_receipt
                    }),
                    Change::Disconnected => st.wake_waiters(object),
                }
                st.set_room(object, room);
            });
        }
        self.room.notify_all();
    }

    /// Sends `value`, waiting while the channel is full if `block` (and, for a rendezvous
    /// channel, until the receiver takes it).
    pub(crate) fn send(
        &self,
        value: T,
        block: bool,
        location: &'static Location<'static>,
    ) -> Result<(), TrySendError<T>> {
        let capacity = self.bound.map(|b| b.max(1));
        let mut value = Some(value);
        let attempt = |inner: &mut Inner<T>, value: &mut Option<T>| {
            if !inner.receiver_alive {
                return Sent::Disconnected;
            }
            if capacity.is_some_and(|c| inner.queue.len() >= c) {
                return Sent::Full;
            }
            inner.queue.push_back(value.take().expect("sent once"));
            inner.sent += 1;
            let room = capacity.is_none_or(|c| inner.queue.len() < c);
            Sent::Done { ticket: inner.sent, room }
        };
        let rendezvous = self.bound == Some(0) && block;
        with_current(|ex| {
            let Some(ex) = ex else {
                let sent = match block {
                    true => self.wait_outside(None, |i| match attempt(i, &mut value) {
                        Sent::Full => None,
                        other => Some(other),
                    }),
                    false => Some(self.locked(None, |i| attempt(i, &mut value))),
                };
                return match sent {
                    Some(Sent::Done { ticket, room }) => {
                        self.changed(None, None, Change::Sent, room);
                        if rendezvous {
                            self.wait_outside(None, |i| {
                                (i.received >= ticket || !i.receiver_alive).then_some(())
                            });
                        }
                        Ok(())
                    }
                    Some(Sent::Disconnected) => Err(TrySendError::Disconnected(unsent(&mut value))),
                    _ => Err(TrySendError::Full(unsent(&mut value))),
                };
            };
            let object = ex.point(&self.handle, VarKind::Channel, EventKind::Send, location);
            let (ticket, room) = loop {
                match self.locked(Some(ex), |i| attempt(i, &mut value)) {
                    Sent::Done { ticket, room } => {
                        ex.with_state(|st| {
                            let me = st.current;
                            st.races.send(me, object, ticket)
                        });
                        break (ticket, room);
                    }
                    Sent::Disconnected => {
                        return Err(TrySendError::Disconnected(unsent(&mut value)))
                    }
                    Sent::Full if !block => return Err(TrySendError::Full(unsent(&mut value))),
                    Sent::Full => {
                        // Full: this sender waits for room, enabled again (with the others
                        // waiting for room) when a receive frees a slot; chosen, it finds it.
                        ex.with_state(|st| st.set_room(object, false));
                        ex.block(BlockedOn::Send(object), None, location);
                    }
                }
            };
            self.changed(Some(ex), Some(object), Change::Sent, room);
            if rendezvous {
                // The send completes when the receiver has taken this message: a receipt
                // wakes this sender, which is not one of those waiting for room.
                while self.locked(Some(ex), |i| i.received < ticket && i.receiver_alive) {
                    ex.with_state(|st| {
                        let me = st.current;
                        st.threads[me.index()].awaits_receipt = true;
                    });
                    ex.block(BlockedOn::Send(object), None, location);
                    ex.with_state(|st| {
                        let me = st.current;
                        st.threads[me.index()].awaits_receipt = false;
                    });
                }
                ex.with_state(|st| {
                    let me = st.current;
                    st.races.rendezvous_sent(me, object)
                });
            }
            Ok(())
        })
    }

    /// Receives a message, waiting as `wait` says.
    pub(crate) fn recv(
        &self,
        wait: RecvWait,
        location: &'static Location<'static>,
    ) -> Result<T, RecvTimeoutError> {
        let capacity = self.bound.map(|b| b.max(1));
        let attempt = |inner: &mut Inner<T>| match inner.queue.pop_front() {
            Some(v) => {
                inner.received += 1;
                let room = capacity.is_none_or(|c| inner.queue.len() < c);
                Received::Got(v, inner.received, room)
            }
            None if inner.senders == 0 => Received::Disconnected,
            None => Received::Empty,
        };
        with_current(|ex| {
            let Some(ex) = ex else {
                let received = match wait {
                    RecvWait::No => Some(self.locked(None, attempt)),
                    RecvWait::Forever => self.wait_outside(None, |i| match attempt(i) {
                        Received::Empty => None,
                        other => Some(other),
                    }),
                    RecvWait::Timeout(t) => {
                        let deadline = real_now().checked_add(t);
                        self.wait_outside(deadline, |i| match attempt(i) {
                            Received::Empty => None,
                            other => Some(other),
                        })
                    }
                };
                return match received {
                    Some(Received::Got(v, _, room)) => {
                        self.changed(None, None, Change::Received, room);
                        Ok(v)
                    }
                    Some(Received::Disconnected) => Err(RecvTimeoutError::Disconnected),
                    _ => Err(RecvTimeoutError::Timeout),
                };
            };
            let object = ex.point(&self.handle, VarKind::Channel, EventKind::Recv, location);
            loop {
                match self.locked(Some(ex), attempt) {
                    Received::Got(v, ticket, room) => {
                        // The message's send happens before its receipt.
                        let rendezvous = self.bound == Some(0);
                        ex.with_state(|st| {
                            let me = st.current;
                            st.races.recv(me, object, ticket);
                            if rendezvous {
                                st.races.rendezvous_receive(me, object);
                            }
                        });
                        self.changed(Some(ex), Some(object), Change::Received, room);
                        return Ok(v);
                    }
                    Received::Disconnected => return Err(RecvTimeoutError::Disconnected),
                    Received::Empty => match wait {
                        RecvWait::No => return Err(RecvTimeoutError::Timeout),
                        RecvWait::Forever => {
                            ex.block(BlockedOn::Recv(object), None, location);
                        }
                        RecvWait::Timeout(t) => {
                            if ex.block(BlockedOn::Recv(object), Some(t), location) {
                                return Err(RecvTimeoutError::Timeout);
                            }
                        }
                    },
                }
            }
        })
    }

    /// Outside any execution: runs `attempt` under the data lock until it returns a result,
    /// waiting in the room between tries; `None` if `deadline` passed first.
    fn wait_outside<R>(
        &self,
        deadline: Option<Instant>,
        mut attempt: impl FnMut(&mut Inner<T>) -> Option<R>,
    ) -> Option<R> {
        loop {
            let entered = self.room.enter();
            if let Some(r) = self.locked(None, &mut attempt) {
                self.room.leave(entered);
                return Some(r);
            }
            if self.room.wait(entered, deadline) {
                return self.locked(None, &mut attempt);
            }
        }
    }

    /// A sender was cloned.
    pub(crate) fn add_sender(&self) {
        with_current(|ex| self.locked(ex, |i| i.senders += 1))
    }

    /// A sender was dropped; the last one disconnects the channel.
    pub(crate) fn drop_sender(&self) {
        with_current(|ex| {
            let last = self.locked(ex, |i| {
                i.senders -= 1;
                i.senders == 0
            });
            if last {
                self.changed(ex, None, Change::Disconnected, true);
            }
        })
    }

    /// The receiver was dropped: the channel is disconnected.
    pub(crate) fn drop_receiver(&self) {
        with_current(|ex| {
            self.locked(ex, |i| i.receiver_alive = false);
            self.changed(ex, None, Change::Disconnected, true);
        })
    }
}
