//! 100,000 executions of a small body do not grow memory: stacks are pooled, per-execution
//! tables are reused, and nothing accumulates per execution. This file is its own test binary
//! so that no other test allocates in the process while it measures.

#[cfg(target_os = "linux")]
fn resident_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4
}

#[cfg(target_os = "linux")]
#[test]
fn a_hundred_thousand_executions_do_not_grow_memory() {
    use pctvb::sync::atomic::{AtomicUsize, Ordering};
    use pctvb::sync::{Arc, Mutex};

    let body = || {
        let m = Arc::new(Mutex::new(Vec::with_capacity(4)));
        let n = Arc::new(AtomicUsize::new(0));
        let (m2, n2) = (m.clone(), n.clone());
        let h = pctvb::thread::spawn(move || {
            m2.lock().unwrap().push(1);
            n2.fetch_add(1, Ordering::SeqCst);
        });
        m.lock().unwrap().push(2);
        n.fetch_add(1, Ordering::SeqCst);
        h.join().unwrap();
    };
    let config = pctvb::Config::new().ignore_env().seed(5);
    // Warm up: the stack pool, the allocator's arenas and the schedule set reach their size.
    assert!(config.clone().iterations(10_000).run(body).is_ok());
    let before = resident_kib();
    let report = config.iterations(100_000).run(body);
    let after = resident_kib();
    assert!(report.is_ok());
    assert_eq!(report.executions, 100_000);
    // The distinct-schedule set holds one u64 per schedule (at most 100,000 * 8 bytes with
    // hashing overhead, under 4 MiB); anything leaking per execution (a stack of 256 KiB, a
    // boxed closure, a trace) would exceed the allowance by far.
    let grown = after.saturating_sub(before);
    assert!(grown < 8 * 1024, "resident memory grew by {grown} KiB over 100,000 executions");
}

/// The uniform walk on several OS threads (the default strategy) kept a record of every
/// execution until the end of the run, about 33 bytes each (38 MB at a million executions);
/// its workers now fold the executions no failure can exclude as they go.
#[cfg(target_os = "linux")]
#[test]
fn the_parallel_walk_does_not_grow_with_executions() {
    use pctvb::sync::atomic::{AtomicUsize, Ordering};
    use pctvb::sync::Arc;

    let body = || {
        let n = Arc::new(AtomicUsize::new(0));
        let n2 = n.clone();
        let h = pctvb::thread::spawn(move || {
            n2.fetch_add(1, Ordering::SeqCst);
        });
        n.fetch_add(1, Ordering::SeqCst);
        h.join().unwrap();
    };
    let config = pctvb::Config::new().ignore_env().seed(5).workers(2);
    assert!(config.clone().iterations(30_000).run(body).is_ok());
    let before = resident_kib();
    let report = config.iterations(200_000).run(body);
    let after = resident_kib();
    assert!(report.is_ok());
    assert_eq!(report.executions, 200_000);
    assert!(!report.stats.distinct_schedules_capped, "a handful of schedules");
    // Before: 200,000 records of 32 bytes, 6.25 MiB.
    let grown = after.saturating_sub(before);
    assert!(grown < 2 * 1024, "resident memory grew by {grown} KiB over 200,000 executions");
}
