//! Creating and joining logical threads: `spawn` adds a thread to the execution's table (its
//! body starts on its own coroutine when the strategy first picks it), `join` blocks until the
//! target has finished.
//!
//! Inside executions only: outside, `thread::spawn` is std's (the facade delegates). This file
//! owns the thread table's growth and the joiners lists; starting, running and ending threads
//! is `execution.rs`'s.

use std::panic::Location;

use super::context::with_execution;
use super::state::Status;
use super::{BlockedOn, EventKind, Execution, FailureCause, ThreadId};

/// Creates a logical thread that runs `body`, then runs a scheduling point in the parent.
/// `body` need not be 'static: a scoped thread's is joined before its borrows end (see
/// `Execution::thread_coroutine`).
pub(crate) fn spawn<F: FnOnce()>(
    body: F,
    name: Option<String>,
    location: &'static Location<'static>,
) -> ThreadId {
    with_execution("thread::spawn", |ex| ex.spawn(body, name, location))
}

/// Waits for logical thread `target` to finish.
pub(crate) fn join(target: ThreadId, location: &'static Location<'static>) {
    with_execution("JoinHandle::join", |ex| ex.join(target, location))
}

/// Joins every thread of `threads` (a scope's end).
pub(crate) fn join_all(threads: Vec<ThreadId>, location: &'static Location<'static>) {
    with_execution("thread::scope", |ex| {
        for id in threads {
            ex.join(id, location);
        }
    })
}

impl Execution {
    /// Creates a thread that runs `body`, then runs a scheduling point in the parent.
    fn spawn<F: FnOnce()>(
        &self,
        body: F,
        name: Option<String>,
        location: &'static Location<'static>,
    ) -> ThreadId {
        let next = {
            let st = self.state.borrow();
            let limit = st.max_threads;
            if st.threads.len() >= limit {
                drop(st);
                self.fail(FailureCause::TooManyThreads { limit, location });
            }
            ThreadId(st.threads.len() as u32)
        };
        // Its coroutine now, with `body` on its stack: the host loop starts it when the
        // strategy first picks it.
        let coroutine = match self.thread_coroutine(next, body) {
            Ok(c) => c,
            Err(message) => self.fail(FailureCause::Internal { message }),
        };
        let id = {
            let mut st = self.state.borrow_mut();
            let id = st.push_thread(name, location);
            debug_assert_eq!(id, next);
            st.pending.resize_with(id.index() + 1, || None);
            st.pending[id.index()] = Some(coroutine);
            st.enabled.push(id);
            let parent = st.current;
            st.races.spawn(parent, id);
            st.progress();
            id
        };
        self.schedule(EventKind::Spawn, None, location);
        id
    }

    /// Waits for thread `target` to finish.
    fn join(&self, target: ThreadId, location: &'static Location<'static>) {
        // A running target: the thread waits at the join's point (woken when the target
        // exits), so the strategy never chooses it before, and once chosen it is done.
        {
            let mut st = self.state.borrow_mut();
            if st.threads[target.index()].status != Status::Finished {
                st.block_current(BlockedOn::Join(target), false);
            }
        }
        self.schedule(EventKind::Join, None, location);
        while self.state.borrow().threads[target.index()].status != Status::Finished {
            self.block(BlockedOn::Join(target), None, location);
        }
        self.with_state(|st| {
            let me = st.current;
            st.races.join(me, target)
        });
    }
}
