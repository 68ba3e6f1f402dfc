//! `std::thread`, mirrored: spawn, join, scoped threads, names, yield, park, sleep and
//! thread-locals, all running as logical threads of the current pctvb execution.
//!
//! This module owns only the std-shaped facade; creating, blocking and switching threads is the
//! runtime's job. Outside any execution (setup code, a plain `#[test]`) every function here
//! delegates to `std::thread`: `spawn` and `scope` start real OS threads, `sleep` sleeps,
//! `park` parks the OS thread, and thread ids of OS threads count from 2^31 so that they never
//! look like a logical thread's.
//!
//! Differences from std, all deliberate:
//! - `sleep` and `park_timeout` do not wait for real time: a timeout fires exactly when no
//!   thread can run, so when nothing else could happen, and a sleep waits for nothing (the
//!   thread may run on at once, or another may run first). On Linux with glibc,
//!   `std::time::Instant::now()` reads the execution's virtual clock, which a timeout or a
//!   sleep moves forward by its duration (see the guide's section on time).
//! - A panic that escapes a spawned thread fails the execution (it is a bug the test found),
//!   so `join` never returns `Err`.
//! - Thread ids are small numbers in spawn order (0 is the test body), the same in every
//!   execution, so they are safe to print in assertions.
//! - A `JoinHandle` belongs to the execution that spawned its thread: joining it in a later
//!   one (a handle kept in a static) fails that execution with a message that says so, and a
//!   result that no handle took by the execution's end (its handle leaked) is leaked with it.

mod local;
mod scope;

pub use local::{AccessError, LocalKey};
pub use scope::{scope, Scope, ScopedJoinHandle};

pub use crate::runtime::ThreadId;
pub use std::thread::Result;

use std::collections::HashMap;
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use crate::runtime::{in_execution, with_current, EventKind};

/// A handle to a thread, as `std::thread::Thread`: a logical thread of the execution, or
/// (outside executions) an OS thread.
#[derive(Clone, Debug)]
pub struct Thread {
    id: ThreadId,
    name: Option<Arc<str>>,
    /// The OS thread, for threads outside executions.
    os: Option<std::thread::Thread>,
}

impl Thread {
    /// The thread's id.
    pub fn id(&self) -> ThreadId {
        self.id
    }

    /// The thread's name, if it was given one (the test body's thread is named `main`).
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Makes the thread's next `park` return at once (or wakes it if it is parked).
    #[track_caller]
    pub fn unpark(&self) {
        match &self.os {
            Some(t) => t.unpark(),
            None => crate::runtime::unpark(self.id, Location::caller()),
        }
    }

    fn of_os(thread: std::thread::Thread) -> Thread {
        Thread {
            id: os_thread_id(thread.id()),
            name: thread.name().map(Arc::from),
            os: Some(thread),
        }
    }
}

/// The id pctvb gives an OS thread (outside executions): from 2^31 up, in order of first use.
fn os_thread_id(id: std::thread::ThreadId) -> ThreadId {
    static IDS: StdMutex<Option<HashMap<std::thread::ThreadId, u32>>> = StdMutex::new(None);
    let mut ids = IDS.lock().unwrap_or_else(|e| e.into_inner());
    let ids = ids.get_or_insert_with(HashMap::new);
    let next = (1u32 << 31) + ids.len() as u32;
    ThreadId(*ids.entry(id).or_insert(next))
}

/// The calling thread.
pub fn current() -> Thread {
    if !in_execution() {
        return Thread::of_os(std::thread::current());
    }
    let (id, name) = crate::runtime::current_thread();
    Thread { id, name, os: None }
}

/// A scheduling point where the calling thread lets others run. Spin loops must call it (or
/// [`crate::hint::spin_loop`], or [`sleep`]): under every strategy the calling thread then
/// spins, that is, it is not enabled again until another thread makes progress (changes
/// shared state: writes an atomic or cell with a new value, locks, unlocks, sends, receives,
/// notifies, unparks, spawns or exits). If no other thread can run, the yield returns at once
/// and ends every other thread's spinning too. A run whose every runnable thread spins until
/// `max_steps` fails as a livelock.
#[track_caller]
pub fn yield_now() {
    let location = Location::caller();
    with_current(|ex| match ex {
        Some(ex) => ex.schedule(EventKind::Yield, None, location),
        None => std::thread::yield_now(),
    })
}

/// A scheduling point that waits for nothing: in an execution a sleep is no synchronization,
/// so the strategy may run the calling thread on at once or let others run first (a test that
/// sleeps to let another thread finish fails where that thread has not). A sleep with no
/// progress by another thread since the calling thread's previous sleep or yield polls for a
/// change that has not come (its own changes, such as a lock taken to read a flag, do not
/// count): it spins, as [`yield_now`] does, so a loop that sleeps until a flag is set never
/// livelocks.
/// When it returns, the execution's clock (what `std::time::Instant::now()` reads there, on
/// Linux with glibc) has moved forward by at least `duration`. Outside executions, std's
/// `sleep`.
#[track_caller]
pub fn sleep(duration: Duration) {
    if in_execution() {
        crate::runtime::sleep(duration, Location::caller())
    } else {
        std::thread::sleep(duration)
    }
}

/// std's deprecated `sleep_ms`: [`sleep`] for `ms` milliseconds.
#[deprecated(since = "1.6.0", note = "replaced by `pctvb::thread::sleep`")]
#[track_caller]
pub fn sleep_ms(ms: u32) {
    sleep(Duration::from_millis(u64::from(ms)))
}

/// Blocks until the thread's token is made available by [`Thread::unpark`], and consumes it.
/// In an execution it may also return spuriously, with no unpark, as std's may (at most once
/// per change another thread makes; the schedule shows `spurious-wakeup`): call it in a loop
/// that checks what it waits for.
#[track_caller]
pub fn park() {
    if in_execution() {
        crate::runtime::park(None, Location::caller());
    } else {
        std::thread::park();
    }
}

/// Like [`park`], but also returns when no thread can run any more (the timeout is the only way
/// time passes in an execution). Outside executions, std's `park_timeout`.
#[track_caller]
pub fn park_timeout(duration: Duration) {
    if in_execution() {
        crate::runtime::park(Some(duration), Location::caller());
    } else {
        std::thread::park_timeout(duration);
    }
}

/// std's deprecated `park_timeout_ms`: [`park_timeout`] for `ms` milliseconds.
#[deprecated(since = "1.6.0", note = "replaced by `pctvb::thread::park_timeout`")]
#[track_caller]
pub fn park_timeout_ms(ms: u32) {
    park_timeout(Duration::from_millis(u64::from(ms)))
}

/// The parallelism a body sees inside an execution: [`available_parallelism`]'s value there.
pub const EXECUTION_PARALLELISM: usize = 2;

/// As std's `available_parallelism`, but fixed inside an execution: there it returns
/// [`EXECUTION_PARALLELISM`] (2), on every machine. A body that sizes a pool by it then spawns
/// the same threads everywhere, so a replay token recorded on a 64-core machine replays on a
/// laptop or in CI, and the search is not spread over as many threads as the machine has
/// cores (two threads are enough to show most bugs; spawn more explicitly to test more).
/// Outside executions, std's value.
///
/// # Errors
///
/// Outside executions, std's error when the parallelism cannot be determined; never inside.
pub fn available_parallelism() -> std::io::Result<std::num::NonZeroUsize> {
    if in_execution() {
        Ok(std::num::NonZeroUsize::new(EXECUTION_PARALLELISM).expect("non-zero"))
    } else {
        std::thread::available_parallelism()
    }
}

/// Whether the calling thread is unwinding because of a panic.
pub fn panicking() -> bool {
    std::thread::panicking()
}

/// Owned permission to join a thread, as `std::thread::JoinHandle`.
#[derive(Debug)]
pub struct JoinHandle<T> {
    thread: Thread,
    inner: Joined<T>,
}

// Unwind-safe, as loom's handle (std's is not, through its OS thread's packet): a panic
// caught while a thread holds one leaves it whole (`join` takes the result in one engine
// operation), so a closure given to `catch_unwind` may own or borrow one, as code written for
// loom does.
impl<T> std::panic::UnwindSafe for JoinHandle<T> {}
impl<T> std::panic::RefUnwindSafe for JoinHandle<T> {}
// SAFETY: as std's `JoinHandle`, `Send` and `Sync` whatever `T`: the handle holds no `T`
// (a logical thread's result stays in its execution until `join` takes it, on the OS thread
// that runs the execution; an OS thread's handle is std's), and `spawn` and `scope` require
// `T: Send`; only `Builder::spawn_unchecked`, unsafe, can make one for another `T`.
unsafe impl<T> Send for JoinHandle<T> {}
// SAFETY: as above; `&JoinHandle` reaches only the thread and `is_finished`.
unsafe impl<T> Sync for JoinHandle<T> {}

#[derive(Debug)]
enum Joined<T> {
    /// A logical thread, whose result the execution keeps until `join` takes it.
    Logical(Logical<T>),
    /// An OS thread spawned outside executions.
    Os(std::thread::JoinHandle<T>),
}

/// A logical thread's handle: the thread, and the execution it belongs to.
struct Logical<T> {
    id: ThreadId,
    generation: u64,
    /// The handle is `Send` and `Sync` when `T` is `Send`, as it was when it held the result
    /// in a shared mutex (and as std's for a `Send` result).
    _result: PhantomData<StdMutex<T>>,
}

impl<T> std::fmt::Debug for Logical<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logical").field("id", &self.id).finish()
    }
}

impl<T> Drop for Logical<T> {
    /// Unjoined: the thread's result is dropped, now or when the thread returns it.
    fn drop(&mut self) {
        crate::runtime::detach(self.id, self.generation);
    }
}

impl<T> JoinHandle<T> {
    /// Waits for the thread to finish and returns its result.
    ///
    /// A panic that escapes a logical thread fails the whole execution before `join` can
    /// return, so the result is always `Ok` inside executions; the type matches std so code
    /// switches by import.
    #[track_caller]
    pub fn join(self) -> std::thread::Result<T> {
        self.join_at(Location::caller())
    }

    /// [`JoinHandle::join`], with the caller's location given (for `future::JoinHandle`).
    pub(crate) fn join_at(self, location: &'static Location<'static>) -> std::thread::Result<T> {
        match self.inner {
            Joined::Logical(logical) => {
                let logical = std::mem::ManuallyDrop::new(logical);
                // SAFETY: the thread's closure returns a `T` and gives it to `set_result`
                // (`spawn_named`, which made this handle).
                Ok(unsafe {
                    crate::runtime::take_result::<T>(logical.id, logical.generation, location)
                })
            }
            Joined::Os(handle) => handle.join(),
        }
    }

    /// The thread this handle joins.
    pub fn thread(&self) -> &Thread {
        &self.thread
    }

    /// A logical thread's id and its execution's generation (for `future::JoinHandle`, whose
    /// awaits acquire the task's completion); `None` for an OS thread.
    pub(crate) fn logical(&self) -> Option<(ThreadId, u64)> {
        match &self.inner {
            Joined::Logical(logical) => Some((logical.id, logical.generation)),
            Joined::Os(_) => None,
        }
    }

    /// Whether the thread has finished.
    pub fn is_finished(&self) -> bool {
        match &self.inner {
            Joined::Logical(logical) => crate::runtime::is_finished(logical.id, logical.generation),
            Joined::Os(handle) => handle.is_finished(),
        }
    }
}

/// Spawns a thread, as `std::thread::spawn`: a logical thread inside an execution, an OS
/// thread outside.
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    spawn_at(f, Location::caller())
}

/// [`spawn`], with the caller's location given (for `future::spawn`).
pub(crate) fn spawn_at<F, T>(f: F, location: &'static Location<'static>) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    if !in_execution() {
        let handle = std::thread::spawn(f);
        return JoinHandle {
            thread: Thread::of_os(handle.thread().clone()),
            inner: Joined::Os(handle),
        };
    }
    spawn_named(f, None, location)
}

/// Spawns a logical thread of the running execution.
pub(crate) fn spawn_named<F, T>(
    f: F,
    name: Option<String>,
    location: &'static Location<'static>,
) -> JoinHandle<T>
where
    F: FnOnce() -> T,
{
    let body = move || crate::runtime::set_result(f());
    let thread_name: Option<Arc<str>> = name.as_deref().map(Arc::from);
    // Another logical thread: from now on one can wait for another forever (the watchdog).
    crate::runtime::watchdog_before_spawn();
    let (id, generation) = crate::runtime::spawn(body, name, location);
    JoinHandle {
        thread: Thread { id, name: thread_name, os: None },
        inner: Joined::Logical(Logical { id, generation, _result: PhantomData }),
    }
}

/// Thread factory, as `std::thread::Builder`: sets a name shown in failure reports.
#[derive(Debug, Default)]
pub struct Builder {
    name: Option<String>,
    _stack_size: Option<usize>,
    _not_sync: PhantomData<()>,
}

impl Builder {
    /// A builder with no name.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Names the thread; the name appears in failure reports and `current().name()`.
    pub fn name(mut self, name: String) -> Builder {
        self.name = Some(name);
        self
    }

    /// Accepted for compatibility; every logical thread uses the run's stack size
    /// (`Config::stack_size`). Outside executions, the OS thread's stack size.
    pub fn stack_size(mut self, size: usize) -> Builder {
        self._stack_size = Some(size);
        self
    }

    /// Spawns the thread; never fails inside an execution (running out of threads fails the
    /// execution with a `max_threads` error instead). Outside executions, std's.
    #[track_caller]
    pub fn spawn<F, T>(self, f: F) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        if !in_execution() {
            let handle = self.os_builder().spawn(f)?;
            let thread = Thread::of_os(handle.thread().clone());
            return Ok(JoinHandle { thread, inner: Joined::Os(handle) });
        }
        Ok(spawn_named(f, self.name, Location::caller()))
    }

    /// Spawns a thread whose closure and result need not be `'static`, as std's
    /// `spawn_unchecked` (1.82): a logical thread inside an execution, std's outside.
    ///
    /// # Safety
    ///
    /// As std's: the caller makes sure the thread is joined before anything `f` or its
    /// result borrows ends ([`scope`] does this safely). A logical thread runs on after the
    /// body returns, as an OS thread would after its spawner's frame ends.
    ///
    /// # Errors
    ///
    /// Outside executions, std's error when the OS thread cannot be created; never inside.
    #[track_caller]
    pub unsafe fn spawn_unchecked<F, T>(self, f: F) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send,
        T: Send,
    {
        if !in_execution() {
            // SAFETY: the caller's promise, as for std's.
            let handle = unsafe { self.os_builder().spawn_unchecked(f)? };
            let thread = Thread::of_os(handle.thread().clone());
            return Ok(JoinHandle { thread, inner: Joined::Os(handle) });
        }
        Ok(spawn_named(f, self.name, Location::caller()))
    }

    /// The std builder with this builder's name and stack size (outside executions).
    fn os_builder(self) -> std::thread::Builder {
        let mut builder = std::thread::Builder::new();
        if let Some(name) = self.name {
            builder = builder.name(name);
        }
        if let Some(size) = self._stack_size {
            builder = builder.stack_size(size);
        }
        builder
    }

    /// Spawns a scoped thread with this builder's name (and, outside executions, its stack
    /// size).
    #[track_caller]
    pub fn spawn_scoped<'scope, 'env, F, T>(
        self,
        scope: &'scope Scope<'scope, 'env>,
        f: F,
    ) -> std::io::Result<ScopedJoinHandle<'scope, T>>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        Ok(scope.spawn_named(f, self.name, self._stack_size, Location::caller()))
    }
}
