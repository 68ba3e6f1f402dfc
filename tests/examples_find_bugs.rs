//! The example programs find their bugs: each buggy example's body, run with a fixed seed and
//! the example's own budget, fails with the expected kind of failure and message, and its
//! replay token reproduces the same failure; the correct example passes.
//!
//! The examples are compiled into this test as modules (`#[path]`), so the test runs exactly
//! the code `cargo run --example` runs; their `main` functions are unused here.

use pctvb::{Config, Failure, FailureKind};

#[path = "../examples/async_lost_wakeup.rs"]
#[allow(dead_code)]
mod async_lost_wakeup;
#[path = "../examples/bank_transfer.rs"]
#[allow(dead_code)]
mod bank_transfer;
#[path = "../examples/bounded_channel_lost_wakeup.rs"]
#[allow(dead_code)]
mod bounded_channel_lost_wakeup;
#[path = "../examples/correct_counter.rs"]
#[allow(dead_code)]
mod correct_counter;
#[path = "../examples/lazy_init_race.rs"]
#[allow(dead_code)]
mod lazy_init_race;
#[path = "../examples/lock_order_deadlock.rs"]
#[allow(dead_code)]
mod lock_order_deadlock;
#[path = "../examples/treiber_aba.rs"]
#[allow(dead_code)]
mod treiber_aba;

/// The fixed seed of these tests; any seed finds each bug within the example's budget (see the
/// measurements in the examples' headers).
const SEED: u64 = 1;

/// Runs `body` as its example does, with the fixed seed, and returns the failure it must have
/// found; checks that the failure's replay token reproduces it.
fn find(name: &str, iterations: u64, body: fn()) -> Failure {
    find_with(Config::new(), name, iterations, body)
}

/// [`find`] from `config` (an example that names its strategy).
fn find_with(config: Config, name: &str, iterations: u64, body: fn()) -> Failure {
    let report = config.name(name).iterations(iterations).seed(SEED).ignore_env().run(body);
    let failure = report
        .failure()
        .unwrap_or_else(|| {
            panic!("{name}: no failure in {iterations} executions: {}", report.summary())
        })
        .clone();
    let token = failure.token.clone().expect("a failure of a search has a replay token");
    let replayed = Config::new().name(name).replay(token).ignore_env().run(body);
    let again = replayed.failure().expect("the replay fails again");
    assert_eq!(again.kind, failure.kind, "{name}: the replay failed differently:\n{again}");
    assert_eq!(again.message, failure.message, "{name}: the replay failed differently");
    failure
}

/// The allocation site of the object created by `what` on the line of `source` containing
/// `needle` (e.g. the `Mutex::new` on the line that creates `checking`), as `examples/<file>:
/// <line>:<column>`; pctvb names objects `Kind@<path>:<line>:<column>`, where the path is the
/// one the file was compiled from (`tests/../examples/<file>` here).
fn site(file: &str, source: &str, needle: &str, what: &str) -> String {
    let (index, line) = source
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in {file}"));
    let column = line.find(what).unwrap_or_else(|| panic!("no {what:?} on line {line:?}")) + 1;
    format!("examples/{file}:{}:{column}", index + 1)
}

#[test]
fn bank_transfer_auditor_sees_money_vanish() {
    let f = find(
        "bank_transfer::transfer_and_audit",
        bank_transfer::ITERATIONS,
        bank_transfer::transfer_and_audit,
    );
    assert_eq!(f.kind, FailureKind::Panic, "{f}");
    assert!(f.message.contains("the auditor saw money vanish"), "{f}");
}

#[test]
fn lazy_init_race_loads_twice() {
    let f = find(
        "lazy_init_race::two_workers_start",
        lazy_init_race::ITERATIONS,
        lazy_init_race::two_workers_start,
    );
    assert_eq!(f.kind, FailureKind::Panic, "{f}");
    assert!(f.message.contains("the settings were loaded more than once"), "{f}");
}

#[test]
fn lock_order_deadlock_names_both_mutexes() {
    let f = find(
        "lock_order_deadlock::opposite_transfers",
        lock_order_deadlock::ITERATIONS,
        lock_order_deadlock::opposite_transfers,
    );
    assert_eq!(f.kind, FailureKind::Deadlock, "{f}");
    let source = include_str!("../examples/lock_order_deadlock.rs");
    let file = "lock_order_deadlock.rs";
    for account in ["let checking", "let savings"] {
        let mutex = format!("{}, held by", site(file, source, account, "Mutex::new"));
        let waits = f.message.lines().find(|l| l.contains(&mutex));
        assert!(
            waits.is_some_and(|l| l.contains("waits to lock Mutex@")),
            "expected a thread waiting to lock the mutex at {mutex:?} in:\n{f}"
        );
    }
}

#[test]
fn bounded_channel_loses_a_wakeup() {
    let f = find(
        "bounded_channel_lost_wakeup::two_workers",
        bounded_channel_lost_wakeup::ITERATIONS,
        bounded_channel_lost_wakeup::two_workers,
    );
    assert_eq!(f.kind, FailureKind::Deadlock, "{f}");
    let source = include_str!("../examples/bounded_channel_lost_wakeup.rs");
    let not_empty =
        site("bounded_channel_lost_wakeup.rs", source, "not_empty: Condvar::new()", "Condvar::new");
    let waits = f
        .message
        .lines()
        .find(|l| l.contains(&format!("{not_empty} (not notified since it began to wait)")));
    assert!(
        waits.is_some_and(|l| l.contains("waits on Condvar@")),
        "expected a thread waiting on the not_empty Condvar ({not_empty}) in:\n{f}"
    );
    assert!(f.message.contains("(main) waits to join"), "{f}");
}

#[test]
fn treiber_aba_loses_a_task() {
    let f = find_with(
        Config::new().strategy(treiber_aba::STRATEGY),
        "treiber_aba::three_workers_requeue",
        treiber_aba::ITERATIONS,
        treiber_aba::three_workers_requeue,
    );
    assert_eq!(f.kind, FailureKind::Panic, "{f}");
    assert!(f.message.contains("the stack lost"), "{f}");
}

#[test]
fn correct_counter_passes() {
    // The default (SURW) most buggy examples use finds nothing in 2,000 executions...
    let report = Config::new()
        .name("correct_counter::locked_increments")
        .iterations(2000)
        .seed(SEED)
        .ignore_env()
        .run(correct_counter::locked_increments);
    report.assert_ok();
    assert_eq!(report.executions, 2000);

    // ...and neither does the example's own run, which also states what that proves.
    let report =
        correct_counter::config().seed(SEED).ignore_env().run(correct_counter::locked_increments);
    report.assert_ok();
    let guarantee = report.guarantee.as_ref().expect("a depth-2 run that passes has a guarantee");
    assert_eq!(guarantee.depth, 2);
    assert_eq!(report.executions, correct_counter::ITERATIONS);
    assert!(guarantee.confidence > 0.99, "{}", report.summary());
    assert!(report.summary().contains("pctvb: guarantee:"), "{}", report.summary());
}

#[test]
fn async_channel_loses_a_wakeup_and_the_fix_passes() {
    let f = find(
        "async_lost_wakeup::two_receivers",
        async_lost_wakeup::ITERATIONS,
        async_lost_wakeup::two_receivers,
    );
    assert_eq!(f.kind, FailureKind::Deadlock);
    assert!(f.message.starts_with("lost wake-up"), "{f}");
    assert!(f.message.contains("no one holds its waker"), "{f}");
    assert!(f.message.contains("(spawned at tests/../examples/async_lost_wakeup.rs:"), "{f}");
    let report = async_lost_wakeup::fixed_config()
        .seed(SEED)
        .ignore_env()
        .run(async_lost_wakeup::two_receivers_fixed);
    report.assert_ok();
    assert!(report.guarantee.is_some(), "{}", report.summary());
}
