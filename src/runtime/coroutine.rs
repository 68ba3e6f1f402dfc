//! Stacks for the coroutines that carry logical threads, pooled so that an execution does not
//! pay for `mmap` at every spawn.

use corosensei::stack::DefaultStack;
use corosensei::Coroutine;

/// A logical thread's coroutine: resumed by the engine, suspended at scheduling points.
pub(crate) type ThreadCoroutine = Coroutine<(), (), (), DefaultStack>;

/// Reusable coroutine stacks of one size.
pub(crate) struct StackPool {
    size: usize,
    free: Vec<DefaultStack>,
}

impl StackPool {
    pub(crate) fn new(size: usize) -> StackPool {
        StackPool { size, free: Vec::new() }
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
