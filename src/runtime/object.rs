//! Per-execution identity and state of synchronization objects.
//!
//! A primitive embeds a [`Handle`]: its creation site plus a cached key `(execution generation,
//! object id)`. The first use in an execution registers the object in that execution's table,
//! so every execution starts from fresh model state even for statics, and two tests running on
//! different OS threads never see each other's state (the table lives in the execution, the
//! handle only caches where to find it).

use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};

use std::collections::HashMap;

use super::{ObjectId, ThreadId};
use crate::vars::{BuildAddressHasher, VarId, VarKind};

const ID_BITS: u32 = 24;
const ID_MASK: u64 = (1 << ID_BITS) - 1;
/// Most objects one execution may create (the id field of the packed key).
pub(super) const MAX_OBJECTS: usize = ID_MASK as usize;

/// The identity a primitive carries: where it was created, and a cache of its id in the
/// current execution.
#[derive(Debug)]
pub(crate) struct Handle {
    key: AtomicU64,
    site: &'static Location<'static>,
}

impl Handle {
    /// A handle for a primitive created at the caller's location.
    #[track_caller]
    pub(crate) const fn new() -> Handle {
        Handle { key: AtomicU64::new(0), site: Location::caller() }
    }

    /// A handle naming an object created at `site` (for variables whose creation site is known
    /// from elsewhere: statics found by `#[pctvb::instrument]`).
    pub(crate) const fn at(site: &'static Location<'static>) -> Handle {
        Handle { key: AtomicU64::new(0), site }
    }

    pub(crate) fn site(&self) -> &'static Location<'static> {
        self.site
    }

    /// The object id cached for execution generation `gen`, if any.
    #[inline]
    pub(crate) fn cached(&self, gen: u64) -> Option<ObjectId> {
        let key = self.key.load(Ordering::Relaxed);
        (key >> ID_BITS == gen).then_some(ObjectId((key & ID_MASK) as u32))
    }

    /// Whether the handle was ever registered (by any execution).
    pub(crate) fn ever_registered(&self) -> bool {
        self.key.load(Ordering::Relaxed) != 0
    }

    pub(crate) fn remember(&self, gen: u64, id: ObjectId) {
        self.key.store((gen << ID_BITS) | id.0 as u64, Ordering::Relaxed);
    }

    /// The address that identifies a long-lived object (a static) across executions.
    pub(crate) fn address(&self) -> usize {
        self as *const Handle as usize
    }
}

/// One execution's objects by the address of their handle, for a handle that carries another
/// execution's key: a long-lived object (a static, or one built outside the run) that another
/// test running at the same time on another OS thread may have re-keyed for its own execution
/// (see `register`). Such a lookup is rare (the first use of a long-lived object in an
/// execution, or a re-keying), while every registration must be findable by it: so a
/// registration only appends to `pending` (no hashing at an object's first use), and a lookup
/// first enters what is pending into `map`, in registration order, so that of two objects
/// registered at one address (the first freed, the second built in its place) the later wins,
/// as a map updated at every registration would have it.
#[derive(Default)]
pub(super) struct AddressIndex {
    map: HashMap<usize, ObjectId, BuildAddressHasher>,
    pending: Vec<(usize, ObjectId)>,
}

impl AddressIndex {
    /// Forgets every object (a new execution), keeping the allocations.
    pub(super) fn clear(&mut self) {
        if !self.map.is_empty() {
            self.map.clear();
        }
        self.pending.clear();
    }

    /// Records that the object registered at handle address `address` is `id`.
    #[inline]
    pub(super) fn insert(&mut self, address: usize, id: ObjectId) {
        self.pending.push((address, id));
    }

    /// The object last registered at `address`, if any.
    pub(super) fn get(&mut self, address: usize) -> Option<ObjectId> {
        for (a, id) in self.pending.drain(..) {
            self.map.insert(a, id);
        }
        self.map.get(&address).copied()
    }
}

/// An object registered in an execution.
pub(super) struct Object {
    pub(crate) var: VarId,
    pub(crate) kind: VarKind,
    pub(crate) site: &'static Location<'static>,
    /// Threads blocked on this object: a lock's or a `Once`'s in id order (see
    /// `State::refresh_waiters`), a condition variable's in the order they started waiting.
    pub(crate) waiters: Vec<ThreadId>,
    /// For a lock, a `Once` or a channel: which classes of its waiters are in the enabled
    /// threads now (`OPEN_EXCLUSIVE`: waiters to lock a mutex, write-lock, claim a `Once`, or
    /// send into a channel with room; `OPEN_SHARED`: waiters to read-lock; `OPEN_RECV`: a
    /// channel's receivers; `OPEN_DONE` and `OPEN_POISONED`: waiters for a `Once`'s
    /// completion), because what they wait for is available.
    pub(crate) open: u8,
    pub(crate) state: ObjectState,
}

/// `Object::open`: exclusive waiters are enabled.
pub(super) const OPEN_EXCLUSIVE: u8 = 1;
/// `Object::open`: read-lock waiters are enabled.
pub(super) const OPEN_SHARED: u8 = 2;
/// `Object::open`: a channel's receivers are enabled (a message or a disconnection waits).
pub(super) const OPEN_RECV: u8 = 4;
/// `Object::open`: waiters for a `Once`'s completion are enabled (it completed).
pub(super) const OPEN_DONE: u8 = 8;
/// `Object::open`: waiters for a `Once`'s completion that end on poison are enabled (it is
/// poisoned and no initializer runs).
pub(super) const OPEN_POISONED: u8 = 16;

/// The model state of one object.
pub(super) enum ObjectState {
    /// Atomics, cells and condvars keep no extra state here (a condvar's waiters, in
    /// notification order, are the object's `waiters`).
    Plain,
    /// A channel, as this execution's latest operation on it left it: whether its queue had
    /// room (always for an unbounded one), and whether a receive would return at once
    /// (`ready`: a message is queued, or every sender is gone). Its senders waiting for room
    /// are enabled exactly while it has room, its receivers exactly while it is ready
    /// (`State::refresh_waiters`), so a receive that frees a slot hands it to the one sender
    /// the strategy picks, and a receiver is a choice only when its receive will return. Both
    /// are read from the queue at the channel's first use in the execution (it may hold
    /// messages already: a channel shared with the outside); `channel.rs` owns the queue.
    Channel { room: bool, ready: bool },
    /// A mutex: who holds it.
    Mutex { owner: Option<ThreadId> },
    /// A readers-writer lock.
    RwLock { writer: Option<ThreadId>, readers: Vec<ThreadId> },
    /// A barrier: how many arrived in the current generation.
    Barrier { arrived: usize, generation: u64 },
    /// `Once`, `OnceLock`, `LazyLock`. `poisoned`: a `Once` initializer panicked (a
    /// `OnceLock`'s never poisons: its cell just stays empty, as std's).
    Once { running: Option<ThreadId>, done: bool, poisoned: bool, value: Option<ErasedValue> },
}

impl ObjectState {
    pub(crate) fn for_kind(kind: VarKind) -> ObjectState {
        match kind {
            VarKind::Mutex => ObjectState::Mutex { owner: None },
            VarKind::RwLock => ObjectState::RwLock { writer: None, readers: Vec::new() },
            VarKind::Barrier => ObjectState::Barrier { arrived: 0, generation: 0 },
            VarKind::Channel => ObjectState::Channel { room: true, ready: true },
            VarKind::Once | VarKind::OnceLock | VarKind::LazyLock => {
                ObjectState::Once { running: None, done: false, poisoned: false, value: None }
            }
            _ => ObjectState::Plain,
        }
    }
}

impl ObjectId {
    pub(crate) fn from_index(index: usize) -> ObjectId {
        ObjectId(index as u32)
    }
}

/// A value of any type whose owner is the execution (per-execution `OnceLock` values,
/// thread-local values). Dropped with the owner.
pub(super) struct ErasedValue {
    ptr: *mut (),
    drop_fn: unsafe fn(*mut ()),
}

impl ErasedValue {
    pub(crate) fn new<T>(value: T) -> ErasedValue {
        unsafe fn drop_box<T>(ptr: *mut ()) {
            // SAFETY: `ptr` came from `Box::<T>::into_raw` in `new` and is dropped once.
            drop(unsafe { Box::from_raw(ptr as *mut T) });
        }
        ErasedValue { ptr: Box::into_raw(Box::new(value)) as *mut (), drop_fn: drop_box::<T> }
    }

    /// # Safety
    /// `T` must be the type this value was created with.
    pub(crate) unsafe fn get<T>(&self) -> &T {
        unsafe { &*(self.ptr as *const T) }
    }

    /// # Safety
    /// `T` must be the type this value was created with.
    pub(crate) unsafe fn get_mut<T>(&mut self) -> &mut T {
        unsafe { &mut *(self.ptr as *mut T) }
    }

    /// # Safety
    /// `T` must be the type this value was created with.
    pub(crate) unsafe fn into_inner<T>(self) -> T {
        let this = std::mem::ManuallyDrop::new(self);
        *unsafe { Box::from_raw(this.ptr as *mut T) }
    }
}

impl Drop for ErasedValue {
    fn drop(&mut self) {
        // SAFETY: created by `new` with the matching drop function; dropped exactly once.
        unsafe { (self.drop_fn)(self.ptr) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lookups see every registration before them, whether or not an earlier lookup entered
    /// it in the map; the latest registration at an address wins; `clear` forgets all.
    #[test]
    fn address_index_finds_the_latest_registration() {
        let mut index = AddressIndex::default();
        let id = ObjectId::from_index;
        assert_eq!(index.get(0x1000), None);
        index.insert(0x1000, id(0));
        index.insert(0x2000, id(1));
        assert_eq!(index.get(0x1000), Some(id(0)));
        // Registered after a lookup (pending again), then one in place of an earlier object.
        index.insert(0x3000, id(2));
        index.insert(0x1000, id(3));
        index.insert(0x3000, id(4));
        assert_eq!(index.get(0x2000), Some(id(1)));
        assert_eq!(index.get(0x1000), Some(id(3)));
        assert_eq!(index.get(0x3000), Some(id(4)));
        assert_eq!(index.get(0x4000), None);
        index.clear();
        assert_eq!(index.get(0x1000), None);
        index.insert(0x1000, id(0));
        assert_eq!(index.get(0x1000), Some(id(0)));
        assert_eq!(index.get(0x2000), None);
    }
}
