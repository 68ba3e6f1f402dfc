//! Every execution of a variable-bounding search over `#[pctvb::instrument]`ed code measures the
//! sharing and access count of every variable, including those its strategy did not choose
//! (whose accesses are not scheduling points): a variable that the profiling executions never
//! saw shared, and that a search execution then shares, raises the counts (the execution
//! exceeds them, `Q` and `k_q` grow, the bound is recomputed) instead of staying out of `Q`
//! for the whole run (issue #14, item 3).
//!
//! The program: a writer makes `STEPS` increments of an atomic, then writes a heap integer
//! (reached through a raw pointer) to a transient value and back; a reader reads the integer
//! only when it sees every increment done. Random profiling almost never lets the writer finish
//! its increments before the reader looks (and with the seeds here, never does), so profiling
//! sees the heap integer private to the writer; a priority schedule that runs the writer first
//! shares it in a large fraction of executions. The bug (the reader sees the transient value)
//! has depth 2 on that one variable.
//!
//! Every run uses a fixed seed and profiles with the random walk only
//! (`explore_every(0)`: the guarantee is about the priority strategy's own executions);
//! the assertions hold for those seeds.
//!
//! The programs race on purpose (the lost update or stale read the assertions look for): the
//! data-race check of instrumented pointer accesses (`tests/instrument_races.rs`) would report
//! the race before the bug's value shows, so these runs turn it off (`race_detection(false)`).

use pctvb::guarantee::{wilson_interval, z_for_confidence};
use pctvb::{Config, StrategyKind};

#[pctvb::instrument(force)]
mod rare {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::thread;

    /// Increments the writer makes before it touches the heap integer.
    pub const STEPS: usize = 12;

    pub struct Shared {
        progress: AtomicUsize,
        value: *mut u64,
    }

    // SAFETY: `value` is a heap integer the threads access without synchronization (the race
    // is what the tests look at); it is freed after both threads are joined.
    unsafe impl Send for Shared {}
    unsafe impl Sync for Shared {}

    /// The writer writes `transient` then 0 to the heap integer, `writes` times; the reader,
    /// when it sees the writer's increments all done, reads it and fails on `transient`
    /// (`transient = 0`: a correct program).
    pub fn rarely_shared(transient: u64, writes: usize) {
        let s = Arc::new(Shared {
            progress: AtomicUsize::new(0),
            value: Box::into_raw(Box::new(0u64)),
        });
        let w = s.clone();
        let writer = thread::spawn(move || {
            for _ in 0..STEPS {
                w.progress.fetch_add(1, Ordering::SeqCst);
            }
            for _ in 0..writes {
                unsafe { *w.value = transient };
                unsafe { *w.value = 0 };
            }
        });
        let r = s.clone();
        let reader = thread::spawn(move || {
            if r.progress.load(Ordering::SeqCst) == STEPS {
                let v = unsafe { *r.value };
                assert!(transient == 0 || v != transient, "the reader saw the transient value");
            }
        });
        writer.join().unwrap();
        reader.join().unwrap();
        unsafe { drop(Box::from_raw(s.value)) };
    }
}

const BUG: &str = "the reader saw the transient value";

fn buggy() {
    rare::rarely_shared(1, 1);
}

fn correct() {
    rare::rarely_shared(0, 10);
}

fn pctvb() -> StrategyKind {
    StrategyKind::Pctvb { depth: 2, vars: 1 }
}

fn combined() -> StrategyKind {
    StrategyKind::Combined { depth: 2, vars: 1, threads: 2 }
}

/// The sampled search alone (no explorer, no enumeration of a confidence target's class):
/// these tests are about the counts it learns.
fn config(kind: &StrategyKind, seed: u64) -> Config {
    Config::new()
        .race_detection(false)
        .ignore_env()
        .strategy(kind.clone())
        .seed(seed)
        .explore_every(0)
        .enumerate(false)
        .minimize_runs(20)
}

/// Seeds whose 10 profiling executions never share the heap integer (with the schedule
/// generator of `src/schedulers/rng.rs`, 3 of the seeds 0..24 do: 2, 3 and 14; the sharing
/// is rare under random profiling, not impossible).
const SEEDS: [u64; 4] = [0, 1, 4, 5];
/// A seed among [`SEEDS`] whose search (not its profiling) shares the variable, for the tests
/// of what the run learns then.
const LEARNING_SEED: u64 = 1;

/// The run's variable-table entry of the heap integer (`Box::new` in `rarely_shared`).
fn heap_integer(report: &pctvb::Report) -> pctvb::report::VarProfile {
    let vars = pctvb::instrument::variables();
    let var = vars
        .iter()
        .find(|v| v.name == "Box::new(Shared.value)")
        .unwrap_or_else(|| panic!("the static pass found the heap integer: {vars:#?}"));
    let row = report.stats.variables.iter().find(|(info, _)| info.site == var.location);
    row.expect("the heap integer is in the run's variable table").1.clone()
}

#[test]
fn profiling_never_sees_the_heap_integer_shared() {
    // What the tests below rest on: with these seeds the 10 profiling executions never share
    // the heap integer (the writer accesses it alone), so `Q` after profiling lacks it.
    for kind in [pctvb(), combined()] {
        for seed in SEEDS {
            let report = config(&kind, seed).iterations(1).run(correct);
            let profile = report.profile.as_ref().expect("a profiled run");
            assert_eq!(profile.shared_variables, 1, "only the atomic: {profile:?}");
        }
    }
}

#[test]
fn a_depth_2_bug_on_a_variable_first_shared_in_the_search_is_found() {
    // Before every execution measured every variable, the heap integer never entered `Q`:
    // the search never chose it, its accesses never became scheduling points, and every run
    // passed with a guarantee at 0.9.
    for kind in [pctvb(), combined()] {
        for seed in SEEDS {
            let report = config(&kind, seed).confidence(0.9).run(buggy);
            assert!(report.guarantee.is_none(), "{kind:?} seed {seed}: {}", report.summary());
            let failure = report.failure().unwrap_or_else(|| {
                panic!("{kind:?} seed {seed}: the bug was not found\n{}", report.summary())
            });
            assert!(failure.message.contains(BUG), "{failure}");
            let profile = report.profile.as_ref().expect("a profiled run");
            assert!(profile.exceeded >= 1, "{profile:?}");
        }
    }
}

#[test]
fn a_passing_run_prints_no_guarantee_the_measured_rate_contradicts() {
    // The strategy's per-execution rate on the bug, measured with the counts it learns.
    let z = z_for_confidence(0.999).unwrap();
    for kind in [pctvb(), combined()] {
        let (executions, hits) = config(&kind, 100).iterations(3000).count_failures(buggy);
        let (_, high) = wilson_interval(hits, executions, z);
        let mut passed = 0;
        for seed in 0..20 {
            let report = config(&kind, seed).confidence(0.9).minimize_runs(0).run(buggy);
            if report.failure().is_some() {
                continue;
            }
            passed += 1;
            let bound = report.bound.as_ref().expect("a passing run has a bound");
            assert!(
                bound.p() <= high,
                "{kind:?} seed {seed}: the printed bound {} is above the measured rate \
                 ({hits} of {executions}, Wilson 99.9% upper limit {high})\n{}",
                bound.p(),
                report.summary()
            );
        }
        // At confidence 0.9 at most 10% of runs may pass on a bug of the class: 2 of 20
        // expected at worst; 6 or more would be a failing statement (P < 1.2% if it holds).
        assert!(passed <= 5, "{kind:?}: {passed} of 20 runs passed at confidence 0.9");
    }
}

#[test]
fn a_variable_first_shared_in_the_search_enters_the_table_q_and_k_q() {
    // The correct program: the writer writes the heap integer 20 times, more accesses than
    // the atomic's 13, so the printed largest k_q is the heap integer's once it is learned.
    for kind in [pctvb(), combined()] {
        let report = config(&kind, LEARNING_SEED).confidence(0.9).run(correct);
        assert!(report.failure().is_none(), "{}", report.failure().unwrap());
        let profile = report.profile.as_ref().expect("a profiled run");
        // Profiling: the atomic alone is shared; its k_q is STEPS + 1.
        assert_eq!(profile.shared_variables, 1, "{profile:?}");
        assert_eq!(profile.max_kq, rare::STEPS as u64 + 1, "{profile:?}");
        // A search execution shared the heap integer: it exceeded the counts.
        assert!(profile.exceeded >= 1, "{profile:?}");
        assert!(
            profile.notes.iter().any(|n| n.contains("shared variables 1 -> 2")),
            "{:?}",
            profile.notes
        );
        assert_eq!(profile.final_shared_variables, 2, "{profile:?}");
        assert_eq!(profile.final_max_kq, 21, "{profile:?}");
        // The run's table has it, shared, with its k_q: 20 writes and one read.
        let heap = heap_integer(&report);
        assert!(heap.shared, "{heap:?}");
        assert_eq!(heap.max_accesses, 21, "{heap:?}");
        assert!(report.variable_table().contains("Heap"), "{}", report.variable_table());
        // The statement counts it in Q and prints its k_q.
        let g = report.guarantee.as_ref().expect("a passing run states its guarantee");
        assert_eq!(g.shared_variables, 2 + g.static_only_variables, "{g}");
        assert_eq!(g.max_kq, 21, "{g}");
        assert!(g.exceeded_runs >= 1, "{g}");
        let text = g.to_string();
        assert!(text.contains("k_q <= 21"), "{text}");
    }
}

/// The same program with the variable of the bug a `static mut` (reached by name, an access
/// the pass turns into a pointer access) or an atomic (a primitive whose operations gating
/// makes no scheduling points while the execution does not track it).
#[pctvb::instrument(force)]
#[allow(static_mut_refs)]
mod rare_kinds {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::thread;

    const STEPS: usize = 12;

    static mut VALUE: u64 = 0;

    pub fn static_variable(transient: u64, writes: usize) {
        let progress = Arc::new(AtomicUsize::new(0));
        let p = progress.clone();
        let writer = thread::spawn(move || {
            unsafe { VALUE = 0 };
            for _ in 0..STEPS {
                p.fetch_add(1, Ordering::SeqCst);
            }
            for _ in 0..writes {
                unsafe { VALUE = transient };
                unsafe { VALUE = 0 };
            }
        });
        let reader = thread::spawn(move || {
            if progress.load(Ordering::SeqCst) == STEPS {
                let v = unsafe { VALUE };
                assert!(transient == 0 || v != transient, "the reader saw the transient value");
            }
        });
        writer.join().unwrap();
        reader.join().unwrap();
    }

    pub struct Pair {
        progress: AtomicUsize,
        value: AtomicU64,
    }

    pub fn atomic_variable(transient: u64, writes: usize) {
        let s = Arc::new(Pair { progress: AtomicUsize::new(0), value: AtomicU64::new(0) });
        let w = s.clone();
        let writer = thread::spawn(move || {
            for _ in 0..STEPS {
                w.progress.fetch_add(1, Ordering::SeqCst);
            }
            for _ in 0..writes {
                w.value.store(transient, Ordering::SeqCst);
                w.value.store(0, Ordering::SeqCst);
            }
        });
        let reader = thread::spawn(move || {
            if s.progress.load(Ordering::SeqCst) == STEPS {
                let v = s.value.load(Ordering::SeqCst);
                assert!(transient == 0 || v != transient, "the reader saw the transient value");
            }
        });
        writer.join().unwrap();
        reader.join().unwrap();
    }
}

#[test]
fn a_static_or_an_atomic_first_shared_in_the_search_is_learned_too() {
    // (variable name, program, its k_q in the correct program: 20 writes and one read, plus
    // the writer's reset of the static)
    type Program = fn(u64, usize);
    let programs: [(&str, Program, u64); 2] = [
        ("static VALUE", rare_kinds::static_variable, 22),
        ("Pair.value", rare_kinds::atomic_variable, 21),
    ];
    let vars = pctvb::instrument::variables();
    for (name, program, kq) in programs {
        let var = vars.iter().find(|v| v.name == name).expect("the static pass found it");
        for kind in [pctvb(), combined()] {
            let report = config(&kind, LEARNING_SEED).confidence(0.9).run(|| program(0, 10));
            assert!(report.failure().is_none(), "{}", report.failure().unwrap());
            let profile = report.profile.as_ref().expect("a profiled run");
            assert_eq!(profile.shared_variables, 1, "{name}: {profile:?}");
            assert!(profile.exceeded >= 1, "{name}: {profile:?}");
            assert_eq!(profile.final_shared_variables, 2, "{name}: {profile:?}");
            let row = report.stats.variables.iter().find(|(info, _)| info.site == var.location);
            let (_, measured) = row.expect("the variable is in the run's table");
            assert!(measured.shared, "{name}: {measured:?}");
            assert_eq!(measured.max_accesses, kq, "{name}: {measured:?}");
            let g = report.guarantee.as_ref().expect("a passing run states its guarantee");
            assert_eq!(g.max_kq, kq, "{name}: {g}");

            for seed in SEEDS {
                let report = config(&kind, seed).confidence(0.9).run(|| program(1, 1));
                let failure = report.failure().unwrap_or_else(|| {
                    panic!("{name}, {kind:?} seed {seed}: not found\n{}", report.summary())
                });
                assert!(failure.message.contains(BUG), "{failure}");
            }
        }
    }
}
