//! The model of a channel (`mpsc`): an unbounded, bounded or rendezvous queue with
//! disconnection when every sender or the receiver is gone.
//!
//! The channel's internals (queue, sender count, receiver alive, send and receive counters)
//! sit under one [`DataLock`], held only during an operation's check-and-change and never
//! across a scheduling point, so executions that share a channel (one created before the run
//! and captured by the body) or OS threads outside executions never touch them at once.
//! Inside an execution a thread that must wait waits at its operation's scheduling point, as
//! one at a held lock does: the model records whether the queue has room and whether a
//! receive would return (`ObjectState::Channel`), and a waiting sender or receiver is a choice
//! of the strategy only while it can go on, so once chosen its operation succeeds (one
//! scheduling point, no blocked step and retry). Outside, an OS thread waits in the channel's
//! [`WaitRoom`]. Every change updates both.
//!
//! A rendezvous channel (`sync_channel(0)`) is modelled as std's: a message passes only from
//! a sender to a receiver that meet.
//! - Its queue holds at most the one message being handed over (`capacity`), so a second
//!   sender waits for the first handover's end.
//! - A blocking `send` puts its message in the queue and waits until the receiver has taken it
//!   (`received` reaches its ticket): `Ok` means received, as std's "a send returns only
//!   after its recv". If the receiver is dropped first, the send takes its message back out of
//!   the queue and returns it in the error (`Receipt::Returned`), as std's
//!   `Err(SendError(msg))`: `Ok` is never returned for a message nobody received.
//! - A `try_send` succeeds only when a receiver is waiting in a receive (`recv`, `recv_timeout`;
//!   not `try_recv`) at that moment and no other message is being handed over: it puts the
//!   message in the queue for that receiver, which takes it, and does not wait. Otherwise it
//!   fails with `Full` (`Disconnected` once the receiver is gone), as std's "if the channel's
//!   buffer is full or no receiver is waiting". Inside an execution a receiver waits from its
//!   receive's scheduling point on (it is a `BlockedOn::Recv` waiter of the channel:
//!   `State::waiter_blocked_on`), so a `try_send` that runs before the receiver reaches its
//!   receive finds `Full` and one after it succeeds, and the strategy explores both orders;
//!   outside, an OS thread in a receive marks itself waiting in the internals
//!   (`Inner::receiver_waiting`) under the data lock, and unmarks itself in the same locked
//!   section that takes the message or gives up after a timeout, so a message a `try_send`
//!   handed over is always received.
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
use super::state::{describe_object, State, Status};
use super::time::real_now;
use super::{BlockedOn, EventKind, Execution, Handle, ObjectId};
use crate::vars::VarKind;

/// A channel's internals, reached only under the channel's data lock.
struct Inner<T> {
    queue: VecDeque<T>,
    senders: usize,
    receiver_alive: bool,
    /// An OS thread outside any execution waits in a receive (`recv`, `recv_timeout`) for a
    /// message: a rendezvous `try_send` may hand it one. (Inside an execution the model's
    /// waiters say it: `State::waiter_blocked_on`.)
    receiver_waiting: bool,
    sent: u64,
    received: u64,
}

impl<T> Inner<T> {
    /// Whether the queue has room for another message, with `capacity` (`None`: unbounded).
    fn room(&self, capacity: Option<usize>) -> bool {
        capacity.is_none_or(|c| self.queue.len() < c)
    }

    /// Whether a receive would return now: a message is queued, or no sender is left.
    fn ready(&self) -> bool {
        !self.queue.is_empty() || self.senders == 0
    }

    /// Whether the rendezvous send of message number `ticket` is over: the receiver took it,
    /// or it is gone and the message, still in the queue, goes back to its sender.
    fn receipt(&mut self, ticket: u64) -> Receipt<T> {
        if self.received >= ticket {
            return Receipt::Taken;
        }
        if self.receiver_alive {
            return Receipt::Pending;
        }
        // Messages leave the queue only by a receive, in order, so message number `ticket`
        // is the queue's `ticket - received`th (the only one: a rendezvous queue holds one).
        let index = (ticket - self.received - 1) as usize;
        let value = self.queue.remove(index).expect("an unreceived message is still queued");
        Receipt::Returned(value)
    }
}

/// Where a rendezvous send stands (`Inner::receipt`).
enum Receipt<T> {
    /// The receiver took the message: the send returns `Ok`.
    Taken,
    /// The receiver is gone without taking it: the send returns it in its error.
    Returned(T),
    /// The receiver may still take it.
    Pending,
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
    /// The message, its number among the channel's received messages (its ticket), whether
    /// the queue has room now (a bounded channel's senders may take it), and whether a next
    /// receive would return at once (another message queued, or no sender left).
    Got(T, u64, bool, bool),
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
                receiver_waiting: false,
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

    /// The queue's capacity (`None`: unbounded); a rendezvous channel holds one message, the
    /// one being handed over (to a waiting receiver by a `try_send`, or by a blocking send
    /// that waits for its receipt).
    fn capacity(&self) -> Option<usize> {
        self.bound.map(|b| b.max(1))
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

    /// Tells whoever waits for a change of kind `what`: the execution's threads waiting for
    /// it and outside OS threads. `room`: whether the queue has room after the change;
    /// `ready`: whether a receive would return now (a message queued, or no sender left).
    /// Senders waiting for room and receivers are not woken but enabled while the channel can
    /// serve them (`State::refresh_waiters`): the strategy picks which sender takes a freed
    /// slot, and a waiter that cannot go on takes no step. A receive also wakes rendezvous
    /// senders waiting for their message to be taken; a disconnection wakes every waiter.
    fn changed(
        &self,
        ex: Option<&Execution>,
        object: Option<ObjectId>,
        what: Change,
        room: bool,
        ready: bool,
    ) {
        if let Some(ex) = ex {
            let object = object.unwrap_or_else(|| ex.object(&self.handle, VarKind::Channel));
            ex.with_state(|st| {
                st.progress();
                match what {
                    // The receiver is enabled (`set_channel`), not woken.
                    Change::Sent => {}
                    // Rendezvous senders waiting for their message to be taken; senders
                    // waiting for room stay waiting (`set_channel`).
                    Change::Received => st.wake_waiters_where(object, |t| {
                        matches!(t.status, Status::Blocked(BlockedOn::Send(_))) && t.awaits_receipt
                    }),
                    Change::Disconnected => st.wake_waiters(object),
                }
                st.set_channel(object, Some(room), Some(ready));
            });
        }
        self.room.notify_all();
    }

    /// Registers the channel in `ex` on its first use there, with what its queue holds now
    /// (it may hold messages already: a channel shared with the outside), so that the model's
    /// room and readiness (`ObjectState::Channel`) are exact from the first operation on, and
    /// a receiver that finds the queue empty waits at its point rather than taking a step to
    /// find out.
    fn first_use(&self, ex: &Execution) {
        if self.handle.cached(ex.generation()).is_some() {
            return;
        }
        let capacity = self.capacity();
        let (room, ready) = self.locked(Some(ex), |i| (i.room(capacity), i.ready()));
        let object = ex.object(&self.handle, VarKind::Channel);
        ex.with_state(|st| st.set_channel(object, Some(room), Some(ready)));
    }

    /// Sends `value`, waiting while the channel is full if `block` (and, for a rendezvous
    /// channel, until the receiver takes it: if the receiver is dropped first, `value` comes
    /// back in `Disconnected`). Without `block`, a rendezvous channel takes `value` only for a
    /// receiver waiting in a receive now (`Full` otherwise).
    pub(crate) fn send(
        &self,
        value: T,
        block: bool,
        location: &'static Location<'static>,
    ) -> Result<(), TrySendError<T>> {
        let capacity = self.capacity();
        let mut value = Some(value);
        // A rendezvous `try_send` needs a receiver waiting now: `waiting` says whether one of
        // the execution's threads waits in a receive (false outside), `receiver_waiting`
        // whether an outside OS thread does.
        let handoff = self.bound == Some(0) && !block;
        let attempt = |inner: &mut Inner<T>, value: &mut Option<T>, waiting: bool| {
            if !inner.receiver_alive {
                return Sent::Disconnected;
            }
            if !inner.room(capacity) || (handoff && !waiting && !inner.receiver_waiting) {
                return Sent::Full;
            }
            inner.queue.push_back(value.take().expect("sent once"));
            inner.sent += 1;
            let room = inner.room(capacity);
            Sent::Done { ticket: inner.sent, room }
        };
        let rendezvous = self.bound == Some(0) && block;
        with_current(|ex| {
            let Some(ex) = ex else {
                let sent = match block {
                    true => self.wait_outside(None, |i, _| match attempt(i, &mut value, false) {
                        Sent::Full => None,
                        other => Some(other),
                    }),
                    false => Some(self.locked(None, |i| attempt(i, &mut value, false))),
                };
                return match sent {
                    Some(Sent::Done { ticket, room }) => {
                        self.changed(None, None, Change::Sent, room, true);
                        if rendezvous {
                            let receipt = self.wait_outside(None, |i, _| match i.receipt(ticket) {
                                Receipt::Pending => None,
                                done => Some(done),
                            });
                            if let Some(Receipt::Returned(v)) = receipt {
                                return Err(TrySendError::Disconnected(v));
                            }
                        }
                        Ok(())
                    }
                    Some(Sent::Disconnected) => Err(TrySendError::Disconnected(unsent(&mut value))),
                    _ => Err(TrySendError::Full(unsent(&mut value))),
                };
            };
            self.first_use(ex);
            // A blocking send into a bounded channel waits at its point for room: a choice
            // only while the model knows the queue has room (`State::wait_at_point`). An
            // unbounded channel always has room: its sends never wait.
            let bounded = self.bound.is_some();
            let object = ex.lock_point(
                &self.handle,
                VarKind::Channel,
                EventKind::Send,
                location,
                |_, object| (block && bounded).then_some(BlockedOn::Send(object)),
            );
            // Inside, the receiver waits from its receive's point on (`State::waiter_blocked_on`).
            let waiting = handoff
                && ex.with_state(|st| {
                    st.waiter_blocked_on(object, BlockedOn::Recv(object)).is_some()
                });
            let (ticket, room) = loop {
                match self.locked(Some(ex), |i| attempt(i, &mut value, waiting)) {
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
                        ex.with_state(|st| st.set_channel(object, Some(false), None));
                        ex.block(BlockedOn::Send(object), None, location);
                    }
                }
            };
            self.changed(Some(ex), Some(object), Change::Sent, room, true);
            if rendezvous {
                // The send completes when the receiver has taken this message: a receipt
                // wakes this sender, which is not one of those waiting for room. The
                // receiver's drop wakes it too (a disconnection wakes every waiter): then the
                // message goes back to it, in the error, and no receipt orders anything.
                loop {
                    match self.locked(Some(ex), |i| i.receipt(ticket)) {
                        Receipt::Taken => break,
                        Receipt::Returned(v) => return Err(TrySendError::Disconnected(v)),
                        Receipt::Pending => {}
                    }
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
        let capacity = self.capacity();
        let attempt = |inner: &mut Inner<T>| match inner.queue.pop_front() {
            Some(v) => {
                inner.received += 1;
                Received::Got(v, inner.received, inner.room(capacity), inner.ready())
            }
            None if inner.senders == 0 => Received::Disconnected,
            None => Received::Empty,
        };
        with_current(|ex| {
            let Some(ex) = ex else {
                // A receive that waits marks the receiver waiting (a rendezvous `try_send` may
                // hand it a message) from its first empty look on, and unmarks it in the
                // locked section that takes a message or gives up: no message handed over is
                // left behind.
                let waiting = |i: &mut Inner<T>, last: bool| match attempt(i) {
                    Received::Empty => {
                        i.receiver_waiting = !last;
                        None
                    }
                    other => {
                        i.receiver_waiting = false;
                        Some(other)
                    }
                };
                let received = match wait {
                    RecvWait::No => Some(self.locked(None, attempt)),
                    RecvWait::Forever => self.wait_outside(None, waiting),
                    RecvWait::Timeout(t) => {
                        let deadline = real_now().checked_add(t);
                        self.wait_outside(deadline, waiting)
                    }
                };
                return match received {
                    Some(Received::Got(v, _, room, ready)) => {
                        self.changed(None, None, Change::Received, room, ready);
                        Ok(v)
                    }
                    Some(Received::Disconnected) => Err(RecvTimeoutError::Disconnected),
                    _ => Err(RecvTimeoutError::Timeout),
                };
            };
            self.first_use(ex);
            // A receive that may wait waits at its point: a choice only while the model knows
            // a message or a disconnection is there (or, with a timeout, once no thread can
            // run).
            let waits = |_: &State, object: ObjectId| match wait {
                RecvWait::No => None,
                _ => Some(BlockedOn::Recv(object)),
            };
            let (object, timed_out) = match wait {
                RecvWait::Timeout(t) => ex.timed_wait_point(
                    &self.handle,
                    VarKind::Channel,
                    EventKind::Recv,
                    location,
                    t,
                    waits,
                ),
                _ => (
                    ex.lock_point(&self.handle, VarKind::Channel, EventKind::Recv, location, waits),
                    false,
                ),
            };
            if timed_out {
                return Err(RecvTimeoutError::Timeout);
            }
            loop {
                match self.locked(Some(ex), attempt) {
                    Received::Got(v, ticket, room, ready) => {
                        // The message's send happens before its receipt.
                        let rendezvous = self.bound == Some(0);
                        ex.with_state(|st| {
                            let me = st.current;
                            st.races.recv(me, object, ticket);
                            if rendezvous {
                                st.races.rendezvous_receive(me, object);
                            }
                        });
                        self.changed(Some(ex), Some(object), Change::Received, room, ready);
                        return Ok(v);
                    }
                    Received::Disconnected => return Err(RecvTimeoutError::Disconnected),
                    Received::Empty => {
                        let timeout = match wait {
                            RecvWait::No => return Err(RecvTimeoutError::Timeout),
                            RecvWait::Forever => None,
                            RecvWait::Timeout(t) => Some(t),
                        };
                        // Found empty where the model thought it ready (a channel shared with
                        // the outside, or a receive that variable bounding made no scheduling
                        // point): record it, and wait as at the point.
                        ex.with_state(|st| st.set_channel(object, None, Some(false)));
                        if ex.block(BlockedOn::Recv(object), timeout, location) {
                            return Err(RecvTimeoutError::Timeout);
                        }
                    }
                }
            }
        })
    }

    /// Outside any execution: runs `attempt` under the data lock until it returns a result,
    /// waiting in the room between tries; `None` if `deadline` passed first. `attempt`'s flag
    /// says whether this try is the last (the deadline passed: no wait follows a `None`).
    fn wait_outside<R>(
        &self,
        deadline: Option<Instant>,
        mut attempt: impl FnMut(&mut Inner<T>, bool) -> Option<R>,
    ) -> Option<R> {
        loop {
            let entered = self.room.enter();
            if let Some(r) = self.locked(None, |i| attempt(i, false)) {
                self.room.leave(entered);
                return Some(r);
            }
            if self.room.wait(entered, deadline) {
                return self.locked(None, |i| attempt(i, true));
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
                self.changed(ex, None, Change::Disconnected, true, true);
            }
        })
    }

    /// The receiver was dropped: the channel is disconnected.
    pub(crate) fn drop_receiver(&self) {
        with_current(|ex| {
            self.locked(ex, |i| i.receiver_alive = false);
            self.changed(ex, None, Change::Disconnected, true, true);
        })
    }
}
