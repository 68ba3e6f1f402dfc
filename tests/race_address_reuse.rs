//! No false data race from reused addresses (issue #16): the race detector checks
//! instrumented pointer accesses of any address, so memory freed and reallocated within one
//! execution, or a finished thread's coroutine stack given to a new thread, must not make the
//! old and the new accesses look like a race. This binary installs
//! [`pctvb::alloc::WatchFrees`], so the detector sees every free.
//!
//! Every run uses a fixed seed, `ignore_env` and the default strategy; each test also asserts
//! that the address really was reused in some of its executions (else it would test nothing).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use pctvb::{Config, FailureKind};

#[global_allocator]
static ALLOC: pctvb::alloc::WatchFrees = pctvb::alloc::WatchFrees(std::alloc::System);

const RUNS: u64 = 2000;

#[pctvb::instrument(force)]
mod code {
    use std::thread;

    /// A fresh `u64` from the test body (outside instrumented code), written through a raw
    /// pointer, then freed by the test body; returns its address.
    pub fn scratch(make: fn() -> *mut u64, free: fn(*mut u64)) -> usize {
        let p = make();
        unsafe { *p = 7 };
        let v = unsafe { *p };
        assert_eq!(v, 7);
        free(p);
        p as usize
    }

    /// Two unordered threads each use scratch memory; returns both addresses.
    pub fn two_scratch_users(make: fn() -> *mut u64, free: fn(*mut u64)) -> (usize, usize) {
        let a = thread::spawn(move || scratch(make, free));
        let b = thread::spawn(move || scratch(make, free));
        (a.join().unwrap(), b.join().unwrap())
    }

    /// A local of the calling thread's stack, written through a raw pointer; its address.
    pub fn local() -> usize {
        let mut x = 0u64;
        let p = &mut x as *mut u64;
        unsafe { *p = 1 };
        p as usize
    }

    /// Two threads, the second spawned when the first may have finished (its stack then goes
    /// to the second), each writing a local through a raw pointer; both addresses.
    pub fn two_stack_users() -> (usize, usize) {
        let a = thread::spawn(local);
        thread::yield_now();
        let b = thread::spawn(local);
        (a.join().unwrap(), b.join().unwrap())
    }

    /// Two unordered threads write the same test-body memory: a real race.
    pub fn racy_writes(p: usize) {
        let a = thread::spawn(move || unsafe { *(p as *mut u64) = 1 });
        let b = thread::spawn(move || unsafe { *(p as *mut u64) = 2 });
        a.join().unwrap();
        b.join().unwrap();
    }
}

fn make() -> *mut u64 {
    Box::into_raw(Box::new(0))
}

fn free(p: *mut u64) {
    drop(unsafe { Box::from_raw(p) });
}

fn config(seed: u64) -> Config {
    Config::new().ignore_env().seed(seed).iterations(RUNS)
}

#[test]
fn memory_freed_and_reallocated_outside_instrumented_code_does_not_race() {
    let reused = AtomicU64::new(0);
    let report = config(0x5eed).run(|| {
        let (a, b) = code::two_scratch_users(make, free);
        if a == b {
            reused.fetch_add(1, Ordering::Relaxed);
        }
    });
    if let Some(f) = report.failure() {
        panic!("false race:\n{f}");
    }
    assert_eq!(report.executions, RUNS);
    assert!(reused.load(Ordering::Relaxed) > 0, "the allocator never reused the address");
}

#[test]
fn a_stack_given_to_a_new_thread_does_not_race() {
    let reused = AtomicU64::new(0);
    let report = config(0x5eed).run(|| {
        let (a, b) = code::two_stack_users();
        if a == b {
            reused.fetch_add(1, Ordering::Relaxed);
        }
    });
    if let Some(f) = report.failure() {
        panic!("false race:\n{f}");
    }
    assert_eq!(report.executions, RUNS);
    assert!(reused.load(Ordering::Relaxed) > 0, "no execution gave a stack to a new thread");
}

#[test]
fn a_real_race_on_test_body_memory_is_reported_without_the_caveat() {
    static CELL: AtomicUsize = AtomicUsize::new(0);
    for seed in 1..=5 {
        let report = config(seed).run(|| {
            let p = Box::into_raw(Box::new(0u64));
            CELL.store(p as usize, Ordering::Relaxed);
            code::racy_writes(p as usize);
            drop(unsafe { Box::from_raw(p) });
        });
        let f = report.failure().unwrap_or_else(|| panic!("seed {seed}: no race"));
        assert_eq!(f.kind, FailureKind::DataRace, "{f}");
        assert!(f.message.starts_with("data race on memory at 0x"), "{f}");
        // Every free is seen here: nothing to rule out.
        assert!(!f.message.contains("WatchFrees"), "{f}");
    }
}
