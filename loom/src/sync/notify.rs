use std::fmt;

use pctvb::sync::{Condvar, Mutex};

/// loom's `Notify`: a one-permit signal. [`Notify::notify`] stores a permit (at most one) and
/// wakes a waiter; [`Notify::wait`] blocks until a permit is there and consumes it.
///
/// loom 0.7's `wait` may also return spuriously, without consuming the permit: at most once
/// per `Notify` per execution, a branch its search explores both ways (its `Notify` is built
/// with spurious wake-ups on, and its docs do not mention them). This one never does (pctvb's
/// `Condvar` has no spurious wakeups, and its strategies choose threads, not values), so a
/// bug that needs a spurious return (a caller that takes `wait` returning as proof of a
/// `notify`) is not found here; code written for loom's contract tolerates the difference.
pub struct Notify {
    permit: Mutex<bool>,
    signal: Condvar,
}

impl Notify {
    /// A `Notify` without a permit.
    #[track_caller]
    pub fn new() -> Notify {
        Notify { permit: Mutex::new(false), signal: Condvar::new() }
    }

    /// Stores the permit and wakes one waiting thread.
    #[track_caller]
    pub fn notify(&self) {
        let mut permit = self.permit.lock().unwrap_or_else(|e| e.into_inner());
        *permit = true;
        drop(permit);
        self.signal.notify_one();
    }

    /// Waits for the permit and consumes it.
    #[track_caller]
    pub fn wait(&self) {
        let mut permit = self.permit.lock().unwrap_or_else(|e| e.into_inner());
        while !*permit {
            permit = self.signal.wait(permit).unwrap_or_else(|e| e.into_inner());
        }
        *permit = false;
    }
}

impl Default for Notify {
    #[track_caller]
    fn default() -> Notify {
        Notify::new()
    }
}

impl fmt::Debug for Notify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notify").finish_non_exhaustive()
    }
}
