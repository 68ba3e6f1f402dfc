//! Thread-local storage for logical threads, as `std::thread::LocalKey` and `thread_local!`.
//!
//! Each logical thread of an execution gets its own value, created on first access and dropped
//! when that thread exits (while it can still use pctvb primitives). Outside executions each OS
//! thread has its own value, as with std's.

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
        let key = self as *const LocalKey<T> as usize;
        let value = crate::runtime::local_value(key, self.init);
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
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const { $init:expr }; $($rest:tt)*) => {
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init; $($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const { $init:expr }) => {
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
