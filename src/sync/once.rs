//! `Once`, `OnceLock` and `LazyLock`, with one-time state that is per execution: a static
//! `LazyLock` is initialized afresh in every execution, so no state leaks between executions.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::panic::Location;

use crate::runtime::{
    in_execution, with_execution, BlockedOn, ErasedValue, EventKind, Execution, Handle, ObjectId,
    ObjectState,
};
use crate::vars::VarKind;

/// Runs an initializer once per execution, as `std::sync::Once`.
pub struct Once {
    handle: Handle,
}

impl Once {
    /// A new `Once`.
    #[track_caller]
    pub const fn new() -> Once {
        Once { handle: Handle::new() }
    }

    /// Runs `f` if no thread has completed a `call_once` in this execution; other callers
    /// block until it finishes.
    #[track_caller]
    pub fn call_once<F: FnOnce()>(&self, f: F) {
        let location = Location::caller();
        with_execution("Once::call_once", |ex| {
            let object = ex.point(&self.handle, VarKind::Once, EventKind::Once, location);
            if claim(ex, object, location) {
                f();
                complete(ex, object, None);
            }
        })
    }

    /// Whether a `call_once` completed in this execution.
    #[track_caller]
    pub fn is_completed(&self) -> bool {
        let location = Location::caller();
        with_execution("Once::is_completed", |ex| {
            let object = ex.point(&self.handle, VarKind::Once, EventKind::Once, location);
            ex.with_state(|st| {
                matches!(st.objects[object.index()].state, ObjectState::Once { done: true, .. })
            })
        })
    }
}

impl Default for Once {
    #[track_caller]
    fn default() -> Once {
        Once::new()
    }
}

impl fmt::Debug for Once {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Once@{}", self.handle.site())
    }
}

/// Claims the initialization: true if the caller must run it, false if it is already done
/// (after waiting for a thread that is running it).
fn claim(ex: &Execution, object: ObjectId, location: &'static Location<'static>) -> bool {
    loop {
        let state = ex.with_state(|st| {
            let me = st.current;
            match &mut st.objects[object.index()].state {
                ObjectState::Once { done: true, .. } => Some(false),
                ObjectState::Once { running: running @ None, .. } => {
                    *running = Some(me);
                    Some(true)
                }
                _ => None,
            }
        });
        match state {
            Some(mine) => return mine,
            None => {
                ex.block(BlockedOn::Once(object), false, location);
            }
        }
    }
}

fn complete(ex: &Execution, object: ObjectId, value: Option<ErasedValue>) {
    ex.with_state(|st| {
        if let ObjectState::Once { running, done, value: slot } =
            &mut st.objects[object.index()].state
        {
            *running = None;
            *done = true;
            *slot = value;
        }
        st.wake_waiters(object);
    })
}

/// A cell written once per execution, as `std::sync::OnceLock`.
pub struct OnceLock<T> {
    handle: Handle,
    _value: PhantomData<T>,
}

// SAFETY: as std's OnceLock: values are shared (`Sync`) and may be dropped on another thread.
unsafe impl<T: Send + Sync> Sync for OnceLock<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for OnceLock<T> {}

impl<T> OnceLock<T> {
    /// An empty cell.
    #[track_caller]
    pub const fn new() -> OnceLock<T> {
        OnceLock { handle: Handle::new(), _value: PhantomData }
    }

    /// The value, if it was set in this execution.
    #[track_caller]
    pub fn get(&self) -> Option<&T> {
        let location = Location::caller();
        with_execution("OnceLock::get", |ex| {
            let object = ex.point(&self.handle, VarKind::Once, EventKind::Once, location);
            self.value(ex, object)
        })
    }

    /// Sets the value if it is unset; returns it back otherwise.
    #[track_caller]
    pub fn set(&self, value: T) -> Result<(), T> {
        let mut value = Some(value);
        self.get_or_init(|| value.take().expect("initializer runs once"));
        match value {
            None => Ok(()),
            Some(v) => Err(v),
        }
    }

    /// The value, initializing it with `f` if this execution has not yet.
    #[track_caller]
    pub fn get_or_init<F: FnOnce() -> T>(&self, f: F) -> &T {
        let location = Location::caller();
        with_execution("OnceLock::get_or_init", |ex| {
            let object = ex.point(&self.handle, VarKind::Once, EventKind::Once, location);
            if claim(ex, object, location) {
                let value = f();
                complete(ex, object, Some(ErasedValue::new(value)));
            }
            self.value(ex, object).expect("initialized above")
        })
    }

    fn value(&self, ex: &Execution, object: ObjectId) -> Option<&T> {
        ex.with_state(|st| match &st.objects[object.index()].state {
            // SAFETY: values of this object are always created as `T` (`get_or_init`), and live
            // until the execution ends or this cell is dropped, both after the borrow of `self`.
            ObjectState::Once { value: Some(v), .. } => {
                Some(unsafe { &*(v.get::<T>() as *const T) })
            }
            _ => None,
        })
    }

    /// Takes the value out of the cell, leaving it empty.
    pub fn take(&mut self) -> Option<T> {
        if !in_execution() {
            return None;
        }
        with_execution("OnceLock::take", |ex| {
            let gen = ex.with_state(|st| st.gen);
            let object = self.handle.cached(gen)?;
            let taken = ex.with_state(|st| match &mut st.objects[object.index()].state {
                ObjectState::Once { value, done, .. } => {
                    *done = false;
                    value.take()
                }
                _ => None,
            });
            // SAFETY: created as `T` in `get_or_init`.
            taken.map(|v| unsafe { v.into_inner::<T>() })
        })
    }

    /// Consumes the cell and returns its value.
    pub fn into_inner(mut self) -> Option<T> {
        self.take()
    }
}

impl<T> Drop for OnceLock<T> {
    fn drop(&mut self) {
        // A cell dropped during its execution drops its value now, as std's would.
        drop(self.take());
    }
}

impl<T> Default for OnceLock<T> {
    #[track_caller]
    fn default() -> OnceLock<T> {
        OnceLock::new()
    }
}

impl<T> fmt::Debug for OnceLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OnceLock@{}", self.handle.site())
    }
}

/// A value initialized on first access in each execution, as `std::sync::LazyLock`.
///
/// Unlike std's, the initializer must be `Fn`: it runs once per execution.
pub struct LazyLock<T, F = fn() -> T> {
    cell: OnceLock<T>,
    init: F,
}

impl<T, F: Fn() -> T> LazyLock<T, F> {
    /// A lazy value computed by `init`.
    #[track_caller]
    pub const fn new(init: F) -> LazyLock<T, F> {
        LazyLock { cell: OnceLock::new(), init }
    }

    /// Forces initialization and returns the value.
    #[track_caller]
    pub fn force(this: &LazyLock<T, F>) -> &T {
        this.cell.get_or_init(&this.init)
    }
}

impl<T, F: Fn() -> T> Deref for LazyLock<T, F> {
    type Target = T;

    #[track_caller]
    fn deref(&self) -> &T {
        LazyLock::force(self)
    }
}

impl<T, F> fmt::Debug for LazyLock<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LazyLock@{}", self.cell.handle.site())
    }
}
