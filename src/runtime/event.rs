//! What happens at a scheduling point: the event a thread is about to perform, and what a
//! blocked thread waits for.

use std::fmt;
use std::panic::Location;

use super::ThreadId;
use crate::vars::VarId;

/// Per-execution id of a synchronization object or shared cell (dense, in creation order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId(pub(crate) u32);

impl ObjectId {
    /// The dense index of this object within its execution.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The kind of operation a thread performs at a scheduling point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventKind {
    /// A thread finished; the scheduler must pick another.
    ThreadExit,
    /// `thread::spawn` created a new thread.
    Spawn,
    /// `JoinHandle::join`.
    Join,
    /// `Mutex::lock` or `Mutex::try_lock`.
    Lock,
    /// A `MutexGuard` was dropped.
    Unlock,
    /// `RwLock::read`.
    ReadLock,
    /// `RwLock::write`.
    WriteLock,
    /// A read or write guard of an `RwLock` was dropped.
    RwUnlock,
    /// `Condvar::wait` and its variants.
    CondvarWait,
    /// `Condvar::notify_one` / `notify_all`.
    CondvarNotify,
    /// `Barrier::wait`.
    BarrierWait,
    /// A channel send.
    Send,
    /// A channel receive.
    Recv,
    /// `Once::call_once`, `OnceLock` and `LazyLock` initialization or read.
    Once,
    /// `thread::park`.
    Park,
    /// `Thread::unpark`.
    Unpark,
    /// `thread::yield_now` or `hint::spin_loop`.
    Yield,
    /// An atomic load.
    AtomicLoad,
    /// An atomic store.
    AtomicStore,
    /// An atomic read-modify-write (swap, compare-exchange, fetch-op).
    AtomicRmw,
    /// `atomic::fence`.
    Fence,
    /// A read through `cell::UnsafeCell::with`.
    CellRead,
    /// A write through `cell::UnsafeCell::with_mut`.
    CellWrite,
    /// The thread blocked and gave up the processor.
    Block,
    /// `future::block_on` is about to poll its future (every poll is a scheduling point).
    Poll,
    /// `thread::sleep`.
    Sleep,
    /// `RwLockWriteGuard::downgrade` turned a write lock into a read lock.
    Downgrade,
    /// A `Condvar::wait` or `thread::park` returned with no notification or unpark: a
    /// spurious wake-up, which std allows (see `Execution::block_or_wake_spuriously`).
    SpuriousWakeup,
    /// The store of a `compare_exchange_weak` that found the value it expected, with
    /// `Config::weak_cas_failures` on: if another thread runs here first, the
    /// compare-exchange fails spuriously.
    StoreConditional,
}

impl EventKind {
    /// A short lower-case name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::ThreadExit => "exit",
            EventKind::Spawn => "spawn",
            EventKind::Join => "join",
            EventKind::Lock => "lock",
            EventKind::Unlock => "unlock",
            EventKind::ReadLock => "read-lock",
            EventKind::WriteLock => "write-lock",
            EventKind::RwUnlock => "rw-unlock",
            EventKind::CondvarWait => "wait",
            EventKind::CondvarNotify => "notify",
            EventKind::BarrierWait => "barrier",
            EventKind::Send => "send",
            EventKind::Recv => "recv",
            EventKind::Once => "once",
            EventKind::Park => "park",
            EventKind::Unpark => "unpark",
            EventKind::Yield => "yield",
            EventKind::AtomicLoad => "load",
            EventKind::AtomicStore => "store",
            EventKind::AtomicRmw => "rmw",
            EventKind::Fence => "fence",
            EventKind::CellRead => "read",
            EventKind::CellWrite => "write",
            EventKind::Block => "blocked",
            EventKind::Poll => "poll",
            EventKind::Sleep => "sleep",
            EventKind::Downgrade => "downgrade",
            EventKind::SpuriousWakeup => "spurious-wakeup",
            EventKind::StoreConditional => "store-conditional",
        }
    }

    /// Whether the operation reads or writes a shared variable's value: an atomic or a checked
    /// cell (the accesses variable bounding gates and a schedule keeps when it folds).
    pub(crate) fn is_value_access(self) -> bool {
        matches!(
            self,
            EventKind::AtomicLoad
                | EventKind::AtomicStore
                | EventKind::AtomicRmw
                | EventKind::StoreConditional
                | EventKind::CellRead
                | EventKind::CellWrite
        )
    }

    /// Whether the operation has taken effect when its scheduling point is reached: a spawn
    /// (the new thread exists, so the strategy may run it), an unlock (the lock is free, so a
    /// waiter may take it) and a downgrade (the lock is read-locked, so a reader may join).
    /// Every other operation's point comes before it, and a thread preempted there performs it
    /// when it runs again.
    pub(crate) fn point_follows_effect(self) -> bool {
        matches!(
            self,
            EventKind::Spawn | EventKind::Unlock | EventKind::RwUnlock | EventKind::Downgrade
        )
    }
}

/// The operation at one scheduling point, as strategies and reports see it.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    /// What the thread is about to do.
    pub kind: EventKind,
    /// The object it operates on, if any.
    pub object: Option<ObjectId>,
    /// The variable (allocation site) of that object, if any.
    pub var: Option<VarId>,
    /// Where in user code the operation was called.
    pub location: &'static Location<'static>,
}

/// What a blocked thread is waiting for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockedOn {
    /// Waiting to lock a mutex.
    Mutex(ObjectId),
    /// Waiting for read access to an `RwLock`.
    RwRead(ObjectId),
    /// Waiting for write access to an `RwLock`.
    RwWrite(ObjectId),
    /// Waiting on a condition variable to be notified.
    Condvar(ObjectId),
    /// Waiting at a barrier.
    Barrier(ObjectId),
    /// Waiting for a thread to finish.
    Join(ThreadId),
    /// Waiting for a message on a channel.
    Recv(ObjectId),
    /// Waiting for room in (or a receiver of) a bounded channel.
    Send(ObjectId),
    /// Waiting for another thread's `Once` initialization to finish, to claim the
    /// initialization if it did not complete (`call_once`, `get_or_init`).
    Once(ObjectId),
    /// Waiting for a `Once` or `OnceLock` to be initialized, by whichever thread
    /// (`Once::wait`, `OnceLock::wait`); `ends_on_poison`: also until it is poisoned with no
    /// initializer running (`Once::wait`, which then panics as std's).
    OnceWait { object: ObjectId, ends_on_poison: bool },
    /// Parked, waiting for `unpark`.
    Park,
    /// In `future::block_on`: its future returned `Pending`, waiting for its `Waker`.
    Waker,
}

impl BlockedOn {
    /// Whether a wait of this kind may end spuriously (a condition variable's wait, a park, a
    /// task's wait for a wake-up: `Execution::block_or_wake_spuriously`).
    pub(crate) fn wakes_spuriously(self) -> bool {
        matches!(self, BlockedOn::Condvar(_) | BlockedOn::Park | BlockedOn::Waker)
    }

    /// The object waited on, if it is an object.
    pub fn object(self) -> Option<ObjectId> {
        match self {
            BlockedOn::Mutex(o)
            | BlockedOn::RwRead(o)
            | BlockedOn::RwWrite(o)
            | BlockedOn::Condvar(o)
            | BlockedOn::Barrier(o)
            | BlockedOn::Recv(o)
            | BlockedOn::Send(o)
            | BlockedOn::Once(o)
            | BlockedOn::OnceWait { object: o, .. } => Some(o),
            BlockedOn::Join(_) | BlockedOn::Park | BlockedOn::Waker => None,
        }
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
