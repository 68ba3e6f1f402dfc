//! pctvb-loom's `UnsafeCell` accesses are race checks, not scheduling points (as loom's): the
//! guarantee printed for a loom model counts the synchronising operations only. These tests
//! check that the printed bound still holds on bugs that need cell accesses in some order
//! (an order only the synchronising operations decide), that races are still reported, and
//! what the run says about the cells.
//!
//! How a bound is checked ([`check`]): a fixed-seed run of the strategy alone (no uniform-walk
//! executions, every execution run to its end: `stop_at_first_failure(false)`) counts the
//! executions that expose the bug; the measured rate must be at least the per-execution bound
//! the run printed. Every run uses a fixed seed ([`SEED`]), so the outcome is deterministic:
//! the measured rates are 4 to 12 times their bounds, and 3,000 executions per
//! program put the 99.9% Wilson interval of each rate above its bound too (also asserted, so
//! the margin is not luck of the seed).
extern crate pctvb_loom as loom;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, Ordering::*};
use loom::sync::{Arc, Mutex};
use loom::thread;
use pctvb::guarantee::{wilson_interval, z_for_confidence};
use pctvb::report::{FailureKind, VarKind};
use pctvb::{Config, Report, StrategyKind};

/// The seed of every run.
const SEED: u64 = 0x5eed_c311;
/// Search executions per measured program.
const EXECUTIONS: u64 = 3_000;

/// A cell shared between threads; the programs synchronise its accesses (or fail to).
struct Shared {
    cell: UnsafeCell<usize>,
    flag: AtomicBool,
    lock: Mutex<()>,
}

// SAFETY: as a loom test's shared state: the accesses of `cell` are the program under test,
// and pctvb's race detector reports the unsynchronised ones.
unsafe impl Sync for Shared {}

fn shared() -> Arc<Shared> {
    Arc::new(Shared {
        cell: UnsafeCell::new(0),
        flag: AtomicBool::new(false),
        lock: Mutex::new(()),
    })
}

/// A write published by a Release store, read after an Acquire load that saw it: the read
/// returns the write's value exactly when the load comes after the store. The "bug" is that
/// order (depth 1: no preemption, the threads' order alone, t = 3 with the spawner).
fn publish_then_read() {
    let s = shared();
    let w = s.clone();
    let writer = thread::spawn(move || {
        w.cell.with_mut(|p| unsafe { *p = 1 });
        w.flag.store(true, Release);
    });
    let r = s.clone();
    let reader = thread::spawn(move || {
        if r.flag.load(Acquire) {
            let v = r.cell.with(|p| unsafe { *p });
            assert_ne!(v, 1, "read the published value");
        }
    });
    writer.join().unwrap();
    reader.join().unwrap();
}

/// A lost update on a cell whose read and write are in two critical sections of one mutex:
/// the other thread's read must come between them (one preemption, right before the second
/// lock or after the first unlock, both accesses of the mutex: depth 2, v = 1, t = 3).
fn lost_update_between_critical_sections() {
    let s = shared();
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let s = s.clone();
            thread::spawn(move || {
                let v = {
                    let _g = s.lock.lock().unwrap();
                    s.cell.with(|p| unsafe { *p })
                };
                let _g = s.lock.lock().unwrap();
                s.cell.with_mut(|p| unsafe { *p = v + 1 });
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let _g = s.lock.lock().unwrap();
    assert_eq!(s.cell.with(|p| unsafe { *p }), 2, "an increment was lost");
}

/// A check-then-act on an atomic flag that claims the cell: both threads get in when one is
/// preempted between its load and its store (depth 2, v = 1, t = 3), and their writes then
/// race: the bug is reported as a data race, which needs that order of the flag's operations.
fn claim_by_load_then_store() {
    let s = shared();
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let s = s.clone();
            thread::spawn(move || {
                if !s.flag.load(Acquire) {
                    s.flag.store(true, Release);
                    s.cell.with_mut(|p| unsafe { *p += 1 });
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// The strategy alone, `executions` executions, every one run to its end.
fn measured(body: fn(), kind: StrategyKind, executions: u64) -> Report {
    let report = Config::new()
        .ignore_env()
        .seed(SEED)
        .strategy(kind)
        .iterations(executions)
        .stop_at_first_failure(false)
        .explore_every(0)
        .minimize_runs(0)
        .run(body);
    assert!(report.error().is_none(), "{:?}", report.error());
    report
}

/// Runs `body` under the combined strategy for a bug of depth `d` among `t` threads on one
/// variable, and asserts that the measured rate is at least the printed bound (and the 99.9%
/// Wilson interval's lower limit too); returns the report.
fn check(name: &str, body: fn(), d: u32, t: u32, kind: FailureKind) -> Report {
    let report =
        measured(body, StrategyKind::Combined { depth: d, vars: 1, threads: t }, EXECUTIONS);
    let bound = report.bound.as_ref().unwrap_or_else(|| panic!("{name}: no bound")).p();
    let rate = report.failures as f64 / report.executions as f64;
    let z = z_for_confidence(0.999).unwrap();
    let (lower, _) = wilson_interval(report.failures, report.executions, z);
    let line = format!(
        "{name}: rate {rate:.5} ({}/{}), 99.9% lower {lower:.5}, bound {bound:.5}",
        report.failures, report.executions
    );
    println!("{line}");
    assert!(rate >= bound, "the measured rate is below the printed bound: {line}");
    assert!(lower >= bound, "the rate's 99.9% interval reaches below the bound: {line}");
    let failure = report.failure().unwrap_or_else(|| panic!("{name}: no failure kept"));
    assert_eq!(failure.kind, kind, "{name}: {failure}");
    report
}

/// The cells are no variables of the bound: only the flag, the mutex and the `Arc`'s count
/// are (the `Arc` is loom's, whose count is an atomic).
fn assert_cells_not_counted(report: &Report) {
    let vars = &report.stats.variables;
    assert!(vars.iter().any(|(info, _)| info.kind == VarKind::CheckedCell), "{vars:?}");
    for (info, profile) in vars {
        if info.kind == VarKind::CheckedCell {
            assert!(!profile.shared && profile.max_accesses == 0, "{info}: {profile:?}");
        }
    }
    assert!(!vars.iter().any(|(info, _)| info.kind == VarKind::Cell), "{vars:?}");
}

#[test]
fn the_bound_holds_for_an_order_of_cell_accesses_set_by_a_flag() {
    let report = check("publish_then_read", publish_then_read, 1, 3, FailureKind::Panic);
    assert_cells_not_counted(&report);
}

#[test]
fn the_bound_holds_for_a_lost_update_between_critical_sections() {
    let report = check(
        "lost_update_between_critical_sections",
        lost_update_between_critical_sections,
        2,
        3,
        FailureKind::Panic,
    );
    assert_cells_not_counted(&report);
}

#[test]
fn the_bound_holds_for_a_race_that_needs_an_order_of_the_flag() {
    let report =
        check("claim_by_load_then_store", claim_by_load_then_store, 2, 3, FailureKind::DataRace);
    assert_cells_not_counted(&report);
}

/// Two threads write the cell with nothing between them: the race is reported (in the first
/// execution: it does not depend on the order), under the default strategy too.
#[test]
fn an_unsynchronised_pair_of_writes_is_still_a_race() {
    let body = || {
        let s = shared();
        let t = s.clone();
        let h = thread::spawn(move || t.cell.with_mut(|p| unsafe { *p = 1 }));
        s.cell.with_mut(|p| unsafe { *p = 2 });
        h.join().unwrap();
    };
    for kind in [None, Some(StrategyKind::Combined { depth: 2, vars: 1, threads: 3 })] {
        let mut config = Config::new().ignore_env().seed(SEED).iterations(100).minimize_runs(0);
        if let Some(kind) = kind.clone() {
            config = config.strategy(kind);
        }
        let report = config.run(body);
        let failure = report.failure().unwrap_or_else(|| panic!("{kind:?}: no race reported"));
        assert_eq!(failure.kind, FailureKind::DataRace, "{failure}");
        assert!(failure.to_string().contains("data race on UnsafeCell@"), "{failure}");
    }
}

/// A cell accessed many times between two synchronising operations adds no scheduling point
/// while the detector is on, and 50 with it off (the argument for leaving them out needs the
/// check, so without it they are scheduling points again, as `pctvb::cell::UnsafeCell`'s).
#[test]
fn cell_accesses_are_scheduling_points_only_with_the_detector_off() {
    let body = || {
        let s = shared();
        let t = s.clone();
        let h = thread::spawn(move || {
            for _ in 0..50 {
                t.cell.with_mut(|p| unsafe { *p += 1 });
            }
            t.flag.store(true, Release);
        });
        h.join().unwrap();
        assert_eq!(s.cell.with(|p| unsafe { *p }), 50);
    };
    let steps = |races: bool| {
        let report =
            Config::new().ignore_env().seed(SEED).iterations(20).race_detection(races).run(body);
        assert!(report.failure().is_none() && report.error().is_none(), "{}", report.summary());
        report.stats.max_steps
    };
    let (on, off) = (steps(true), steps(false));
    assert!(on < 20, "{on} scheduling points with the detector on");
    assert!(off >= on + 51, "{off} scheduling points with it off, {on} with it on");
}

/// A passing run with a guarantee says that the cells are checked, not scheduled, and its
/// variable table lists them so; `Q` counts the synchronising objects only.
#[test]
fn a_guarantee_names_the_cells_it_does_not_count() {
    let fixed = || {
        let s = shared();
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let s = s.clone();
                thread::spawn(move || {
                    let _g = s.lock.lock().unwrap();
                    s.cell.with_mut(|p| unsafe { *p += 1 });
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let _g = s.lock.lock().unwrap();
        assert_eq!(s.cell.with(|p| unsafe { *p }), 2);
    };
    let report = Config::new()
        .ignore_env()
        .seed(SEED)
        .strategy(StrategyKind::Combined { depth: 2, vars: 1, threads: 3 })
        .confidence(0.9)
        // The sampled guarantee's statement (enumerated, the class's statement is the
        // systematic search's, which has no Q of its own to check here).
        .enumerate(false)
        .run(fixed);
    assert!(report.failure().is_none() && report.error().is_none(), "{}", report.summary());
    let guarantee = report.guarantee.as_ref().expect("a guarantee");
    let summary = report.summary();
    assert!(
        summary.contains(
            "the accesses of 1 UnsafeCell variable are checked for data races, not scheduled"
        ),
        "{summary}"
    );
    assert!(summary.contains("race-checked, not scheduled"), "{summary}");
    // Enumerated (the default with a target), the statement is the systematic search's, and
    // the note is there too.
    let enumerated = Config::new()
        .ignore_env()
        .seed(SEED)
        .strategy(StrategyKind::Combined { depth: 2, vars: 1, threads: 3 })
        .confidence(0.9)
        .run(fixed);
    assert!(enumerated.systematic.is_some(), "{}", enumerated.summary());
    assert!(
        enumerated.summary().contains(
            "the accesses of 1 UnsafeCell variable are checked for data races, not scheduled"
        ),
        "{}",
        enumerated.summary()
    );
    // The mutex and the `Arc`'s count: the cell is not among them.
    let shared_sync =
        report.stats.variables.iter().filter(|(i, p)| p.shared && i.kind != VarKind::CheckedCell);
    assert_eq!(guarantee.shared_variables, shared_sync.count() as u64, "{summary}");
    assert_cells_not_counted(&report);
}

/// A replay token recorded before cell accesses stopped being scheduling points (by pctvb at
/// commit b232a01, for `lost_update` below run under `loom::model`): its choices counted the
/// cell accesses, and its digest covered them, so it is refused as a diverged replay (a run
/// that could not test), never replayed as another execution.
const TOKEN_WITH_CELL_POINTS: &str = "pctvb2-AhJjcmF0ZTo6bG9zdF91cGRhdGUSdW5pZm9ybSwgbWluaW1pemVk7dbT9feJ8epZAHy-KRl3y12MAwUPERwOEn7zyBHH7SMO";

fn lost_update() {
    struct S {
        cell: UnsafeCell<usize>,
        lock: Mutex<()>,
    }
    // SAFETY: as `Shared`'s.
    unsafe impl Sync for S {}
    let s = Arc::new(S { cell: UnsafeCell::new(0), lock: Mutex::new(()) });
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let s = s.clone();
            thread::spawn(move || {
                let v = {
                    let _g = s.lock.lock().unwrap();
                    s.cell.with(|p| unsafe { *p })
                };
                let _g = s.lock.lock().unwrap();
                s.cell.with_mut(|p| unsafe { *p = v + 1 });
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let _g = s.lock.lock().unwrap();
    assert_eq!(s.cell.with(|p| unsafe { *p }), 2);
}

#[test]
fn a_token_recorded_with_cell_points_is_refused_not_misreplayed() {
    let report = Config::new()
        .ignore_env()
        .name("crate::lost_update")
        .replay(TOKEN_WITH_CELL_POINTS)
        .run(lost_update);
    assert!(report.failure().is_none(), "replayed as a bug: {}", report.summary());
    let error = report.error().expect("the old token is refused").to_string();
    assert!(error.contains("replay diverged"), "{error}");
    // The bug itself is still there: a search finds it.
    let search = Config::new().ignore_env().seed(SEED).minimize_runs(0).run(lost_update);
    assert!(search.failure().is_some(), "{}", search.summary());
}
