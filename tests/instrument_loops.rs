//! Loop-iteration bounding (PCTVB paper, Figure 5): an allocation is tracked only if its site
//! allocated at most `l` times before with the same call stack in the execution; call stacks
//! come from the shadow stack instrumented functions maintain.
//!
//! The programs race on purpose (the lost update or stale read the assertions look for): the
//! data-race check of instrumented pointer accesses (`tests/instrument_races.rs`) would report
//! the race before the bug's value shows, so these runs turn it off (`race_detection(false)`).

use pctvb::instrument::{self, Selection};
use pctvb::sync::Arc;

#[pctvb::instrument(force)]
mod cells {
    pub struct Cell {
        v: *mut u64,
    }

    // SAFETY: the test shares cells between threads on purpose (the race is the point).
    unsafe impl Send for Cell {}
    unsafe impl Sync for Cell {}

    fn alloc() -> *mut u64 {
        Box::into_raw(Box::new(0u64))
    }

    /// `n` cells from one call stack (`make` -> `alloc`): loop-iteration numbers 0..n.
    pub fn make(n: usize) -> Vec<Cell> {
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(Cell { v: alloc() });
        }
        out
    }

    /// One cell from another call stack (`make_one` -> `alloc`): loop-iteration number 0.
    pub fn make_one() -> Cell {
        Cell { v: alloc() }
    }

    impl Cell {
        pub fn bump(&self) {
            unsafe {
                let x = *self.v;
                *self.v = x + 1;
            }
        }

        pub fn get(&self) -> u64 {
            unsafe { *self.v }
        }
    }
}

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Two threads bump cell `which` of three made in a loop; the lost update shows only if that
/// cell is tracked.
fn race_on(which: usize) -> impl Fn() {
    move || {
        let cs = Arc::new(cells::make(3));
        let _other = cells::make_one();
        let cs2 = cs.clone();
        let h = pctvb::thread::spawn(move || cs2[which].bump());
        cs[which].bump();
        h.join().unwrap();
        assert_eq!(cs[which].get(), 2, "an increment was lost");
    }
}

#[test]
fn loop_iteration_numbers_follow_call_stacks() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tracking = instrument::track(Selection::All).loop_bound(Some(0));
    let report = pctvb::Config::new().race_detection(false).iterations(10).seed(1).run(|| {
        let _many = cells::make(3);
        let _one = cells::make_one();
    });
    assert!(report.failure().is_none());
    let stats = tracking.stats();
    // Per execution: make's first allocation and make_one's (both number 0) are tracked, make's
    // second and third (numbers 1 and 2) are not. One thread has one schedule: the run stops
    // after its first execution.
    assert!(report.only_schedule && report.executions == 1, "{}", report.summary());
    assert_eq!(stats.heap_instances, 2, "{stats:?}");
    assert_eq!(stats.loop_skipped, 2, "{stats:?}");
}

#[test]
fn a_bug_in_a_later_iteration_needs_a_higher_bound() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    {
        let _tracking = instrument::track(Selection::All).loop_bound(Some(1));
        let report =
            pctvb::Config::new().race_detection(false).iterations(300).seed(2).run(race_on(2));
        assert!(report.failure().is_none(), "cell 2 has loop-iteration number 2 > 1");
    }
    {
        let _tracking = instrument::track(Selection::All).loop_bound(Some(2));
        let report =
            pctvb::Config::new().race_detection(false).iterations(300).seed(2).run(race_on(2));
        let failure = report.failure().expect("with l = 2 cell 2 is tracked");
        assert!(failure.message.contains("an increment was lost"), "{}", failure.message);
    }
    {
        let _tracking = instrument::track(Selection::All).loop_bound(Some(0));
        let report =
            pctvb::Config::new().race_detection(false).iterations(300).seed(2).run(race_on(0));
        assert!(report.failure().is_some(), "cell 0 has loop-iteration number 0");
    }
}

#[test]
fn without_a_loop_bound_every_instance_is_tracked() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tracking = instrument::track(Selection::All);
    let report = pctvb::Config::new().race_detection(false).iterations(5).seed(1).run(|| {
        let _many = cells::make(3);
    });
    assert!(report.failure().is_none());
    assert_eq!(tracking.stats().heap_instances, 3 * report.executions);
    assert_eq!(tracking.stats().loop_skipped, 0);
}

#[test]
fn a_rising_bound_finds_the_bug_at_its_iteration() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let config = pctvb::Config::new().race_detection(false).iterations(200).seed(2);
    let search = instrument::search_loop_bounds(&config, Selection::All, 5, race_on(2));
    assert_eq!(search.failed_at, Some(2), "cell 2 is tracked from l = 2 on");
    let search = instrument::search_loop_bounds(&config, Selection::All, 5, race_on(0));
    assert_eq!(search.failed_at, Some(0));
    let clean = instrument::search_loop_bounds(&config, Selection::All, 2, || {
        let _ = cells::make(3);
    });
    assert_eq!(clean.failed_at, None);
    assert!(clean.report.failure().is_none());
}

#[test]
fn the_exhaustive_search_with_a_rising_bound_proves_the_smaller_bounds_clean() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // One preemption at one variable is enough for the lost update; every schedule within those
    // bounds is run at each l, so the clean levels below l = 2 are proofs, not samples.
    let config = pctvb::Config::new()
        .race_detection(false)
        .ignore_env()
        .seed(2)
        .iterations(10_000)
        .strategy(pctvb::StrategyKind::systematic(1, 1, 2));
    let search = instrument::search_loop_bounds(&config, Selection::All, 5, race_on(2));
    assert_eq!(search.failed_at, Some(2), "cell 2 is tracked from l = 2 on");
    let systematic = search.report.systematic.as_ref().expect("a systematic report");
    assert_eq!(systematic.found_at.map(|(v, _, c)| (v, c)), Some((1, 1)), "{systematic:?}");
    // At l = 1 the search ran to completion without a failure.
    let _tracking = instrument::track(Selection::All).loop_bound(Some(1));
    let clean = config.run(race_on(2));
    assert!(clean.failure().is_none());
    assert!(clean.systematic.as_ref().unwrap().complete, "{:?}", clean.systematic);
}
