//! `std::sync`, as loom mocks it: pctvb's primitives (see [`pctvb::sync`]), loom's
//! [`Notify`], and atomics with loom's extra methods ([`atomic`]).
//!
//! [`Arc`] is std's (pctvb's): reference counting is not a scheduling point, and loom's
//! `Arc::from_std` does not exist (an `Arc` here already is std's).

pub mod atomic;
mod notify;

pub use notify::Notify;
pub use pctvb::sync::mpsc;
pub use pctvb::sync::{
    Arc, Barrier, BarrierWaitResult, Condvar, LockResult, Mutex, MutexGuard, PoisonError, RwLock,
    RwLockReadGuard, RwLockWriteGuard, TryLockError, TryLockResult, WaitTimeoutResult, Weak,
};
