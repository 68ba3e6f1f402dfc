//! `std::sync::mpsc`, mirrored: unbounded `channel`, bounded and rendezvous `sync_channel`,
//! with disconnection when all senders or the receiver are dropped. The endpoints are this
//! module's; the channel itself (queue, counters, blocking, under a data lock) is the engine's
//! `Channel`.

use std::fmt;
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::Arc;
use std::time::Duration;

pub use std::sync::mpsc::{RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};

use crate::runtime::{Channel, RecvWait};

/// The sending half of an unbounded channel. `Send` and `Sync` when `T: Send`, as std's.
pub struct Sender<T> {
    chan: Arc<Channel<T>>,
}

/// The sending half of a bounded channel. `Send` and `Sync` when `T: Send`, as std's.
pub struct SyncSender<T> {
    chan: Arc<Channel<T>>,
}

/// The receiving half of a channel. `Send` when `T: Send` and never `Sync`, as std's: one
/// thread at a time receives.
pub struct Receiver<T> {
    chan: Arc<Channel<T>>,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

// Unwind-safe, as std's endpoints (which implement both traits for every `T`): a panic caught
// while a thread holds one leaves the channel whole (a message is queued or taken in one
// engine operation under the channel's data lock), so a closure given to `catch_unwind` may
// own or borrow one, as it may std's (and loom's).
impl<T> std::panic::UnwindSafe for Sender<T> {}
impl<T> std::panic::RefUnwindSafe for Sender<T> {}
impl<T> std::panic::UnwindSafe for SyncSender<T> {}
impl<T> std::panic::RefUnwindSafe for SyncSender<T> {}
impl<T> std::panic::UnwindSafe for Receiver<T> {}
impl<T> std::panic::RefUnwindSafe for Receiver<T> {}

/// An unbounded channel, as `std::sync::mpsc::channel`.
#[track_caller]
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let chan = Arc::new(Channel::new(None));
    (Sender { chan: chan.clone() }, Receiver { chan, _not_sync: PhantomData })
}

/// A channel holding at most `bound` messages; `0` makes a rendezvous channel, as std's: a
/// `send` returns `Ok` only once the receiver has taken its message, and a `try_send` succeeds
/// only while the receiver waits in a receive.
#[track_caller]
pub fn sync_channel<T>(bound: usize) -> (SyncSender<T>, Receiver<T>) {
    let chan = Arc::new(Channel::new(Some(bound)));
    (SyncSender { chan: chan.clone() }, Receiver { chan, _not_sync: PhantomData })
}

impl<T> Sender<T> {
    /// Sends a message; fails only if the receiver is gone.
    #[track_caller]
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        self.chan.send(value, true, Location::caller()).map_err(|e| match e {
            TrySendError::Disconnected(v) | TrySendError::Full(v) => SendError(v),
        })
    }
}

impl<T> SyncSender<T> {
    /// Sends a message, blocking while the channel is full (or, for a rendezvous channel, until
    /// the receiver takes it); fails, giving the message back, if the receiver is gone (for a
    /// rendezvous channel: before it took the message).
    #[track_caller]
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        self.chan.send(value, true, Location::caller()).map_err(|e| match e {
            TrySendError::Disconnected(v) | TrySendError::Full(v) => SendError(v),
        })
    }

    /// Sends a message if there is room now: for a rendezvous channel, if the receiver waits in
    /// a receive (`recv`, `recv_timeout`) now, to which the message is handed; `Full` otherwise.
    #[track_caller]
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        self.chan.send(value, false, Location::caller())
    }
}

impl<T> Receiver<T> {
    /// Receives a message, blocking until one arrives; fails when every sender is gone.
    #[track_caller]
    pub fn recv(&self) -> Result<T, RecvError> {
        self.chan.recv(RecvWait::Forever, Location::caller()).map_err(|_| RecvError)
    }

    /// Receives a message if one is waiting.
    #[track_caller]
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.chan.recv(RecvWait::No, Location::caller()).map_err(|e| match e {
            RecvTimeoutError::Timeout => TryRecvError::Empty,
            RecvTimeoutError::Disconnected => TryRecvError::Disconnected,
        })
    }

    /// Like `recv`, but times out: inside an execution when no thread can run any more (time
    /// passes only then), outside after `timeout`.
    #[track_caller]
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.chan.recv(RecvWait::Timeout(timeout), Location::caller())
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

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Sender<T> {
        self.chan.add_sender();
        Sender { chan: self.chan.clone() }
    }
}

impl<T> Clone for SyncSender<T> {
    fn clone(&self) -> SyncSender<T> {
        self.chan.add_sender();
        SyncSender { chan: self.chan.clone() }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.chan.drop_sender();
    }
}

impl<T> Drop for SyncSender<T> {
    fn drop(&mut self) {
        self.chan.drop_sender();
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.chan.drop_receiver();
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sender@{}", self.chan.site())
    }
}

impl<T> fmt::Debug for SyncSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SyncSender@{}", self.chan.site())
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Receiver@{}", self.chan.site())
    }
}

impl<T> fmt::Debug for Iter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Iter").field("rx", self.receiver).finish()
    }
}

impl<T> fmt::Debug for TryIter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TryIter").field("rx", self.receiver).finish()
    }
}

impl<T> fmt::Debug for IntoIter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntoIter").field("rx", &self.receiver).finish()
    }
}
