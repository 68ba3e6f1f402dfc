//! The model of async tasks: each logical thread has a wake token that a call of one of its
//! wakers sets and `future::block_on` consumes before it polls again, blocking (on
//! [`BlockedOn::Waker`]) until it is there; and what a blocked task is waiting for, so that a
//! deadlock report can tell a lost wake-up (no one holds the task's waker) from a wait.
//!
//! A task *is* a logical thread: `future::spawn` spawns one that runs `block_on`, so the
//! strategies, replay and minimization treat tasks as threads. Inside executions only: outside,
//! `future` polls on an OS thread and its wakers unpark that OS thread (the facade's job).
//! This file owns the threads' wake tokens and their waker probes; nothing else.

use std::any::Any;
use std::panic::Location;
use std::sync::Weak;

use super::context::{with_current, with_execution};
use super::state::{State, Status};
use super::{BlockedOn, EventKind, ThreadId};

/// A logical thread's state as an async task (part of `state::Thread`, reset with it).
#[derive(Default)]
pub(crate) struct TaskState {
    /// Spawned by `future::spawn`: reports call it "task N".
    is_task: bool,
    /// One of its wakers was called since `block_on` last consumed the token.
    woken: bool,
    /// While it waits in `block_on`: the shared part of its waker. `block_on` itself holds
    /// one strong count; every other count is a clone someone could still call.
    waker: Option<Weak<dyn Any + Send + Sync>>,
    /// Where `block_on` was called.
    waiting_at: Option<&'static Location<'static>>,
    /// The last scheduling point of the poll that returned `Pending`.
    last_op: Option<(EventKind, &'static Location<'static>)>,
}

/// The calling logical thread and the execution's generation: what a waker needs to find it
/// (and to do nothing when it is called in another execution or after this one ended).
pub(crate) fn identity() -> (u64, ThreadId) {
    with_execution("future::block_on", |ex| ex.with_state(|st| (st.gen, st.current)))
}

/// Marks logical thread `id` as a task spawned by `future::spawn`.
pub(crate) fn mark_task(id: ThreadId) {
    with_execution("future::spawn", |ex| {
        ex.with_state(|st| st.threads[id.index()].task.is_task = true);
    })
}

/// The scheduling point before each poll of `block_on`'s future.
pub(crate) fn poll_point(location: &'static Location<'static>) {
    with_execution("future::block_on", |ex| ex.schedule(EventKind::Poll, None, location))
}

/// Blocks the calling thread until one of its wakers is called (at once if one was called
/// since the last poll), and consumes the wake. `waker` is the shared part of the waker that
/// `block_on` holds one count of.
pub(crate) fn wait_for_wake(
    waker: Weak<dyn Any + Send + Sync>,
    location: &'static Location<'static>,
) {
    with_execution("future::block_on", |ex| {
        let woken = ex.with_state(|st| {
            let cur = st.current.index();
            let last = st.trace.get(st.threads[cur].last_step).map(|s| (s.kind, s.location));
            let task = &mut st.threads[cur].task;
            if std::mem::replace(&mut task.woken, false) {
                return true;
            }
            task.waker = Some(waker);
            task.waiting_at = Some(location);
            task.last_op = last;
            false
        });
        if !woken {
            ex.block(BlockedOn::Waker, None, location);
        }
        ex.with_state(|st| {
            let me = st.current;
            st.races.park(me);
            let task = &mut st.threads[me.index()].task;
            task.woken = false;
            task.waker = None;
        });
    })
}

/// A call of a waker of thread `target` of the execution of generation `generation`: makes
/// the target's next wait return at once, or wakes it. Not a scheduling point: a waker is
/// often called while its caller holds a lock pctvb does not see (event-listener calls wakers
/// under its std `Mutex`), and switching there to a thread that takes the same lock would hang
/// the OS thread; the waking thread's next scheduling point is the interleaving point instead.
/// That loses no interleaving of modelled operations: until that point the waker runs only
/// code pctvb does not see, so a switch there yields the same operations in the same order
/// as a switch at the wake (guide section 13).
/// Does nothing outside that execution (after it ended, in another one, or on an OS thread
/// outside executions).
pub(crate) fn wake(generation: u64, target: ThreadId) {
    with_current(|ex| {
        let Some(ex) = ex else { return };
        // The state is borrowed only inside the engine: a waker called from a destructor the
        // engine runs (a thread-local's) sees it free; if not, there is nothing to wake safely.
        match ex.state.try_borrow() {
            Ok(st) if st.gen == generation && target.index() < st.threads.len() => {}
            _ => return,
        }
        // A wake is a happens-before edge from the waking thread to `target`'s next poll (the
        // race detector keeps it with what `unpark` releases to `target`, which `block_on`
        // takes when it resumes), and progress for threads spinning in `yield_now`.
        ex.with_state(|st| {
            let me = st.current;
            st.races.unpark(me, target);
            st.progress();
            let t = &mut st.threads[target.index()];
            t.task.woken = true;
            if t.status == Status::Blocked(BlockedOn::Waker) {
                st.wake(target);
            }
        });
    })
}

/// Whether blocked thread `id` waits for a wake-up no one can give: no waker of it is held
/// outside its own `block_on`.
pub(super) fn is_lost(st: &State, id: ThreadId) -> bool {
    let task = &st.threads[id.index()].task;
    task.waker.as_ref().is_some_and(|w| w.strong_count() <= 1)
}

/// Describes thread `id`, blocked on [`BlockedOn::Waker`], for a deadlock report.
pub(super) fn describe_wait(st: &State, id: ThreadId) -> String {
    let thread = &st.threads[id.index()];
    let task = &thread.task;
    let block_on = task.waiting_at.map_or(String::new(), |at| format!(" at {at}"));
    // Where its poll returned `Pending`: its last scheduling point inside the poll, if any.
    let (place, in_block_on) = match task.last_op {
        Some((kind, at)) if kind != EventKind::Poll => {
            (format!("in poll at {at} (its last operation: {kind})"), true)
        }
        _ => (format!("in block_on{block_on} (its last poll ran no pctvb operation)"), false),
    };
    let who = if task.is_task {
        format!("task {id} (spawned at {})", thread.spawned_at)
    } else if in_block_on {
        format!("{} (in block_on{block_on})", st.thread_info(id))
    } else {
        st.thread_info(id).to_string()
    };
    if is_lost(st, id) {
        format!(
            "lost wake-up: {who} waits {place} and no one holds its waker, so no one will \
             wake it"
        )
    } else {
        let holders = task.waker.as_ref().map_or(0, |w| w.strong_count().saturating_sub(1));
        let clones = match holders {
            1 => "a clone of its waker is held".to_string(),
            n => format!("{n} clones of its waker are held"),
        };
        format!(
            "{who} waits {place} for a wake-up: {clones}, but no thread that can run will \
             call one"
        )
    }
}
