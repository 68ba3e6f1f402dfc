//! Minimization: a failure found by a schedule with many preemptions is reported with a
//! schedule that needs as few as the bug does, and its token replays the same failure.
//! Fixed seeds throughout.

use pctvb::sync::atomic::{AtomicUsize, Ordering};
use pctvb::sync::Arc;
use pctvb::{thread, Config, FailureKind};

#[path = "common/programs.rs"]
mod programs;
use programs::lost_update; // the quickstart's lost update

/// A lost update among four threads that also do unrelated work: the bug needs one
/// preemption (between one thread's load and store), but random schedules preempt often.
fn noisy_lost_update() {
    let n = Arc::new(AtomicUsize::new(0));
    let noise = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..4)
        .map(|i| {
            let (n, noise) = (n.clone(), noise.clone());
            thread::spawn(move || {
                for _ in 0..3 {
                    noise.fetch_add(1, Ordering::SeqCst);
                }
                if i < 2 {
                    let v = n.load(Ordering::SeqCst);
                    n.store(v + 1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(n.load(Ordering::SeqCst), 2, "lost update");
}

/// Merging a preempted thread's blocks alone sometimes stopped at two preemptions (undoing
/// either one passes); moving the preempted block later as well reaches the one the bug
/// needs. Seeds 0..40, fixed.
#[test]
fn the_lost_update_is_minimized_to_one_preemption_on_every_seed() {
    for seed in 0..40 {
        let report = Config::new().ignore_env().seed(seed).iterations(1000).run(lost_update);
        let failure = report.failure().unwrap_or_else(|| panic!("seed {seed}: not found"));
        assert_eq!(failure.preemptions, 1, "seed {seed}:\n{failure}");
    }
}

#[test]
fn a_one_preemption_bug_is_minimized_to_one_preemption_and_replays() {
    let config = Config::new().ignore_env().seed(21).iterations(5000);
    let unminimized = config.clone().minimize_runs(0).run(noisy_lost_update);
    let raw = unminimized.failure().expect("found");
    assert!(raw.preemptions > 1, "the first failing schedule has {} preemptions", raw.preemptions);

    let report = config.run(noisy_lost_update);
    let failure = report.failure().expect("found");
    assert_eq!(failure.execution, raw.execution, "minimization does not change which failed");
    assert_eq!(failure.preemptions, 1);
    assert_eq!(failure.minimized_from, Some(raw.preemptions));
    assert!(failure.minimization_runs > 0);
    let shape = failure.shape.expect("measured");
    // The two threads of the lost update, and the test body's, which spawned the second while
    // the first existed (t counts it, as the guarantees do).
    assert_eq!((shape.preemptions, shape.variables, shape.threads), (1, 1, 3), "{shape}");
    assert_eq!(shape.spawners, 1, "{shape}");
    let text = failure.to_string();
    assert!(text.contains(&format!("minimized from {} preemptions", raw.preemptions)), "{text}");

    let token = failure.token.clone().unwrap();
    let replay = Config::new().ignore_env().replay(token).run(noisy_lost_update);
    let again = replay.failure().expect("the minimized token fails again");
    assert_eq!(again.kind, FailureKind::Panic);
    assert_eq!(again.location, failure.location);
    assert_eq!(again.message, failure.message);
    assert_eq!(again.preemptions, 1);
}

#[test]
fn minimization_keeps_deadlocks_deadlocks() {
    let report = Config::new().ignore_env().seed(2).iterations(2000).run(|| {
        let a = Arc::new(pctvb::sync::Mutex::new(()));
        let b = Arc::new(pctvb::sync::Mutex::new(()));
        let (a2, b2) = (a.clone(), b.clone());
        let t = thread::spawn(move || {
            let _x = b2.lock().unwrap();
            let _y = a2.lock().unwrap();
        });
        {
            let _x = a.lock().unwrap();
            let _y = b.lock().unwrap();
        }
        t.join().unwrap();
    });
    let failure = report.failure().expect("found");
    assert_eq!(failure.kind, FailureKind::Deadlock);
    assert_eq!(failure.preemptions, 1, "a lock-order deadlock needs exactly one preemption");
}

/// An order bug: the second thread must not read before the first one's store. Running the
/// threads one after the other (the test body waits at its first join, and the reader runs
/// first) fails with no preemption at all.
fn read_before_store() {
    let x = Arc::new(AtomicUsize::new(0));
    let x1 = x.clone();
    let writer = thread::spawn(move || x1.store(1, Ordering::SeqCst));
    let x2 = x.clone();
    let reader = thread::spawn(move || {
        assert_eq!(x2.load(Ordering::SeqCst), 1, "read before the store");
    });
    writer.join().unwrap();
    reader.join().unwrap();
}

/// A schedule that preempts a thread which never runs again (the test body, preempted at its
/// second spawn so that the reader runs and fails at once) has no later block of that thread
/// to merge with: minimization used to offer no move for that preemption and stopped at one,
/// while the failure needs none. Seeds 0..40, fixed.
#[test]
fn a_bug_that_needs_no_preemption_is_minimized_to_none_on_every_seed() {
    let mut from_one = 0;
    for seed in 0..40 {
        let report = Config::new().ignore_env().seed(seed).iterations(1000).run(read_before_store);
        let failure = report.failure().unwrap_or_else(|| panic!("seed {seed}: not found"));
        assert_eq!(failure.preemptions, 0, "seed {seed}:\n{failure}");
        from_one += u64::from(failure.minimized_from.is_some_and(|n| n > 0));
        // The minimized token replays the same failure.
        let token = failure.token.clone().unwrap();
        let replay = Config::new().ignore_env().replay(token).run(read_before_store);
        let again = replay.failure().expect("the minimized token fails again");
        assert_eq!((again.location.as_ref(), again.preemptions), (failure.location.as_ref(), 0));
    }
    assert!(from_one > 0, "some seed's first failing schedule had a preemption to remove");
}

/// Memory of no variable, reached through an instrumented raw pointer: the race is named by
/// its address (the access's `UnsafeCell::get()` here), which is not the same in a replay.
#[pctvb::instrument(force)]
mod heap_race {
    use std::cell::UnsafeCell;
    use std::sync::atomic::{AtomicBool, Ordering};

    pub struct Flagged {
        flag: AtomicBool,
        data: UnsafeCell<u64>,
    }

    // SAFETY: shared on purpose; the unsynchronized increment is the race under test.
    unsafe impl Sync for Flagged {}

    impl Flagged {
        pub fn new() -> Flagged {
            Flagged { flag: AtomicBool::new(false), data: UnsafeCell::new(0) }
        }

        /// A Relaxed "lock" that orders nothing around an increment.
        pub fn bump(&self) {
            self.flag.swap(true, Ordering::Relaxed);
            unsafe { *self.data.get() += 1 };
            self.flag.store(false, Ordering::Relaxed);
        }
    }
}

fn heap_race_body() {
    let f = Arc::new(heap_race::Flagged::new());
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let f = f.clone();
            thread::spawn(move || f.bump())
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

/// A race on memory named by its address is minimized like a cell's: the same two sites, at
/// whatever address the replay allocated. It needs no preemption (one thread's increment,
/// then the other's: the Relaxed flag orders nothing), and before, no replay ever counted as
/// the same failure, so the report kept the search's schedule (2 or 3 preemptions).
#[test]
fn a_race_on_heap_memory_is_minimized() {
    for seed in [1, 5, 9] {
        let report = Config::new().ignore_env().seed(seed).iterations(2000).run(heap_race_body);
        let f = report.failure().unwrap_or_else(|| panic!("seed {seed}: no race"));
        assert_eq!(f.kind, FailureKind::DataRace, "{f}");
        assert!(f.message.contains("reached through"), "seed {seed}: {f}");
        assert_eq!(f.preemptions, 0, "seed {seed}: {f}");
    }
}
