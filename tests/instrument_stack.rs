//! `#[pctvb::instrument]` end to end: a module written against std's paths runs under pctvb,
//! its variables and sites are registered before `main`, tracking a heap variable turns its
//! raw-pointer accesses into scheduling points, and the soundness check passes on instrumented
//! code and fails loudly on an access that bypasses it.
//!
//! `racy_workload` races on purpose (the lost update the assertions look for): its runs turn
//! the data-race check of instrumented pointer accesses off (`race_detection(false)`), which
//! would report the race before the lost update shows.

use pctvb::instrument::{self, Selection, SiteKind, StaticVarKind};

/// A Treiber stack as one would write it against std, with raw-pointer node accesses.
#[pctvb::instrument(force)]
mod stack {
    use std::ptr;
    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
    use std::sync::Mutex;

    struct Node {
        value: u64,
        next: *mut Node,
    }

    pub struct Stack {
        head: AtomicPtr<Node>,
        len: AtomicUsize,
        log: Mutex<Vec<u64>>,
    }

    // SAFETY: nodes are handed between threads only through the atomic head.
    unsafe impl Send for Stack {}
    unsafe impl Sync for Stack {}

    impl Stack {
        pub fn new() -> Stack {
            Stack {
                head: AtomicPtr::new(ptr::null_mut()),
                len: AtomicUsize::new(0),
                log: Mutex::new(Vec::new()),
            }
        }

        pub fn push(&self, value: u64) {
            let node = Box::into_raw(Box::new(Node { value, next: ptr::null_mut() }));
            loop {
                let head = self.head.load(Ordering::SeqCst);
                unsafe {
                    (*node).next = head;
                }
                if self
                    .head
                    .compare_exchange(head, node, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
                {
                    break;
                }
            }
            self.len.fetch_add(1, Ordering::SeqCst);
            self.log.lock().unwrap().push(value);
        }

        pub fn pop(&self) -> Option<u64> {
            loop {
                let head = self.head.load(Ordering::SeqCst);
                if head.is_null() {
                    return None;
                }
                let next = unsafe { (*head).next };
                if self
                    .head
                    .compare_exchange(head, next, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
                {
                    self.len.fetch_sub(1, Ordering::SeqCst);
                    // Nodes are leaked rather than freed: no memory reclamation in this test.
                    return Some(unsafe { (*head).value });
                }
            }
        }

        pub fn len(&self) -> usize {
            self.len.load(Ordering::SeqCst)
        }

        /// Hands out the length counter: accesses through it bypass the instrumentation.
        pub fn len_counter(&self) -> &AtomicUsize {
            &self.len
        }
    }
}

/// A racy counter behind a raw pointer: the lost update is only visible if the raw-pointer
/// read and write are scheduling points, i.e. if the counter's variable is tracked.
#[pctvb::instrument(force)]
mod racy {
    pub struct Counter {
        cell: *mut u64,
    }

    unsafe impl Send for Counter {}
    unsafe impl Sync for Counter {}

    impl Counter {
        pub fn new() -> Counter {
            Counter { cell: Box::into_raw(Box::new(0u64)) }
        }

        pub fn increment(&self) {
            unsafe {
                let v = *self.cell;
                *self.cell = v + 1;
            }
        }

        pub fn get(&self) -> u64 {
            unsafe { *self.cell }
        }
    }
}

fn stack_workload() {
    use pctvb::sync::Arc;
    let s = Arc::new(stack::Stack::new());
    let s2 = s.clone();
    let h = pctvb::thread::spawn(move || {
        s2.push(1);
        s2.pop();
    });
    s.push(2);
    h.join().unwrap();
    assert_eq!(s.len(), 1);
    assert!(s.pop().is_some());
    assert_eq!(s.pop(), None);
}

fn racy_workload() {
    use pctvb::sync::Arc;
    let c = Arc::new(racy::Counter::new());
    let c2 = c.clone();
    let h = pctvb::thread::spawn(move || c2.increment());
    c.increment();
    h.join().unwrap();
    assert_eq!(c.get(), 2, "an increment was lost");
}

fn var(name: &str) -> instrument::StaticVar {
    instrument::variables()
        .into_iter()
        .find(|v| v.name == name && v.module.contains("instrument_stack"))
        .unwrap_or_else(|| panic!("no variable {name}: {:?}", instrument::variables()))
}

// The tracking session is per OS thread, and arming is process-wide, so tests that track run
// one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn the_tables_are_registered_before_main() {
    let head = var("Stack.head");
    assert_eq!(head.kind, StaticVarKind::Atomic);
    assert!(head.file.ends_with("instrument_stack.rs"));
    assert_eq!(var("Stack.log").kind, StaticVarKind::Mutex);
    assert_eq!(var("Box::new(let node)").kind, StaticVarKind::Heap);

    let sites = instrument::sites();
    let site = |label: &str| {
        sites
            .iter()
            .find(|s| s.label == label && s.module.contains("stack"))
            .unwrap_or_else(|| panic!("no site {label}"))
    };
    let load = site("self.head.load");
    assert_eq!(load.kind, SiteKind::Atomic);
    assert!(load.hooked);
    assert_eq!(load.may_access, Some(vec![head.id]));
    assert_eq!(site("self.len.fetch_add").may_access, Some(vec![var("Stack.len").id]));
    assert_eq!(site("self.log.lock").may_access, Some(vec![var("Stack.log").id]));
    // The pop's node read may touch only node allocations.
    let node_read = sites.iter().find(|s| s.label == "*head" && s.kind == SiteKind::Deref).unwrap();
    let nodes: Vec<_> = node_read.may_access.clone().unwrap();
    assert!(!nodes.is_empty());
    for v in nodes {
        let info = instrument::variables().into_iter().find(|x| x.id == v).unwrap();
        assert_eq!(info.kind, StaticVarKind::Heap, "{info:?}");
    }
}

#[test]
fn an_instrumented_module_runs_under_pctvb_and_finds_nothing_wrong() {
    let _serial = serial();
    let tracking = instrument::track(Selection::All).soundness_check(true);
    let report = pctvb::Config::new().iterations(300).seed(3).run(stack_workload);
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());
    let stats = tracking.stats();
    assert!(stats.misses.is_empty(), "{:?}", stats.misses);
    assert!(stats.hits > 0);
    // Precision: every site the soundness check saw touching a tracked variable was armed.
    assert!(!stats.touched_sites.is_empty());
    assert!(stats.touched_sites.len() <= stats.armed_sites, "{stats:?}");
}

#[test]
fn untracked_raw_pointer_accesses_are_not_scheduling_points() {
    let _serial = serial();
    let tracking = instrument::track(Selection::Nothing);
    let report =
        pctvb::Config::new().race_detection(false).iterations(300).seed(5).run(racy_workload);
    assert!(report.failure().is_none(), "no scheduling point between the read and the write");
    assert_eq!(tracking.stats().hits, 0, "unarmed hooks never reach the run time");
}

#[test]
fn tracking_the_heap_variable_finds_the_lost_update() {
    let _serial = serial();
    let counter = instrument::variables()
        .into_iter()
        .find(|v| v.module.contains("racy") && v.kind == StaticVarKind::Heap)
        .unwrap();
    let tracking = instrument::track([counter.id]).soundness_check(true);
    let report =
        pctvb::Config::new().race_detection(false).iterations(300).seed(5).run(racy_workload);
    let failure = report.failure().expect("the lost update is found once the counter is tracked");
    assert!(failure.message.contains("an increment was lost"), "{}", failure.message);
    let stats = tracking.stats();
    assert!(stats.scheduled > 0, "{stats:?}");
    assert!(stats.misses.is_empty(), "{:?}", stats.misses);
}

#[test]
fn tracking_another_variable_leaves_the_counter_alone() {
    let _serial = serial();
    // The stack's head is tracked: the counter's hooks stay unarmed.
    let tracking = instrument::track([var("Stack.head").id]);
    let report =
        pctvb::Config::new().race_detection(false).iterations(200).seed(5).run(racy_workload);
    assert!(report.failure().is_none());
    assert_eq!(tracking.stats().scheduled, 0);
}

#[test]
fn the_soundness_check_names_an_access_that_bypasses_the_hooks() {
    let _serial = serial();
    let _tracking = instrument::track([var("Stack.len").id]).soundness_check(true);
    let report = pctvb::Config::new().iterations(5).seed(1).run(|| {
        let s = stack::Stack::new();
        s.push(1); // instrumented: fine
                   // Not instrumented: this test function is outside the annotated module.
        s.len_counter().load(pctvb::sync::atomic::Ordering::SeqCst);
    });
    let failure = report.failure().expect("the bypassing access fails the execution");
    assert!(failure.message.contains("soundness check"), "{}", failure.message);
    assert!(failure.message.contains("`Stack.len`"), "{}", failure.message);
    assert!(failure.message.contains("instrument_stack.rs"), "{}", failure.message);
}

#[test]
fn static_variables_and_run_variables_share_their_identity() {
    let head = var("Stack.head");
    let info = head.var_info();
    assert_eq!((info.site.line(), info.site.column()), (head.line, head.column));
    assert_eq!(instrument::static_var_of(&info), Some(head.id));
    // A variable created outside instrumented code is one only runs know.
    let outside = pctvb::report::VarInfo {
        site: std::panic::Location::caller(),
        kind: pctvb::report::VarKind::Atomic,
    };
    assert_eq!(instrument::origin_counts(&[info, outside]), (1, 1));
}

#[test]
fn the_report_says_which_variables_the_static_pass_found() {
    let _serial = serial();
    let report = pctvb::Config::new().ignore_env().iterations(20).seed(3).run(stack_workload);
    let note = report
        .notes
        .iter()
        .find(|n| n.starts_with("variables:"))
        .expect("a binary with instrumented code says where variables came from");
    let registered = instrument::variables().len();
    assert!(note.contains(&format!("({registered} registered")), "{note}");
    let (found, only_run) = instrument::origin_counts(
        &report.stats.variables.iter().map(|(info, _)| info.clone()).collect::<Vec<_>>(),
    );
    assert!(found > 0, "the workload uses the instrumented stack's primitives: {note}");
    assert!(note.contains(&format!("{found} of the run's")), "{note}");
    assert!(note.contains(&format!("{only_run} only at run time")), "{note}");
    assert!(report.summary().contains(note.as_str()));
}
