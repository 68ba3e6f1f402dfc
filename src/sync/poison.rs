//! The poisoned flag `Mutex` and `RwLock` share, with std's semantics: set when a guard is
//! dropped during a panic, reported by every later lock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LockResult, PoisonError};

/// Whether a thread panicked while holding the lock.
pub(crate) struct PoisonFlag(AtomicBool);

impl PoisonFlag {
    pub(crate) const fn new() -> PoisonFlag {
        PoisonFlag(AtomicBool::new(false))
    }

    /// Inlined, as is `done`: every lock reads the flag and every guard's drop calls `done`,
    /// from the facade's generic code, compiled in the user's crate, where a non-generic
    /// function without `#[inline]` is a call (no cross-crate inlining without LTO).
    #[inline]
    pub(crate) fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    pub(crate) fn clear(&self) {
        self.0.store(false, Ordering::Relaxed);
    }

    /// Called when a guard is dropped: poisons the lock if the thread is unwinding.
    #[inline]
    pub(crate) fn done(&self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }

    /// `Ok(value)`, or `Err` carrying it if the lock is poisoned.
    pub(crate) fn wrap<T>(&self, value: T) -> LockResult<T> {
        if self.get() {
            Err(PoisonError::new(value))
        } else {
            Ok(value)
        }
    }
}
