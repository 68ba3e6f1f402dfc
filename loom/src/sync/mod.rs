//! `std::sync`, as loom mocks it: pctvb's primitives (see [`pctvb::sync`]), loom's
//! [`Notify`] and [`Arc`] (with `from_std` and the leak report), and atomics with loom's
//! extra methods ([`atomic`]).

mod arc;
pub mod atomic;
mod notify;

pub use arc::Arc;
pub use notify::Notify;
pub use pctvb::sync::mpsc;
pub use pctvb::sync::{
    Barrier, BarrierWaitResult, Condvar, LockResult, Mutex, MutexGuard, PoisonError, RwLock,
    RwLockReadGuard, RwLockWriteGuard, TryLockError, TryLockResult, WaitTimeoutResult,
};
