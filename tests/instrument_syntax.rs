//! The hook pass on the shapes unsafe and concurrent code takes: dereferences in match arms,
//! guards, closures, loop conditions and compound assignments; pointer methods and `ptr`
//! functions; method calls on temporaries; `UnsafeCell`, condvars, channels and statics. The
//! instrumented code must compile, behave as written, and pass the soundness check with every
//! variable tracked.

use pctvb::instrument::{self, Selection};

#[pctvb::instrument(force)]
#[allow(clippy::missing_safety_doc, clippy::not_unsafe_ptr_arg_deref, static_mut_refs)]
pub mod shapes {
    use std::cell::UnsafeCell;
    use std::ptr;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::mpsc;
    use std::sync::{Arc, Condvar, Mutex};
    use std::thread;

    static mut TABLE: [u64; 4] = [0; 4];
    static TOTAL: AtomicU64 = AtomicU64::new(0);

    pub struct Slot {
        cell: UnsafeCell<u64>,
    }

    unsafe impl Sync for Slot {}

    pub struct Raw(*mut u64);
    unsafe impl Send for Raw {}

    fn boxed(v: u64) -> *mut u64 {
        Box::into_raw(Box::new(v))
    }

    fn mutex() -> Arc<Mutex<u64>> {
        Arc::new(Mutex::new(0))
    }

    pub unsafe fn bump(p: *mut u64) {
        *p += 1;
    }

    pub struct Link {
        next: Option<*mut Link>,
    }

    /// Links after `head`, walked with a `while let` on a dereference.
    pub unsafe fn length(head: *mut Link) -> usize {
        let mut n = 0;
        let mut cur = head;
        while let Some(next) = (*cur).next {
            n += 1;
            cur = next;
        }
        n
    }

    /// Hooks in a nested module reach the table through `super::`.
    pub mod inner {
        pub fn set(p: *mut u64, v: u64) {
            unsafe { *p = v };
        }

        pub mod deeper {
            pub fn get(p: *const u64) -> u64 {
                unsafe { *p }
            }
        }
    }

    pub fn nested() -> u64 {
        let p = boxed(0);
        inner::set(p, 5);
        let v = inner::deeper::get(p);
        unsafe { drop(Box::from_raw(p)) };
        v
    }

    pub fn chain() -> usize {
        let last = Box::into_raw(Box::new(Link { next: None }));
        let first = Box::into_raw(Box::new(Link { next: Some(last) }));
        unsafe { length(first) }
    }

    pub fn derefs() -> u64 {
        let p = boxed(1);
        let pp: *mut *mut u64 = Box::into_raw(Box::new(p));
        let opt = Some(p);
        unsafe {
            // In a match arm and a guard, with a pattern-bound pointer.
            let a = match opt {
                Some(q) if *q == 1 => *q + 10,
                Some(q) => *q,
                None => 0,
            };
            // Closure bodies, compound assignment, nested dereference.
            let add = |n: u64| *p += n;
            add(2);
            **pp *= 2;
            bump(p);
            // Loop condition re-evaluated each time.
            let mut steps = 0;
            while *p < 20 {
                *p += 3;
                steps += 1;
            }
            // Pointer methods and ptr functions.
            let r = p.read() + ptr::read(p);
            p.write(r);
            ptr::write(p, ptr::read(p) + 1);
            let shared: &u64 = p.as_ref().unwrap();
            let out = a + *shared + steps;
            drop(Box::from_raw(pp));
            drop(Box::from_raw(p));
            out
        }
    }

    pub fn cells_and_statics() -> u64 {
        // A static keeps its data across executions: start from zero.
        unsafe {
            TABLE = [0; 4];
        }
        let slot = Arc::new(Slot { cell: UnsafeCell::new(5) });
        let s2 = slot.clone();
        let t = thread::spawn(move || unsafe {
            *s2.cell.get() += 1;
            TABLE[1] += 1;
        });
        unsafe {
            // Another element of the static than the thread's: no race.
            TABLE[2] += 2;
        }
        t.join().unwrap();
        unsafe {
            *slot.cell.get() += 1;
        }
        slot.cell.with_mut(|p| unsafe { *p += 1 });
        TOTAL.fetch_add(1, Ordering::SeqCst);
        let v = slot.cell.with(|p| unsafe { *p });
        v + unsafe { TABLE[1] + TABLE[2] }
    }

    pub fn sync() -> u64 {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let p2 = pair.clone();
        let (tx, rx) = mpsc::channel();
        let raw = Raw(boxed(0));
        let t = thread::spawn(move || {
            let raw = raw;
            unsafe { *raw.0 = 7 };
            tx.send(raw).unwrap();
            *p2.0.lock().unwrap() = true;
            p2.1.notify_one();
        });
        let mut ready = pair.0.lock().unwrap();
        while !*ready {
            ready = pair.1.wait(ready).unwrap();
        }
        drop(ready);
        let got = rx.recv().unwrap();
        t.join().unwrap();
        // A method call on a temporary receiver.
        *mutex().lock().unwrap() += 1;
        let v = unsafe { *got.0 };
        unsafe { drop(Box::from_raw(got.0)) };
        v
    }
}

#[test]
fn every_shape_compiles_behaves_and_passes_the_soundness_check() {
    let tracking = instrument::track(Selection::All).soundness_check(true);
    // One worker: `TABLE` is a process-wide static that parallel executions would share.
    let report = pctvb::Config::new().iterations(40).seed(9).workers(1).run(|| {
        // a = 11; p: 1 -> 3 -> 6 -> 7, then 10, 13, 16, 19, 22 (5 steps); r = 44; p = 45.
        assert_eq!(shapes::derefs(), 11 + 45 + 5);
        assert_eq!(shapes::cells_and_statics(), 8 + 1 + 2);
        assert_eq!(shapes::sync(), 7);
        assert_eq!(shapes::chain(), 1);
        assert_eq!(shapes::nested(), 5);
    });
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());
    let stats = tracking.stats();
    assert!(stats.misses.is_empty(), "{:?}", stats.misses);
    assert!(stats.scheduled > 0);
}

#[pctvb::instrument(force)]
#[allow(static_mut_refs)]
pub mod counter {
    use std::thread;

    static mut COUNT: u64 = 0;

    /// Two threads increment a `static mut` without synchronization.
    pub fn race() -> u64 {
        unsafe {
            COUNT = 0;
        }
        let t = thread::spawn(|| unsafe {
            let v = COUNT;
            COUNT = v + 1;
        });
        unsafe {
            let v = COUNT;
            COUNT = v + 1;
        }
        t.join().unwrap();
        unsafe { COUNT }
    }
}

#[test]
fn a_tracked_static_mut_is_a_variable_with_an_address() {
    let count = instrument::variables()
        .into_iter()
        .find(|v| v.name == "static COUNT")
        .expect("the static is a variable");
    // The lost update is what this test looks for; the race check would report the race first.
    let run = || {
        pctvb::Config::new().race_detection(false).iterations(200).seed(3).workers(1).run(|| {
            assert_eq!(counter::race(), 2, "an increment was lost");
        })
    };
    {
        let _tracking = instrument::track(Selection::Nothing);
        assert!(run().failure().is_none(), "untracked: no point between the read and the write");
    }
    let tracking = instrument::track([count.id]).soundness_check(true);
    let failure = run().failure().cloned().expect("tracked: the lost update is found");
    assert!(failure.message.contains("an increment was lost"), "{}", failure.message);
    assert!(tracking.stats().misses.is_empty());
}

#[pctvb::instrument(force)]
pub mod refs {
    use std::sync::atomic::{AtomicU64, Ordering};

    pub struct Holder {
        n: AtomicU64,
    }

    fn bump(n: &AtomicU64) {
        n.fetch_add(1, Ordering::SeqCst);
    }

    /// An atomic inside a heap variable, operated on through a reference.
    pub fn run() -> u64 {
        let h = Box::new(Holder { n: AtomicU64::new(0) });
        bump(&h.n);
        h.n.load(Ordering::SeqCst)
    }
}

#[test]
fn an_operation_through_a_reference_is_not_a_raw_access() {
    let tracking = instrument::track(Selection::All);
    let report = pctvb::Config::new().iterations(10).seed(1).run(|| assert_eq!(refs::run(), 1));
    assert!(report.failure().is_none());
    let stats = tracking.stats();
    assert!(stats.hits > 0, "{stats:?}");
    // The atomic's own operation is the scheduling point; the hook adds none, although the
    // reference points into a tracked heap variable.
    assert_eq!(stats.scheduled, 0, "{stats:?}");
}

/// Commas inside a macro argument (a turbofish's type list) are not argument separators: the
/// pass looks into the whole argument.
#[pctvb::instrument(force)]
mod macro_commas {
    use std::collections::HashMap;
    use std::sync::Mutex;

    pub fn check(m: &Mutex<Vec<(u8, u8)>>) -> usize {
        assert!(m.lock().unwrap().iter().copied().collect::<HashMap<u8, u8>>().len() < 10);
        let add = |a: usize, b: usize| a + b;
        assert!([1usize, 2].iter().map(|x| add(*x, m.lock().unwrap().len())).sum::<usize>() > 0);
        m.lock().unwrap().len()
    }
}

#[test]
fn commas_inside_macro_arguments_do_not_split_them() {
    let tracking = instrument::track(Selection::All).soundness_check(true);
    let report = pctvb::Config::new().iterations(5).seed(1).run(|| {
        let m = pctvb::sync::Mutex::new(vec![(1, 2), (3, 4)]);
        assert_eq!(macro_commas::check(&m), 2);
    });
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());
    assert!(tracking.stats().misses.is_empty(), "{:?}", tracking.stats().misses);
}

#[test]
fn site_labels_show_the_source_not_the_markers_of_inner_sites() {
    let sites = instrument::sites();
    assert!(!sites.is_empty());
    for site in &sites {
        assert!(!site.label.contains("__pctvb"), "label {:?} (line {})", site.label, site.line);
    }
}
