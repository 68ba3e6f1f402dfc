//! What every strategy without a guarantee must do, shared by the strategies' test files: run
//! no profiling, print no bound, and refuse the parameters and targets of a bound.

use pctvb::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use pctvb::sync::Arc;
use pctvb::{thread, Config, Error, StrategyKind};

/// Two threads each add one to a counter atomically: correct under every schedule.
pub fn correct_pair() {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    let h = thread::spawn(move || {
        n2.fetch_add(1, SeqCst);
    });
    n.fetch_add(1, SeqCst);
    h.join().unwrap();
    assert_eq!(n.load(SeqCst), 2);
}

/// Executions until the first failure of `body` under `kind` (seed `seed`, one worker, no
/// minimization), or `None` within `budget`; the run must have been able to test.
#[allow(dead_code)] // not every test that includes this module uses it
pub fn executions_to_bug(kind: StrategyKind, body: fn(), seed: u64, budget: u64) -> Option<u64> {
    let report = Config::new()
        .ignore_env()
        .seed(seed)
        .strategy(kind)
        .workers(1)
        .minimize_runs(0)
        .iterations(budget)
        .run(body);
    assert!(report.error().is_none(), "{:?}", report.error());
    report.failure().map(|f| f.execution + 1)
}

/// A configuration change a strategy refuses, and words its error must contain.
pub type Refusal = (fn(Config) -> Config, &'static str);

/// The refusals every strategy without a guarantee makes: a confidence target and a depth.
#[allow(dead_code)] // not every test that includes this module uses it
pub const BOUND_REFUSALS: &[Refusal] = &[
    (|c| c.confidence(0.9), "no probability bound"),
    (|c| c.depth(2), "does not take a depth bound"),
];

/// [`BOUND_REFUSALS`] and the variable and thread bounds, which the walks (`uniform`, `surw`)
/// refuse by name too.
#[allow(dead_code)] // not every test that includes this module uses it
pub const WALK_REFUSALS: &[Refusal] = &[
    (|c| c.confidence(0.9), "no probability bound"),
    (|c| c.depth(2), "does not take a depth bound"),
    (|c| c.vars(1), "does not take a vars bound"),
    (|c| c.threads(2), "does not take a threads bound"),
];

/// `kind`, named `name`, runs without profiling or bound, and refuses each configuration of
/// `refused` (applied to a run of it) with an `Error::Config` whose message contains the
/// given words, and names the strategy when `names_itself`.
pub fn assert_runs_without_guarantee(
    kind: StrategyKind,
    name: &str,
    refused: &[Refusal],
    names_itself: bool,
) {
    assert_eq!(StrategyKind::from_name(name), Some(kind.clone()));
    assert_eq!(kind.name(), name);
    assert!(!kind.is_priority());

    let config = || Config::new().ignore_env().seed(0).strategy(kind.clone()).workers(1);
    let report = config().iterations(50).run(correct_pair);
    assert!(report.is_ok(), "{:?}", report.failure());
    assert_eq!(report.executions, 50, "no profiling executions");
    assert_eq!(report.strategy, name);
    assert!(report.guarantee.is_none() && report.bound.is_none() && report.profile.is_none());

    for (refuse, what) in refused {
        let report = refuse(config()).run(correct_pair);
        assert!(report.failure().is_none(), "{what}: a refused configuration is not a bug");
        let error = report.error().expect("refused");
        assert!(matches!(error, Error::Config { .. }), "{what}: {error:?}");
        assert!(error.message().contains(what), "{error}");
        if names_itself {
            assert!(error.message().contains(name), "{error}");
        }
    }
}

/// A run of `config` on `body` finds the same first failure (execution and replay token) when
/// repeated on one worker and on each of `workers`: a strategy's run depends on its seed
/// only, not on how many OS threads it may use.
pub fn assert_same_run_on_workers(config: Config, body: fn(), workers: &[usize]) {
    let run = |w: usize| {
        let report = config.clone().workers(w).run(body);
        let f = report.failure().expect("the run finds the bug").clone();
        (f.execution, f.token)
    };
    let first = run(1);
    assert_eq!(first, run(1), "the same run twice on one worker");
    for &w in workers {
        assert_eq!(first, run(w), "{w} workers");
    }
}

/// Runs [`correct_pair`] with a depth bound and no named strategy (the combined strategy) and
/// `explorer` as its exploring half (`Config::explorer`; the corpus's `default-pf` and
/// `default-uniform` columns): seed 0, one worker, 100 search executions. Checks what any such
/// half must do: the run's description names `name` as 1 in 2, the profile's note says the
/// search ran `long_name` in 50 of the 100, and the guarantee counts only the strategy's 50.
/// Returns the report for the caller's own checks.
#[allow(dead_code)] // used by the test files of the strategies that can be that half
pub fn assert_explores_beside_a_target(
    explorer: StrategyKind,
    name: &str,
    long_name: &str,
) -> pctvb::Report {
    let report = Config::new()
        .ignore_env()
        .seed(0)
        .workers(1)
        .depth(2)
        .iterations(100)
        .explorer(explorer)
        .run(correct_pair);
    assert!(report.is_ok(), "{:?}", report.failure());
    let suffix = format!(" + {name} 1 in 2");
    assert!(report.strategy.ends_with(&suffix), "{}", report.strategy);
    let profile = report.profile.as_ref().expect("a priority strategy's profile");
    let note = format!("50 of the 100 search executions ran {long_name}");
    assert!(profile.notes.iter().any(|n| n.starts_with(&note)), "{:?}", profile.notes);
    let guarantee = report.guarantee.as_ref().expect("a passing run with a bound states it");
    assert_eq!(guarantee.executions, 50);
    report
}
