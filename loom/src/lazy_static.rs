//! Support for [`lazy_static!`](crate::lazy_static!): a lazily initialized value whose
//! initialization is redone in every execution, as loom's.

use std::fmt;

pub use pctvb::thread::AccessError;
pub use pctvb::thread::{panicking, yield_now};

/// A value [`lazy_static!`](crate::lazy_static!) initializes on first access in each
/// execution (a [`pctvb::sync::LazyLock`]; outside executions, once).
pub struct Lazy<T: 'static> {
    cell: pctvb::sync::LazyLock<T, fn() -> T>,
}

impl<T: 'static> Lazy<T> {
    /// A lazy value computed by `init`.
    #[track_caller]
    pub const fn new(init: fn() -> T) -> Lazy<T> {
        Lazy { cell: pctvb::sync::LazyLock::new(init) }
    }

    /// The value of this execution, initializing it on first access.
    #[track_caller]
    pub fn get(&'static self) -> &'static T {
        pctvb::sync::LazyLock::force(&self.cell)
    }
}

impl<T: 'static> fmt::Debug for Lazy<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lazy").finish_non_exhaustive()
    }
}
