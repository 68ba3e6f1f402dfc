//! Futures support, as loom's `future` module (behind loom's `futures` feature; always present
//! here): [`block_on`] and [`AtomicWaker`].

use std::fmt;
use std::future::Future;
use std::task::Waker;

use pctvb::sync::Mutex;

/// Runs a future to completion on the calling logical thread: [`pctvb::future::block_on`],
/// whose wakers are scheduling points and which reports a lost wake-up (a task waiting for a
/// wake no one will give) like a deadlock.
#[track_caller]
pub fn block_on<F: Future>(f: F) -> F::Output {
    pctvb::future::block_on(f)
}

/// loom's `AtomicWaker` (futures' `AtomicWaker`): holds the waker of one task, which
/// [`AtomicWaker::wake`] takes and wakes. Registering and waking are scheduling points (the
/// waker is behind a pctvb `Mutex`).
pub struct AtomicWaker {
    waker: Mutex<Option<Waker>>,
}

impl AtomicWaker {
    /// An `AtomicWaker` with no waker.
    #[track_caller]
    pub fn new() -> AtomicWaker {
        AtomicWaker { waker: Mutex::new(None) }
    }

    /// Registers `waker` to be woken by the next [`AtomicWaker::wake`].
    #[track_caller]
    pub fn register(&self, waker: Waker) {
        *self.waker.lock().unwrap_or_else(|e| e.into_inner()) = Some(waker);
    }

    /// Registers a clone of `waker`, unless the same waker is already registered.
    #[track_caller]
    pub fn register_by_ref(&self, waker: &Waker) {
        let mut slot = self.waker.lock().unwrap_or_else(|e| e.into_inner());
        match &*slot {
            Some(w) if w.will_wake(waker) => {}
            _ => *slot = Some(waker.clone()),
        }
    }

    /// Wakes the registered waker, if any, and removes it.
    #[track_caller]
    pub fn wake(&self) {
        if let Some(waker) = self.take_waker() {
            waker.wake();
        }
    }

    /// Removes and returns the registered waker.
    #[track_caller]
    pub fn take_waker(&self) -> Option<Waker> {
        self.waker.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl Default for AtomicWaker {
    #[track_caller]
    fn default() -> AtomicWaker {
        AtomicWaker::new()
    }
}

impl fmt::Debug for AtomicWaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AtomicWaker").finish_non_exhaustive()
    }
}
