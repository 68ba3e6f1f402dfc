//! `Once`, `OnceLock` and `LazyLock`, with one-time state that is per execution: a static
//! `LazyLock` is initialized afresh in every execution, so no state leaks between executions.
//! The model is the engine's (`RawOnce`, `OnceCell`).
//!
//! Outside any execution these are std's, with their own state: a value set outside (in setup
//! code, or a plain `#[test]`) is not seen inside executions, and values set inside executions
//! are never seen outside.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::panic::Location;

use crate::runtime::{OnceCell, RawOnce};
use crate::vars::VarKind;

/// Runs an initializer once per execution, as `std::sync::Once` (and once, outside
/// executions).
pub struct Once {
    raw: RawOnce,
}

impl Once {
    /// A new `Once`.
    #[track_caller]
    pub const fn new() -> Once {
        Once { raw: RawOnce::new() }
    }

    /// Runs `f` if no thread has completed a `call_once` in this execution; other callers
    /// block until it finishes.
    ///
    /// # Panics
    ///
    /// As std's: if an earlier initializer panicked (the `Once` is poisoned), with "Once
    /// instance has previously been poisoned"; waiters blocked on that initializer panic too.
    /// [`call_once_force`](Once::call_once_force) runs the initializer again instead.
    #[track_caller]
    pub fn call_once<F: FnOnce()>(&self, f: F) {
        self.raw.call_once(false, |_| f(), Location::caller())
    }

    /// As [`call_once`](Once::call_once), but runs `f` also when the `Once` is poisoned (an
    /// earlier initializer panicked), telling it so through [`OnceState::is_poisoned`], as
    /// std's `call_once_force`. If `f` returns, the `Once` is complete and no longer
    /// poisoned.
    #[track_caller]
    pub fn call_once_force<F: FnOnce(&OnceState)>(&self, f: F) {
        self.raw.call_once(true, |poisoned| f(&OnceState { poisoned }), Location::caller())
    }

    /// Blocks until a `call_once` completed in this execution, as std's `Once::wait`. A wait
    /// that no thread will end (no thread completes the `Once`) is reported as a deadlock
    /// naming it, once no thread can run.
    ///
    /// # Panics
    ///
    /// As std's: if the `Once` is poisoned (an initializer panicked, and none runs now), with
    /// "Once instance has previously been poisoned", also when that happens while the call
    /// waits. [`wait_force`](Once::wait_force) waits on instead.
    #[track_caller]
    pub fn wait(&self) {
        self.raw.wait(false, Location::caller())
    }

    /// As [`wait`](Once::wait), but ignores poisoning: blocks until some thread completes the
    /// `Once` (with [`call_once_force`](Once::call_once_force)), as std's `wait_force`.
    #[track_caller]
    pub fn wait_force(&self) {
        self.raw.wait(true, Location::caller())
    }

    /// Whether a `call_once` completed in this execution (false while poisoned, as std's).
    #[track_caller]
    pub fn is_completed(&self) -> bool {
        self.raw.is_completed(Location::caller())
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
        write!(f, "Once@{}", self.raw.site())
    }
}

/// What [`Once::call_once_force`] tells its initializer, as `std::sync::OnceState`.
#[derive(Debug)]
pub struct OnceState {
    poisoned: bool,
}

impl OnceState {
    /// Whether an earlier initializer of this `Once` panicked (poisoning it).
    pub fn is_poisoned(&self) -> bool {
        self.poisoned
    }
}

/// A cell written once per execution, as `std::sync::OnceLock` (and once, outside
/// executions).
///
/// `Send` and `Sync` as std's (derived from the embedded `std::sync::OnceLock<T>` that holds
/// the outside value): per-execution values stay in their execution, which one OS thread runs.
pub struct OnceLock<T> {
    cell: OnceCell<T>,
}

impl<T> OnceLock<T> {
    /// An empty cell.
    #[track_caller]
    pub const fn new() -> OnceLock<T> {
        OnceLock::of_kind(VarKind::OnceLock)
    }

    /// An empty cell that schedules and reports name as a `kind` (a `LazyLock`'s is one).
    #[track_caller]
    const fn of_kind(kind: VarKind) -> OnceLock<T> {
        OnceLock { cell: OnceCell::new(kind) }
    }

    /// The value, if it was set in this execution.
    #[track_caller]
    pub fn get(&self) -> Option<&T> {
        self.cell.get(Location::caller())
    }

    /// Blocks until the cell is set in this execution, and returns the value, as std's
    /// `OnceLock::wait`. A wait that no thread will end (no thread sets the cell) is reported
    /// as a deadlock naming the cell, once no thread can run. A panicking initializer does not
    /// end it: the cell stays empty, as std's.
    #[track_caller]
    pub fn wait(&self) -> &T {
        self.cell.wait(Location::caller())
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
        self.cell.get_or_init(f, Location::caller())
    }

    /// The value, mutably, if it was set (this execution's value; outside executions, the
    /// outside value). Not a scheduling point: `&mut self` means no other thread can use the
    /// cell.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        self.cell.get_mut()
    }

    /// Takes the value out of the cell, leaving it empty (this execution's value; outside
    /// executions, the outside value).
    pub fn take(&mut self) -> Option<T> {
        self.cell.take()
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

impl<T> From<T> for OnceLock<T> {
    /// A cell set to `value` (in the execution that makes it, or outside executions), as
    /// std's; setting it is the cell's first operation, a scheduling point inside an
    /// execution.
    #[track_caller]
    fn from(value: T) -> OnceLock<T> {
        let cell = OnceLock::new();
        let _ = cell.set(value);
        cell
    }
}

impl<T> Default for OnceLock<T> {
    #[track_caller]
    fn default() -> OnceLock<T> {
        OnceLock::new()
    }
}

impl<T: Clone> Clone for OnceLock<T> {
    /// A cell holding a clone of this one's value, if it has one, as std's: reading this cell
    /// is a scheduling point (as [`OnceLock::get`]), and so is setting the new one (as
    /// [`OnceLock::from`]).
    #[track_caller]
    fn clone(&self) -> OnceLock<T> {
        match self.get() {
            Some(value) => OnceLock::from(value.clone()),
            None => OnceLock::new(),
        }
    }
}

impl<T: PartialEq> PartialEq for OnceLock<T> {
    /// Whether both cells are empty, or both hold equal values, as std's: a read of each (a
    /// scheduling point each, as [`OnceLock::get`]).
    #[track_caller]
    fn eq(&self, other: &OnceLock<T>) -> bool {
        self.get() == other.get()
    }
}

impl<T: Eq> Eq for OnceLock<T> {}

impl<T> fmt::Debug for OnceLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OnceLock@{}", self.cell.site())
    }
}

/// A value initialized on first access in each execution, as `std::sync::LazyLock` (and once,
/// outside executions).
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
        LazyLock { cell: OnceLock::of_kind(VarKind::LazyLock), init }
    }

    /// Forces initialization and returns the value.
    #[track_caller]
    pub fn force(this: &LazyLock<T, F>) -> &T {
        this.cell.get_or_init(&this.init)
    }

    /// Forces initialization and returns the value mutably, as std's `force_mut` (1.94). Not a
    /// scheduling point: `&mut` means no other thread can reach the value, so the initializer
    /// (if this execution has not run it yet) runs at once.
    pub fn force_mut(this: &mut LazyLock<T, F>) -> &mut T {
        let LazyLock { cell, init } = this;
        cell.cell.get_mut_or_init(&*init)
    }
}

impl<T, F> LazyLock<T, F> {
    /// The value, if it was initialized in this execution (or, outside executions, outside),
    /// without initializing it, as std's `LazyLock::get` (1.94). A read of the cell: a
    /// scheduling point inside an execution, as [`OnceLock::get`].
    #[track_caller]
    pub fn get(this: &LazyLock<T, F>) -> Option<&T> {
        this.cell.get()
    }

    /// The value, mutably, if it was initialized, as std's `LazyLock::get_mut` (1.94). Not a
    /// scheduling point, as [`OnceLock::get_mut`].
    pub fn get_mut(this: &mut LazyLock<T, F>) -> Option<&mut T> {
        this.cell.get_mut()
    }
}

impl<T, F: Fn() -> T> Deref for LazyLock<T, F> {
    type Target = T;

    #[track_caller]
    fn deref(&self) -> &T {
        LazyLock::force(self)
    }
}

impl<T, F: Fn() -> T> DerefMut for LazyLock<T, F> {
    /// [`LazyLock::force_mut`], as std's (1.89).
    fn deref_mut(&mut self) -> &mut T {
        LazyLock::force_mut(self)
    }
}

impl<T: Default> Default for LazyLock<T> {
    /// A lazy value computed by `T::default`, as std's.
    #[track_caller]
    fn default() -> LazyLock<T> {
        LazyLock::new(T::default)
    }
}

impl<T, F> fmt::Debug for LazyLock<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LazyLock@{}", self.cell.cell.site())
    }
}
