//! The instrumented path on generic code, trait impls, iterator chains and lifetimes: the
//! hooks must compile wherever the code does (`Target` probes resolve per instantiation).

use pctvb::instrument::{self, Selection};

#[pctvb::instrument(force)]
pub mod generic {
    use std::marker::PhantomData;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex, RwLock};

    pub trait Counter {
        fn bump(&self) -> usize;
    }

    pub struct Hits {
        n: AtomicUsize,
    }

    impl Counter for Hits {
        fn bump(&self) -> usize {
            self.n.fetch_add(1, Ordering::SeqCst)
        }
    }

    impl Default for Hits {
        fn default() -> Hits {
            Hits { n: AtomicUsize::new(0) }
        }
    }

    /// A generic slot read and written through a raw pointer.
    pub struct Slot<T> {
        ptr: *mut T,
        _owns: PhantomData<T>,
    }

    unsafe impl<T: Send> Send for Slot<T> {}
    unsafe impl<T: Send> Sync for Slot<T> {}

    impl<T: Copy> Slot<T> {
        pub fn new(v: T) -> Slot<T> {
            Slot { ptr: Box::into_raw(Box::new(v)), _owns: PhantomData }
        }

        pub fn get(&self) -> T {
            unsafe { *self.ptr }
        }

        pub fn set(&self, v: T) {
            unsafe { *self.ptr = v }
        }
    }

    impl<T> Drop for Slot<T> {
        fn drop(&mut self) {
            unsafe { drop(Box::from_raw(self.ptr)) };
        }
    }

    pub fn total<'a, C: Counter + ?Sized + 'a>(cs: impl Iterator<Item = &'a C>) -> usize {
        cs.map(|c| c.bump()).sum()
    }

    pub fn run() -> (usize, u64, usize) {
        let hits: Vec<Arc<Hits>> = (0..3).map(|_| Arc::new(Hits::default())).collect();
        let dyns: Vec<&dyn Counter> = hits.iter().map(|h| &**h as &dyn Counter).collect();
        let first = total(dyns.into_iter());
        let slot = Arc::new(Slot::new(1u64));
        let s2 = slot.clone();
        let log = Arc::new(Mutex::new(Vec::new()));
        let l2 = log.clone();
        let table = RwLock::new(vec![1, 2, 3]);
        let t = std::thread::spawn(move || {
            s2.set(s2.get() + 1);
            l2.lock().unwrap().push(s2.get());
        });
        t.join().unwrap();
        let sum: usize = table.read().unwrap().iter().sum();
        table.write().unwrap().push(4);
        let logged = log.lock().unwrap().len();
        (first + sum, slot.get(), logged)
    }
}

#[test]
fn generic_and_trait_code_runs_instrumented() {
    let tracking = instrument::track(Selection::All).soundness_check(true);
    let report = pctvb::Config::new().iterations(30).seed(6).run(|| {
        assert_eq!(generic::run(), (6, 2, 1));
    });
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());
    assert!(tracking.stats().misses.is_empty(), "{:?}", tracking.stats().misses);
}
