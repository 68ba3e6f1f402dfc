//! Scoped threads, as `std::thread::scope`: threads that may borrow from the caller's stack
//! because the scope joins them all before it returns.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::panic::Location;

use super::{spawn_named, JoinHandle, Thread, ThreadId};
use crate::runtime::with_execution;

/// A scope to spawn scoped threads in; see [`scope`].
pub struct Scope<'scope, 'env: 'scope> {
    spawned: RefCell<Vec<ThreadId>>,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

// SAFETY: a scope is only ever used by the logical threads of one execution, which all run on
// one OS thread, one at a time.
unsafe impl Sync for Scope<'_, '_> {}

/// An owned permission to join a scoped thread.
#[derive(Debug)]
pub struct ScopedJoinHandle<'scope, T> {
    inner: JoinHandle<T>,
    _scope: PhantomData<&'scope ()>,
}

impl<T> ScopedJoinHandle<'_, T> {
    /// Waits for the thread to finish and returns its result (always `Ok`; see
    /// [`JoinHandle::join`]).
    #[track_caller]
    pub fn join(self) -> std::thread::Result<T> {
        self.inner.join()
    }

    /// The thread this handle joins.
    pub fn thread(&self) -> &Thread {
        self.inner.thread()
    }

    /// Whether the thread has finished.
    pub fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }
}

impl<'scope> Scope<'scope, '_> {
    /// Spawns a thread that may borrow anything that outlives the scope.
    #[track_caller]
    pub fn spawn<F, T>(&'scope self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        self.spawn_named(f, None, Location::caller())
    }

    pub(crate) fn spawn_named<F, T>(
        &'scope self,
        f: F,
        name: Option<String>,
        location: &'static Location<'static>,
    ) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        let inner = spawn_named(f, name, location);
        self.spawned.borrow_mut().push(inner.thread().id());
        ScopedJoinHandle { inner, _scope: PhantomData }
    }
}

/// Runs `f` with a scope; every thread spawned in it is joined before `scope` returns.
#[track_caller]
pub fn scope<'env, F, T>(f: F) -> T
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
{
    let location = Location::caller();
    let scope = Scope { spawned: RefCell::new(Vec::new()), _scope: PhantomData, _env: PhantomData };
    let result = f(&scope);
    let spawned = std::mem::take(&mut *scope.spawned.borrow_mut());
    with_execution("thread::scope", |ex| {
        for id in spawned {
            ex.join(id, location);
        }
    });
    result
}
