//! Spurious failures of `compare_exchange_weak` (`Config::weak_cas_failures`). Rust allows a
//! weak compare-exchange to fail although the value is the one expected, and it does on
//! load-linked/store-conditional hardware (ARM, RISC-V) when the reservation is lost, for
//! example to a context switch between the load and the store. With the setting on, a weak
//! compare-exchange that finds its value makes a second scheduling point, its
//! store-conditional; if another thread runs there, it fails spuriously. So:
//!
//! - code that assumes one weak call succeeds fails, the report's schedule shows the
//!   store-conditional the other thread preempted, and its replay line reproduces it (the token
//!   records the setting, so the replay takes it whatever the code says);
//! - off (the default) the same code passes, as it does under loom and shuttle, and the
//!   schedule has no store-conditional point;
//! - a retry loop passes, although its weak calls do fail spuriously;
//! - the priority strategies find the bug at least at the bound they print: a spurious failure
//!   is a preemption of the schedule, counted in the depth.
//!
//! Every run uses the fixed seed [`SEED`].

use pctvb::sync::atomic::{AtomicUsize, Ordering::*};
use pctvb::sync::Arc;
use pctvb::{thread, Config, FailureKind, StrategyKind};

#[path = "common/bounds.rs"]
mod bounds;
use bounds::assert_rate_reaches_bound;

const SEED: u64 = 0x3c_a5;

fn config() -> Config {
    Config::new().ignore_env().seed(SEED).minimize_runs(50)
}

/// The main thread sets a flag with one weak compare-exchange, assuming it succeeds, while a
/// helper writes another atomic: the helper running at the store-conditional makes it fail.
fn single_weak_call() {
    let flag = Arc::new(AtomicUsize::new(0));
    let other = Arc::new(AtomicUsize::new(0));
    let o = other.clone();
    let helper = thread::spawn(move || o.store(1, SeqCst));
    let _ = flag.compare_exchange_weak(0, 1, AcqRel, Acquire);
    helper.join().unwrap();
    assert_eq!(flag.load(SeqCst), 1, "the weak compare-exchange failed spuriously");
}

#[test]
fn one_weak_call_assumed_to_succeed_fails_and_replays() {
    let report = config().weak_cas_failures(true).iterations(1000).run(single_weak_call);
    let f = report.failure().expect("the spurious failure is found");
    assert_eq!(f.kind, FailureKind::Panic, "{f}");
    assert!(f.message.contains("the weak compare-exchange failed spuriously"), "{f}");
    let schedule = f.to_string();
    assert!(schedule.contains("store-conditional"), "{schedule}");
    // The token records the setting: replayed by a configuration that leaves it off, the
    // execution runs with it on and fails the same way.
    let token = f.token.clone().expect("a replay token");
    let again = config().replay(token).run(single_weak_call);
    let again = again.failure().expect("the replay fails again");
    assert_eq!(again.message, f.message);
}

#[test]
fn off_by_default_a_weak_call_never_fails_spuriously() {
    let report = config().iterations(1000).stop_at_first_failure(false).run(single_weak_call);
    assert!(report.failure().is_none(), "{:?}", report.failure());
    assert_eq!(report.executions, 1000);
    // No store-conditional point: the same code with the setting on has more points in the
    // longest execution.
    let on = config().weak_cas_failures(true).iterations(1).run(|| {
        let a = AtomicUsize::new(0);
        assert!(a.compare_exchange_weak(0, 1, SeqCst, SeqCst).is_ok());
    });
    let off = config().iterations(1).run(|| {
        let a = AtomicUsize::new(0);
        assert!(a.compare_exchange_weak(0, 1, SeqCst, SeqCst).is_ok());
    });
    on.assert_ok();
    off.assert_ok();
    assert_eq!(on.stats.max_steps, off.stats.max_steps + 1, "one store-conditional point");
}

/// Spurious failures the retry loop below saw (a failure that returned the expected value).
static SPURIOUS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Two threads add 3 each to a counter in weak compare-exchange loops.
fn retry_loops() {
    let n = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || {
                for _ in 0..3 {
                    let mut seen = n.load(Relaxed);
                    loop {
                        match n.compare_exchange_weak(seen, seen + 1, AcqRel, Relaxed) {
                            Ok(_) => break,
                            Err(v) => {
                                if v == seen {
                                    SPURIOUS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                }
                                seen = v;
                            }
                        }
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(n.load(SeqCst), 6);
}

#[test]
fn a_retry_loop_passes_though_its_weak_calls_fail_spuriously() {
    for kind in [StrategyKind::Surw, StrategyKind::Random, StrategyKind::Pct { depth: 3 }] {
        SPURIOUS.store(0, std::sync::atomic::Ordering::Relaxed);
        let report = config()
            .strategy(kind.clone())
            .workers(1)
            .weak_cas_failures(true)
            .iterations(2000)
            .run(retry_loops);
        assert!(report.failure().is_none(), "{kind:?}: {:?}", report.failure());
        assert_eq!(report.executions, 2000, "{kind:?}");
        let spurious = SPURIOUS.load(std::sync::atomic::Ordering::Relaxed);
        assert!(spurious > 0, "{kind:?}: no weak call failed spuriously in 2000 executions");
    }
}

/// The bug's class: one preemption (the helper at the main thread's store-conditional), so
/// depth 2, on one variable, among two threads. Each priority strategy's measured rate must
/// reach the bound it prints.
#[test]
fn the_bug_is_found_at_least_at_the_printed_bound() {
    for kind in [
        StrategyKind::Pct { depth: 2 },
        StrategyKind::Pctvb { depth: 2, vars: 1 },
        StrategyKind::Combined { depth: 2, vars: 1, threads: 2 },
    ] {
        let report = config()
            .strategy(kind.clone())
            .weak_cas_failures(true)
            .iterations(2000)
            .stop_at_first_failure(false)
            .run(single_weak_call);
        assert!(report.failures > 0, "{kind:?}");
        assert_rate_reaches_bound(&kind, &report);
    }
}

/// The attribute's argument turns it on (the seed fixed, so the run is the same each time).
#[pctvb::test(iterations = 1000, seed = 0x3ca5, weak_cas_failures = true, regressions = false)]
#[should_panic(expected = "the weak compare-exchange failed spuriously")]
fn the_attribute_turns_it_on() {
    single_weak_call();
}
