//! `std::thread`, as loom mocks it: pctvb's logical threads (see [`pctvb::thread`]).
//!
//! Thread-locals are declared with [`thread_local!`](crate::thread_local!) and give a
//! [`LocalKey`] with one value per logical thread.

use std::any::Any;
use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;

pub use pctvb::thread::{
    current, panicking, park, yield_now, AccessError, JoinHandle, Thread, ThreadId,
};

/// Spawns a logical thread of the running execution, as loom's `spawn`: unlike
/// `std::thread::spawn`, neither `f` nor its result need be `Send` (every logical thread of
/// an execution runs on one OS thread). [`Builder::spawn`] keeps std's bounds, as loom's.
///
/// # Panics
/// Outside [`model`](crate::model()), as loom's.
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + 'static,
    T: 'static,
{
    pctvb::__internals::thread::spawn_unsent(tracked(f))
}

/// `f`, tracked until it returns or unwinds: a thread that never finishes fails the execution
/// at its end, as under loom (see `crate::leaks`). The caller's location names the thread.
#[track_caller]
fn tracked<F: FnOnce() -> T, T>(f: F) -> impl FnOnce() -> T {
    let key = crate::leaks::thread_started(std::panic::Location::caller());
    move || {
        let _finished = Finished(key);
        f()
    }
}

/// Thread factory, as loom's (and std's) `Builder`: a name shown in failure reports; the stack
/// size is accepted and ignored (every logical thread uses the run's, as under loom). Its
/// threads are tracked as [`spawn`]'s are: one that never finishes fails the execution.
#[derive(Debug, Default)]
pub struct Builder {
    inner: pctvb::thread::Builder,
}

impl Builder {
    /// A builder with no name.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Names the thread; the name appears in failure reports and `current().name()`.
    pub fn name(self, name: String) -> Builder {
        Builder { inner: self.inner.name(name) }
    }

    /// Accepted for compatibility, as loom's.
    pub fn stack_size(self, size: usize) -> Builder {
        Builder { inner: self.inner.stack_size(size) }
    }

    /// Spawns the thread, as [`spawn`] with std's bounds (as loom's); never fails inside an
    /// execution.
    ///
    /// # Errors
    /// Outside [`model`](crate::model()), std's error when the OS thread cannot be created.
    #[track_caller]
    pub fn spawn<F, T>(self, f: F) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.inner.spawn(tracked(f))
    }
}

/// Marks its thread finished when dropped (the closure returned or unwound).
struct Finished(u64);

impl Drop for Finished {
    fn drop(&mut self) {
        crate::leaks::thread_finished(self.0);
    }
}

/// loom's `LocalKey`: a key to a value per logical thread, created by `init` on the thread's
/// first access and dropped when the thread exits (while it can still use pctvb's
/// primitives), as [`pctvb::thread::LocalKey`]'s.
///
/// Its fields are loom's, public and hidden as there: [`thread_local!`](crate::thread_local!)
/// builds one with a struct literal, and so may code written for loom
/// (`LocalKey { init, _p: PhantomData }`).
///
/// The values of a thread's keys are held by one [`pctvb::thread_local!`] of this crate: a
/// destructor that uses another key of its thread while the thread exits gets a fresh value
/// of it, dropped in turn (loom's `with` panics there and `try_with` returns an
/// [`AccessError`]).
pub struct LocalKey<T> {
    /// Builds the calling thread's value on its first access.
    #[doc(hidden)]
    pub init: fn() -> T,
    #[doc(hidden)]
    pub _p: PhantomData<fn(T)>,
}

/// The values of one logical thread's [`LocalKey`]s, by the key's address, in the order they
/// were created.
#[derive(Default)]
struct Values(RefCell<Vec<(usize, Box<dyn Any>)>>);

impl Drop for Values {
    fn drop(&mut self) {
        // Last created, first dropped (as pctvb drops its own thread-locals), each outside
        // the borrow: a destructor may use another key.
        loop {
            // A statement of its own: the borrow ends before the value's destructor runs (in
            // a `while let` scrutinee it would last through the loop's body).
            let last = self.0.borrow_mut().pop();
            match last {
                Some(value) => drop(value),
                None => break,
            }
        }
    }
}

pctvb::thread_local! {
    static VALUES: Values = Values::default();
}

impl<T: 'static> LocalKey<T> {
    /// Runs `f` with a reference to the calling thread's value, creating it on first use.
    pub fn with<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        let key = self as *const LocalKey<T> as usize;
        let found = VALUES.with(|v| {
            let values = v.0.borrow();
            values.iter().find(|(k, _)| *k == key).map(|(_, value)| {
                let value: &T = value.downcast_ref().expect("one type per LocalKey");
                value as *const T
            })
        });
        let value = match found {
            Some(value) => value,
            None => {
                // Built outside the borrow: `init` may use other keys.
                let boxed: Box<T> = Box::new((self.init)());
                let value = &*boxed as *const T;
                VALUES.with(|v| v.0.borrow_mut().push((key, boxed)));
                value
            }
        };
        // SAFETY: the value is boxed and stays in the thread's `Values` until the thread
        // exits, which cannot happen while `f` runs on it.
        f(unsafe { &*value })
    }

    /// As [`LocalKey::with`]: under pctvb the value is always there (see the type's docs for
    /// a destructor's access).
    pub fn try_with<F, R>(&'static self, f: F) -> Result<R, AccessError>
    where
        F: FnOnce(&T) -> R,
    {
        Ok(self.with(f))
    }
}

impl<T: 'static> fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("LocalKey { .. }")
    }
}
