//! The uniform random walk (`strategy = "uniform"`, `StrategyKind::UniformWalk`) through the
//! public API: it finds the paper-figure bugs and a 2-thread bug among many threads, never
//! fails a correct program, replays its failures exactly from their token, and is a run of
//! its own (no guarantee, no parameters, no profiling, serial).
//!
//! Every run uses a fixed seed and `ignore_env`; where a bug must be found the budget is well
//! above what the seeds need, and assertions are on behaviour, not on a seed's particulars.
//! The programs are the paper figures of `tests/common/paper_figures.rs` and the corpus's
//! thread-scaling family (`corpus/src/programs/families.rs`).

use pctvb::{Config, FailureKind, StrategyKind};

fn config(seed: u64) -> Config {
    Config::new().ignore_env().seed(seed).strategy(StrategyKind::UniformWalk).workers(1)
}

#[path = "common/correct_programs.rs"]
mod correct_programs;
#[path = "common/no_guarantee.rs"]
mod no_guarantee;
#[path = "common/paper_figures.rs"]
mod paper_figures;
#[path = "common/replays.rs"]
mod replays;
use correct_programs::assert_never_fails;
use no_guarantee::{
    assert_runs_without_guarantee, assert_same_run_on_workers, correct_pair, executions_to_bug,
    WALK_REFUSALS,
};
use paper_figures::{figure_10, figure_3, figure_4};

/// The corpus's programs import threads and synchronization from a facade named `rt`.
#[allow(dead_code)]
mod corpus {
    pub mod rt {
        pub use pctvb::{sync, thread};
    }
    /// The thread-scaling family: a 2-thread bug among `n` threads, where the checker's one
    /// load must land late among the setter's events, which the naive walk rarely does.
    pub mod families {
        include!("../corpus/src/programs/families.rs");
    }
}
use corpus::families::thread_scaling;

const SCALING: [(usize, fn()); 3] =
    [(3, || thread_scaling(3)), (20, || thread_scaling(20)), (100, || thread_scaling(100))];

#[test]
fn finds_the_paper_figure_bugs() {
    for (name, body) in
        [("figure 3", figure_3 as fn()), ("figure 4", figure_4), ("figure 10", figure_10)]
    {
        for seed in 0..5 {
            let found = executions_to_bug(StrategyKind::UniformWalk, body, seed, 2000);
            assert!(found.is_some(), "{name}, seed {seed}: not found in 2000 executions");
        }
    }
}

#[test]
fn finds_a_two_thread_bug_among_n_threads_far_sooner_than_the_naive_walk() {
    for (n, body) in SCALING {
        let (mut uniform, mut random) = (0, 0);
        for seed in 0..10 {
            let u = executions_to_bug(StrategyKind::UniformWalk, body, seed, 1000);
            let r = executions_to_bug(StrategyKind::Random, body, seed, 5000);
            uniform += u.unwrap_or_else(|| panic!("n={n}, seed {seed}: uniform missed it"));
            random += r.unwrap_or(5000);
        }
        // Measured (these seeds, the generator of src/schedulers/rng.rs): 186, 114 and 108
        // executions in all under the uniform walk for n = 3, 20, 100, against 1115, 1780 and
        // 1780 under the naive one; over 40 seeds at n = 3, a mean of 14 against 220. The
        // spread per seed is wide (geometric), so the sum runs over 10 seeds.
        assert!(uniform * 5 < random, "n={n}: uniform {uniform} executions, random {random}");
    }
}

#[test]
fn never_fails_a_correct_program() {
    assert_never_fails(config, 500);
}

#[test]
fn failures_replay_exactly_from_their_token() {
    // Thread scaling's failure comes after some executions, whose counts shaped the failing
    // one's weights: the token must not depend on them.
    let bodies: [(&str, fn()); 3] = [
        ("uniform_walk::figure_3", figure_3),
        ("uniform_walk::figure_10", figure_10),
        ("uniform_walk::thread_scaling", || thread_scaling(20)),
    ];
    for (name, body) in bodies {
        let report = config(4).name(name).iterations(2000).run(body);
        let failure = report.failure().unwrap_or_else(|| panic!("{name}: not found"));
        assert_eq!(failure.kind, FailureKind::Panic);
        let token = failure.token.clone().expect("a token");
        for _ in 0..2 {
            let replay = config(99).name(name).replay(token.clone()).run(body);
            replays::assert_reproduces(&replay, failure);
        }
    }
}

#[test]
fn same_seed_same_run_and_workers_do_not_change_it() {
    let run = |seed: u64, workers: usize| {
        let report = config(seed).workers(workers).iterations(1000).run(|| thread_scaling(5));
        let f = report.failure().expect("found").clone();
        (f.execution, f.token, report.strategy)
    };
    // Executions after the first depend only on the first, which every worker runs to learn
    // from: the run is the same on any number of OS threads.
    assert_same_run_on_workers(config(1).iterations(1000), || thread_scaling(5), &[2, 4]);
    let first = run(1, 1);
    assert_eq!(first.2, "uniform");
    let others: Vec<_> = (2..6).map(|s| run(s, 1)).collect();
    assert!(others.iter().any(|o| o.0 != first.0 || o.1 != first.1));
    for seed in 2..6 {
        assert_eq!(run(seed, 3), others[seed as usize - 2], "seed {seed}");
    }
}

#[test]
fn a_passing_parallel_run_is_the_serial_run() {
    let run = |workers: usize| {
        let report = config(3).workers(workers).iterations(600).run(correct_pair);
        assert!(report.is_ok(), "{:?}", report.failure());
        (report.executions, report.stats.distinct_schedules, report.stats.max_steps)
    };
    let serial = run(1);
    assert_eq!(serial.0, 600);
    assert_eq!(run(2), serial);
    assert_eq!(run(4), serial);
}

#[test]
fn every_shard_learns_from_execution_0_and_only_its_owner_counts_it() {
    // Shard 2 of 2 owns the odd indices; it runs execution 0 as well, to learn from it, so its
    // executions choose as they do in the unsharded run. Execution 0 is shard 1's: shard 2
    // does not count it, so the shards' executions add up to the budget (it counted 1 + 300,
    // the two shards 601), and its report says why it ran one more than it counts.
    let sharded = |k: u64, workers: usize| {
        config(4).workers(workers).shard(k, 2).iterations(600).run(correct_pair)
    };
    let learns = |r: &pctvb::Report| r.notes.iter().any(|n| n.contains("execution 0 belongs"));
    let serial = sharded(2, 1);
    assert!(serial.is_ok(), "{:?}", serial.failure());
    assert_eq!(serial.executions, 300);
    assert!(learns(&serial), "{:?}", serial.notes);
    let parallel = sharded(2, 2);
    assert_eq!(parallel.executions, serial.executions);
    assert_eq!(parallel.stats.distinct_schedules, serial.stats.distinct_schedules);
    assert!(learns(&parallel), "{:?}", parallel.notes);
    for workers in [1, 2] {
        let owner = sharded(1, workers);
        assert_eq!(owner.executions + serial.executions, 600, "{workers} workers");
        assert!(!learns(&owner), "{:?}", owner.notes);
    }
}

#[test]
fn is_a_strategy_without_guarantee_parameters_or_profiling() {
    assert_runs_without_guarantee(StrategyKind::UniformWalk, "uniform", WALK_REFUSALS, true);
}

#[pctvb::test(strategy = "uniform", iterations = 200, seed = 3)]
fn the_attribute_takes_the_uniform_strategy() {
    correct_pair();
}
