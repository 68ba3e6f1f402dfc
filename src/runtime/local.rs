//! Thread-local values of logical threads: each logical thread of an execution gets its own
//! value of a `LocalKey`, created on first access and dropped when that thread exits (by
//! `Execution::exit_current`, while the thread can still use primitives).
//!
//! Outside any execution a key has one value per OS thread, as std's, kept until that OS
//! thread exits. This file owns the threads' `locals` lists and the outside values.

use std::any::Any;
use std::cell::RefCell;

use super::context::with_current;
use super::object::ErasedValue;

thread_local! {
    /// Values of keys used outside executions on this OS thread, by key address.
    static OUTSIDE: RefCell<Vec<(usize, Box<dyn Any>)>> = const { RefCell::new(Vec::new()) };
}

/// The calling thread's value of the key at address `key`, created with `init` on first use.
/// The value lives until the calling thread (logical, or OS thread outside executions) exits.
pub(crate) fn value<T: 'static>(key: usize, init: impl FnOnce() -> T) -> *const T {
    with_current(|ex| {
        let Some(ex) = ex else { return outside_value(key, init) };
        let existing = ex.with_state(|st| {
            let cur = st.current.index();
            st.threads[cur]
                .locals
                .iter()
                .find(|(k, _)| *k == key)
                // SAFETY: values under this key are always created as `T` below.
                .map(|(_, v)| unsafe { v.get::<T>() } as *const T)
        });
        existing.unwrap_or_else(|| {
            // Initialize outside the state borrow: the initializer may use primitives.
            let erased = ErasedValue::new(init());
            // SAFETY: created as `T` just above.
            let ptr = unsafe { erased.get::<T>() } as *const T;
            ex.with_state(|st| {
                let cur = st.current.index();
                st.threads[cur].locals.push((key, erased));
            });
            ptr
        })
    })
}

fn outside_value<T: 'static>(key: usize, init: impl FnOnce() -> T) -> *const T {
    let existing = OUTSIDE.with(|values| {
        let values = values.borrow();
        values
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.downcast_ref::<T>().map(|v| v as *const T))
    });
    match existing {
        Some(Some(ptr)) => ptr,
        Some(None) => unreachable!("a thread-local key with values of two types"),
        None => {
            // Outside the borrow: the initializer may use other keys.
            let boxed: Box<T> = Box::new(init());
            let ptr: *const T = &*boxed;
            OUTSIDE.with(|values| values.borrow_mut().push((key, boxed)));
            ptr
        }
    }
}
