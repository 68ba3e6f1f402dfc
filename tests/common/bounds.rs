//! The check every measured-rate test of a printed bound makes: the bound is at most the upper
//! limit of the measured per-execution rate's Wilson interval at 99.9% confidence.

use pctvb::guarantee::{wilson_interval, z_for_confidence};
use pctvb::{Report, StrategyKind};

/// Asserts that the bound `report` printed under `kind` is at most the Wilson 99.9% upper
/// limit of its failures over its executions, and prints both; returns the bound.
pub fn assert_rate_reaches_bound(kind: &StrategyKind, report: &Report) -> f64 {
    let bound = report.bound.clone().unwrap_or_else(|| panic!("{kind:?}: no bound"));
    let p = bound.ln_p().exp();
    let z = z_for_confidence(0.999).unwrap();
    let (low, high) = wilson_interval(report.failures, report.executions, z);
    println!(
        "{kind:?}: {}/{} = {:.4} [{low:.4}, {high:.4}], bound {bound} = {p:.5}",
        report.failures,
        report.executions,
        report.failures as f64 / report.executions as f64
    );
    assert!(
        p <= high,
        "{kind:?}: the bound {bound} = {p} exceeds the measured rate {}/{} (99.9% interval \
         [{low:.5}, {high:.5}])",
        report.failures,
        report.executions
    );
    p
}
