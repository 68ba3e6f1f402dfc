//! The soundness check over the repository's examples: each example's code is spliced into an
//! instrumented module as it is (`include = "examples/..."`), run with every variable the
//! static pass found tracked, and must show no access to a tracked variable that did not come
//! through an armed hook listing it. The examples' own bugs may or may not show in these few
//! executions; only soundness-check failures count here.
//!
//! Spliced code has no source spans of its own (all its sites and variables carry the
//! attribute's location), so the check here verifies that every tracked variable an operation
//! touches is listed by an armed site of that example, not by the exact site.
//!
//! `treiber_aba` is the exception: its stack is instrumented by its own
//! `#[pctvb::instrument(force)]`, so it is compiled here as it is (`#[path]`), with its own
//! spans. Splicing it into a second instrumented module would instrument it twice (the inner
//! attribute would see the outer one's hooks as atomic sites that may access anything, and
//! register the same variables again).

#![allow(dead_code)]

use pctvb::instrument::{self, Selection};

#[pctvb::instrument(force, include = "examples/bank_transfer.rs")]
mod bank_transfer {}

#[pctvb::instrument(force, include = "examples/bounded_channel_lost_wakeup.rs")]
mod bounded_channel_lost_wakeup {}

#[pctvb::instrument(force, include = "examples/correct_counter.rs")]
mod correct_counter {}

#[pctvb::instrument(force, include = "examples/lazy_init_race.rs")]
mod lazy_init_race {}

#[pctvb::instrument(force, include = "examples/lock_order_deadlock.rs")]
mod lock_order_deadlock {}

#[path = "../examples/treiber_aba.rs"]
mod treiber_aba;

#[test]
fn every_example_passes_the_soundness_check() {
    let workloads: &[(&str, fn())] = &[
        ("bank_transfer", bank_transfer::transfer_and_audit),
        ("bounded_channel_lost_wakeup", bounded_channel_lost_wakeup::two_workers),
        ("correct_counter", correct_counter::locked_increments),
        ("lazy_init_race", lazy_init_race::two_workers_start),
        ("lock_order_deadlock", lock_order_deadlock::opposite_transfers),
        ("treiber_aba", treiber_aba::three_workers_requeue),
    ];
    let tracking = instrument::track(Selection::All).soundness_check(true);
    for (name, workload) in workloads {
        let report = pctvb::Config::new().iterations(30).seed(1).run(workload);
        if let Some(failure) = report.failure() {
            assert!(!failure.message.contains("soundness check"), "{name}: {}", failure.message);
        }
    }
    let stats = tracking.stats();
    assert!(stats.misses.is_empty(), "{:?}", stats.misses);
    assert!(stats.hits > 0);
}
