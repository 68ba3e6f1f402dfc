//! Stacks for the coroutines that carry logical threads, pooled so that an execution does not
//! pay for `mmap` at every spawn.
//!
//! A pool lives for one run; when it is dropped its stacks go to a small per-OS-thread cache
//! that the next run's pool starts from. A test binary that calls `Config::run` many times
//! (or measures runs per second) then maps each thread's stack once rather than mapping,
//! protecting and unmapping it, and faulting its pages in again, on every run. The cache is
//! freed when its OS thread exits (a test thread of the harness, for instance).

use std::cell::RefCell;

use corosensei::stack::DefaultStack;
use corosensei::Coroutine;

/// A logical thread's coroutine: resumed by the engine, suspended at scheduling points.
pub(crate) type ThreadCoroutine = Coroutine<(), (), (), DefaultStack>;

/// Most bytes of stack (reserved address space; only touched pages are resident) an OS thread
/// keeps between runs.
const CACHE_BYTES: usize = 64 << 20;

thread_local! {
    /// Stacks of one size left by the last run on this OS thread.
    static SPARE: RefCell<Spare> = const { RefCell::new(Spare { size: 0, stacks: Vec::new() }) };
}

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
    /// A pool of stacks of `size` bytes, starting with those an earlier run on this OS thread
    /// left.
    pub(crate) fn new(size: usize) -> StackPool {
        let free = SPARE
            .try_with(|spare| match spare.try_borrow_mut() {
                Ok(mut spare) if spare.size == size => std::mem::take(&mut spare.stacks),
                _ => Vec::new(),
            })
            .unwrap_or_default();
        StackPool { size, free }
    }

    /// A stack from the pool, or a fresh one.
    pub(crate) fn take(&mut self) -> std::io::Result<DefaultStack> {
        match self.free.pop() {
            Some(stack) => Ok(stack),
            None => DefaultStack::new(self.size),
        }
    }

    /// Returns a stack for reuse.
    pub(crate) fn give(&mut self, stack: DefaultStack) {
        self.free.push(stack);
    }
}

impl Drop for StackPool {
    /// Leaves the stacks to the next run on this OS thread (up to [`CACHE_BYTES`]); a pool of
    /// another size replaces the cached stacks.
    fn drop(&mut self) {
        let mut free = std::mem::take(&mut self.free);
        if free.is_empty() {
            return;
        }
        let keep = (CACHE_BYTES / self.size.max(1)).max(1);
        let size = self.size;
        // After the thread-local is gone (a run inside a thread-local destructor), or while it
        // is borrowed, the stacks are simply unmapped.
        let _ = SPARE.try_with(move |spare| {
            let Ok(mut spare) = spare.try_borrow_mut() else { return };
            if spare.size == size {
                free.append(&mut spare.stacks);
            }
            free.truncate(keep);
            *spare = Spare { size, stacks: free };
        });
    }
}
