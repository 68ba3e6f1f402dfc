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

use pctvb::instrument::{self, Selection, SiteKind, StaticVarKind};

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
    // The Treiber stack's raw-pointer accesses were hooked: with its nodes tracked, they became
    // scheduling points, and the check saw nodes accessed at its dereference sites.
    assert!(stats.scheduled > 0, "{stats:?}");
    let mut derefs = treiber_sites().into_iter().filter(|s| s.kind == SiteKind::Deref);
    assert!(derefs.any(|s| stats.touched_sites.contains(&s.id)), "{stats:?}");
}

/// The sites of the Treiber example's own attribute.
fn treiber_sites() -> Vec<instrument::SiteInfo> {
    instrument::sites()
        .into_iter()
        .filter(|s| s.file.ends_with("examples/treiber_aba.rs"))
        .collect()
}

#[test]
fn the_treiber_example_instruments_its_stack() {
    let vars: Vec<_> = instrument::variables()
        .into_iter()
        .filter(|v| v.file.ends_with("examples/treiber_aba.rs"))
        .collect();
    let var = |name: &str| {
        vars.iter().find(|v| v.name == name).unwrap_or_else(|| panic!("no {name} in {vars:?}"))
    };
    assert_eq!(var("Stack.head").kind, StaticVarKind::Atomic);
    assert_eq!(var("Node.next").kind, StaticVarKind::Atomic);
    assert_eq!(var("Stack.nodes").kind, StaticVarKind::Mutex);
    let nodes: Vec<_> =
        vars.iter().filter(|v| v.kind == StaticVarKind::Heap).map(|v| v.id).collect();
    assert!(!nodes.is_empty(), "{vars:?}");
    // Every raw-pointer access of a node is hooked, and may touch only the nodes.
    let derefs: Vec<_> =
        treiber_sites().into_iter().filter(|s| s.kind == SiteKind::Deref).collect();
    assert!(derefs.len() >= 4, "{derefs:?}");
    for site in derefs {
        assert!(site.hooked, "{site:?}");
        let may = site.may_access.clone().unwrap_or_else(|| panic!("{site:?} may access anything"));
        assert!(!may.is_empty() && may.iter().all(|v| nodes.contains(v)), "{site:?}");
    }
}

#[test]
fn site_labels_show_the_source_not_the_markers_of_inner_sites() {
    // The Treiber example reaches atomics through raw pointers: `(*node).next.store(..)` holds
    // the dereference's site inside the store's.
    let labels: Vec<_> = pctvb::instrument::sites().into_iter().map(|s| s.label).collect();
    assert!(labels.iter().any(|l| l.contains("(*") && l.contains(".next")), "{labels:?}");
    assert!(labels.iter().all(|l| !l.contains("__pctvb")), "{labels:?}");
}
