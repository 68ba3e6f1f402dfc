use std::fmt;

use super::{Condvar, Mutex};

/// loom's `Notify`: a one-permit signal. [`Notify::notify`] stores a permit (at most one) and
/// wakes a waiter; [`Notify::wait`] blocks until a permit is there and consumes it.
///
/// loom 0.7's `wait` may also return spuriously, without consuming the permit: at most once
/// per `Notify` per execution, a branch its search explores both ways (its `Notify` is built
/// with spurious wake-ups on, and its docs do not mention them). This one does too, at most
/// once per `Notify` per execution, when its waiting thread wakes spuriously with no permit
/// there (pctvb's `Condvar` waits may wake spuriously: the strategy's choice), so a caller
/// that takes `wait` returning as proof of a `notify` fails. loom may also return spuriously
/// with a permit there; code written for loom's contract handles both.
pub struct Notify {
    state: Mutex<State>,
    signal: Condvar,
}

/// A `Notify`'s state, under its mutex.
struct State {
    /// A `notify` left a permit no `wait` has consumed.
    permit: bool,
    /// A `wait` returned spuriously in this execution: no other one will.
    spurred: bool,
}

impl Notify {
    /// A `Notify` without a permit.
    #[track_caller]
    pub fn new() -> Notify {
        Notify {
            state: Mutex::new(State { permit: false, spurred: false }),
            signal: Condvar::new(),
        }
    }

    /// Stores the permit and wakes one waiting thread.
    #[track_caller]
    pub fn notify(&self) {
        // This crate's locks are never poisoned: `unwrap` cannot panic.
        let mut state = self.state.lock().unwrap();
        state.permit = true;
        drop(state);
        self.signal.notify_one();
    }

    /// Waits for the permit and consumes it, or returns spuriously without one (at most once
    /// per `Notify` per execution).
    #[track_caller]
    pub fn wait(&self) {
        let mut state = self.state.lock().unwrap();
        while !state.permit {
            state = self.signal.wait(state).unwrap();
            if !state.permit && !state.spurred {
                // The condition variable woke spuriously: loom's `Notify` may return then.
                state.spurred = true;
                return;
            }
        }
        state.permit = false;
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
