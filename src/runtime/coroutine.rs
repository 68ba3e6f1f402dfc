//! Stacks for the coroutines that carry logical threads, pooled so that an execution does not
//! pay for `mmap` at every spawn.
//!
//! A pool lives for one run; when it is dropped its stacks go to a small process-wide cache
//! that the next run's pool starts from, on any OS thread. A test binary that calls
//! `Config::run` many times (or measures runs per second) then maps each thread's stack once
//! rather than mapping, protecting and unmapping it, and faulting its pages in again, on every
//! run. Process-wide, not per OS thread: libtest runs each test on a thread of its own, and a
//! suite of short runs (a loom suite's one-thread models) paid an `mmap` and an `munmap` with
//! its TLB shootdown per test. The cache's lock is taken when a run starts and ends, never at
//! a scheduling point.

use std::sync::Mutex;

use corosensei::stack::DefaultStack;
use corosensei::Coroutine;

/// A logical thread's coroutine: resumed by the engine, suspended at scheduling points.
pub(crate) type ThreadCoroutine = Coroutine<(), (), (), DefaultStack>;

/// A thread's coroutine with its stack's mapping (limit, base), for the stack-overflow handler
/// (`crash.rs`) and the race detector (a reused stack's old accesses are forgotten).
pub(crate) type Running = (ThreadCoroutine, (usize, usize));

/// Most bytes of stack (reserved address space; only touched pages are resident) the process
/// keeps between runs.
const CACHE_BYTES: usize = 64 << 20;

/// Stacks of one size left by the last runs of the process.
static SPARE: Mutex<Spare> = Mutex::new(Spare { size: 0, stacks: Vec::new() });

struct Spare {
    size: usize,
    stacks: Vec<DefaultStack>,
}

/// Reusable coroutine stacks of one size.
pub(crate) struct StackPool {
    size: usize,
    free: Vec<DefaultStack>,
}

impl StackPool {
    /// A pool with no stacks (and no size), to stand in while a run's pool is lent to its
    /// execution ([`crate::runtime::Execution`] holds it while one runs, so `spawn` can take
    /// a stack).
    pub(crate) const EMPTY: StackPool = StackPool { size: 0, free: Vec::new() };

    /// A pool of stacks of `size` bytes, starting with those earlier runs left. Runs at the
    /// same time (parallel workers, libtest's test threads) share out the cached stacks: the
    /// first takes them all, the others map fresh ones, and all give theirs back at the end.
    pub(crate) fn new(size: usize) -> StackPool {
        let free = match SPARE.lock() {
            Ok(mut spare) if spare.size == size => std::mem::take(&mut spare.stacks),
            _ => Vec::new(),
        };
        StackPool { size, free }
    }

    /// A stack from the pool, or a fresh one.
    pub(crate) fn take(&mut self) -> std::io::Result<DefaultStack> {
        match self.free.pop() {
            Some(stack) => Ok(stack),
            // corosensei adds a guard page and rounds up to pages with a checked sum that
            // panics on overflow (a size within two pages of usize::MAX), and a panic here, on
            // the host side of an execution, failed the test without a word. The runner
            // refuses such sizes before any run (`MAX_STACK_SIZE`); this keeps the panic out
            // for any other caller: no mapping spans more than isize::MAX bytes anyway.
            None if self.size > isize::MAX as usize => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "larger than any mapping can be (isize::MAX bytes)",
            )),
            None => DefaultStack::new(self.size),
        }
    }

    /// The size of the pool's stacks.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Returns a stack for reuse.
    pub(crate) fn give(&mut self, stack: DefaultStack) {
        self.free.push(stack);
    }
}

impl Drop for StackPool {
    /// Leaves the stacks to the next run (up to [`CACHE_BYTES`] in all); a pool of another
    /// size replaces the cached stacks.
    fn drop(&mut self) {
        let mut free = std::mem::take(&mut self.free);
        if free.is_empty() {
            return;
        }
        let keep = (CACHE_BYTES / self.size.max(1)).max(1);
        let size = self.size;
        // A poisoned lock (a panic while it was held, which its short sections cannot raise)
        // only costs the cache: the stacks are then unmapped here.
        let Ok(mut spare) = SPARE.lock() else { return };
        if spare.size == size {
            free.append(&mut spare.stacks);
        }
        let extra = free.split_off(keep.min(free.len()));
        let old = std::mem::replace(&mut *spare, Spare { size, stacks: free });
        // Unmapped outside the lock.
        drop(spare);
        drop((old, extra));
    }
}
