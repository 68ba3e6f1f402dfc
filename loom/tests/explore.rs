//! `loom::explore`, `loom::stop_exploring`, `loom::skip_branch` and
//! `model::Builder::expect_explicit_explore`: with exploration off nothing is preempted, so
//! a bug that needs a preemption there is never found, on any seed or strategy; with it on
//! again the same bug is found; assertions still run while it is off; misuse panics as in
//! loom.
//!
//! The tests set `PCTVB_SEED` and `PCTVB_STRATEGY`, so each takes `ENV` first: the
//! environment changes under no other test of this file. Runs that must find a bug use fixed
//! seeds (the lost update below is found by every one of them; a seed that missed it would
//! fail the same way on every machine).
extern crate pctvb_loom as loom;

use std::sync::Mutex;

use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;

static ENV: Mutex<()> = Mutex::new(());

fn env_lock() -> std::sync::MutexGuard<'static, ()> {
    ENV.lock().unwrap_or_else(|e| e.into_inner())
}

/// Two threads increment a counter with a load and a store: the update is lost only when
/// one thread is preempted between its load and its store.
fn lost_update() {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    let h = thread::spawn(move || {
        let v = n2.load(SeqCst);
        n2.store(v + 1, SeqCst);
    });
    let v = n.load(SeqCst);
    n.store(v + 1, SeqCst);
    h.join().unwrap();
    assert_eq!(n.load(SeqCst), 2, "lost update");
}

fn message(err: Box<dyn std::any::Any + Send>) -> String {
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Runs `f` as a model with `seed` and `strategy`; the failure message if it failed.
fn run(strategy: &str, seed: u64, builder: &loom::model::Builder, f: fn()) -> Option<String> {
    std::env::set_var("PCTVB_STRATEGY", strategy);
    std::env::set_var("PCTVB_SEED", seed.to_string());
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| builder.check(f)));
    std::env::remove_var("PCTVB_STRATEGY");
    std::env::remove_var("PCTVB_SEED");
    result.err().map(message)
}

fn builder() -> loom::model::Builder {
    let mut b = loom::model::Builder::new();
    b.max_permutations = Some(300);
    b
}

const STRATEGIES: [&str; 3] = ["random", "pct", "systematic"];
const SEEDS: [u64; 4] = [1, 2, 3, 4];

#[test]
fn the_bug_is_found_while_exploring() {
    let _env = env_lock();
    for strategy in STRATEGIES {
        for seed in SEEDS {
            let msg = run(strategy, seed, &builder(), lost_update)
                .unwrap_or_else(|| panic!("{strategy} seed {seed}: the lost update was missed"));
            assert!(msg.contains("lost update"), "{msg}");
        }
    }
}

#[test]
fn no_preemption_while_exploration_is_off() {
    let _env = env_lock();
    for strategy in STRATEGIES {
        for seed in SEEDS {
            let found = run(strategy, seed, &builder(), || {
                loom::stop_exploring();
                lost_update();
            });
            assert_eq!(found, None, "{strategy} seed {seed}: a preemption while not exploring");
        }
    }
}

#[test]
fn explore_turns_it_on_again() {
    let _env = env_lock();
    for strategy in STRATEGIES {
        for seed in SEEDS {
            let msg = run(strategy, seed, &builder(), || {
                loom::stop_exploring();
                // Set-up without interleavings, then the racy part explored.
                let warm = Arc::new(AtomicUsize::new(0));
                warm.fetch_add(1, SeqCst);
                loom::explore();
                lost_update();
            })
            .unwrap_or_else(|| panic!("{strategy} seed {seed}: missed after explore"));
            assert!(msg.contains("lost update"), "{msg}");
        }
    }
}

#[test]
fn skip_branch_is_for_good_and_still_checks_assertions() {
    let _env = env_lock();
    for strategy in STRATEGIES {
        for seed in SEEDS {
            // `explore` after `skip_branch` does nothing (as in loom): still no preemption.
            let found = run(strategy, seed, &builder(), || {
                loom::skip_branch();
                loom::explore();
                loom::stop_exploring();
                lost_update();
            });
            assert_eq!(found, None, "{strategy} seed {seed}: a preemption after skip_branch");
        }
    }
    // The rest of a skipped branch still runs, and its failure fails the model, with the
    // count of skipping executions in the report.
    let msg = run("random", 1, &builder(), || {
        loom::skip_branch();
        assert_eq!(1 + 1, 3, "checked after skip_branch");
    })
    .expect("a failure after skip_branch fails the model");
    assert!(msg.contains("checked after skip_branch"), "{msg}");
    assert!(msg.contains("execution(s) called loom::skip_branch"), "{msg}");
}

#[test]
fn expect_explicit_explore_starts_without_exploring() {
    let _env = env_lock();
    let mut explicit = builder();
    explicit.expect_explicit_explore = true;
    for strategy in STRATEGIES {
        for seed in SEEDS {
            let found = run(strategy, seed, &explicit, lost_update);
            assert_eq!(found, None, "{strategy} seed {seed}: explored before explore()");
            let msg = run(strategy, seed, &explicit, || {
                loom::explore();
                lost_update();
            })
            .unwrap_or_else(|| panic!("{strategy} seed {seed}: missed after explore"));
            assert!(msg.contains("lost update"), "{msg}");
        }
    }
}

#[test]
fn misuse_panics_as_in_loom() {
    let _env = env_lock();
    let msg = run("random", 1, &builder(), loom::explore).expect("explore while exploring");
    assert!(msg.contains("not in critical state"), "{msg}");
    let msg = run("random", 1, &builder(), || {
        loom::stop_exploring();
        loom::stop_exploring();
    })
    .expect("stop_exploring twice");
    assert!(msg.contains("not in exploring state"), "{msg}");
    for f in [loom::explore, loom::stop_exploring, loom::skip_branch] {
        let err = std::panic::catch_unwind(f).expect_err("outside a model");
        assert!(message(err).contains("outside loom::model"));
    }
}

#[test]
fn a_guarantee_run_warns_and_still_finds_explored_bugs() {
    let _env = env_lock();
    std::env::set_var("PCTVB_CONFIDENCE", "0.9");
    std::env::set_var("PCTVB_SEED", "5");
    let result = std::panic::catch_unwind(|| {
        loom::model(|| {
            loom::stop_exploring();
            loom::explore();
            lost_update();
        })
    });
    std::env::remove_var("PCTVB_CONFIDENCE");
    std::env::remove_var("PCTVB_SEED");
    let msg = message(result.expect_err("the explored race is found"));
    assert!(msg.contains("lost update"), "{msg}");
    assert!(msg.contains("warning: PCTVB_CONFIDENCE's bound"), "{msg}");
}
