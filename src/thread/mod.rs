//! `std::thread`, mirrored: spawn, join, scoped threads, names, yield, park, sleep and
//! thread-locals, all running as logical threads of the current pctvb execution.
//!
//! This module owns only the std-shaped facade; creating, blocking and switching threads is the
//! runtime's job. Every function here must be called inside an execution (a `#[pctvb::test]`
//! body or `Config::run`); outside one it panics with a message that says so.
//!
//! Differences from std, all deliberate:
//! - `sleep` and `park_timeout` do not wait for real time: time passes only when no thread can
//!   run, so a timeout fires exactly when nothing else could happen.
//! - A panic that escapes a spawned thread fails the execution (it is a bug the test found),
//!   so `join` never returns `Err`.
//! - Thread ids are small numbers in spawn order (0 is the test body), the same in every
//!   execution, so they are safe to print in assertions.

mod local;
mod scope;

pub use local::{AccessError, LocalKey};
pub use scope::{scope, Scope, ScopedJoinHandle};

pub use crate::runtime::ThreadId;

use std::marker::PhantomData;
use std::panic::Location;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use crate::runtime::{with_execution, BlockedOn, EventKind, Status};

/// A handle to a logical thread, as `std::thread::Thread`.
#[derive(Clone, Debug)]
pub struct Thread {
    id: ThreadId,
    name: Option<Arc<str>>,
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
        let location = Location::caller();
        let id = self.id;
        with_execution("Thread::unpark", |ex| {
            ex.schedule(EventKind::Unpark, None, location);
            ex.with_state(|st| {
                let t = &mut st.threads[id.index()];
                t.park_token = true;
                if t.status == Status::Blocked(BlockedOn::Park) {
                    st.wake(id);
                }
            });
        })
    }
}

/// The calling logical thread.
pub fn current() -> Thread {
    with_execution("thread::current", |ex| {
        ex.with_state(|st| {
            let id = st.current;
            let name = match (&st.threads[id.index()].name, id) {
                (Some(n), _) => Some(Arc::from(n.as_str())),
                (None, ThreadId::MAIN) => Some(Arc::from("main")),
                (None, _) => None,
            };
            Thread { id, name }
        })
    })
}

/// A scheduling point where the calling thread offers to let others run. Spin loops must call
/// it (or `std::hint::spin_loop` replaced by it): after 100 yields in a row without doing
/// anything but reads, priority strategies lower the thread's priority so the loop ends.
#[track_caller]
pub fn yield_now() {
    let location = Location::caller();
    with_execution("thread::yield_now", |ex| ex.schedule(EventKind::Yield, None, location))
}

/// Like [`yield_now`]: time does not pass in an execution, so sleeping only lets other threads
/// run.
#[track_caller]
pub fn sleep(_duration: Duration) {
    yield_now()
}

/// Blocks until the thread's token is made available by [`Thread::unpark`].
#[track_caller]
pub fn park() {
    park_inner(false, Location::caller());
}

/// Like [`park`], but also returns when no thread can run any more (the timeout is the only way
/// time passes in an execution).
#[track_caller]
pub fn park_timeout(_duration: Duration) {
    park_inner(true, Location::caller());
}

fn park_inner(timeout_able: bool, location: &'static Location<'static>) {
    with_execution("thread::park", |ex| {
        ex.schedule(EventKind::Park, None, location);
        let has_token = ex.with_state(|st| {
            let cur = st.current;
            std::mem::replace(&mut st.threads[cur.index()].park_token, false)
        });
        if !has_token {
            ex.block(BlockedOn::Park, timeout_able, location);
            ex.with_state(|st| {
                let cur = st.current;
                st.threads[cur.index()].park_token = false;
            });
        }
    })
}

/// Whether the calling thread is unwinding because of a panic.
pub fn panicking() -> bool {
    std::thread::panicking()
}

/// The result slot a thread's closure writes and `join` reads.
pub(crate) type Packet<T> = Arc<StdMutex<Option<T>>>;

/// Owned permission to join a thread, as `std::thread::JoinHandle`.
#[derive(Debug)]
pub struct JoinHandle<T> {
    thread: Thread,
    packet: Packet<T>,
}

impl<T> JoinHandle<T> {
    /// Waits for the thread to finish and returns its result.
    ///
    /// A panic that escapes the thread fails the whole execution before `join` can return, so
    /// the result is always `Ok`; the type matches std so code switches by import.
    #[track_caller]
    pub fn join(self) -> std::thread::Result<T> {
        let location = Location::caller();
        with_execution("JoinHandle::join", |ex| ex.join(self.thread.id, location));
        let value = self.packet.lock().unwrap_or_else(|e| e.into_inner()).take();
        Ok(value.expect("pctvb: a finished thread left no result"))
    }

    /// The thread this handle joins.
    pub fn thread(&self) -> &Thread {
        &self.thread
    }

    /// Whether the thread has finished.
    pub fn is_finished(&self) -> bool {
        self.packet.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }
}

/// Spawns a logical thread, as `std::thread::spawn`.
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    spawn_named(f, None, Location::caller())
}

pub(crate) fn spawn_named<F, T>(
    f: F,
    name: Option<String>,
    location: &'static Location<'static>,
) -> JoinHandle<T>
where
    F: FnOnce() -> T,
{
    let packet: Packet<T> = Arc::new(StdMutex::new(None));
    let slot = packet.clone();
    let body: Box<dyn FnOnce() + '_> = Box::new(move || {
        let value = f();
        *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(value);
    });
    // SAFETY: `spawn` requires 'static closures; `Scope::spawn` guarantees the scope outlives
    // the thread by joining it before the scope returns (and a failed execution never resumes
    // its threads).
    let body: Box<dyn FnOnce() + 'static> = unsafe { std::mem::transmute(body) };
    let thread_name: Option<Arc<str>> = name.as_deref().map(Arc::from);
    let id = with_execution("thread::spawn", |ex| ex.spawn(body, name, location));
    JoinHandle { thread: Thread { id, name: thread_name }, packet }
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
    /// (`Config::stack_size`).
    pub fn stack_size(mut self, size: usize) -> Builder {
        self._stack_size = Some(size);
        self
    }

    /// Spawns the thread; never fails under pctvb (running out of threads fails the execution
    /// with a `max_threads` error instead).
    #[track_caller]
    pub fn spawn<F, T>(self, f: F) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        Ok(spawn_named(f, self.name, Location::caller()))
    }

    /// Spawns a scoped thread with this builder's name.
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
        Ok(scope.spawn_named(f, self.name, Location::caller()))
    }
}
