//! The soundness check catches what the alias pass misses. The pass assumes a constructor of
//! a type outside the item (`Outside::new()`) returns only what its arguments hold; here it
//! returns a pointer to a heap variable of the item, so the pass finds that the dereference in
//! `read_back` touches no variable. With the check on, the dereference's hook is armed anyway
//! and the access fails loudly, naming the site and the variable.

use pctvb::instrument::{self, StaticVarKind};

/// Outside the instrumented item: calls back into it for a pointer.
pub struct Outside {
    p: *mut u64,
}

impl Outside {
    pub fn new() -> Outside {
        Outside { p: leaky::leak() }
    }

    pub fn ptr(&self) -> *mut u64 {
        self.p
    }
}

impl Default for Outside {
    fn default() -> Outside {
        Outside::new()
    }
}

#[pctvb::instrument(force)]
pub mod leaky {
    pub fn leak() -> *mut u64 {
        Box::into_raw(Box::new(7u64))
    }

    pub fn read_back() -> u64 {
        let o = super::Outside::new();
        let p = o.ptr();
        let v = unsafe { *p };
        unsafe { drop(Box::from_raw(p)) };
        v
    }
}

#[test]
fn a_dereference_the_pass_missed_is_caught() {
    let heap = instrument::variables()
        .into_iter()
        .find(|v| v.module.contains("leaky") && v.kind == StaticVarKind::Heap)
        .unwrap();
    let deref = instrument::sites()
        .into_iter()
        .find(|s| s.module.contains("leaky") && s.label == "*p")
        .unwrap();
    assert_eq!(deref.may_access, Some(vec![]), "the pass's blind spot");
    {
        // Without the check the access is simply not a scheduling point.
        let _tracking = instrument::track([heap.id]);
        let report = pctvb::Config::new().iterations(3).run(|| assert_eq!(leaky::read_back(), 7));
        assert!(report.failure().is_none());
    }
    let tracking = instrument::track([heap.id]).soundness_check(true);
    let report = pctvb::Config::new().iterations(3).run(|| {
        leaky::read_back();
    });
    let failure = report.failure().expect("the check fails the execution");
    assert!(failure.message.contains("soundness check: *p at"), "{}", failure.message);
    assert!(failure.message.contains("instrument_soundness.rs"), "{}", failure.message);
    assert!(failure.message.contains("Box::new"), "{}", failure.message);
    // (Parallel executions may each record it before the run stops.)
    assert!(!tracking.stats().misses.is_empty());
}
