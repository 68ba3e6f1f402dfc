//! A spawned logical thread allocates nothing once a run's tables have grown: its closure waits
//! on its coroutine's stack and a `()` result in the execution's thread table. Counted with a
//! global allocator of this test binary's own (one test, so nothing else allocates meanwhile).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: defers to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations over `executions` executions of a body that spawns and joins `threads`
/// threads, after a warm-up run of the same body (the stack pool and the tables grown).
fn allocations(threads: usize, executions: u64) -> u64 {
    let body = move || {
        let handles: Vec<_> = (0..threads).map(|_| pctvb::thread::spawn(|| {})).collect();
        for h in handles {
            h.join().unwrap();
        }
    };
    // Random (fixed seed), one worker: the same kind of run as the measured one.
    let config = pctvb::Config::new()
        .ignore_env()
        .seed(9)
        .strategy(pctvb::StrategyKind::Random)
        .workers(1)
        .minimize_runs(0);
    let execution = |n: u64| {
        let report = config.clone().iterations(n).run(body);
        assert!(report.is_ok(), "{:?}", report.failure());
    };
    execution(200);
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    execution(executions);
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

#[test]
fn a_spawned_thread_allocates_nothing() {
    let executions = 2_000;
    let none = allocations(0, executions);
    let eight = allocations(8, executions);
    // The body's own `Vec` of handles is one allocation per execution; the run's fixed costs
    // are the same in both. Before, each thread took two (its boxed closure and its result's
    // `Arc`): 16 per execution more.
    let per_execution = eight.saturating_sub(none) as f64 / executions as f64;
    assert!(
        per_execution < 1.5,
        "{per_execution:.2} more allocations per execution with 8 threads ({none} without threads, \
         {eight} with)"
    );
}
