//! Variable bounding for primitives (`Tracking::gate_primitives`): atomic operations on
//! untracked variables found by the static pass stop being scheduling points, tracked ones
//! stay, so a bug on a tracked atomic is found and one on an untracked atomic is not.

use pctvb::instrument::{self, Selection};

#[pctvb::instrument(force)]
mod counters {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    use std::thread;

    pub struct Two {
        a: AtomicU64,
        b: AtomicU64,
    }

    /// Lost updates on `a` or `b` (load, then store).
    pub fn race(on_a: bool) {
        let t = Arc::new(Two { a: AtomicU64::new(0), b: AtomicU64::new(0) });
        let t2 = t.clone();
        let h = thread::spawn(move || {
            if on_a {
                let v = t2.a.load(Ordering::SeqCst);
                t2.a.store(v + 1, Ordering::SeqCst);
            } else {
                let v = t2.b.load(Ordering::SeqCst);
                t2.b.store(v + 1, Ordering::SeqCst);
            }
        });
        if on_a {
            let v = t.a.load(Ordering::SeqCst);
            t.a.store(v + 1, Ordering::SeqCst);
        } else {
            let v = t.b.load(Ordering::SeqCst);
            t.b.store(v + 1, Ordering::SeqCst);
        }
        h.join().unwrap();
        let (a, b) = (t.a.load(Ordering::SeqCst), t.b.load(Ordering::SeqCst));
        assert_eq!(a + b, 2, "an increment was lost");
    }

    /// One weak compare-exchange that finds its value, beside a thread that writes another
    /// atomic: it may fail spuriously only at a store-conditional point another thread runs at.
    pub fn one_weak_call() {
        let t = Arc::new(Two { a: AtomicU64::new(0), b: AtomicU64::new(0) });
        let t2 = t.clone();
        let h = thread::spawn(move || t2.b.store(1, Ordering::SeqCst));
        let weak = t.a.compare_exchange_weak(0, 1, Ordering::SeqCst, Ordering::SeqCst);
        h.join().unwrap();
        assert!(weak.is_ok(), "the weak compare-exchange failed spuriously");
    }

    /// A spin loop without `yield_now` on a flag another thread sets.
    pub fn spin() {
        let flag = Arc::new(AtomicBool::new(false));
        let f2 = flag.clone();
        let h = thread::spawn(move || f2.store(true, Ordering::SeqCst));
        while !flag.load(Ordering::SeqCst) {}
        h.join().unwrap();
    }
}

fn var(name: &str) -> instrument::StaticVarId {
    instrument::variables().into_iter().find(|v| v.name == name).unwrap().id
}

fn found(on_a: bool) -> bool {
    pctvb::Config::new()
        .iterations(300)
        .seed(11)
        .run(move || counters::race(on_a))
        .failure()
        .is_some()
}

#[test]
fn without_gating_both_lost_updates_are_found() {
    let _tracking = instrument::track([var("Two.b")]);
    assert!(found(true));
    assert!(found(false));
}

#[test]
fn with_gating_only_the_tracked_atomic_is_interleaved() {
    let _tracking = instrument::track([var("Two.b")]).gate_primitives(true).soundness_check(true);
    assert!(!found(true), "`a` is not tracked: its accesses are not scheduling points");
    assert!(found(false), "`b` is tracked");
}

#[test]
fn gating_everything_keeps_spin_loops_finite() {
    let _tracking = instrument::track(Selection::Nothing).gate_primitives(true);
    let report = pctvb::Config::new().iterations(20).seed(2).run(counters::spin);
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());
}

/// A gated atomic makes no scheduling point, its store-conditional included, so no thread can
/// run between its load and its store: a weak compare-exchange on it never fails spuriously
/// (it did, in every execution, while a store-conditional without a point counted as lost).
#[test]
fn a_gated_weak_compare_exchange_never_fails_spuriously() {
    let _tracking = instrument::track(Selection::Nothing).gate_primitives(true);
    let report = pctvb::Config::new()
        .iterations(200)
        .seed(3)
        .weak_cas_failures(true)
        .run(counters::one_weak_call);
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());
}
