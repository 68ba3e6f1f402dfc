//! Variable-bounding searches over `#[pctvb::instrument]`ed code track their chosen variables
//! themselves: profiling tracks every variable the static pass found (so heap data reached
//! through raw pointers is measured and interleaved), each search execution tracks only the
//! variables its strategy chose, and a failure's replay token carries that session.
//!
//! Every run here uses a fixed seed; the assertions that a bug is found hold for those seeds.
//!
//! The programs race on purpose (the lost update or stale read the assertions look for): the
//! data-race check of instrumented pointer accesses (`tests/instrument_races.rs`) would report
//! the race before the bug's value shows, so these runs turn it off (`race_detection(false)`).

use pctvb::instrument;
use pctvb::Config;

#[pctvb::instrument(force)]
mod counter {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::thread;

    pub struct Counter {
        value: *mut u64,
        noise: AtomicUsize,
    }

    // SAFETY: `value` is a heap integer both threads update; the race on it is the bug the
    // tests look for, and it is freed only after both threads are done.
    unsafe impl Send for Counter {}
    unsafe impl Sync for Counter {}

    impl Counter {
        /// `noise` atomic increments, then a read-modify-write of the heap integer through a
        /// raw pointer that is not atomic: a lost update.
        fn bump(&self, noise: usize) {
            for _ in 0..noise {
                self.noise.fetch_add(1, Ordering::SeqCst);
            }
            let v = unsafe { *self.value };
            unsafe { *self.value = v + 1 };
        }
    }

    pub fn lost_update(noise: usize) {
        let c =
            Arc::new(Counter { value: Box::into_raw(Box::new(0u64)), noise: AtomicUsize::new(0) });
        let c2 = c.clone();
        let h = thread::spawn(move || c2.bump(noise));
        c.bump(noise);
        h.join().unwrap();
        let v = unsafe { *c.value };
        unsafe { drop(Box::from_raw(c.value)) };
        assert_eq!(v, 2, "an increment was lost");
    }

    /// Two threads count on the atomic only: correct, and the heap integer is allocated but
    /// never read or written.
    pub fn noise_only(noise: usize) {
        let c =
            Arc::new(Counter { value: Box::into_raw(Box::new(0u64)), noise: AtomicUsize::new(0) });
        let c2 = c.clone();
        let h = thread::spawn(move || c2.noise.fetch_add(noise, Ordering::SeqCst));
        c.noise.fetch_add(noise, Ordering::SeqCst);
        h.join().unwrap();
        assert_eq!(c.noise.load(Ordering::SeqCst), 2 * noise);
        unsafe { drop(Box::from_raw(c.value)) };
    }

    /// Never called: its variable is one no execution meets.
    pub fn unused() -> usize {
        AtomicUsize::new(7).load(Ordering::SeqCst)
    }
}

fn search(seed: u64) -> Config {
    Config::new()
        .race_detection(false)
        .ignore_env()
        .seed(seed)
        .depth(2)
        .vars(1)
        .iterations(3000)
        .minimize_runs(50)
}

/// The strategy text of a failure's token.
fn token_strategy(report: &pctvb::Report) -> String {
    let token = report.failure().and_then(|f| f.token.clone()).expect("a token");
    pctvb::__internals::replay::decode(&token).expect("a valid token").strategy
}

#[test]
fn raw_pointer_accesses_are_scheduling_points_only_under_a_session() {
    // Without a session the heap integer's accesses are not scheduling points: the read and
    // the write of an increment cannot be separated, so no execution can lose one.
    let untracked = search(1).instrument_tracking(false).run(|| counter::lost_update(3));
    assert!(untracked.failure().is_none(), "{}", untracked.failure().unwrap());
    let tracked = search(1).run(|| counter::lost_update(3));
    let failure = tracked.failure().expect("the lost update is found with tracking on");
    assert!(failure.message.contains("an increment was lost"), "{}", failure.message);
}

#[test]
fn failures_replay_under_the_session_their_token_names() {
    let (mut profiling, mut searching) = (0, 0);
    for seed in 0..12 {
        // The strategy alone: the walk's executions track every variable (tested below).
        let report = search(seed).profile_runs(1).explore_every(0).run(|| counter::lost_update(3));
        let Some(failure) = report.failure() else { continue };
        let strategy = token_strategy(&report);
        assert!(strategy.contains(" [instrument: "), "{strategy}");
        if strategy.contains("[instrument: all]") {
            profiling += 1;
        } else {
            // Found by the search: the execution tracked the one variable it chose.
            assert!(strategy.contains("[instrument: gate "), "{strategy}");
            assert!(strategy.contains("tests/instrument_search.rs:"), "{strategy}");
            searching += 1;
            // The execution chose the heap integer: the noise atomic's accesses were gated.
            let noise: Vec<_> =
                failure.schedule.iter().filter(|s| s.operation.contains("Atomic")).collect();
            assert!(noise.is_empty(), "{failure}");
        }
        let token = failure.token.clone().unwrap();
        let replay = Config::new()
            .race_detection(false)
            .ignore_env()
            .replay(token)
            .run(|| counter::lost_update(3));
        let again = replay.failure().expect("the replay fails again");
        assert_eq!(again.message, failure.message);
        assert_eq!(again.kind, failure.kind, "{again}");
    }
    assert!(searching > 0, "no seed found the bug in the search phase");
    assert!(profiling + searching >= 6, "the bug was found for {profiling} + {searching} seeds");
}

#[test]
fn a_failure_of_the_default_explorer_tracked_every_variable_and_replays() {
    let mut explored = 0;
    for seed in 0..12 {
        let report = search(seed).profile_runs(1).run(|| counter::lost_update(3));
        let Some(failure) = report.failure() else { continue };
        let strategy = token_strategy(&report);
        // Found by the explorer (revfuzz) in a search execution: it tracked every variable.
        if !strategy.starts_with("revfuzz,") || !strategy.contains("[instrument: gate all]") {
            continue;
        }
        explored += 1;
        let token = failure.token.clone().unwrap();
        let replay = Config::new()
            .race_detection(false)
            .ignore_env()
            .replay(token)
            .run(|| counter::lost_update(3));
        assert_eq!(replay.failure().expect("the replay fails again").message, failure.message);
    }
    assert!(explored > 0, "no seed found the bug in a search execution of the explorer");
}

#[test]
fn a_token_naming_a_variable_this_program_lacks_is_a_clear_error() {
    let token = pctvb::__internals::replay::encode(&pctvb::__internals::replay::ReplayToken {
        strategy: "combined(d=2,v=1,t=2) [instrument: gate src/elsewhere.rs:1:1]".into(),
        choices: vec![0, 0],
        ..Default::default()
    });
    let report = Config::new()
        .race_detection(false)
        .ignore_env()
        .replay(token)
        .run(|| counter::lost_update(1));
    let error = report.error().expect("an error report");
    assert!(matches!(error, pctvb::Error::Token { .. }), "{error:?}");
    assert!(error.message().contains("src/elsewhere.rs:1:1"), "{error}");
}

#[test]
fn q_counts_the_variables_of_entered_items_that_profiling_never_accessed() {
    let _ = counter::unused;
    let unused = instrument::variables()
        .into_iter()
        .find(|v| v.name.contains("AtomicUsize") && v.line > 60)
        .expect("the never-called function's atomic");
    let run = |tracking: bool| {
        Config::new()
            .race_detection(false)
            .ignore_env()
            .seed(3)
            .depth(2)
            .vars(1)
            .iterations(20)
            .instrument_tracking(tracking)
            .run(|| counter::noise_only(1))
    };
    let report = run(true);
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());
    let listed = report.stats.variables.iter().find(|(info, _)| info.site == unused.location);
    let (_, profile) = listed.expect("the never-met variable is in the run's table");
    assert_eq!(profile.max_accesses, 0);
    assert!(!profile.shared);
    assert!(report.notes.iter().any(|n| n.contains("never met")), "{:?}", report.notes);

    // Q is the shared variables plus the variables of the entered module no profiling
    // execution accessed: the never-called function's atomic among them.
    let shared = report.stats.variables.iter().filter(|(_, p)| p.shared).count() as u64;
    let unaccessed = report.stats.variables.iter().filter(|(_, p)| p.max_accesses == 0).count();
    let g = report.guarantee.as_ref().expect("a passing run states its guarantee");
    assert!(shared >= 1 && g.static_only_variables >= 1, "{g}");
    assert_eq!(g.static_only_variables, unaccessed as u64, "{g}");
    assert_eq!(g.shared_variables, shared + g.static_only_variables, "{g}");
    let text = g.to_string();
    assert!(text.contains("found by #[pctvb::instrument] but never accessed"), "{text}");
    assert!(report.summary().contains("no profiling execution accessed"), "{}", report.summary());

    // Without the instrumentation driven by the run, Q is what profiling saw shared.
    let plain = run(false);
    let g = plain.guarantee.as_ref().expect("a passing run states its guarantee");
    assert_eq!(g.static_only_variables, 0, "{g}");
    assert!(g.to_string().contains("shared variables"), "{g}");
}

#[test]
fn the_systematic_search_interleaves_raw_pointer_accesses_without_a_session_of_the_users() {
    use pctvb::StrategyKind;
    let systematic = |tracking: bool| {
        Config::new()
            .race_detection(false)
            .ignore_env()
            .seed(5)
            .profile_runs(1)
            .iterations(2000)
            .strategy(StrategyKind::systematic(1, 1, 2))
            .instrument_tracking(tracking)
            .run(|| counter::lost_update(2))
    };
    // Untracked, the heap integer's read and write are one step: no schedule loses an update,
    // and the search is exhaustive for its bounds.
    let untracked = systematic(false);
    assert!(untracked.failure().is_none(), "{}", untracked.failure().unwrap());
    assert!(untracked.systematic.as_ref().unwrap().complete);
    // Tracked, one preemption at the heap integer is enough; the search itself finds it.
    let tracked = systematic(true);
    let found = tracked.systematic.as_ref().unwrap().found_at;
    assert_eq!(found.map(|(v, _, c)| (v, c)), Some((1, 1)), "{:?}", tracked.systematic);
    let failure = tracked.failure().expect("the lost update");
    assert!(token_strategy(&tracked).ends_with(" [instrument: all]"));
    let token = failure.token.clone().unwrap();
    let replay = Config::new()
        .race_detection(false)
        .ignore_env()
        .replay(token)
        .run(|| counter::lost_update(2));
    assert_eq!(replay.failure().expect("the replay fails again").message, failure.message);
}

/// PCT and thread bounding do not bound variables: they track every instrumented variable,
/// without gating, for the whole run, so the heap integer's accesses are scheduling points in
/// every execution their bound counts. Before, they passed over this lost update with a
/// guarantee (0 failures in 20,000 executions against a printed 1/21): its accesses were no
/// points at all. The measured rate must reach the printed bound, and a failure's token names
/// the session, so its replay interleaves the same points.
#[test]
fn pct_and_thread_bounding_interleave_instrumented_accesses_at_their_bound() {
    #[path = "common/bounds.rs"]
    mod bounds;
    for kind in [
        pctvb::StrategyKind::Pct { depth: 2 },
        pctvb::StrategyKind::ThreadBound { threads: 2, preemptions: 1 },
    ] {
        let counting = Config::new()
            .race_detection(false)
            .ignore_env()
            .seed(4)
            .strategy(kind.clone())
            .iterations(2000)
            .stop_at_first_failure(false)
            .run(|| counter::lost_update(0));
        assert!(counting.failures > 0, "{kind:?}: the lost update was never interleaved");
        bounds::assert_rate_reaches_bound(&kind, &counting);
        let first = Config::new()
            .race_detection(false)
            .ignore_env()
            .seed(4)
            .strategy(kind.clone())
            .iterations(2000)
            .run(|| counter::lost_update(0));
        let failure = first.failure().expect("found");
        let strategy = token_strategy(&first);
        assert!(strategy.ends_with(" [instrument: all]"), "{kind:?}: {strategy}");
        let replay = Config::new()
            .race_detection(false)
            .ignore_env()
            .replay(failure.token.clone().unwrap())
            .run(|| counter::lost_update(0));
        assert_eq!(replay.failure().expect("the replay fails again").message, failure.message);
    }
}
