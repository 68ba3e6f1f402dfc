//! Support for [`lazy_static!`](crate::lazy_static!): a lazily initialized value whose
//! initialization is redone in every execution, as loom's.

use std::any::Any;
use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;

pub use pctvb::thread::AccessError;
pub use pctvb::thread::{panicking, yield_now};

/// A value [`lazy_static!`](crate::lazy_static!) initializes on first access in each
/// execution: its first `get` in an execution runs `init`, and that initialization happens
/// before every other thread's use of the value (a [`pctvb::sync::OnceLock`]'s, whose
/// `get_or_init` is a scheduling point), as loom's.
///
/// Its fields are loom's, public and hidden as there: [`lazy_static!`](crate::lazy_static!)
/// builds one with a struct literal, and so may code written for loom
/// (`Lazy { init, _p: PhantomData }`). The per-execution cell is this crate's, found by the
/// `Lazy`'s address. Outside executions (where loom's `get` panics) the value is initialized
/// once per OS thread.
pub struct Lazy<T> {
    /// Builds the value, once per execution.
    #[doc(hidden)]
    pub init: fn() -> T,
    #[doc(hidden)]
    pub _p: PhantomData<fn(T)>,
}

thread_local! {
    /// The cells of the `Lazy`s used on this OS thread, by the `Lazy`'s address: every
    /// logical thread of an execution runs on the OS thread that runs it, so its threads share
    /// one cell, which pctvb empties for each execution. One cell per `Lazy` per OS thread,
    /// kept for the process, as a static's.
    static CELLS: RefCell<Vec<(usize, &'static dyn Any)>> = const { RefCell::new(Vec::new()) };
}

impl<T: 'static> Lazy<T> {
    /// A lazy value computed by `init` (what the struct literal builds).
    pub const fn new(init: fn() -> T) -> Lazy<T> {
        Lazy { init, _p: PhantomData }
    }

    /// The value of this execution, initializing it on first access.
    #[track_caller]
    pub fn get(&'static self) -> &'static T {
        self.cell().get_or_init(self.init)
    }

    /// This `Lazy`'s cell on this OS thread, created (named by the caller's site) on first
    /// use.
    #[track_caller]
    fn cell(&'static self) -> &'static pctvb::sync::OnceLock<T> {
        let key = self as *const Lazy<T> as usize;
        let found =
            CELLS.with(|cells| cells.borrow().iter().find(|(k, _)| *k == key).map(|(_, c)| *c));
        if let Some(cell) = found {
            return cell.downcast_ref().expect("one type per Lazy");
        }
        // Here, not in a closure, so that the cell is named by the caller's site.
        let cell: &'static pctvb::sync::OnceLock<T> =
            Box::leak(Box::new(pctvb::sync::OnceLock::new()));
        CELLS.with(|cells| cells.borrow_mut().push((key, cell)));
        cell
    }
}

impl<T: 'static> fmt::Debug for Lazy<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Lazy { .. }")
    }
}
