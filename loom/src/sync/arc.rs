//! loom's `Arc`: `std::sync::Arc` behind a newtype, so that it has loom's
//! [`Arc::from_std`] and loom's leak report (an `Arc` still owned when the execution ends is
//! reported as leaked, as loom does). Its methods are loom's, a subset of std's: there is no
//! `Weak`, and an `Arc<T>` does not coerce to `Arc<dyn Trait>` (build one with
//! [`Arc::from_std`], as with loom).
//!
//! Reference counting is not a scheduling point here (in loom each clone and drop is a
//! branch point): the count changes at the scheduling points around it.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::mem::ManuallyDrop;
use std::panic::Location;
use std::pin::Pin;

/// `std::sync::Arc`, as loom mocks it: counted and checked for leaks in each execution.
pub struct Arc<T: ?Sized> {
    value: std::sync::Arc<T>,
}

/// The leak registry's key of the value an `Arc` shares.
fn key<T: ?Sized>(value: &std::sync::Arc<T>) -> u64 {
    std::sync::Arc::as_ptr(value).cast::<()>() as usize as u64
}

impl<T> Arc<T> {
    /// A new `Arc`.
    #[track_caller]
    pub fn new(value: T) -> Arc<T> {
        Arc::from_std(std::sync::Arc::new(value))
    }

    /// A new pinned `Arc`.
    #[track_caller]
    pub fn pin(value: T) -> Pin<Arc<T>> {
        // SAFETY: the value lives in the `std::sync::Arc`'s allocation, which never moves
        // while an `Arc` to it exists, and a `Pin<Arc<T>>` gives no `&mut Arc<T>` to call
        // `get_mut` with.
        unsafe { Pin::new_unchecked(Arc::new(value)) }
    }

    /// The value, if this is its only `Arc`; else the `Arc` back.
    pub fn try_unwrap(this: Arc<T>) -> Result<T, Arc<T>> {
        if std::sync::Arc::strong_count(&this.value) != 1 {
            return Err(this);
        }
        crate::leaks::remove_at(key(&this.value));
        let this = ManuallyDrop::new(this);
        // SAFETY: `this` is never used or dropped again, so the field is moved out once.
        let value = unsafe { std::ptr::read(&this.value) };
        match std::sync::Arc::try_unwrap(value) {
            Ok(v) => Ok(v),
            // Another OS thread cloned it meanwhile (outside an execution): not tracked.
            Err(value) => Err(Arc { value }),
        }
    }
}

impl<T: ?Sized> Arc<T> {
    /// Takes over a `std::sync::Arc` with no other copy: the way to an `Arc<T>` of an unsized
    /// `T`, such as `Arc<[u8]>` or `Arc<dyn Trait>`, since this `Arc`, as loom's, does not
    /// coerce.
    ///
    /// ```
    /// # use pctvb_loom as loom;
    /// use loom::sync::Arc;
    /// loom::model(|| {
    ///     let f: std::sync::Arc<dyn Fn() -> u8 + Send + Sync> = std::sync::Arc::new(|| 7);
    ///     let f: Arc<dyn Fn() -> u8 + Send + Sync> = Arc::from_std(f);
    ///     assert_eq!(f(), 7);
    /// });
    /// ```
    ///
    /// # Panics
    /// As loom's, when `std` has other copies ("Arc provided to `from_std` is not unique").
    #[track_caller]
    pub fn from_std(mut std: std::sync::Arc<T>) -> Arc<T> {
        assert!(
            std::sync::Arc::get_mut(&mut std).is_some(),
            "Arc provided to `from_std` is not unique"
        );
        let what = format!("Arc<{}>", std::any::type_name::<T>());
        crate::leaks::add_at(key(&std), what, Location::caller());
        Arc { value: std }
    }

    /// How many `Arc`s share the value (pointers from [`Arc::into_raw`] included).
    pub fn strong_count(this: &Arc<T>) -> usize {
        std::sync::Arc::strong_count(&this.value)
    }

    /// Adds one to the count of the `Arc` that `ptr` came from.
    ///
    /// # Safety
    /// As `std::sync::Arc::increment_strong_count`: `ptr` came from [`Arc::into_raw`] and
    /// its `Arc` is still alive.
    pub unsafe fn increment_strong_count(ptr: *const T) {
        // SAFETY: the caller's promise.
        unsafe { std::sync::Arc::increment_strong_count(ptr) }
    }

    /// Takes one from the count of the `Arc` that `ptr` came from, dropping the value at 0.
    ///
    /// # Safety
    /// As `std::sync::Arc::decrement_strong_count`.
    pub unsafe fn decrement_strong_count(ptr: *const T) {
        // SAFETY: the caller's promise; dropping the rebuilt `Arc` keeps the leak registry
        // right when this was the last count.
        drop(unsafe { Arc::from_raw(ptr) })
    }

    /// The value, mutably, if no other `Arc` shares it.
    pub fn get_mut(this: &mut Arc<T>) -> Option<&mut T> {
        std::sync::Arc::get_mut(&mut this.value)
    }

    /// Whether two `Arc`s share one value.
    pub fn ptr_eq(this: &Arc<T>, other: &Arc<T>) -> bool {
        std::sync::Arc::ptr_eq(&this.value, &other.value)
    }

    /// Gives up the `Arc` for a pointer to its value (the count stays: rebuild it with
    /// [`Arc::from_raw`], or the value is reported as leaked when the execution ends).
    pub fn into_raw(this: Arc<T>) -> *const T {
        let this = ManuallyDrop::new(this);
        // SAFETY: `this` is never used or dropped again, so the field is moved out once.
        std::sync::Arc::into_raw(unsafe { std::ptr::read(&this.value) })
    }

    /// A pointer to the value.
    pub fn as_ptr(this: &Arc<T>) -> *const T {
        std::sync::Arc::as_ptr(&this.value)
    }

    /// Rebuilds an `Arc` from [`Arc::into_raw`]'s pointer.
    ///
    /// # Safety
    /// As `std::sync::Arc::from_raw`.
    pub unsafe fn from_raw(ptr: *const T) -> Arc<T> {
        // SAFETY: the caller's promise.
        Arc { value: unsafe { std::sync::Arc::from_raw(ptr) } }
    }
}

impl<T: ?Sized> Drop for Arc<T> {
    fn drop(&mut self) {
        // Every logical thread of an execution runs on one OS thread, so the count cannot
        // change between this check and the field's drop.
        if std::sync::Arc::strong_count(&self.value) == 1 {
            crate::leaks::remove_at(key(&self.value));
        }
    }
}

impl<T: ?Sized> Clone for Arc<T> {
    fn clone(&self) -> Arc<T> {
        Arc { value: std::sync::Arc::clone(&self.value) }
    }
}

impl<T: ?Sized> std::ops::Deref for Arc<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: Default> Default for Arc<T> {
    #[track_caller]
    fn default() -> Arc<T> {
        Arc::new(T::default())
    }
}

impl<T> From<T> for Arc<T> {
    #[track_caller]
    fn from(value: T) -> Arc<T> {
        Arc::new(value)
    }
}

impl<T: ?Sized> AsRef<T> for Arc<T> {
    fn as_ref(&self) -> &T {
        &self.value
    }
}

impl<T: ?Sized> Borrow<T> for Arc<T> {
    fn borrow(&self) -> &T {
        &self.value
    }
}

// std's comparisons and formatting, so code that used std's `Arc` here before keeps compiling.
impl<T: ?Sized + fmt::Debug> fmt::Debug for Arc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.value, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for Arc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.value, f)
    }
}

impl<T: ?Sized> fmt::Pointer for Arc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Pointer::fmt(&self.value, f)
    }
}

impl<T: ?Sized + PartialEq> PartialEq for Arc<T> {
    fn eq(&self, other: &Arc<T>) -> bool {
        *self.value == *other.value
    }
}

impl<T: ?Sized + Eq> Eq for Arc<T> {}

impl<T: ?Sized + PartialOrd> PartialOrd for Arc<T> {
    fn partial_cmp(&self, other: &Arc<T>) -> Option<std::cmp::Ordering> {
        (*self.value).partial_cmp(&*other.value)
    }
}

impl<T: ?Sized + Ord> Ord for Arc<T> {
    fn cmp(&self, other: &Arc<T>) -> std::cmp::Ordering {
        (*self.value).cmp(&*other.value)
    }
}

impl<T: ?Sized + Hash> Hash for Arc<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (*self.value).hash(state)
    }
}
