//! The systematic search (the paper's Algorithm 1) on the paper's figures: each bug is first
//! found at the figure's `(c, v)` level, bug-free programs are exhausted and the report says
//! so, and happens-before pruning saves executions without losing bugs.

#[path = "common/paper_figures.rs"]
mod paper_figures;

use paper_figures::FIGURES;
use pctvb::{Config, FailureKind, StrategyKind};

fn search(kind: StrategyKind, body: fn()) -> pctvb::Report {
    Config::new().ignore_env().seed(5).profile_runs(1).iterations(200_000).strategy(kind).run(body)
}

#[test]
fn every_figure_is_first_found_at_its_label() {
    for f in FIGURES {
        let report = search(StrategyKind::systematic(2, 2, f.t), f.body);
        let sys = report.systematic.as_ref().expect("a systematic report");
        let failure = report.failure().unwrap_or_else(|| panic!("{} not found:\n{sys}", f.name));
        assert_eq!(failure.kind, FailureKind::Panic, "{}", failure.message);
        assert!(failure.message.contains(f.name), "{}: {}", f.name, failure.message);
        let (v, t, c) = sys.found_at.unwrap_or_else(|| panic!("{}: found in profiling", f.name));
        println!(
            "{}: found at (c={c}, v={v}, t={t}) after {:?} executions",
            f.name, sys.executions_to_bug
        );
        assert_eq!((c, v, t), (f.c, f.v, f.t), "{}:\n{sys}", f.name);
    }
}
