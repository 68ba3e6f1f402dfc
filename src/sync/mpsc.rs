//! `std::sync::mpsc`, mirrored: unbounded `channel`, bounded and rendezvous `sync_channel`,
//! with disconnection when all senders or the receiver are dropped.

use std::cell::{Cell, UnsafeCell};
use std::collections::VecDeque;
use std::fmt;
use std::panic::Location;
use std::sync::Arc;
use std::time::Duration;

pub use std::sync::mpsc::{RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};

use crate::runtime::{in_execution, with_execution, BlockedOn, EventKind, Execution, Handle};
use crate::vars::VarKind;

struct Chan<T> {
    handle: Handle,
    queue: UnsafeCell<VecDeque<T>>,
    /// `None` for `channel`, `Some(0)` for a rendezvous channel.
    bound: Option<usize>,
    senders: Cell<usize>,
    receiver_alive: Cell<bool>,
    sent: Cell<u64>,
    received: Cell<u64>,
}

// SAFETY: a channel is only touched by the logical threads of one execution, which run one at a
// time on one OS thread (operations outside an execution panic before touching the cells).
unsafe impl<T: Send> Send for Chan<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Chan<T> {}

impl<T> Chan<T> {
    fn with_queue<R>(&self, f: impl FnOnce(&mut VecDeque<T>) -> R) -> R {
        // SAFETY: one logical thread runs at a time, `f` cannot reach a scheduling point (it
        // only touches the queue), and the reference does not outlive the call.
        f(unsafe { &mut *self.queue.get() })
    }

    fn wake(&self, ex: &Execution) {
        let object = ex.object(&self.handle, VarKind::Channel);
        ex.with_state(|st| st.wake_waiters(object));
    }
}

/// The sending half of an unbounded channel.
pub struct Sender<T> {
    chan: Arc<Chan<T>>,
}

/// The sending half of a bounded channel.
pub struct SyncSender<T> {
    chan: Arc<Chan<T>>,
}

/// The receiving half of a channel.
pub struct Receiver<T> {
    chan: Arc<Chan<T>>,
}

#[track_caller]
fn make<T>(bound: Option<usize>) -> Arc<Chan<T>> {
    Arc::new(Chan {
        handle: Handle::new(),
        queue: UnsafeCell::new(VecDeque::new()),
        bound,
        senders: Cell::new(1),
        receiver_alive: Cell::new(true),
        sent: Cell::new(0),
        received: Cell::new(0),
    })
}

/// An unbounded channel, as `std::sync::mpsc::channel`.
#[track_caller]
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let chan = make(None);
    (Sender { chan: chan.clone() }, Receiver { chan })
}

/// A channel holding at most `bound` messages; `0` makes every send wait for its receive.
#[track_caller]
pub fn sync_channel<T>(bound: usize) -> (SyncSender<T>, Receiver<T>) {
    let chan = make(Some(bound));
    (SyncSender { chan: chan.clone() }, Receiver { chan })
}

fn send<T>(
    chan: &Chan<T>,
    value: T,
    block: bool,
    location: &'static Location<'static>,
) -> Result<(), TrySendError<T>> {
    with_execution("Sender::send", |ex| {
        let object = ex.point(&chan.handle, VarKind::Channel, EventKind::Send, location);
        let capacity = chan.bound.map(|b| b.max(1));
        loop {
            if !chan.receiver_alive.get() {
                return Err(TrySendError::Disconnected(value));
            }
            if capacity.is_none_or(|c| chan.with_queue(|q| q.len()) < c) {
                break;
            }
            if !block {
                return Err(TrySendError::Full(value));
            }
            ex.block(BlockedOn::Send(object), false, location);
        }
        chan.with_queue(|q| q.push_back(value));
        chan.sent.set(chan.sent.get() + 1);
        let ticket = chan.sent.get();
        ex.with_state(|st| st.wake_waiters(object));
        if chan.bound == Some(0) && block {
            // Rendezvous: the send completes when the receiver has taken this message.
            while chan.received.get() < ticket && chan.receiver_alive.get() {
                ex.block(BlockedOn::Send(object), false, location);
            }
        }
        Ok(())
    })
}

impl<T> Sender<T> {
    /// Sends a message; fails only if the receiver is gone.
    #[track_caller]
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        send(&self.chan, value, true, Location::caller()).map_err(|e| match e {
            TrySendError::Disconnected(v) | TrySendError::Full(v) => SendError(v),
        })
    }
}

impl<T> SyncSender<T> {
    /// Sends a message, blocking while the channel is full (or, for a rendezvous channel, until
    /// the receiver takes it).
    #[track_caller]
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        send(&self.chan, value, true, Location::caller()).map_err(|e| match e {
            TrySendError::Disconnected(v) | TrySendError::Full(v) => SendError(v),
        })
    }

    /// Sends a message if there is room now.
    #[track_caller]
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        send(&self.chan, value, false, Location::caller())
    }
}

impl<T> Receiver<T> {
    fn recv_inner(
        &self,
        block: bool,
        timeout_able: bool,
        location: &'static Location<'static>,
    ) -> Result<T, RecvTimeoutError> {
        let chan = &self.chan;
        with_execution("Receiver::recv", |ex| {
            let object = ex.point(&chan.handle, VarKind::Channel, EventKind::Recv, location);
            loop {
                if let Some(value) = chan.with_queue(|q| q.pop_front()) {
                    chan.received.set(chan.received.get() + 1);
                    ex.with_state(|st| st.wake_waiters(object));
                    return Ok(value);
                }
                if chan.senders.get() == 0 {
                    return Err(RecvTimeoutError::Disconnected);
                }
                if !block {
                    return Err(RecvTimeoutError::Timeout);
                }
                if ex.block(BlockedOn::Recv(object), timeout_able, location) {
                    return Err(RecvTimeoutError::Timeout);
                }
            }
        })
    }

    /// Receives a message, blocking until one arrives; fails when every sender is gone.
    #[track_caller]
    pub fn recv(&self) -> Result<T, RecvError> {
        self.recv_inner(true, false, Location::caller()).map_err(|_| RecvError)
    }

    /// Receives a message if one is waiting.
    #[track_caller]
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.recv_inner(false, false, Location::caller()).map_err(|e| match e {
            RecvTimeoutError::Timeout => TryRecvError::Empty,
            RecvTimeoutError::Disconnected => TryRecvError::Disconnected,
        })
    }

    /// Like `recv`, but times out when no thread can run any more (time passes only then).
    #[track_caller]
    pub fn recv_timeout(&self, _timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.recv_inner(true, true, Location::caller())
    }

    /// An iterator that receives until every sender is gone.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter { receiver: self }
    }

    /// An iterator over the messages waiting now.
    pub fn try_iter(&self) -> TryIter<'_, T> {
        TryIter { receiver: self }
    }
}

/// Blocking iterator over received messages.
pub struct Iter<'a, T> {
    receiver: &'a Receiver<T>,
}

impl<T> Iterator for Iter<'_, T> {
    type Item = T;
    #[track_caller]
    fn next(&mut self) -> Option<T> {
        self.receiver.recv().ok()
    }
}

/// Non-blocking iterator over waiting messages.
pub struct TryIter<'a, T> {
    receiver: &'a Receiver<T>,
}

impl<T> Iterator for TryIter<'_, T> {
    type Item = T;
    #[track_caller]
    fn next(&mut self) -> Option<T> {
        self.receiver.try_recv().ok()
    }
}

/// Owning blocking iterator over received messages.
pub struct IntoIter<T> {
    receiver: Receiver<T>,
}

impl<T> Iterator for IntoIter<T> {
    type Item = T;
    #[track_caller]
    fn next(&mut self) -> Option<T> {
        self.receiver.recv().ok()
    }
}

impl<T> IntoIterator for Receiver<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;
    fn into_iter(self) -> IntoIter<T> {
        IntoIter { receiver: self }
    }
}

impl<'a, T> IntoIterator for &'a Receiver<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

fn sender_dropped<T>(chan: &Chan<T>) {
    chan.senders.set(chan.senders.get() - 1);
    if chan.senders.get() == 0 && in_execution() {
        with_execution("Sender::drop", |ex| chan.wake(ex));
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Sender<T> {
        self.chan.senders.set(self.chan.senders.get() + 1);
        Sender { chan: self.chan.clone() }
    }
}

impl<T> Clone for SyncSender<T> {
    fn clone(&self) -> SyncSender<T> {
        self.chan.senders.set(self.chan.senders.get() + 1);
        SyncSender { chan: self.chan.clone() }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        sender_dropped(&self.chan);
    }
}

impl<T> Drop for SyncSender<T> {
    fn drop(&mut self) {
        sender_dropped(&self.chan);
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.chan.receiver_alive.set(false);
        if in_execution() {
            with_execution("Receiver::drop", |ex| self.chan.wake(ex));
        }
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sender@{}", self.chan.handle.site())
    }
}

impl<T> fmt::Debug for SyncSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SyncSender@{}", self.chan.handle.site())
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Receiver@{}", self.chan.handle.site())
    }
}
