//! [`WatchFrees`]: a global allocator wrapper that tells the data-race detector about every
//! free, so that memory freed and reused within one execution is never reported as a race
//! between its old and its new use.
//!
//! The detector checks instrumented pointer accesses of any address (`#[pctvb::instrument]`,
//! the guide's section 5a). It forgets what it knows of an address range when it sees the
//! memory freed or new: at instrumented allocations, when a coroutine stack passes to another
//! thread, and between executions. Memory allocated and freed elsewhere (by the test body, a
//! library, a `Vec` growing) is out of its sight; if such memory was accessed through an
//! instrumented pointer, freed and its address reused within one execution, the old and the
//! new accesses could look like a race. With `WatchFrees` installed, every free is seen and
//! that cannot happen; without it, a race on memory of no instrumented variable says so.
//!
//! ```
//! #[global_allocator]
//! static ALLOC: pctvb::alloc::WatchFrees = pctvb::alloc::WatchFrees(std::alloc::System);
//! # fn main() {}
//! ```
//!
//! It wraps any allocator (`WatchFrees(tikv_jemallocator::Jemalloc)`). Recording a free costs
//! a few thread-local writes: no lock, no allocation.

use std::alloc::{GlobalAlloc, Layout, System};

use crate::runtime::frees;

/// A global allocator that forwards to `A` and records every free for the data-race
/// detector (see the [module documentation](self)).
#[derive(Clone, Copy, Debug, Default)]
pub struct WatchFrees<A = System>(pub A);

// SAFETY: every call forwards to `A` with the caller's arguments; the bookkeeping only reads
// the pointers and sizes.
unsafe impl<A: GlobalAlloc> GlobalAlloc for WatchFrees<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        frees::watching();
        // SAFETY: forwarded (the caller's contract).
        unsafe { self.0.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        frees::watching();
        // SAFETY: forwarded (the caller's contract).
        unsafe { self.0.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let start = ptr as usize;
        frees::freed(start, start + layout.size());
        // SAFETY: forwarded (the caller's contract).
        unsafe { self.0.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded (the caller's contract).
        let new = unsafe { self.0.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            let (old, new) = (ptr as usize, new as usize);
            if new != old {
                frees::freed(old, old + layout.size());
            } else if new_size > layout.size() {
                // Grown in place: the added bytes are new memory.
                frees::freed(old + layout.size(), old + new_size);
            } else {
                frees::freed(old + new_size, old + layout.size());
            }
        }
        new
    }
}
