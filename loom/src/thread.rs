//! `std::thread`, as loom mocks it: pctvb's logical threads (see [`pctvb::thread`]).
//!
//! Thread-locals are declared with [`thread_local!`](crate::thread_local!) and give a
//! [`LocalKey`] with one value per logical thread.

pub use pctvb::thread::{
    current, panicking, park, yield_now, AccessError, Builder, JoinHandle, LocalKey, Thread,
    ThreadId,
};

/// Spawns a logical thread of the running execution, as loom's `spawn`: unlike
/// `std::thread::spawn`, neither `f` nor its result need be `Send` (every logical thread of
/// an execution runs on one OS thread). [`Builder::spawn`] keeps std's bounds, as loom's.
///
/// # Panics
/// Outside [`model`](crate::model()), as loom's.
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + 'static,
    T: 'static,
{
    pctvb::__internals::thread::spawn_unsent(f)
}
