//! The model of parking: each logical thread has a token that `unpark` makes available and
//! `park` consumes, blocking until it is there; and the calling thread's identity.
//!
//! Inside executions only: outside, `thread::park`/`unpark` are std's (the facade delegates).
//! This file owns the threads' park tokens and reads their names; nothing else.

use std::panic::Location;
use std::sync::Arc;
use std::time::Duration;

use super::context::with_execution;
use super::state::Status;
use super::{BlockedOn, EventKind, ThreadId};

/// Makes thread `id`'s next `park` return at once, or wakes it if it is parked.
pub(crate) fn unpark(id: ThreadId, location: &'static Location<'static>) {
    with_execution("Thread::unpark", |ex| {
        ex.schedule(EventKind::Unpark, None, location);
        ex.with_state(|st| {
            let me = st.current;
            st.races.unpark(me, id);
            st.note_wait_on(id, me);
            let t = &mut st.threads[id.index()];
            t.park_token = true;
            st.progress();
            if st.threads[id.index()].status == Status::Blocked(BlockedOn::Park) {
                st.wake(id);
            }
        });
    })
}

/// Blocks the calling thread until its token is available (or, with a `timeout`, until no
/// thread can run), and consumes the token.
pub(crate) fn park(timeout: Option<Duration>, location: &'static Location<'static>) {
    with_execution("thread::park", |ex| {
        ex.schedule(EventKind::Park, None, location);
        // Whether it consumes a token or is woken (or times out: conservatively, as if
        // unparked), the unparks so far happen before `park` returns.
        let has_token = ex.with_state(|st| {
            let cur = st.current;
            st.races.park(cur);
            std::mem::replace(&mut st.threads[cur.index()].park_token, false)
        });
        if !has_token {
            // std's park may also return spuriously, with no unpark.
            ex.block_or_wake_spuriously(BlockedOn::Park, timeout, location);
            ex.with_state(|st| {
                let cur = st.current;
                st.threads[cur.index()].park_token = false;
                st.races.park(cur);
            });
        }
    })
}

/// The calling logical thread's id and name (the test body's thread is named `main`).
pub(crate) fn current() -> (ThreadId, Option<Arc<str>>) {
    with_execution("thread::current", |ex| {
        ex.with_state(|st| {
            let id = st.current;
            let name = match (&st.threads[id.index()].name, id) {
                (Some(n), _) => Some(Arc::from(n.as_str())),
                (None, ThreadId::MAIN) => Some(Arc::from("main")),
                (None, _) => None,
            };
            (id, name)
        })
    })
}
