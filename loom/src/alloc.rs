//! `std::alloc`, as loom mocks it: allocations made in an execution and objects wrapped in
//! [`Track`] must be freed by its end, or the execution fails with loom's report
//! (`leaked: Track<T> created at <location>`).
//!
//! The check runs when the execution ends: after the body given to
//! [`model`](crate::model()) returned and every thread it spawned finished (joined or not),
//! and their thread-locals were dropped, as loom checks at the end of an execution.

use std::panic::Location;

pub use std::alloc::Layout;

/// Allocates memory as `std::alloc::alloc`; it must be freed with [`dealloc`] before the
/// execution ends.
///
/// # Safety
/// As `std::alloc::alloc`.
#[track_caller]
pub unsafe fn alloc(layout: Layout) -> *mut u8 {
    // SAFETY: the caller's promise.
    let ptr = unsafe { std::alloc::alloc(layout) };
    track_allocation(ptr, layout);
    ptr
}

/// Allocates zeroed memory as `std::alloc::alloc_zeroed`; it must be freed with [`dealloc`]
/// before the execution ends.
///
/// # Safety
/// As `std::alloc::alloc_zeroed`.
#[track_caller]
pub unsafe fn alloc_zeroed(layout: Layout) -> *mut u8 {
    // SAFETY: the caller's promise.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    track_allocation(ptr, layout);
    ptr
}

/// Frees memory from [`alloc`] or [`alloc_zeroed`], as `std::alloc::dealloc`.
///
/// # Safety
/// As `std::alloc::dealloc`.
pub unsafe fn dealloc(ptr: *mut u8, layout: Layout) {
    crate::leaks::remove_at(ptr as usize as u64);
    // SAFETY: the caller's promise.
    unsafe { std::alloc::dealloc(ptr, layout) }
}

#[track_caller]
fn track_allocation(ptr: *mut u8, layout: Layout) {
    if !ptr.is_null() {
        let what = format!("allocation of {} bytes", layout.size());
        crate::leaks::add_at(ptr as usize as u64, what, Location::caller());
    }
}

/// A value whose drop is tracked: an execution that ends with a `Track` still alive fails with
/// `leaked: Track<T> created at <location>`, as loom's does. Wrap a value in it to check that a
/// data structure drops what it holds.
#[derive(Debug)]
pub struct Track<T> {
    value: T,
    key: u64,
}

impl<T> Track<T> {
    /// Tracks `value`.
    #[track_caller]
    pub fn new(value: T) -> Track<T> {
        let what = format!("Track<{}>", std::any::type_name::<T>());
        Track { value, key: crate::leaks::add(what, Location::caller()) }
    }

    /// The tracked value.
    pub fn get_ref(&self) -> &T {
        &self.value
    }

    /// The tracked value, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// Stops tracking and returns the value.
    pub fn into_inner(self) -> T {
        let this = std::mem::ManuallyDrop::new(self);
        crate::leaks::remove(this.key);
        // SAFETY: `this` is never used or dropped again, so the value is moved out once.
        unsafe { std::ptr::read(&this.value) }
    }
}

impl<T> Drop for Track<T> {
    fn drop(&mut self) {
        crate::leaks::remove(self.key);
    }
}
