//! Async Rust under pctvb: run futures on logical threads, spawn tasks, and find lost
//! wake-ups.
//!
//! A task *is* a logical thread: [`spawn`] starts a logical thread that runs [`block_on`] on
//! the future, so every strategy schedules tasks like threads, and replay, minimization,
//! regression files and parallel runs work for async code as for threads. [`block_on`] polls
//! its future on the calling logical thread with a waker that wakes that thread; when the
//! future returns `Pending` the thread blocks until one of its wakers is called. Every poll
//! is a scheduling point, as is every operation the future performs on pctvb's primitives; a
//! wake only makes the woken task runnable (wakers are often called under locks pctvb does
//! not see, where switching threads could hang the OS thread). The waker's next scheduling
//! point stands in for the wake, which loses no interleaving of pctvb's operations: between
//! the two the waker changes nothing pctvb models (guide section 13; `tests/future.rs`).
//!
//! A task's completion happens before whatever takes or sees its output through its
//! [`JoinHandle`] (an await that returns it, `join`, `is_finished` returning true), for the
//! race detector too, also when the task finished before the handle was first polled (no
//! wake then).
//!
//! A task that waits for a wake-up while no thread can run is reported like a deadlock, and
//! as a **lost wake-up** when no one holds its waker any more (the future dropped it, or
//! stored it where it is overwritten), naming the task, where it was spawned and where its
//! poll returned `Pending`.
//!
//! Wakers are `Send + Sync` and may be called anywhere: called after their execution ended,
//! in another execution or from an OS thread outside executions, they do nothing. Outside any
//! execution (setup code, a plain `#[test]`), `block_on` polls on the OS thread and parks it
//! between polls, its wakers unpark that OS thread, and `spawn` runs the task on a new OS
//! thread, so code behaves as it would with a simple executor.
//!
//! Differences from a real executor, all deliberate:
//! - Each task has its own logical thread (and stack): tasks run in parallel in the model, as
//!   on a multi-threaded runtime; a wake is what lets a task poll again.
//! - A panic that escapes a task fails the execution (it is a bug the test found), so a
//!   [`JoinHandle`] yields the task's value, not a `Result`.
//! - A poll that wakes its own task and returns `Pending` yields, as [`yield_now`] does: the
//!   task may run again once another thread changed something, or no other can run.
//! - Every thread and task runs to its end, also after the test body returns; one that never
//!   ends makes the execution run out of steps (the report names it).
//!
//! `block_on` may be nested in another `block_on`'s poll: each call has its own wake-ups.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::Location;
use std::pin::{pin, Pin};
use std::sync::{Arc, Mutex as StdMutex, Weak};
use std::task::{Context, Poll, Wake, Waker};

use crate::runtime::{in_execution, with_current, BlockOn, EventKind, ThreadId};

/// Whom a waker wakes.
enum Target {
    /// A `block_on` call on a logical thread of a running execution.
    Logical(BlockOn),
    /// An OS thread blocked in `block_on` outside executions.
    Os(std::thread::Thread),
}

/// The shared part of every waker `block_on` hands out (its `Arc` counts who holds one).
struct Signal {
    target: Target,
}

impl Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref()
    }

    fn wake_by_ref(self: &Arc<Self>) {
        match &self.target {
            Target::Logical(call) => crate::runtime::wake_task(*call),
            Target::Os(thread) => thread.unpark(),
        }
    }
}

/// Runs `future` to completion on the calling thread and returns its output.
///
/// Inside an execution, each poll is a scheduling point, and when the future returns
/// `Pending` the logical thread blocks until one of the wakers it was given is called (a
/// thread whose waker no one can call any more is reported as a lost wake-up). Outside
/// executions, it polls on the OS thread and parks it until woken.
#[track_caller]
pub fn block_on<F: Future>(future: F) -> F::Output {
    block_on_at(future, Location::caller())
}

fn block_on_at<F: Future>(future: F, location: &'static Location<'static>) -> F::Output {
    let mut future = pin!(future);
    if !in_execution() {
        let waker = Waker::from(Arc::new(Signal { target: Target::Os(std::thread::current()) }));
        let mut cx = Context::from_waker(&waker);
        loop {
            if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
                return value;
            }
            std::thread::park();
        }
    }
    let call = crate::runtime::enter_block_on();
    // The call ends when this frame does, returning or unwinding: a `block_on` it is nested
    // in takes its own wake-ups again.
    struct Leave(BlockOn);
    impl Drop for Leave {
        fn drop(&mut self) {
            crate::runtime::leave_block_on(self.0);
        }
    }
    let _leave = Leave(call);
    let signal = Arc::new(Signal { target: Target::Logical(call) });
    let probe: Weak<dyn Any + Send + Sync> = Arc::downgrade(&signal) as _;
    // From here `block_on` holds exactly one count of `signal`: the waker's.
    let waker = Waker::from(signal);
    let mut cx = Context::from_waker(&waker);
    loop {
        crate::runtime::poll_point(location);
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
        crate::runtime::wait_for_wake(call, probe.clone(), location);
    }
}

/// What a task leaves for its [`JoinHandle`].
struct Slot<T> {
    value: Option<T>,
    /// The waker of whoever awaits the handle.
    waiter: Option<Waker>,
    /// The task ended without a value (it panicked).
    failed: bool,
    /// The value was taken.
    taken: bool,
}

type Shared<T> = Arc<StdMutex<Slot<T>>>;

fn lock<T>(shared: &Shared<T>) -> std::sync::MutexGuard<'_, Slot<T>> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// Completes a task's slot when the task's body ends, normally or by a panic, and wakes
/// whoever awaits its handle.
struct Completion<T>(Shared<T>);

impl<T> Drop for Completion<T> {
    fn drop(&mut self) {
        let waiter = {
            let mut slot = lock(&self.0);
            if slot.value.is_none() && !slot.taken {
                slot.failed = true;
            }
            slot.waiter.take()
        };
        // Inside an execution a panic fails the execution, so there is no one to wake (and a
        // wake while unwinding would be a scheduling point on a panicking thread).
        if let Some(waiter) = waiter {
            if !(std::thread::panicking() && in_execution()) {
                waiter.wake();
            }
        }
    }
}

/// Owned permission to await (or block on) a task spawned by [`spawn`]. Awaiting it yields
/// the task's output; dropping it detaches the task.
pub struct JoinHandle<T> {
    shared: Shared<T>,
    thread: crate::thread::JoinHandle<()>,
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle").field("thread", self.thread.thread()).finish()
    }
}

impl<T> JoinHandle<T> {
    /// Blocks the calling thread until the task finishes and returns its output (a join of
    /// the task's logical thread, so it works from a thread that is not in `block_on`).
    ///
    /// # Panics
    /// If the task panicked (outside executions: inside, the panic fails the execution
    /// first), or if the handle was already awaited to completion.
    #[track_caller]
    pub fn join(self) -> T {
        let location = Location::caller();
        if let Err(payload) = self.thread.join_at(location) {
            std::panic::resume_unwind(payload);
        }
        let mut slot = lock(&self.shared);
        slot.taken = true;
        slot.value.take().expect("pctvb: the task's output was already taken")
    }

    /// Whether the task has finished. When it has, the task's accesses happen before the
    /// caller's next ones, as after an await of the handle.
    pub fn is_finished(&self) -> bool {
        let finished = {
            let slot = lock(&self.shared);
            slot.value.is_some() || slot.failed || slot.taken
        };
        if finished {
            self.output_seen();
        }
        finished
    }

    /// The caller saw the task's output in the shared slot: it acquires the task's completion
    /// (the slot's std mutex orders them on real hardware, but the race detector does not
    /// see it; the waker's edge exists only when the task finished after the first poll).
    fn output_seen(&self) {
        if let Some((task, generation)) = self.thread.logical() {
            crate::runtime::task_output_seen(task, generation);
        }
    }

    /// The id of the logical thread (or, outside executions, the OS thread) running the task.
    pub fn id(&self) -> ThreadId {
        self.thread.thread().id()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut slot = lock(&self.shared);
        if let Some(value) = slot.value.take() {
            slot.taken = true;
            drop(slot);
            self.output_seen();
            return Poll::Ready(value);
        }
        assert!(!slot.taken, "pctvb: a future::JoinHandle was polled after it completed");
        assert!(!slot.failed, "pctvb: the awaited task panicked");
        match &slot.waiter {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => slot.waiter = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

/// Spawns `future` as a new task and returns a handle to await it.
///
/// Inside an execution the task is a new logical thread that runs [`block_on`] on the future
/// (reports name it "task N" with this call's location); outside, an OS thread.
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let location = Location::caller();
    let shared: Shared<F::Output> =
        Arc::new(StdMutex::new(Slot { value: None, waiter: None, failed: false, taken: false }));
    let completion = Completion(shared.clone());
    let body = move || {
        let completion = completion;
        let value = block_on_at(future, location);
        // Before the output is published: whoever takes or sees it acquires this.
        crate::runtime::complete_task();
        lock(&completion.0).value = Some(value);
        drop(completion);
    };
    let thread = crate::thread::spawn_at(body, location);
    if in_execution() {
        crate::runtime::mark_task(thread.thread().id());
    }
    JoinHandle { shared, thread }
}

/// A future that returns `Pending` once, after waking its task, so other threads and tasks
/// may run: a scheduling point like `thread::yield_now`, and counted like it by the rule that
/// ends spin loops.
#[track_caller]
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false, location: Location::caller() }
}

/// The future [`yield_now`] returns.
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct YieldNow {
    yielded: bool,
    location: &'static Location<'static>,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        let location = self.location;
        with_current(|ex| {
            if let Some(ex) = ex {
                ex.schedule(EventKind::Yield, None, location);
            }
        });
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
