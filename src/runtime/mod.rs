//! The execution engine: runs a test body as a sequence of controlled executions, and owns the
//! model of every synchronization object.
//!
//! Within one execution every logical thread is a stackful coroutine on the test's own OS
//! thread, so exactly one of them runs at a time, and the engine hands the processor to the
//! thread a strategy ([`crate::schedulers`]) picks at every scheduling point (where the running
//! thread alone can run, a strategy may let the engine go on without asking it and read the
//! point from the trace later: `Strategy::skips_forced`). This module owns
//! the thread table, the per-execution state of every synchronization object, blocking and
//! waking, spinning (a thread that yields waits until another thread makes progress; see
//! `execution.rs`), deadlock, livelock and runaway detection, panic capture, and the schedule
//! trace. It does not
//! decide who runs (that is the strategies') and does not implement the std-shaped API (that
//! is `sync` and `thread`: each of their operations is one call into an object file here).
//!
//! Files:
//! - `execution.rs`: the host loop, the scheduling point, blocking, failing, registration of
//!   objects, and the named accessors the runner and `#[pctvb::instrument]` use;
//! - `state.rs`: the execution's state, private to this module;
//! - `enabled.rs`: the enabled threads (who can run at the next scheduling point), and the
//!   changes to them a strategy that keeps its own index of them is told;
//! - `object.rs`: a primitive's identity (`Handle`) and per-execution model state;
//! - one file per kind of object, each owning that kind's model: `mutex.rs`, `rwlock.rs`,
//!   `condvar.rs`, `barrier.rs`, `once.rs` (`Once`, `OnceLock`, `LazyLock`), `channel.rs`,
//!   `park.rs`, `join.rs` (spawn and join), `local.rs` (thread-locals), `task.rs` (async
//!   tasks: wake tokens, and what a task waiting for its waker is waiting for);
//! - `data_lock.rs`: the real lock over a primitive's data, which keeps executions running at
//!   the same time on other OS threads (and OS threads outside executions) out of it;
//! - `clock.rs` and `race.rs`: vector clocks, the happens-before edges every object file
//!   reports, and the data-race check of `pctvb::cell::UnsafeCell` accesses;
//! - `outside.rs`: where OS threads outside executions wait;
//! - `time.rs`: the virtual clock `Instant::now()` reads inside executions (on Linux with
//!   glibc, an interposed `clock_gettime`), and `real_now` for pctvb's own timing;
//! - `context.rs`: which execution runs on this OS thread, and the panic hook;
//! - `hooks.rs`: checks `#[pctvb::instrument]` installs into the scheduling point;
//! - `crash.rs`: what a crash of the process says (stack overflow, fatal signals) and what
//!   it reads, each execution's `Watch`; `watchdog.rs`: the thread that ends an
//!   execution stuck outside pctvb's control;
//! - `event.rs`: what strategies and reports see of a scheduling point.
//!
//! The functions `sync` and `thread` call from generic code (a `Mutex<T>`'s lock, a spawn of a
//! closure, an `AtomicPtr<T>`'s operation) are neither generic nor `#[inline]`: generic code is
//! compiled in the user's crate, at its optimization level (none under `cargo test`), with what
//! it inlines, and the engine must be compiled with pctvb so that raising pctvb's level speeds
//! it up (docs/RESULTS-debug-build.md; `scripts/debug-build-speed.sh` lists what a test crate
//! compiles). Inside the engine, inline freely.
//!
//! Per-execution state lives in the execution and is reached only from the OS thread that
//! runs it; data shared by executions (a static's or a captured object's data, a channel's
//! queue) is reached only under its data lock.

mod barrier;
mod channel;
mod clock;
mod condvar;
mod context;
mod coroutine;
mod crash;
mod data_lock;
mod enabled;
mod event;
mod execution;
pub(crate) mod hooks;
mod join;
mod local;
mod mutex;
mod object;
mod once;
mod outside;
mod park;
mod race;
mod rwlock;
mod state;
mod task;
mod time;
mod watchdog;

pub(crate) use barrier::RawBarrier;
pub(crate) use channel::{Channel, RecvWait};
pub(crate) use condvar::RawCondvar;
pub(crate) use context::{in_execution, with_current, with_execution};
pub(crate) use coroutine::StackPool;
pub(crate) use crash::{decimal, note_finished_run, ExecutionRecord, RunInfo};
pub(crate) use enabled::{Enabled, EnabledChange};
pub use event::{BlockedOn, Event, EventKind, ObjectId};
pub use execution::PROFILE_INDEX_BASE;
pub(crate) use execution::{Captured, Execution, Limits};
pub(crate) use join::{detach, is_finished, join_all, set_result, spawn, take_result};
pub(crate) use local::value as local_value;
pub(crate) use mutex::{MutexHold, RawMutex};
pub(crate) use object::Handle;
use object::ObjectState;
pub(crate) use once::{OnceCell, RawOnce};
pub(crate) use park::{current as current_thread, park, unpark};
pub(crate) use race::{frees, race_message, AtomicSync, LiveSpan};
pub(crate) use rwlock::{RawRwLock, RwHold};
#[cfg(test)]
pub(crate) use state::FakePending;
pub(crate) use state::{describe_object, FailureCause, Pending, WaitOn};
pub use state::{Step, ThreadInfo, Value};
pub(crate) use task::{
    complete as complete_task, enter_block_on, leave_block_on, mark_task,
    output_seen as task_output_seen, poll_point, wait_for_wake, wake as wake_task, BlockOn,
};
pub(crate) use time::{real_now, sleep, Base as ClockBase, UNCONTROLLED_TIME};
pub(crate) use watchdog::before_spawn as watchdog_before_spawn;

/// Id of a logical thread within one execution: 0 is the test body's thread, spawned threads
/// count up in spawn order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId(pub(crate) u32);

impl ThreadId {
    /// The thread of the test body.
    pub const MAIN: ThreadId = ThreadId(0);

    /// The dense index of this thread.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for ThreadId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}
