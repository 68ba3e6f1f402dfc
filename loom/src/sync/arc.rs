//! loom's `Arc`: `std::sync::Arc` behind a newtype, so that it has loom's
//! [`Arc::from_std`] and loom's leak report (an `Arc` still owned when the execution ends is
//! reported as leaked, as loom does). Its methods are loom's, a subset of std's: there is no
//! `Weak`, and an `Arc<T>` does not coerce to `Arc<dyn Trait>` (build one with
//! [`Arc::from_std`], as with loom).
//!
//! As in loom, the reference count's operations are scheduling points: each clone, drop,
//! `get_mut`, `try_unwrap` and `strong_count` is one operation on a pctvb atomic that mirrors
//! the count (named by the `Arc`'s creation site), so a bug that depends on when a clone or
//! a drop happens relative to other threads is explored. Their orderings are std's, for the
//! race detector: a clone is Relaxed, a drop Release and the last drop also Acquire (what
//! other threads did before their drops happens before the value's drop), `get_mut` and a
//! successful `try_unwrap` Acquire; `strong_count` is SeqCst, as loom's. One scheduling point
//! each, but for a drop that another thread's drop made the last one while this one waited
//! at its point: its Acquire is then a fence of its own, as std's drop does it.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::mem::ManuallyDrop;
use std::panic::Location;
use std::pin::Pin;
use std::sync::Mutex;

use super::atomic::{fence, AtomicUsize, Ordering::*};

/// `std::sync::Arc`, as loom mocks it: counted through a pctvb atomic, and checked for leaks
/// in each execution.
pub struct Arc<T: ?Sized> {
    value: std::sync::Arc<T>,
    count: std::sync::Arc<Count>,
}

/// The shared count of one value's `Arc`s, as the scheduler and the race detector see it (the
/// value's own count is std's, which it mirrors).
struct Count {
    count: AtomicUsize,
    /// Whether [`RAW`] holds this count (an `Arc` of the value went through `into_raw` or
    /// `as_ptr`).
    raw: std::sync::atomic::AtomicBool,
}

/// The counts of values whose `Arc`s went through [`Arc::into_raw`] or [`Arc::as_ptr`], by the
/// value's address, for [`Arc::from_raw`] (a pointer alone carries no count). An entry goes
/// when the value is dropped. Only the first `into_raw`/`as_ptr` of a value, `from_raw` and
/// the last drop of such a value take the lock.
static RAW: Mutex<Option<HashMap<usize, std::sync::Arc<Count>>>> = Mutex::new(None);

fn raw_counts() -> std::sync::MutexGuard<'static, Option<HashMap<usize, std::sync::Arc<Count>>>> {
    RAW.lock().unwrap_or_else(|e| e.into_inner())
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

    /// The value, if this is its only `Arc`; else the `Arc` back. A scheduling point.
    #[track_caller]
    pub fn try_unwrap(this: Arc<T>) -> Result<T, Arc<T>> {
        if this.count.count.compare_exchange(1, 0, Acquire, Relaxed).is_err() {
            return Err(this);
        }
        crate::leaks::remove_at(key(&this.value));
        let this = ManuallyDrop::new(this);
        // SAFETY: `this` is never used or dropped again, so each field is moved out once.
        let (value, count) = unsafe { (std::ptr::read(&this.value), std::ptr::read(&this.count)) };
        forget_raw(&value, &count);
        match std::sync::Arc::try_unwrap(value) {
            Ok(v) => Ok(v),
            // Another OS thread cloned it meanwhile (outside an execution): not tracked.
            Err(value) => {
                count.count.store(1, Relaxed);
                Err(Arc { value, count })
            }
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
        let location = Location::caller();
        crate::leaks::add_at(key(&std), what, location);
        // Created here, so the count is named by the caller's site, as the `Arc` is.
        let count = Count { count: AtomicUsize::new(1), raw: Default::default() };
        Arc { value: std, count: std::sync::Arc::new(count) }
    }

    /// How many `Arc`s share the value (pointers from [`Arc::into_raw`] included). A
    /// scheduling point (a SeqCst load, as in loom).
    #[track_caller]
    pub fn strong_count(this: &Arc<T>) -> usize {
        this.count.count.load(SeqCst);
        std::sync::Arc::strong_count(&this.value)
    }

    /// Adds one to the count of the `Arc` that `ptr` came from: a clone of it.
    ///
    /// # Safety
    /// As `std::sync::Arc::increment_strong_count`: `ptr` came from [`Arc::into_raw`] and
    /// its `Arc` is still alive.
    #[track_caller]
    pub unsafe fn increment_strong_count(ptr: *const T) {
        // SAFETY: the caller's promise; the rebuilt `Arc` is not dropped, so the count it
        // stands for stays.
        let this = ManuallyDrop::new(unsafe { Arc::from_raw(ptr) });
        std::mem::forget(Arc::clone(&this));
    }

    /// Takes one from the count of the `Arc` that `ptr` came from, dropping the value at 0:
    /// a drop of it.
    ///
    /// # Safety
    /// As `std::sync::Arc::decrement_strong_count`.
    #[track_caller]
    pub unsafe fn decrement_strong_count(ptr: *const T) {
        // SAFETY: the caller's promise; dropping the rebuilt `Arc` keeps the leak registry
        // right when this was the last count.
        drop(unsafe { Arc::from_raw(ptr) })
    }

    /// The value, mutably, if no other `Arc` shares it. A scheduling point (an Acquire load
    /// of the count, as std's).
    #[track_caller]
    pub fn get_mut(this: &mut Arc<T>) -> Option<&mut T> {
        this.count.count.load(Acquire);
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
        // SAFETY: `this` is never used or dropped again, so each field is moved out once.
        let (value, count) = unsafe { (std::ptr::read(&this.value), std::ptr::read(&this.count)) };
        let ptr = std::sync::Arc::into_raw(value);
        register_raw(ptr, &count);
        ptr
    }

    /// A pointer to the value. Registered as `into_raw`'s are: std lets `from_raw`,
    /// `increment_strong_count` and `decrement_strong_count` take it while the `Arc` lives
    /// (tokio's wakers are built that way), and loom's knows every `Arc`.
    pub fn as_ptr(this: &Arc<T>) -> *const T {
        let ptr = std::sync::Arc::as_ptr(&this.value);
        register_raw(ptr, &this.count);
        ptr
    }

    /// Rebuilds an `Arc` from a pointer [`Arc::into_raw`] or [`Arc::as_ptr`] gave.
    ///
    /// # Safety
    /// As `std::sync::Arc::from_raw`.
    ///
    /// # Panics
    /// When no `Arc` gave `ptr` through [`Arc::into_raw`] or [`Arc::as_ptr`] (as loom's, which
    /// knows no other pointer either).
    pub unsafe fn from_raw(ptr: *const T) -> Arc<T> {
        let count = raw_counts()
            .as_ref()
            .and_then(|m| m.get(&(ptr.cast::<()>() as usize)).cloned())
            .expect(
                "loom::sync::Arc::from_raw: the pointer did not come from Arc::into_raw or \
                 Arc::as_ptr",
            );
        // SAFETY: the caller's promise.
        Arc { value: unsafe { std::sync::Arc::from_raw(ptr) }, count }
    }
}

/// Registers `ptr`'s count in [`RAW`] (once per value), so that [`Arc::from_raw`] can rebuild
/// an `Arc` from it.
fn register_raw<T: ?Sized>(ptr: *const T, count: &std::sync::Arc<Count>) {
    if !count.raw.swap(true, std::sync::atomic::Ordering::Relaxed) {
        raw_counts()
            .get_or_insert_with(HashMap::new)
            .insert(ptr.cast::<()>() as usize, count.clone());
    }
}

/// Removes the value's count from [`RAW`] if it is there (the value is being dropped, or
/// taken out by `try_unwrap`).
fn forget_raw<T: ?Sized>(value: &std::sync::Arc<T>, count: &Count) {
    if count.raw.load(std::sync::atomic::Ordering::Relaxed) {
        if let Some(m) = raw_counts().as_mut() {
            m.remove(&(std::sync::Arc::as_ptr(value).cast::<()>() as usize));
        }
    }
}

impl<T: ?Sized> Drop for Arc<T> {
    fn drop(&mut self) {
        // Known last before the scheduling point (no other `Arc` can appear meanwhile): the
        // Release and the Acquire in one operation. Else Release, and should another thread's
        // drop at that point have left this one the last, the Acquire as a fence, as std's.
        let last = std::sync::Arc::strong_count(&self.value) == 1;
        let before = self.count.count.fetch_sub(1, if last { AcqRel } else { Release });
        if before == 1 && !last {
            fence(Acquire);
        }
        // Every logical thread of an execution runs on one OS thread, so the count cannot
        // change between this check and the field's drop.
        if std::sync::Arc::strong_count(&self.value) == 1 {
            crate::leaks::remove_at(key(&self.value));
            forget_raw(&self.value, &self.count);
        }
    }
}

impl<T: ?Sized> Clone for Arc<T> {
    /// A new `Arc` of the value: a scheduling point (a Relaxed increment, as std's).
    #[track_caller]
    fn clone(&self) -> Arc<T> {
        self.count.count.fetch_add(1, Relaxed);
        Arc { value: std::sync::Arc::clone(&self.value), count: std::sync::Arc::clone(&self.count) }
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
