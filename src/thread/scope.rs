//! Scoped threads, as `std::thread::scope`: threads that may borrow from the caller's stack
//! because the scope joins them all before it returns. Outside executions, std's scoped OS
//! threads.
//!
//! "All" is every thread spawned on the scope, by the scope's closure or by a scoped thread,
//! whenever: the scope's end joins until none is left unjoined, also when the closure panics
//! (the panic goes on once they are joined, as std's). A panic that escapes a scoped thread
//! fails the execution, as any thread's (see the module docs of `thread`).

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, Location};

use super::{in_execution, spawn_named, JoinHandle, Thread, ThreadId};

/// A scope to spawn scoped threads in; see [`scope`].
pub struct Scope<'scope, 'env: 'scope> {
    /// Inside executions: every thread spawned on the scope, in spawn order, by the scope's
    /// closure or by scoped threads (which may push while the scope's end joins).
    spawned: RefCell<Vec<ThreadId>>,
    /// Outside executions: the `std::thread::Scope<'_, 'env>` this scope spawns in (set while
    /// `std::thread::scope` runs, which is all the time user code can reach this scope).
    os: Cell<*const ()>,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

// SAFETY: inside an execution a scope is used only by the logical threads of that execution,
// which run one at a time on one OS thread, so `spawned` is never touched by two threads at
// once. Outside executions `spawned` is untouched and `os` is written once, before the scope
// is shared, then only read.
unsafe impl Sync for Scope<'_, '_> {}
// SAFETY: as std's `Scope`, which is `Send`; user code only ever holds a `&Scope` (`scope`
// lends it and keeps it), so no scope is moved to another thread.
unsafe impl Send for Scope<'_, '_> {}
// As std's: what the scope keeps (the ids it joins, the OS scope) stays valid across a panic
// caught while it is borrowed.
impl std::panic::RefUnwindSafe for Scope<'_, '_> {}

impl std::fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}

/// An owned permission to join a scoped thread.
#[derive(Debug)]
pub struct ScopedJoinHandle<'scope, T> {
    inner: ScopedInner<'scope, T>,
}

#[derive(Debug)]
enum ScopedInner<'scope, T> {
    Logical(JoinHandle<T>, PhantomData<&'scope ()>),
    Os(std::thread::ScopedJoinHandle<'scope, T>, Thread),
}

impl<T> ScopedJoinHandle<'_, T> {
    /// Waits for the thread to finish and returns its result (always `Ok` inside executions;
    /// see [`JoinHandle::join`]).
    #[track_caller]
    pub fn join(self) -> std::thread::Result<T> {
        match self.inner {
            ScopedInner::Logical(h, _) => h.join(),
            ScopedInner::Os(h, _) => h.join(),
        }
    }

    /// The thread this handle joins.
    pub fn thread(&self) -> &Thread {
        match &self.inner {
            ScopedInner::Logical(h, _) => h.thread(),
            ScopedInner::Os(_, t) => t,
        }
    }

    /// Whether the thread has finished.
    pub fn is_finished(&self) -> bool {
        match &self.inner {
            ScopedInner::Logical(h, _) => h.is_finished(),
            ScopedInner::Os(h, _) => h.is_finished(),
        }
    }
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Spawns a thread that may borrow anything that outlives the scope.
    #[track_caller]
    pub fn spawn<F, T>(&'scope self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        self.spawn_named(f, None, None, Location::caller())
    }

    /// Spawns a scoped thread named `name`; outside executions, on an OS thread of
    /// `stack_size` if given (logical threads use the run's stack size).
    pub(crate) fn spawn_named<F, T>(
        &'scope self,
        f: F,
        name: Option<String>,
        stack_size: Option<usize>,
        location: &'static Location<'static>,
    ) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        let os = self.os.get();
        if !os.is_null() {
            // SAFETY: `os` points to the `std::thread::Scope` of the `std::thread::scope` call
            // in `scope`, which runs until every thread spawned in it has finished and the
            // user's closure (the only code that can reach `self`) has returned. Giving it the
            // lifetime `'scope` of this scope's borrow is sound because every use (this spawn,
            // and the handles, which cannot escape the closure) happens within that call.
            let std_scope: &'scope std::thread::Scope<'scope, 'env> =
                unsafe { &*(os as *const std::thread::Scope<'scope, 'env>) };
            let mut builder = std::thread::Builder::new();
            if let Some(name) = name {
                builder = builder.name(name);
            }
            if let Some(size) = stack_size {
                builder = builder.stack_size(size);
            }
            let handle = builder.spawn_scoped(std_scope, f).expect("failed to spawn a thread");
            let thread = Thread::of_os(handle.thread().clone());
            return ScopedJoinHandle { inner: ScopedInner::Os(handle, thread) };
        }
        let inner = spawn_named(f, name, location);
        self.spawned.borrow_mut().push(inner.thread().id());
        ScopedJoinHandle { inner: ScopedInner::Logical(inner, PhantomData) }
    }
}

/// Runs `f` with a scope; every thread spawned in it, by `f` or by a scoped thread, is joined
/// before `scope` returns or, if `f` panics, before the panic leaves it.
#[track_caller]
pub fn scope<'env, F, T>(f: F) -> T
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
{
    let location = Location::caller();
    let scope = Scope {
        spawned: RefCell::new(Vec::new()),
        os: Cell::new(std::ptr::null()),
        _scope: PhantomData,
        _env: PhantomData,
    };
    if !in_execution() {
        return std::thread::scope(|s| {
            scope.os.set(s as *const std::thread::Scope<'_, 'env> as *const ());
            f(&scope)
        });
    }
    // As std's: a panic of `f` is caught, and resumed once the scope's threads are joined, so
    // that no scoped thread runs after its borrows end, even when the caller catches it.
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| f(&scope)));
    crate::runtime::join_all(&scope.spawned, location);
    result.unwrap_or_else(|payload| std::panic::resume_unwind(payload))
}
