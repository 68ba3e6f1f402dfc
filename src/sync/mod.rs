//! `std::sync`, mirrored: the synchronization primitives a test body shares between logical
//! threads, each operation a scheduling point of the running execution.
//!
//! This module owns the std-shaped types and their semantics (poisoning, channel disconnection,
//! barrier leaders, ...). Model state that must be fresh in every execution (who holds a lock,
//! who waits) lives in the runtime's per-execution object table, reached through each
//! primitive's handle; this module never switches threads itself.
//!
//! Semantics to know:
//! - Atomics are sequentially consistent whatever `Ordering` is passed; weak-memory behaviours
//!   (store buffering, load buffering) are not explored.
//! - `Condvar` has no spurious wakeups and wakes waiters in the order they started waiting;
//!   `wait_timeout` times out only when no thread can run.
//! - Every operation must run inside an execution; outside one it panics with a message that
//!   says how to fix it. Constructors (`const fn new`), `get_mut`, `into_inner` and `Drop` work
//!   anywhere, so primitives can be built in statics and setup code.
//! - `OnceLock` and `LazyLock` values are per execution: a `static` of either is initialized
//!   afresh in every execution, so executions stay independent. Plain statics of other
//!   primitives keep their *data* across executions (their lock state is fresh): prefer
//!   `LazyLock` for statics.
//! - `Arc` and `Weak` are std's: reference counting is not a scheduling point.

mod barrier;
mod condvar;
mod mutex;
mod once;
mod poison;
mod rwlock;

pub mod atomic;
pub mod mpsc;

pub use barrier::{Barrier, BarrierWaitResult};
pub use condvar::{Condvar, WaitTimeoutResult};
pub use mutex::{Mutex, MutexGuard};
pub use once::{LazyLock, Once, OnceLock};
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use std::sync::{Arc, LockResult, PoisonError, TryLockError, TryLockResult, Weak};
