//! `std::sync`, mirrored: the synchronization primitives a test body shares between logical
//! threads, each operation a scheduling point of the running execution.
//!
//! This module owns the std-shaped types and what only they know (poisoning, guards, the data
//! of a `Mutex` or `RwLock`, the endpoints of a channel). The model of each object (who holds a
//! lock, who waits, what a channel holds) and every scheduling point are the runtime's: each
//! operation here is one call into the runtime's object (`RawMutex`, `RawRwLock`, `Channel`,
//! ...); this module never switches threads itself.
//!
//! Semantics to know:
//! - Atomics are sequentially consistent whatever `Ordering` is passed; weak-memory behaviours
//!   (store buffering, load buffering) are not explored.
//! - `Condvar` wakes waiters in the order they started waiting, and a wait may also end in a
//!   spurious wake-up, as std's may (at most once per change another thread makes), so a
//!   wait with `if` where a loop is needed fails; `wait_timeout` times out only when no
//!   thread can run.
//! - `OnceLock` and `LazyLock` values are per execution: a `static` of either is initialized
//!   afresh in every execution, so executions stay independent. Plain statics of other
//!   primitives keep their *data* across executions (their lock state is fresh): prefer
//!   `LazyLock` for statics.
//! - Executions that run at the same time on other OS threads (parallel workers of a run, two
//!   tests sharing a static) never reach one object's data together: the data of a `Mutex`,
//!   `RwLock` or channel is also under a real lock, taken after the model grants the lock. A
//!   wait for another execution only changes timing, never the schedule.
//! - `Arc` and `Weak` are std's: reference counting is not a scheduling point.
//!
//! Outside any execution (setup code, code shared with production, a plain `#[test]` built
//! with `--cfg pctvb`) every primitive behaves like std's: locks really lock (a recursive
//! `lock` panics instead of deadlocking), `Condvar` and channel waits really wait (timeouts
//! are real time), `Barrier`, `Once`, `OnceLock` and `LazyLock` are std's, and `thread`
//! functions start and park OS threads. An object used in both worlds shares its *data* and
//! its lock between them (an OS thread holding a `Mutex` makes an execution that locks it
//! wait), but not its one-time state: a `OnceLock` set outside is empty inside every
//! execution, and values set inside executions are never seen outside. Blocking does not
//! cross worlds either: an outside `notify` or `send` (or another execution's) does not wake
//! a logical thread blocked in an execution.

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
pub use once::{LazyLock, Once, OnceLock, OnceState};
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use std::sync::{Arc, LockResult, PoisonError, TryLockError, TryLockResult, Weak};
