//! Creating and joining logical threads: `spawn` adds a thread to the execution's table (its
//! body starts on its own coroutine when the strategy first picks it), `join` blocks until the
//! target has finished, and a thread's result waits in its entry until its handle takes it
//! (`set_result`, `take_result`, `detach`): no allocation per thread for it (none at all for a
//! `()` result).
//!
//! Inside executions only: outside, `thread::spawn` is std's (the facade delegates). This file
//! owns the thread table's growth and the joiners lists; starting, running and ending threads
//! is `execution.rs`'s.

use std::cell::RefCell;
use std::panic::Location;

use super::context::{with_current, with_execution};
use super::coroutine::Running;
use super::object::ErasedValue;
use super::state::{Status, Thread};
use super::{BlockedOn, EventKind, Execution, ThreadId};

/// Creates a logical thread that runs `body`, then runs a scheduling point in the parent.
/// `body` need not be 'static: a scoped thread's is joined before its borrows end (see
/// `Execution::thread_coroutine`). Returns the thread and the execution's generation, which
/// the thread's handle keeps so that it never touches another execution's thread of the same
/// id.
pub(crate) fn spawn<F: FnOnce()>(
    body: F,
    name: Option<String>,
    location: &'static Location<'static>,
) -> (ThreadId, u64) {
    with_execution("thread::spawn", |ex| {
        let id = ex.spawn(body, name, location);
        (id, ex.generation())
    })
}

/// Keeps `value`, what the running thread's closure returned, for its handle; drops it at once
/// if the handle is gone.
pub(crate) fn set_result<T>(value: T) {
    with_execution("thread::spawn", |ex| {
        let mut st = ex.state.borrow_mut();
        let cur = st.current.index();
        if st.threads[cur].detached {
            // Its drop may use primitives: outside the borrow.
            drop(st);
            drop(value);
        } else {
            st.threads[cur].result = Some(ErasedValue::new(value));
        }
    })
}

/// Joins thread `target` of execution `generation` and takes its result.
///
/// # Safety
/// `T` must be the type of the value the thread's closure gave [`set_result`].
pub(crate) unsafe fn take_result<T>(
    target: ThreadId,
    generation: u64,
    location: &'static Location<'static>,
) -> T {
    with_execution("JoinHandle::join", |ex| {
        if ex.generation() != generation {
            panic!(
                "pctvb: JoinHandle::join on a thread of another execution (a handle kept past \
                 the execution that spawned it, in a static or a thread-local); each \
                 execution's threads end with it, so join them before the test body returns"
            );
        }
        ex.join(target, location);
        let result = ex.state.borrow_mut().threads[target.index()].result.take();
        let result = result.expect("pctvb: a finished thread left no result");
        // SAFETY: the caller's promise.
        unsafe { result.into_inner::<T>() }
    })
}

/// Whether thread `target` of execution `generation` has finished (false for another
/// execution's).
pub(crate) fn is_finished(target: ThreadId, generation: u64) -> bool {
    own_thread(target, generation, |t| t.status == Status::Finished).unwrap_or(false)
}

/// Thread `target`'s handle was dropped unjoined: its result, kept or to come, is dropped (now,
/// on the calling thread, or when the thread returns it). Nothing for a handle that outlived
/// its execution.
pub(crate) fn detach(target: ThreadId, generation: u64) {
    let result = own_thread(target, generation, |t| {
        t.detached = true;
        t.result.take()
    });
    // Outside the borrow: its drop may use primitives.
    drop(result);
}

/// `f` on thread `target`'s entry if the running execution is `generation`; `None` outside
/// executions and in another (a handle that outlived its execution touches nothing).
fn own_thread<R>(target: ThreadId, generation: u64, f: impl FnOnce(&mut Thread) -> R) -> Option<R> {
    with_current(|ex| {
        let mut st = ex?.state.borrow_mut();
        (st.gen == generation).then(|| f(&mut st.threads[target.index()]))
    })
}

/// Joins every thread of `threads`, in order, including those pushed while it waits (a
/// scope's end: a scoped thread may spawn more scoped threads, which the scope must join too,
/// as std's does), then empties it. Reads the list afresh after each join and never holds its
/// borrow across one: the threads that run meanwhile push to it.
pub(crate) fn join_all(threads: &RefCell<Vec<ThreadId>>, location: &'static Location<'static>) {
    with_execution("thread::scope", |ex| {
        let mut next = 0;
        // Joining in spawn order, the first ones before any later push, keeps the schedule of
        // a scope without nested spawns what it was (replay tokens and regression files).
        loop {
            // A statement of its own: the borrow ends before the join lets other threads run.
            let id = threads.borrow().get(next).copied();
            let Some(id) = id else { break };
            ex.join(id, location);
            next += 1;
        }
        // Every thread of the list has finished, so none can push any more.
        threads.borrow_mut().clear();
    })
}

impl Execution {
    /// Creates a thread that runs `body`, then runs a scheduling point in the parent. Generic
    /// over `body`, so compiled into the crate that spawns (a user's test, unoptimized under
    /// `cargo test`): only the coroutine's creation depends on `body`; the rest is
    /// [`Execution::thread_stack`]'s and [`Execution::add_thread`]'s, compiled with pctvb
    /// (docs/RESULTS-debug-build.md).
    fn spawn<F: FnOnce()>(
        &self,
        body: F,
        name: Option<String>,
        location: &'static Location<'static>,
    ) -> ThreadId {
        let (next, stack) = self.thread_stack(location);
        // Its coroutine now, with `body` on its stack: the host loop starts it when the
        // strategy first picks it.
        let coroutine = self.thread_coroutine(next, stack, body);
        self.add_thread(next, coroutine, name, location)
    }

    /// Adds thread `next`, whose coroutine is `coroutine`, to the execution, then runs the
    /// spawn's scheduling point in the parent.
    fn add_thread(
        &self,
        next: ThreadId,
        coroutine: Running,
        name: Option<String>,
        location: &'static Location<'static>,
    ) -> ThreadId {
        let id = {
            let mut st = self.state.borrow_mut();
            let id = st.push_thread(name, location);
            debug_assert_eq!(id, next);
            // Ids are handed out in order and the list is emptied for each execution: the new
            // thread's slot is pushed, after an empty one for the main thread (0, never
            // pending) at the first spawn. A `resize_with` then a store into the slot cost ~25
            // instructions a spawn more (`strategy_instructions`).
            while st.pending.len() < id.index() {
                st.pending.push(None);
            }
            debug_assert_eq!(st.pending.len(), id.index());
            st.pending.push(Some(coroutine));
            st.enable_newest(id);
            let parent = st.current;
            st.races.spawn(parent, id);
            st.progress();
            id
        };
        self.schedule_inlined(EventKind::Spawn, None, location);
        id
    }

    /// Waits for thread `target` to finish.
    fn join(&self, target: ThreadId, location: &'static Location<'static>) {
        // A running target: the thread waits at the join's point (woken when the target
        // exits), so the strategy never chooses it before, and once chosen it is done.
        {
            let mut st = self.state.borrow_mut();
            // Whether or not the target has finished: the join orders its exit before what
            // the joiner does next, in this schedule and in those where the joiner waits.
            let me = st.current;
            st.note_wait_on(me, target);
            if st.threads[target.index()].status != Status::Finished {
                st.block_current(BlockedOn::Join(target), false);
            }
        }
        self.schedule_inlined(EventKind::Join, None, location);
        while self.state.borrow().threads[target.index()].status != Status::Finished {
            self.block(BlockedOn::Join(target), None, location);
        }
        self.with_state(|st| {
            let me = st.current;
            st.races.join(me, target)
        });
    }
}
