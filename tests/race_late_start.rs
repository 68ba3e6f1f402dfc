//! The data-race detector keeps no clocks until an execution's first checked access, then
//! starts every thread's afresh (`src/runtime/race.rs`, `Races::start_tracking`). These
//! programs synchronize both before that access and after it: the edges after it must still
//! order the accesses (no false race), and synchronization before it must not order them (no
//! lost race). Runs are deterministic: a fixed seed.

use pctvb::cell::UnsafeCell;
use pctvb::sync::{Arc, Mutex};
use pctvb::{Config, FailureKind, StrategyKind};

/// Runs `body` for 200 executions of the random strategy with a fixed seed (deterministic).
fn run(body: fn()) -> pctvb::Report {
    Config::new()
        .ignore_env()
        .strategy(StrategyKind::Random)
        .seed(7)
        .iterations(200)
        .minimize_runs(0)
        .workers(1)
        .trace_files(false)
        .run(body)
}

/// Synchronization before the first checked access (which starts the clocks) and after it:
/// the accesses, under the mutex or ordered by the join, never race.
fn ordered_after_late_start() {
    let m = Arc::new(Mutex::new(()));
    let cell = Arc::new(UnsafeCell::new(0u32));
    let (m2, c2) = (m.clone(), cell.clone());
    let h = pctvb::thread::spawn(move || {
        for _ in 0..3 {
            drop(m2.lock().unwrap());
        }
        let _g = m2.lock().unwrap();
        c2.with_mut(|p| unsafe { *p += 1 });
    });
    for _ in 0..3 {
        drop(m.lock().unwrap());
    }
    {
        let _g = m.lock().unwrap();
        cell.with_mut(|p| unsafe { *p += 1 });
    }
    h.join().unwrap();
    assert_eq!(cell.with(|p| unsafe { *p }), 2);
}

/// Both threads synchronize through the mutex only before their accesses: whichever order
/// the schedule gives them, nothing orders the write after the read or the read after the
/// write, so every execution races.
fn synchronized_only_before() {
    let m = Arc::new(Mutex::new(()));
    let cell = Arc::new(UnsafeCell::new(0u32));
    let (m2, c2) = (m.clone(), cell.clone());
    let h = pctvb::thread::spawn(move || {
        drop(m2.lock().unwrap());
        c2.with_mut(|p| unsafe { *p = 1 });
    });
    drop(m.lock().unwrap());
    cell.with(|p| unsafe { std::hint::black_box(*p) });
    h.join().unwrap();
}

#[test]
fn clocks_started_at_the_first_access_keep_every_later_edge() {
    let report = run(ordered_after_late_start);
    assert!(report.is_ok(), "{:?}", report.failure());
    assert_eq!(report.executions, 200);
}

#[test]
fn clocks_started_at_the_first_access_drop_no_race() {
    let report = run(synchronized_only_before);
    let failure = report.failure().expect("every execution races");
    assert_eq!(failure.kind, FailureKind::DataRace, "{failure}");
    // Found in the first execution: every schedule of this program races.
    assert_eq!(report.executions, 1, "{failure}");
}
