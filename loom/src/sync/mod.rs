//! `std::sync`, as loom mocks it: pctvb's primitives (see [`pctvb::sync`]; [`Mutex`],
//! [`RwLock`] and [`Condvar`] wrapped so that, as loom's, they are never poisoned), loom's
//! [`Notify`] and [`Arc`] (with `from_std` and the leak report), and atomics with loom's
//! extra methods ([`atomic`]).

mod arc;
pub mod atomic;
mod locks;
mod notify;

pub use arc::Arc;
pub use locks::{Condvar, Mutex, RwLock};
pub use notify::Notify;
pub use pctvb::sync::mpsc;
pub use pctvb::sync::{
    Barrier, BarrierWaitResult, LockResult, MutexGuard, PoisonError, RwLockReadGuard,
    RwLockWriteGuard, TryLockError, TryLockResult, WaitTimeoutResult,
};
