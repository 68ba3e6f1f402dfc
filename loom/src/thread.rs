//! `std::thread`, as loom mocks it: pctvb's logical threads (see [`pctvb::thread`]).
//!
//! Thread-locals are declared with [`thread_local!`](crate::thread_local!) and give a
//! [`LocalKey`] with one value per logical thread.

pub use pctvb::thread::{
    current, panicking, park, spawn, yield_now, AccessError, Builder, JoinHandle, LocalKey, Thread,
    ThreadId,
};
