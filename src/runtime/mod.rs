//! The execution engine: runs a test body as a sequence of controlled executions.
//!
//! Within one execution every logical thread is a stackful coroutine on the test's own OS
//! thread, so exactly one of them runs at a time, and the engine hands the processor to the
//! thread a strategy ([`crate::schedulers`]) picks at every scheduling point. This module owns
//! the thread table, the per-execution state of every synchronization object, blocking and
//! waking, deadlock and runaway detection, panic capture, and the schedule trace. It does not
//! decide who runs (that is the strategies') and does not implement the std-mirroring API
//! (that is `sync` and `thread`, which call into the execution through `with_execution`).
//!
//! Everything here is per run and per OS thread: two tests running at once never share state.

mod context;
mod coroutine;
mod event;
mod execution;
mod object;
mod state;

pub(crate) use context::{in_execution, with_execution};
pub(crate) use coroutine::StackPool;
pub use event::{BlockedOn, Event, EventKind, ObjectId};
pub(crate) use execution::{Captured, Execution, Limits};
pub(crate) use object::{ErasedValue, Handle, ObjectState};
pub(crate) use state::{describe_object, FailureCause, Status};
pub use state::{Step, ThreadInfo, Value};

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
