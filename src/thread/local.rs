//! Thread-local storage for logical threads, as `std::thread::LocalKey` and `thread_local!`.
//!
//! Each logical thread of an execution gets its own value, created on first access and dropped
//! when that thread exits (while it can still use pctvb primitives). Outside executions each OS
//! thread has its own value, as with std's.

use std::cell::{Cell, RefCell};
use std::fmt;

/// A key to a per-logical-thread value; create one with [`crate::thread_local!`].
pub struct LocalKey<T: 'static> {
    init: fn() -> T,
}

/// The error `try_with` returns; under pctvb it is never produced (values of an exiting thread
/// are dropped after its last access), but the type matches std's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessError;

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("already destroyed")
    }
}

impl std::error::Error for AccessError {}

impl<T: 'static> LocalKey<T> {
    #[doc(hidden)]
    pub const fn new(init: fn() -> T) -> LocalKey<T> {
        LocalKey { init }
    }

    /// Runs `f` with a reference to the calling thread's value, creating it on first use.
    pub fn with<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        self.with_or_init(self.init, f)
    }

    /// Runs `f` with the calling thread's value; a thread without one gets `init()` (the
    /// declared initializer, or the value of a `set` before first use, as std does).
    fn with_or_init<F, R>(&'static self, init: impl FnOnce() -> T, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        let key = self as *const LocalKey<T> as usize;
        let value = crate::runtime::local_value(key, init);
        // SAFETY: the value is boxed and lives until the calling thread exits, which cannot
        // happen during `f`.
        f(unsafe { &*value })
    }

    /// Like [`LocalKey::with`]; never fails under pctvb.
    pub fn try_with<F, R>(&'static self, f: F) -> Result<R, AccessError>
    where
        F: FnOnce(&T) -> R,
    {
        Ok(self.with(f))
    }
}

/// std's shorthands for thread-locals holding a `Cell` (so code written against
/// `std::thread::LocalKey` compiles unchanged when `#[pctvb::instrument]` rewrites its
/// `thread_local!`).
impl<T: 'static> LocalKey<Cell<T>> {
    /// Sets the calling thread's value; a thread without one gets `value` without running the
    /// initializer.
    pub fn set(&'static self, value: T) {
        // Either the initializer takes the value (a thread without one) or `f` stores it.
        let value = Cell::new(Some(value));
        self.with_or_init(
            || Cell::new(value.take().expect("the value is used once")),
            |cell| {
                if let Some(value) = value.take() {
                    cell.set(value);
                }
            },
        )
    }

    /// A copy of the calling thread's value.
    pub fn get(&'static self) -> T
    where
        T: Copy,
    {
        self.with(Cell::get)
    }

    /// Takes the calling thread's value, leaving `T::default()`.
    pub fn take(&'static self) -> T
    where
        T: Default,
    {
        self.with(Cell::take)
    }

    /// Replaces the calling thread's value, returning the old one.
    pub fn replace(&'static self, value: T) -> T {
        self.with(|cell| cell.replace(value))
    }
}

/// std's shorthands for thread-locals holding a `RefCell`.
impl<T: 'static> LocalKey<RefCell<T>> {
    /// Runs `f` with a shared borrow of the calling thread's value.
    pub fn with_borrow<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        self.with(|cell| f(&cell.borrow()))
    }

    /// Runs `f` with a mutable borrow of the calling thread's value.
    pub fn with_borrow_mut<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&mut T) -> R,
    {
        self.with(|cell| f(&mut cell.borrow_mut()))
    }

    /// Sets the calling thread's value; a thread without one gets `value` without running the
    /// initializer.
    pub fn set(&'static self, value: T) {
        // Either the initializer takes the value (a thread without one) or `f` stores it.
        let value = Cell::new(Some(value));
        self.with_or_init(
            || RefCell::new(value.take().expect("the value is used once")),
            |cell| {
                if let Some(value) = value.take() {
                    *cell.borrow_mut() = value;
                }
            },
        )
    }

    /// Takes the calling thread's value, leaving `T::default()`.
    pub fn take(&'static self) -> T
    where
        T: Default,
    {
        self.with(RefCell::take)
    }

    /// Replaces the calling thread's value, returning the old one.
    pub fn replace(&'static self, value: T) -> T {
        self.with(|cell| cell.replace(value))
    }
}

impl<T: 'static> fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LocalKey { .. }")
    }
}

/// Declares per-logical-thread statics, as `std::thread_local!`.
///
/// ```
/// use std::cell::Cell;
/// pctvb::thread_local! {
///     static COUNT: Cell<u32> = Cell::new(0);
/// }
/// let report = pctvb::Config::new().iterations(10).seed(1).run(|| {
///     COUNT.with(|c| c.set(c.get() + 1));
///     let h = pctvb::thread::spawn(|| COUNT.with(|c| c.get()));
///     assert_eq!(h.join().unwrap(), 0); // the spawned thread has its own value
/// });
/// assert!(report.is_ok());
/// ```
#[macro_export]
macro_rules! thread_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const $init:block; $($rest:tt)*) => {
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init; $($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const $init:block) => {
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr; $($rest:tt)*) => {
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init);
        $crate::thread_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr) => {
        $(#[$attr])* $vis static $name: $crate::thread::LocalKey<$t> = {
            fn __pctvb_init() -> $t { $init }
            $crate::thread::LocalKey::new(__pctvb_init)
        };
    };
}
