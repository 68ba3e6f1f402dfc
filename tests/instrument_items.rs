//! `#[pctvb::instrument]` on an impl block and on a function (not only modules), also on a
//! function declared in a function body: the table module is generated next to the item, fields declared outside the item make their sites
//! may-access-anything, and flows through locals, clones, closures and `thread::spawn` inside
//! a function are followed.

use pctvb::instrument::{self, Selection, SiteKind};
use pctvb::sync::atomic::{AtomicUsize, Ordering};
use pctvb::sync::{Arc, Mutex};

pub struct Account {
    balance: Mutex<i64>,
    ops: AtomicUsize,
}

impl Account {
    fn new(balance: i64) -> Account {
        Account { balance: Mutex::new(balance), ops: AtomicUsize::new(0) }
    }
}

// The struct is declared outside the annotated item: the pass cannot see what its fields
// hold, so the sites on them may access anything.
#[pctvb::instrument(force)]
impl Account {
    fn withdraw(&self, amount: i64) -> bool {
        self.ops.fetch_add(1, Ordering::SeqCst);
        let mut b = self.balance.lock().unwrap();
        if *b >= amount {
            *b -= amount;
            true
        } else {
            false
        }
    }
}

/// A whole test body written against std, instrumented as one function.
#[pctvb::instrument(force)]
fn body() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::thread;

    let hits = Arc::new(AtomicUsize::new(0));
    let misses = Arc::new(AtomicUsize::new(0));
    let h2 = hits.clone();
    let t = thread::spawn(move || {
        h2.fetch_add(1, Ordering::SeqCst);
    });
    hits.fetch_add(1, Ordering::SeqCst);
    misses.load(Ordering::SeqCst);
    t.join().unwrap();
    hits.load(Ordering::SeqCst)
}

fn sites_of(module_part: &str) -> Vec<instrument::SiteInfo> {
    instrument::sites().into_iter().filter(|s| s.module.contains(module_part)).collect()
}

#[test]
fn an_impl_block_is_instrumented_and_outside_fields_are_anything() {
    let sites = sites_of("impl Account");
    let fetch = sites.iter().find(|s| s.label == "self.ops.fetch_add").unwrap();
    assert_eq!(fetch.kind, SiteKind::Atomic);
    assert!(fetch.hooked);
    assert_eq!(fetch.may_access, None, "a field of a struct declared outside: anything");
    let lock = sites.iter().find(|s| s.label == "self.balance.lock").unwrap();
    assert_eq!(lock.kind, SiteKind::Lock);
    assert_eq!(lock.may_access, None);
}

#[test]
fn a_function_is_instrumented_and_flows_are_followed() {
    let vars: Vec<_> =
        instrument::variables().into_iter().filter(|v| v.module.ends_with("::body")).collect();
    let hits = vars.iter().find(|v| v.name == "let hits").expect("the atomic in `let hits`");
    let misses = vars.iter().find(|v| v.name == "let misses").unwrap();
    let sites = sites_of("::body");
    let in_thread = sites.iter().find(|s| s.label == "h2.fetch_add").unwrap();
    assert_eq!(in_thread.may_access, Some(vec![hits.id]), "clone, move into spawn");
    let miss_load = sites.iter().find(|s| s.label == "misses.load").unwrap();
    assert_eq!(miss_load.may_access, Some(vec![misses.id]));
}

#[test]
fn both_run_under_pctvb_with_the_soundness_check() {
    let _tracking = instrument::track(Selection::All).soundness_check(true);
    let report = pctvb::Config::new().iterations(50).seed(4).run(|| {
        assert_eq!(body(), 2);
        let a = Arc::new(Account::new(10));
        let a2 = a.clone();
        let t = pctvb::thread::spawn(move || a2.withdraw(7));
        let mine = a.withdraw(7);
        let theirs = t.join().unwrap();
        assert!(mine ^ theirs, "exactly one withdrawal succeeds");
    });
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());
}

/// A function declared inside a function body: its table module is an item of the same block,
/// and its hooks reach it. Two threads write through one raw pointer: the race is found, named
/// at the inner function's lines.
#[test]
fn a_function_declared_in_a_function_body_is_instrumented() {
    #[derive(Clone, Copy)]
    struct P(*mut u64);
    // SAFETY: the threads' accesses are what the test looks at.
    unsafe impl Send for P {}

    #[pctvb::instrument(force)]
    fn bump_twice(p: P) {
        use std::thread;
        let t = thread::spawn(move || {
            let q = p;
            unsafe { *q.0 += 1 };
        });
        let q = p;
        unsafe { *q.0 += 1 };
        t.join().unwrap();
    }

    let sites = sites_of("::bump_twice");
    assert!(sites.iter().any(|s| s.label == "*q.0" && s.write), "{sites:?}");
    let report = pctvb::Config::new().ignore_env().iterations(1000).seed(1).run(|| {
        let p = P(Box::into_raw(Box::new(0u64)));
        bump_twice(p);
        drop(unsafe { Box::from_raw(p.0) });
    });
    let f = report.failure().expect("the race of the two writes");
    assert_eq!(f.kind, pctvb::FailureKind::DataRace, "{f}");
    assert!(f.message.contains("tests/instrument_items.rs:"), "{f}");
}

/// One-time values of an instrumented function, written against std.
#[pctvb::instrument(force)]
fn one_time_values() -> u32 {
    use std::sync::{LazyLock, OnceLock};
    let cell = OnceLock::new();
    let lazy: LazyLock<u32> = LazyLock::new(|| 2);
    *cell.get_or_init(|| 1) + *lazy
}

/// The static pass names a `OnceLock` and a `LazyLock` by their own kinds, the kinds the run
/// time gives their objects: each is one variable of the run (found by the pass and met by
/// the executions), not a `Once` of the pass beside a `OnceLock` of the run.
#[test]
fn one_time_values_are_one_variable_each_for_the_pass_and_the_run() {
    use pctvb::instrument::StaticVarKind;
    use pctvb::report::VarKind;
    let vars: Vec<_> = instrument::variables()
        .into_iter()
        .filter(|v| v.module.ends_with("::one_time_values"))
        .collect();
    let kinds: Vec<_> = vars.iter().map(|v| v.kind).collect();
    assert_eq!(kinds, [StaticVarKind::OnceLock, StaticVarKind::LazyLock], "{vars:?}");
    let _tracking = instrument::track(Selection::All);
    // Fixed seed.
    let report = pctvb::Config::new().ignore_env().iterations(20).seed(5).run(|| {
        assert_eq!(one_time_values(), 3);
    });
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());
    for (v, kind) in vars.iter().zip([VarKind::OnceLock, VarKind::LazyLock]) {
        let listed: Vec<_> =
            report.stats.variables.iter().filter(|(info, _)| info.site == v.location).collect();
        assert_eq!(listed.len(), 1, "{v:?}: {listed:?}");
        assert_eq!(listed[0].0.kind, kind);
        assert!(listed[0].1.max_accesses > 0, "the run met {v:?}");
    }
}

/// Pointer arithmetic on an `AtomicPtr` in an instrumented function, written against std.
#[pctvb::instrument(force)]
fn claim_two() -> usize {
    use std::sync::atomic::{AtomicPtr, Ordering};
    use std::sync::Arc;
    use std::thread;
    static SLOTS: [u8; 2] = [0; 2];
    let cursor = Arc::new(AtomicPtr::new(SLOTS.as_ptr() as *mut u8));
    let c = cursor.clone();
    let t = thread::spawn(move || c.fetch_byte_add(1, Ordering::SeqCst) as usize);
    let mine = cursor.fetch_ptr_add(1, Ordering::SeqCst) as usize;
    mine.abs_diff(t.join().unwrap())
}

/// The static pass knows `AtomicPtr`'s pointer read-modify-writes as atomic operations: each
/// is a site on the atomic, and the soundness check finds every such operation at one.
#[test]
fn pointer_read_modify_writes_are_atomic_sites() {
    let sites = sites_of("::claim_two");
    for label in ["c.fetch_byte_add", "cursor.fetch_ptr_add"] {
        let site = sites.iter().find(|s| s.label == label).unwrap_or_else(|| panic!("{sites:?}"));
        assert_eq!(site.kind, SiteKind::Atomic, "{label}");
    }
    let _tracking = instrument::track(Selection::All).soundness_check(true);
    // Fixed seed.
    let report = pctvb::Config::new().ignore_env().iterations(30).seed(6).run(|| {
        assert_eq!(claim_two(), 1);
    });
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());
}

/// Two threads add with `update` and halve with `try_update` (std 1.95) in an instrumented
/// function written against std.
#[pctvb::instrument(force)]
fn update_twice() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::thread;
    let count = Arc::new(AtomicUsize::new(4));
    let c = count.clone();
    let t = thread::spawn(move || c.update(Ordering::SeqCst, Ordering::SeqCst, |v| v + 2));
    let _ = count.try_update(Ordering::SeqCst, Ordering::SeqCst, |v| v.checked_sub(1));
    t.join().unwrap();
    count.load(Ordering::SeqCst)
}

/// The static pass knows `update` and `try_update` as atomic operations: each is a site on
/// the atomic, and the soundness check finds every such operation (a load and a
/// compare-exchange per attempt) at one.
#[test]
fn update_and_try_update_are_atomic_sites() {
    let sites = sites_of("::update_twice");
    for label in ["c.update", "count.try_update"] {
        let site = sites.iter().find(|s| s.label == label).unwrap_or_else(|| panic!("{sites:?}"));
        assert_eq!(site.kind, SiteKind::Atomic, "{label}");
    }
    let _tracking = instrument::track(Selection::All).soundness_check(true);
    // Fixed seed.
    let report = pctvb::Config::new().ignore_env().iterations(30).seed(6).run(|| {
        assert_eq!(update_twice(), 5);
    });
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());
}
