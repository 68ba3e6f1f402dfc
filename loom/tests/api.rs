//! loom 0.7's public API, item by item, used with loom's signatures: this file compiles only
//! while pctvb-loom has every item (the list is loom 0.7.2's `src/`, module by module), and
//! each use asserts what loom's item does.
#![allow(deprecated)]
extern crate pctvb_loom as loom;

use std::time::Duration;

use loom::sync::atomic::{self, Ordering::SeqCst};
use loom::sync::{mpsc, Arc, Condvar, LockResult, Mutex, RwLock, TryLockResult};
use loom::thread;

#[test]
fn root_and_model() {
    assert_eq!(loom::MAX_THREADS, 5);
    let run: fn(fn()) = |f| loom::model(f);
    run(|| {
        loom::stop_exploring();
        loom::explore();
    });
    // Every field of loom's `model::Builder`, with loom's types.
    let mut b: loom::model::Builder = Default::default();
    b.max_threads = 3;
    b.max_branches = 1_000;
    b.max_permutations = Some(10);
    b.max_duration = Some(Duration::from_secs(60));
    b.preemption_bound = None;
    b.checkpoint_file = None;
    b.checkpoint_interval = 20_000;
    b.expect_explicit_explore = false;
    b.location = true;
    b.log = false;
    let _: &mut loom::model::Builder = loom::model::Builder::new().checkpoint_file("x.json");
    b.check(|| loom::skip_branch());
    loom::model::model(|| {});
}

#[test]
fn thread_module() {
    loom::thread_local! {
        static LOCAL: std::cell::Cell<u32> = std::cell::Cell::new(1);
        pub static OTHER: u8 = 2;
    }
    loom::model(|| {
        let h: thread::JoinHandle<u32> = thread::Builder::new()
            .name("worker".to_string())
            .stack_size(1 << 20)
            .spawn(|| {
                assert_eq!(thread::current().name(), Some("worker"));
                LOCAL.with(|c| c.set(c.get() + 1));
                LOCAL.with(|c| c.get())
            })
            .expect("io::Result, as loom");
        assert_eq!(h.thread().name(), Some("worker"));
        let id: thread::ThreadId = h.thread().id();
        assert_ne!(id, thread::current().id());
        assert!(!format!("{h:?}").is_empty());
        assert_eq!(h.join().unwrap(), 2);
        // The body's own value is its own.
        assert_eq!(LOCAL.with(|c| c.get()), 1);
        let r: Result<u8, thread::AccessError> = OTHER.try_with(|v| *v);
        assert_eq!(r.unwrap(), 2);
        // An unpark before park is kept, as std's and loom's token.
        let me: thread::Thread = thread::current();
        me.unpark();
        thread::park();
        thread::yield_now();
        assert!(!thread::panicking());
    });
}

#[test]
fn sync_module() {
    loom::model(|| {
        let m: Mutex<u32> = Mutex::from(1);
        let r: LockResult<_> = m.lock();
        assert_eq!(format!("{:?}", r.unwrap()), "1");
        let t: TryLockResult<_> = m.try_lock();
        drop(t);
        let mut m2 = Mutex::<u32>::default();
        *m2.get_mut().unwrap() += 2;
        assert_eq!(m2.into_inner().unwrap(), 2);

        let l = RwLock::new(String::from("a"));
        assert_eq!(format!("{:?}", l.read().unwrap()), "\"a\"");
        assert_eq!(*l.try_read().unwrap(), "a");
        l.write().unwrap().push('b');
        assert_eq!(format!("{:?}", l.try_write().unwrap()), "\"ab\"");
        let mut l2 = RwLock::<u8>::from(3);
        *l2.get_mut().unwrap() += 1;
        assert_eq!(l2.into_inner().unwrap(), 4);

        let c = Condvar::default();
        let (g, res) = c.wait_timeout(m.lock().unwrap(), Duration::from_millis(1)).unwrap();
        let res: loom::sync::WaitTimeoutResult = res;
        assert!(res.timed_out(), "no one notifies");
        drop(g);
        c.notify_one();
        c.notify_all();

        let (tx, rx): (mpsc::Sender<u8>, mpsc::Receiver<u8>) = mpsc::channel();
        tx.clone().send(1).unwrap();
        assert_eq!(rx.recv().unwrap(), 1);
        assert!(rx.try_recv().is_err());
        assert!(rx.recv_timeout(Duration::from_millis(1)).is_err());

        let n = loom::sync::Notify::default();
        n.notify();
        n.wait();
        let b = Arc::new(loom::sync::Barrier::new(1));
        assert!(b.wait().is_leader());
    });
}

#[test]
fn atomic_module() {
    loom::model(|| {
        macro_rules! ints {
            ($($t:ident: $v:ty),*) => {$({
                let mut a = atomic::$t::new(1);
                assert_eq!(a.with_mut(|v| { *v += 1; *v }), 2);
                assert_eq!(unsafe { a.unsync_load() }, 2);
                assert_eq!(a.compare_and_swap(2, 3, SeqCst), 2);
                assert_eq!(a.fetch_update(SeqCst, SeqCst, |v| Some(v + 1)), Ok(3));
                assert_eq!(a.fetch_max(9, SeqCst), 4);
                assert_eq!(a.fetch_min(1, SeqCst), 9);
                assert_eq!(a.fetch_nand(0, SeqCst), 1);
                // loom's methods are inherent: path calls resolve.
                atomic::$t::store(&a, 6, SeqCst);
                assert_eq!(atomic::$t::fetch_add(&a, 1, SeqCst), 6);
                assert_eq!(atomic::$t::swap(&a, 1, SeqCst), 7);
                assert_eq!(atomic::$t::load(&a, SeqCst), 1);
                assert_eq!(atomic::$t::from(5 as $v).into_inner(), 5);
                assert_eq!(atomic::$t::default().load(SeqCst), 0);
            })*};
        }
        ints!(AtomicU8: u8, AtomicU16: u16, AtomicU32: u32, AtomicU64: u64, AtomicUsize: usize,
              AtomicI8: i8, AtomicI16: i16, AtomicI32: i32, AtomicI64: i64, AtomicIsize: isize);
        let b = atomic::AtomicBool::new(false);
        assert!(!b.compare_and_swap(false, true, SeqCst));
        assert!(unsafe { b.unsync_load() });
        assert!(b.fetch_xor(true, SeqCst));
        assert!(!atomic::AtomicBool::fetch_or(&b, true, SeqCst));
        assert_eq!(atomic::AtomicBool::compare_exchange(&b, true, false, SeqCst, SeqCst), Ok(true));
        let mut x = 1u8;
        let mut p = atomic::AtomicPtr::new(&mut x as *mut u8);
        p.with_mut(|q| assert!(!q.is_null()));
        assert_eq!(unsafe { *p.unsync_load() }, 1);
        assert!(!atomic::AtomicPtr::load(&p, SeqCst).is_null());
        atomic::fence(SeqCst);
        atomic::spin_loop_hint();
        loom::hint::spin_loop();
    });
}

#[test]
fn cell_alloc_future_lazy() {
    loom::lazy_static! {
        static ref ONE: u32 = 1;
    }
    loom::model(|| {
        let c = loom::cell::UnsafeCell::new(1);
        let p: loom::cell::ConstPtr<i32> = c.get();
        assert_eq!(unsafe { *p.deref() }, 1);
        assert_eq!(p.with(|q| unsafe { *q }), 1);
        // Each pointer's access ends before the next write starts (as in loom, a thread's own
        // write while its pointer is live fails the model).
        drop(p);
        let m: loom::cell::MutPtr<i32> = c.get_mut();
        unsafe { *m.deref() += 1 };
        m.with(|q| unsafe { *q += 1 });
        drop(m);
        c.with_mut(|q| unsafe { *q += 1 });
        assert_eq!(c.with(|q| unsafe { *q }), 4);
        assert_eq!(c.into_inner(), 4);
        // loom's `Cell` is `Debug` whatever `T` is, as its derived impl.
        let cell = loom::cell::Cell::new(String::from("s"));
        assert!(format!("{cell:?}").starts_with("Cell"));
        assert_eq!(cell.replace(String::new()), "s");

        let layout = loom::alloc::Layout::new::<u32>();
        unsafe {
            let p = loom::alloc::alloc_zeroed(layout);
            assert_eq!(*p, 0);
            loom::alloc::dealloc(p, layout);
        }
        let mut t = loom::alloc::Track::new(1);
        *t.get_mut() += 1;
        assert_eq!(*t.get_ref(), 2);
        assert_eq!(t.into_inner(), 2);

        let w = loom::future::AtomicWaker::new();
        assert!(w.take_waker().is_none());
        w.wake();
        assert_eq!(loom::future::block_on(async { 3 }), 3);

        assert_eq!(*ONE, 1);
        let _: fn() = loom::lazy_static::yield_now;
        let _: fn() -> bool = loom::lazy_static::panicking;
        let _: Option<loom::lazy_static::AccessError> = None;
        let _: Option<&loom::lazy_static::Lazy<u8>> = None;
    });
}
