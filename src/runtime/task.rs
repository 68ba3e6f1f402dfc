//! The model of async tasks: each `future::block_on` running on a logical thread has a wake
//! token that a call of one of its wakers sets and the `block_on` consumes before it polls
//! again, blocking (on [`BlockedOn::Waker`]) until it is there; and what a blocked task is
//! waiting for, so that a deadlock report can tell a lost wake-up (no one holds the task's
//! waker) from a wait. The tokens are per `block_on`, not per thread: a `block_on` nested in
//! another's poll (a synchronous helper that runs a future) must not take the wake-ups of the
//! outer future's wakers, or the outer one would wait for a wake that already came.
//!
//! A task *is* a logical thread: `future::spawn` spawns one that runs `block_on`, so the
//! strategies, replay and minimization treat tasks as threads. Inside executions only: outside,
//! `future` polls on an OS thread and its wakers unpark that OS thread (the facade's job).
//! This file owns the threads' wake tokens and their waker probes, and the happens-before
//! edge from a task's completion to whoever takes its output (`complete`, `output_seen`);
//! nothing else.

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
    /// The `block_on` calls running on the thread, nested in each other's polls: the
    /// innermost one's depth is `depth - 1`.
    depth: u32,
    /// A bit per depth: a waker of the `block_on` at that depth was called since it last
    /// consumed its token (depths from 63 on share the last bit).
    woken: u64,
    /// The same, for the calls the thread made itself: the poll's `Pending` is a yield.
    self_woken: u64,
    /// While it waits in `block_on`: the shared part of its waker. `block_on` itself holds
    /// one strong count; every other count is a clone someone could still call.
    waker: Option<Weak<dyn Any + Send + Sync>>,
    /// Where `block_on` was called.
    waiting_at: Option<&'static Location<'static>>,
    /// The last scheduling point of the poll that returned `Pending`.
    last_op: Option<(EventKind, &'static Location<'static>)>,
}

/// Whom a waker of one `block_on` call wakes: the execution's generation (a waker does nothing
/// when called in another execution or after this one ended), the logical thread, and the
/// call's depth among the `block_on`s nested on that thread.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockOn {
    generation: u64,
    thread: ThreadId,
    depth: u32,
}

/// The token bit of depth `depth`.
fn bit(depth: u32) -> u64 {
    1 << depth.min(63)
}

/// A `block_on` call begins on the calling logical thread, nested in the ones running there:
/// its token starts unset. Ends with [`leave_block_on`].
pub(crate) fn enter_block_on() -> BlockOn {
    with_execution("future::block_on", |ex| {
        ex.with_state(|st| {
            let thread = st.current;
            let task = &mut st.threads[thread.index()].task;
            let depth = task.depth;
            task.depth += 1;
            task.woken &= !bit(depth);
            task.self_woken &= !bit(depth);
            BlockOn { generation: st.gen, thread, depth }
        })
    })
}

/// The `block_on` call `call` returned (or unwound): the one it was nested in is the innermost
/// again.
pub(crate) fn leave_block_on(call: BlockOn) {
    with_current(|ex| {
        let Some(ex) = ex else { return };
        // Runs from a drop guard, also while unwinding: if the state is borrowed (a panic
        // inside the engine), the thread's calls no longer matter.
        let Ok(mut st) = ex.state.try_borrow_mut() else { return };
        if st.gen == call.generation && call.thread.index() < st.threads.len() {
            st.threads[call.thread.index()].task.depth = call.depth;
        }
    })
}

/// Marks logical thread `id` as a task spawned by `future::spawn`.
pub(crate) fn mark_task(id: ThreadId) {
    with_execution("future::spawn", |ex| {
        ex.with_state(|st| st.threads[id.index()].task.is_task = true);
    })
}

/// The calling task (the body of `future::spawn`) completed: its output is about to go to its
/// `JoinHandle`. Its accesses so far happen before whatever takes or sees the output there
/// ([`output_seen`]): the handle's shared slot is a std mutex the detector does not see.
/// Not a scheduling point. Nothing outside executions.
pub(crate) fn complete() {
    with_current(|ex| {
        if let Some(ex) = ex {
            ex.with_state(|st| {
                let me = st.current;
                st.races.complete(me);
            });
        }
    })
}

/// The calling thread took or saw the output of task `task` of execution `generation` through
/// its `JoinHandle` (an await that returned it, `is_finished`): it acquires the task's clock
/// at [`complete`], whether the task finished before the handle was polled (no wake, so no
/// `unpark` edge) or after. Not a scheduling point. Nothing outside that execution.
pub(crate) fn output_seen(task: ThreadId, generation: u64) {
    with_current(|ex| {
        let Some(ex) = ex else { return };
        ex.with_state(|st| {
            if st.gen == generation && task.index() < st.threads.len() {
                let me = st.current;
                st.races.acquire_completion(me, task);
            }
        });
    })
}

/// The scheduling point before each poll of `block_on`'s future.
pub(crate) fn poll_point(location: &'static Location<'static>) {
    with_execution("future::block_on", |ex| ex.schedule(EventKind::Poll, None, location))
}

/// Blocks the calling thread until one of its wakers is called (at once if one was called
/// since the last poll), and consumes the wake. `waker` is the shared part of the waker that
/// `block_on` holds one count of.
///
/// A poll that woke its own task and returned `Pending` yields (a `Yield` point at
/// `location`, unless the poll's last point already was one, as `future::yield_now`'s is):
/// that is how hand-written futures and other runtimes' `yield_now` give way, and an executor
/// queues the task behind the others. Polled again at once, a task waiting that way for
/// another one's write would spin without a yield, which a priority strategy never preempts:
/// a correct program would end in `MaxSteps`.
pub(crate) fn wait_for_wake(
    call: BlockOn,
    waker: Weak<dyn Any + Send + Sync>,
    location: &'static Location<'static>,
) {
    let token = bit(call.depth);
    with_execution("future::block_on", |ex| {
        let (woken, yields) = ex.with_state(|st| {
            let cur = st.current.index();
            let last = st.trace.get(st.threads[cur].last_step).map(|s| (s.kind, s.location));
            let task = &mut st.threads[cur].task;
            let self_woken = task.self_woken & token != 0;
            task.self_woken &= !token;
            if task.woken & token != 0 {
                task.woken &= !token;
                let yielded = last.is_some_and(|(kind, _)| kind == EventKind::Yield);
                return (true, self_woken && !yielded);
            }
            task.waker = Some(waker);
            task.waiting_at = Some(location);
            task.last_op = last;
            (false, false)
        });
        if yields {
            ex.schedule(EventKind::Yield, None, location);
        }
        if !woken {
            // An executor may poll a task no waker woke (a spurious poll, which every future
            // must tolerate): the wait may end without a wake, as a condition variable's.
            ex.block_or_wake_spuriously(BlockedOn::Waker, None, location);
        }
        ex.with_state(|st| {
            let me = st.current;
            st.races.park(me);
            let task = &mut st.threads[me.index()].task;
            task.woken &= !token;
            task.waker = None;
        });
    })
}

/// A call of a waker of `block_on` call `call`: makes the call's next wait return at once, or
/// wakes its thread if it waits there. Not a scheduling point: a waker is
/// often called while its caller holds a lock pctvb does not see (event-listener calls wakers
/// under its std `Mutex`), and switching there to a thread that takes the same lock would hang
/// the OS thread; the waking thread's next scheduling point is the interleaving point instead.
/// That loses no interleaving of modelled operations: until that point the waker runs only
/// code pctvb does not see, so a switch there yields the same operations in the same order
/// as a switch at the wake (guide section 13).
/// Does nothing outside that execution (after it ended, in another one, or on an OS thread
/// outside executions).
pub(crate) fn wake(call: BlockOn) {
    let BlockOn { generation, thread: target, depth } = call;
    with_current(|ex| {
        let Some(ex) = ex else { return };
        // The state is borrowed only inside the engine: a waker called from a destructor the
        // engine runs (a thread-local's) sees it free; if not, there is nothing to wake safely.
        match ex.state.try_borrow() {
            Ok(st) if st.gen == generation && target.index() < st.threads.len() => {}
            _ => return,
        }
        // A wake of another thread is a happens-before edge from the waking thread to
        // `target`'s next poll (the race detector keeps it with what `unpark` releases to
        // `target`, which `block_on` takes when it resumes), and progress for threads spinning
        // in `yield_now`. A task that wakes itself (to yield) changes nothing another thread
        // could wait for: counted as progress, a task spinning that way would never be seen
        // as a livelock.
        ex.with_state(|st| {
            let me = st.current;
            if me != target {
                st.races.unpark(me, target);
                st.progress();
                st.note_wait_on(target, me);
            }
            let t = &mut st.threads[target.index()];
            t.task.woken |= bit(depth);
            if me == target {
                t.task.self_woken |= bit(depth);
            }
            // Only the innermost `block_on` of a thread can wait.
            if t.status == Status::Blocked(BlockedOn::Waker) && t.task.depth == depth + 1 {
                st.wake(target);
            }
        });
    })
}

/// Thread `id` as a report names it: "task N" for a task `future::spawn` started, its thread
/// otherwise, with where it was spawned.
pub(super) fn describe_thread(st: &State, id: ThreadId) -> String {
    let thread = &st.threads[id.index()];
    match thread.task.is_task {
        true => format!("task {id} (spawned at {})", thread.spawned_at),
        false => format!("{} (spawned at {})", st.thread_info(id), thread.spawned_at),
    }
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
