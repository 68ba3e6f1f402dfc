//! The facade's public API is std's stable API (rustc 1.95) for the items it mirrors, so code
//! written against std compiles unchanged against pctvb, and behaves as std's: this file calls
//! every stable method, function and trait of `std::sync` (with `atomic` and `mpsc`),
//! `std::thread`, `std::hint::spin_loop` and `std::cell::UnsafeCell` through pctvb's paths,
//! outside executions and inside one (a fixed seed), and asserts what std returns. The first
//! test compares trait by trait: every trait std implements for a mirrored type (auto traits,
//! `Debug`, `Display`, `Error`, `Clone`, `Default`, `PartialEq`, `Hash`, iterators, `Deref`,
//! ...), pctvb's type implements too, for element types with and without `Send`, `Sync` and
//! unwind safety.
//!
//! What std has and pctvb leaves out is listed, with the reason, in the guide's section 11
//! ("Limits"); the compile errors of this file are the first place a missing item shows up.

// Deprecated std items are mirrored too (code that still calls them compiles unchanged).
#![allow(deprecated)]

use std::cell::{Cell, RefCell};
use std::panic::catch_unwind;
use std::rc::Rc;
use std::time::Duration;

use pctvb::cell::UnsafeCell;
use pctvb::sync::atomic::{self, AtomicBool, AtomicI32, AtomicPtr, Ordering};
use pctvb::sync::mpsc::{self, RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};
use pctvb::sync::{
    Arc, Barrier, Condvar, LazyLock, LockResult, Mutex, Once, OnceLock, OnceState, PoisonError,
    RwLock, RwLockWriteGuard, TryLockError, TryLockResult, WaitTimeoutResult, Weak,
};
use pctvb::thread::{self, AccessError, Builder, JoinHandle, Scope, ScopedJoinHandle, ThreadId};
use pctvb::Config;

/// Whether `$t` implements `$tr`, as a `bool` (an inherent method with the bound wins over the
/// trait method of the same name when the bound holds).
macro_rules! implements {
    ($t:ty: $($tr:tt)+) => {{
        struct Probe<T: ?Sized>(std::marker::PhantomData<T>);
        // One of the two `get`s is left unused, whichever the answer.
        #[allow(dead_code)]
        trait No {
            fn get(&self) -> bool {
                false
            }
        }
        impl<T: ?Sized> No for Probe<T> {}
        #[allow(dead_code)]
        impl<T: ?Sized + $($tr)+> Probe<T> {
            fn get(&self) -> bool {
                true
            }
        }
        Probe::<$t>(std::marker::PhantomData).get()
    }};
}

/// The traits of the list `$t` implements.
macro_rules! traits_of {
    ($t:ty) => {
        traits_of!(@ $t;
            "Send": Send,
            "Sync": Sync,
            "Unpin": Unpin,
            "UnwindSafe": std::panic::UnwindSafe,
            "RefUnwindSafe": std::panic::RefUnwindSafe,
            "Debug": std::fmt::Debug,
            "Display": std::fmt::Display,
            "Pointer": std::fmt::Pointer,
            "Error": std::error::Error,
            "Default": Default,
            "Clone": Clone,
            "Copy": Copy,
            "PartialEq": PartialEq,
            "Eq": Eq,
            "PartialOrd": PartialOrd,
            "Hash": std::hash::Hash,
            "Iterator": Iterator,
            "IntoIterator": IntoIterator,
            "Deref": std::ops::Deref,
            "DerefMut": std::ops::DerefMut
        )
    };
    (@ $t:ty; $($name:literal: $tr:path),*) => {{
        let mut v: Vec<&'static str> = Vec::new();
        $(
            if implements!($t: $tr) {
                v.push($name);
            }
        )*
        v
    }};
}

/// Pushes onto `$out` each pctvb type that lacks a trait its std type has.
macro_rules! compare {
    ($out:ident, $($std:ty => $ours:ty),* $(,)?) => {$(
        let (std, ours) = (traits_of!($std), traits_of!($ours));
        let missing: Vec<_> = std.iter().filter(|t| !ours.contains(t)).collect();
        if !missing.is_empty() {
            $out.push(format!("{}: {:?}", stringify!($ours), missing));
        }
    )*};
}

/// The generic types, with element type `$T`.
macro_rules! compare_generic {
    ($out:ident, $T:ty) => {
        compare!($out,
            std::sync::Mutex<$T> => pctvb::sync::Mutex<$T>,
            std::sync::MutexGuard<'static, $T> => pctvb::sync::MutexGuard<'static, $T>,
            std::sync::RwLock<$T> => pctvb::sync::RwLock<$T>,
            std::sync::RwLockReadGuard<'static, $T> => pctvb::sync::RwLockReadGuard<'static, $T>,
            std::sync::RwLockWriteGuard<'static, $T> => pctvb::sync::RwLockWriteGuard<'static, $T>,
            std::sync::OnceLock<$T> => pctvb::sync::OnceLock<$T>,
            std::sync::LazyLock<$T> => pctvb::sync::LazyLock<$T>,
            std::sync::mpsc::Sender<$T> => pctvb::sync::mpsc::Sender<$T>,
            std::sync::mpsc::SyncSender<$T> => pctvb::sync::mpsc::SyncSender<$T>,
            std::sync::mpsc::Receiver<$T> => pctvb::sync::mpsc::Receiver<$T>,
            std::sync::mpsc::Iter<'static, $T> => pctvb::sync::mpsc::Iter<'static, $T>,
            std::sync::mpsc::TryIter<'static, $T> => pctvb::sync::mpsc::TryIter<'static, $T>,
            std::sync::mpsc::IntoIter<$T> => pctvb::sync::mpsc::IntoIter<$T>,
            std::sync::mpsc::SendError<$T> => pctvb::sync::mpsc::SendError<$T>,
            std::sync::mpsc::TrySendError<$T> => pctvb::sync::mpsc::TrySendError<$T>,
            std::sync::PoisonError<$T> => pctvb::sync::PoisonError<$T>,
            std::sync::TryLockError<$T> => pctvb::sync::TryLockError<$T>,
            std::thread::JoinHandle<$T> => pctvb::thread::JoinHandle<$T>,
            std::thread::ScopedJoinHandle<'static, $T> =>
                pctvb::thread::ScopedJoinHandle<'static, $T>,
            std::thread::LocalKey<$T> => pctvb::thread::LocalKey<$T>,
            std::cell::UnsafeCell<$T> => pctvb::cell::UnsafeCell<$T>,
            std::sync::atomic::AtomicPtr<$T> => pctvb::sync::atomic::AtomicPtr<$T>,
        );
    };
}

#[test]
fn every_trait_std_implements_for_a_mirrored_type_pctvb_does() {
    let mut missing = Vec::new();
    // Element types with and without `Send`, `Sync`, `Copy`, `Debug`-only and unwind safety.
    compare_generic!(missing, u8);
    compare_generic!(missing, String);
    compare_generic!(missing, Cell<u8>);
    compare_generic!(missing, Rc<u8>);
    compare_generic!(missing, &'static mut u8);
    compare_generic!(missing, std::cell::UnsafeCell<u8>);
    compare!(missing,
        std::sync::Condvar => pctvb::sync::Condvar,
        std::sync::WaitTimeoutResult => pctvb::sync::WaitTimeoutResult,
        std::sync::Barrier => pctvb::sync::Barrier,
        std::sync::BarrierWaitResult => pctvb::sync::BarrierWaitResult,
        std::sync::Once => pctvb::sync::Once,
        std::sync::OnceState => pctvb::sync::OnceState,
        std::sync::atomic::AtomicBool => pctvb::sync::atomic::AtomicBool,
        std::sync::atomic::AtomicU8 => pctvb::sync::atomic::AtomicU8,
        std::sync::atomic::AtomicU16 => pctvb::sync::atomic::AtomicU16,
        std::sync::atomic::AtomicU32 => pctvb::sync::atomic::AtomicU32,
        std::sync::atomic::AtomicU64 => pctvb::sync::atomic::AtomicU64,
        std::sync::atomic::AtomicUsize => pctvb::sync::atomic::AtomicUsize,
        std::sync::atomic::AtomicI8 => pctvb::sync::atomic::AtomicI8,
        std::sync::atomic::AtomicI16 => pctvb::sync::atomic::AtomicI16,
        std::sync::atomic::AtomicI32 => pctvb::sync::atomic::AtomicI32,
        std::sync::atomic::AtomicI64 => pctvb::sync::atomic::AtomicI64,
        std::sync::atomic::AtomicIsize => pctvb::sync::atomic::AtomicIsize,
        std::sync::atomic::Ordering => pctvb::sync::atomic::Ordering,
        std::sync::mpsc::RecvError => pctvb::sync::mpsc::RecvError,
        std::sync::mpsc::TryRecvError => pctvb::sync::mpsc::TryRecvError,
        std::sync::mpsc::RecvTimeoutError => pctvb::sync::mpsc::RecvTimeoutError,
        std::thread::Thread => pctvb::thread::Thread,
        std::thread::ThreadId => pctvb::thread::ThreadId,
        std::thread::Builder => pctvb::thread::Builder,
        std::thread::Scope<'static, 'static> => pctvb::thread::Scope<'static, 'static>,
        std::thread::AccessError => pctvb::thread::AccessError,
    );
    assert!(missing.is_empty(), "traits std has and pctvb lacks:\n{}", missing.join("\n"));
    // The check itself tells traits apart.
    assert!(implements!(u8: Copy) && !implements!(String: Copy));
    assert!(!implements!(pctvb::sync::mpsc::Receiver<u8>: Sync));
}

/// `Mutex`, `RwLock`, their guards and the poison types.
fn locks() {
    let m = Mutex::new(1);
    *m.lock().unwrap() += 1;
    {
        let g = m.try_lock().unwrap();
        assert_eq!((format!("{g}"), format!("{g:?}")), ("2".to_string(), "2".to_string()));
        assert!(matches!(m.try_lock(), Err(TryLockError::WouldBlock)));
    }
    assert!(!m.is_poisoned());
    let poisoned = catch_unwind(|| {
        let _g = m.lock().unwrap();
        panic!("poisons the mutex");
    });
    assert!(poisoned.is_err() && m.is_poisoned());
    let e: PoisonError<_> = m.lock().unwrap_err();
    assert_eq!(**e.get_ref(), 2);
    assert_eq!(e.to_string(), "poisoned lock: another task failed inside");
    let mut g = e.into_inner();
    *g += 1;
    drop(g);
    let e: TryLockError<_> = m.try_lock().unwrap_err();
    assert!(matches!(e, TryLockError::Poisoned(_)), "{e:?}");
    drop(e);
    m.clear_poison();
    assert!(!m.is_poisoned());
    let mut m = Mutex::from(7);
    *m.get_mut().unwrap() += 1;
    assert_eq!(m.into_inner().unwrap(), 8);
    assert_eq!(Mutex::<u8>::default().into_inner().unwrap(), 0);
    let r: LockResult<u8> = Mutex::new(3u8).into_inner();
    assert_eq!(r.unwrap(), 3);
    let mut pe = PoisonError::new(5);
    *pe.get_mut() += 1;
    assert_eq!(pe.into_inner(), 6);
    let e: TryLockError<u8> = PoisonError::new(1).into();
    assert_eq!(e.to_string(), "poisoned lock: another task failed inside");

    let l = RwLock::new(String::from("a"));
    {
        let (r1, r2) = (l.read().unwrap(), l.try_read().unwrap());
        assert_eq!(format!("{r1}{r2:?}"), "a\"a\"");
        let t: TryLockResult<_> = l.try_write();
        assert!(matches!(t, Err(TryLockError::WouldBlock)));
    }
    {
        let mut w = l.write().unwrap();
        w.push('b');
        assert_eq!(format!("{w} {w:?}"), "ab \"ab\"");
        let r = RwLockWriteGuard::downgrade(w);
        assert!(l.try_read().is_ok() && l.try_write().is_err());
        drop(r);
    }
    l.try_write().unwrap().push('c');
    let poisoned = catch_unwind(|| {
        let _w = l.write().unwrap();
        panic!("poisons the lock");
    });
    assert!(poisoned.is_err() && l.is_poisoned());
    l.clear_poison();
    let mut l = RwLock::from(vec![1]);
    l.get_mut().unwrap().push(2);
    assert_eq!(l.into_inner().unwrap(), vec![1, 2]);
    assert_eq!(RwLock::<Vec<u8>>::default().into_inner().unwrap(), Vec::<u8>::new());
    assert!(format!("{:?}", RwLock::new(0)).starts_with("RwLock"));
    assert!(format!("{:?}", Mutex::new(0)).starts_with("Mutex"));
}

/// `Condvar`, `WaitTimeoutResult`, `Barrier`, `BarrierWaitResult`.
fn condvar_and_barrier() {
    let pair = Arc::new((Mutex::new(false), Condvar::default()));
    let theirs = Arc::clone(&pair);
    let t = thread::spawn(move || {
        let (m, cv) = &*theirs;
        *m.lock().unwrap() = true;
        cv.notify_one();
        cv.notify_all();
    });
    let (m, cv) = &*pair;
    let g = cv.wait_while(m.lock().unwrap(), |ready| !*ready).unwrap();
    assert!(*g);
    drop(g);
    t.join().unwrap();
    let g = m.lock().unwrap();
    // Every timed wait below times out: nobody notifies any more.
    let (g, r): (_, WaitTimeoutResult) = cv.wait_timeout(g, Duration::from_millis(1)).unwrap();
    let copy: WaitTimeoutResult = r;
    assert!(r.timed_out() && r == copy);
    let (g, r) = cv.wait_timeout_while(g, Duration::from_millis(1), |_| true).unwrap();
    assert!(r.timed_out());
    let (g, timed_out) = cv.wait_timeout_ms(g, 1).unwrap();
    assert!(timed_out);
    drop(g);
    let cv2 = Condvar::new();
    let notified = Mutex::new(false);
    let g = notified.lock().unwrap();
    // A wait with a notifier: `wait` returns after `notify_one`, or spuriously before (as
    // std's may), hence the loop.
    let g = thread::scope(|s| {
        s.spawn(|| {
            *notified.lock().unwrap() = true;
            cv2.notify_one();
        });
        let mut g = g;
        while !*g {
            g = cv2.wait(g).unwrap();
        }
        g
    });
    assert!(*g);
    drop(g);
    assert!(format!("{cv2:?}").starts_with("Condvar"));

    let b = Barrier::new(1);
    let r = b.wait();
    assert!(r.is_leader());
    assert!(format!("{r:?}{b:?}").contains("Barrier"));
}

/// `Once`, `OnceState`, `OnceLock`, `LazyLock`.
fn once_cells() {
    let once = Once::new();
    assert!(!once.is_completed());
    let poisoned = catch_unwind(|| once.call_once(|| panic!("poisons the once")));
    assert!(poisoned.is_err());
    once.call_once_force(|state: &OnceState| {
        assert!(state.is_poisoned(), "{state:?}");
    });
    once.call_once(|| unreachable!("completed"));
    once.wait();
    once.wait_force();
    assert!(once.is_completed());
    assert!(format!("{:?}", Once::default()).starts_with("Once"));

    let cell = OnceLock::new();
    assert_eq!(
        (cell.get(), cell.clone(), cell == OnceLock::default()),
        (None, OnceLock::new(), true)
    );
    assert_eq!(cell.set(1), Ok(()));
    assert_eq!((cell.set(2), cell.get_or_init(|| 3), cell.wait()), (Err(2), &1, &1));
    let copy = cell.clone();
    assert!(copy == cell && copy != OnceLock::from(2) && copy.get() == Some(&1));
    let mut cell = cell;
    *cell.get_mut().unwrap() += 1;
    assert_eq!((cell.take(), cell.take(), copy.into_inner()), (Some(2), None, Some(1)));
    assert!(format!("{cell:?}").starts_with("OnceLock"));

    let mut lazy = LazyLock::new(|| vec![1]);
    assert_eq!(LazyLock::get(&lazy), None);
    assert_eq!(LazyLock::get_mut(&mut lazy), None);
    LazyLock::force_mut(&mut lazy).push(2);
    lazy.push(3);
    assert_eq!((LazyLock::force(&lazy), &*lazy), (&vec![1, 2, 3], &vec![1, 2, 3]));
    LazyLock::get_mut(&mut lazy).unwrap().push(4);
    assert_eq!(LazyLock::get(&lazy).map(Vec::len), Some(4));
    let plain: LazyLock<Vec<u8>> = LazyLock::default();
    assert!(plain.is_empty());
    assert!(format!("{plain:?}").starts_with("LazyLock"));
}

/// Every atomic integer's methods, through one type per width and sign.
macro_rules! integer_atomic {
    ($($t:ident: $int:ty),*) => {$({
        use pctvb::sync::atomic::$t;
        let a = $t::new(5);
        let o = Ordering::SeqCst;
        a.store(6, Ordering::Release);
        assert_eq!(a.load(Ordering::Acquire), 6);
        assert_eq!(a.swap(7, o), 6);
        assert_eq!(a.compare_exchange(7, 8, o, Ordering::Relaxed), Ok(7));
        assert_eq!(a.compare_exchange_weak(7, 9, o, o), Err(8));
        assert_eq!(a.compare_and_swap(8, 9, Ordering::AcqRel), 8);
        assert_eq!(a.compare_and_swap(8, 10, Ordering::Release), 9);
        assert_eq!((a.fetch_add(3, o), a.fetch_sub(2, o), a.load(o)), (9, 12, 10));
        assert_eq!((a.fetch_and(6, o), a.fetch_or(1, o), a.fetch_xor(3, o)), (10, 2, 3));
        let ones = -1i8 as $int; // `nand 0` sets every bit
        let top = ones.max(9);
        assert_eq!((a.fetch_nand(0, o), a.fetch_max(9, o), a.fetch_min(1, o)), (0, ones, top));
        a.store(1, o);
        assert_eq!(a.fetch_update(o, o, |v| Some(v + 1)), Ok(1));
        assert_eq!(a.try_update(o, o, |v| (v < 2).then_some(0)), Err(2));
        assert_eq!(a.try_update(o, o, |v| Some(v * 2)), Ok(2));
        assert_eq!(a.update(o, o, |v| v + 1), 4);
        let mut a = $t::from(a.load(o));
        *a.get_mut() += 1;
        assert_eq!(a.into_inner(), 6);
        const INNER: $int = $t::new(3).into_inner();
        assert_eq!((INNER, $t::default().into_inner()), (3, 0));
        assert_eq!(format!("{:?}", $t::new(4)), "4");
    })*};
}

/// The atomics, fences and the spin-loop hints.
fn atomics() {
    integer_atomic!(AtomicU8: u8, AtomicU16: u16, AtomicU32: u32, AtomicU64: u64,
        AtomicUsize: usize, AtomicI8: i8, AtomicI16: i16, AtomicI32: i32, AtomicI64: i64,
        AtomicIsize: isize);
    let _: AtomicI32 = AtomicI32::new(0);

    let b = AtomicBool::from(true);
    let o = Ordering::SeqCst;
    assert!(b.load(o) && b.swap(false, o) && !b.fetch_not(o));
    assert!(b.fetch_and(false, o) && !b.fetch_nand(true, o) && b.fetch_or(false, o));
    assert!(b.fetch_xor(true, o) && !b.compare_and_swap(false, true, o));
    assert_eq!(b.compare_exchange(true, false, o, o), Ok(true));
    assert_eq!(b.compare_exchange_weak(true, false, o, o), Err(false));
    assert_eq!(b.fetch_update(o, o, |v| Some(!v)), Ok(false));
    assert_eq!(b.try_update(o, o, |_| None), Err(true));
    assert!(b.update(o, o, |v| !v));
    b.store(true, o);
    let mut b = b;
    *b.get_mut() = false;
    assert!(!b.into_inner() && !AtomicBool::default().into_inner());
    assert_eq!(format!("{:?}", AtomicBool::new(true)), "true");

    let mut slots = [1u32, 2, 3];
    let base = slots.as_mut_ptr();
    let p = AtomicPtr::from(base);
    assert_eq!(p.update(o, o, |q| q.wrapping_add(1)), base);
    assert_eq!(p.try_update(o, o, |q| Some(q.wrapping_add(1))), Ok(base.wrapping_add(1)));
    assert_eq!(p.fetch_update(o, o, |_| None), Err(base.wrapping_add(2)));
    assert_eq!(p.compare_and_swap(base.wrapping_add(2), base, o), base.wrapping_add(2));
    assert_eq!(p.fetch_ptr_add(1, o), base);
    assert_eq!(format!("{p:p}"), format!("{:p}", base.wrapping_add(1)));
    assert_eq!(format!("{p:?}"), format!("{:?}", base.wrapping_add(1)));
    assert!(AtomicPtr::<u8>::default().into_inner().is_null());
    let mut p = p;
    *p.get_mut() = base;
    assert_eq!(p.into_inner(), base);

    atomic::fence(Ordering::AcqRel);
    atomic::compiler_fence(Ordering::SeqCst);
    atomic::spin_loop_hint();
    pctvb::hint::spin_loop();
}

/// `channel`, `sync_channel`, the endpoints, the iterators and the error types.
fn channels() {
    let (tx, rx) = mpsc::channel::<u8>();
    let tx2 = tx.clone();
    tx.send(1).unwrap();
    tx2.send(2).unwrap();
    assert_eq!((rx.recv(), rx.try_recv()), (Ok(1), Ok(2)));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    assert_eq!(rx.recv_timeout(Duration::from_millis(1)), Err(RecvTimeoutError::Timeout));
    tx.send(3).unwrap();
    tx.send(4).unwrap();
    let mut it = rx.try_iter();
    assert_eq!(it.next(), Some(3));
    assert!(format!("{it:?}").starts_with("TryIter"));
    assert_eq!(rx.iter().next(), Some(4));
    tx.send(5).unwrap();
    assert_eq!((&rx).into_iter().next(), Some(5));
    assert!(format!("{:?}{:?}{tx:?}{rx:?}", rx.iter(), tx2).contains("Sender"));
    drop((tx, tx2));
    assert_eq!(rx.recv(), Err(RecvError));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
    assert_eq!(rx.recv_timeout(Duration::from_millis(1)), Err(RecvTimeoutError::Disconnected));
    assert_eq!(rx.into_iter().next(), None);

    let (tx, rx) = mpsc::sync_channel(1);
    tx.try_send(1).unwrap();
    assert_eq!(tx.clone().try_send(2), Err(TrySendError::Full(2)));
    let mut it = rx.into_iter();
    assert_eq!(it.next(), Some(1));
    assert!(format!("{it:?}{tx:?}").contains("SyncSender"));
    drop(it);
    assert_eq!(tx.send(3), Err(SendError(3)));
    assert_eq!(tx.try_send(4), Err(TrySendError::Disconnected(4)));

    // The errors are std's, with std's traits.
    let e: Box<dyn std::error::Error> = Box::new(TrySendError::from(SendError(1)));
    assert_eq!(e.to_string(), "sending on a closed channel");
    assert_eq!(TryRecvError::from(RecvError), TryRecvError::Disconnected);
    assert_eq!(
        RecvTimeoutError::from(RecvError).to_string(),
        "channel is empty and sending half is closed"
    );
}

pctvb::thread_local! {
    static COUNT: Cell<u32> = const { Cell::new(1) };
    static LIST: RefCell<Vec<u32>> = RefCell::new(vec![1]);
}

/// Spawning, scopes, builders, handles, `Thread`, parking, sleeping, thread-locals.
fn threads() {
    let h: JoinHandle<u8> = thread::spawn(|| 1);
    let id: ThreadId = h.thread().id();
    assert_ne!(id, thread::current().id());
    let r: thread::Result<u8> = h.join();
    assert_eq!(r.unwrap(), 1);

    let h = Builder::new().name("worker".into()).stack_size(1 << 20).spawn(|| {
        assert!(!thread::panicking());
        thread::current().name().map(str::to_owned)
    });
    let h = h.unwrap();
    assert_eq!(h.thread().name(), Some("worker"));
    assert_eq!(h.join().unwrap().as_deref(), Some("worker"));

    let mut local = vec![1];
    let borrowed = &mut local;
    // SAFETY: joined below, before `local` is used again or ends.
    let h = unsafe { Builder::new().spawn_unchecked(move || borrowed.push(2)) }.unwrap();
    h.join().unwrap();
    assert_eq!(local, [1, 2]);

    let mut n = 0;
    let total = thread::scope(|s: &Scope<'_, '_>| {
        let a: ScopedJoinHandle<'_, u8> = s.spawn(|| 2);
        let b = Builder::new().name("scoped".into()).stack_size(1 << 20).spawn_scoped(s, || {
            n += 1;
            thread::current().name().map(str::to_owned)
        });
        let b = b.unwrap();
        assert_eq!(b.thread().name(), Some("scoped"));
        assert!(format!("{s:?}{a:?}").contains("Scope"));
        while !a.is_finished() {
            thread::yield_now();
        }
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!((total, n), ((2, Some("scoped".to_string())), 1));

    // Parking: the token makes the next park return at once; timeouts return.
    let me = thread::current();
    me.unpark();
    thread::park();
    thread::park_timeout(Duration::from_millis(1));
    thread::park_timeout_ms(1);
    thread::sleep(Duration::from_millis(1));
    thread::sleep_ms(1);
    thread::yield_now();
    assert!(thread::available_parallelism().unwrap().get() >= 1);
    let unparker = thread::spawn(move || me.unpark());
    thread::park_timeout(Duration::from_secs(10));
    while !unparker.is_finished() {
        thread::yield_now();
    }
    unparker.join().unwrap();
    assert!(format!("{:?}{:?}", thread::current(), thread::current().id()).contains("Thread"));

    assert_eq!((COUNT.get(), COUNT.replace(5), COUNT.take()), (1, 1, 5));
    COUNT.set(7);
    assert_eq!(COUNT.with(Cell::get), 7);
    assert_eq!(COUNT.try_with(Cell::get), Ok(7));
    LIST.with_borrow_mut(|l| l.push(2));
    assert_eq!(LIST.with_borrow(Vec::len), 2);
    assert_eq!((LIST.replace(vec![3]), LIST.take()), (vec![1, 2], vec![3]));
    LIST.set(vec![4]);
    assert_eq!(thread::spawn(|| LIST.take()).join().unwrap(), vec![1], "a fresh value per thread");
    let e: Result<(), AccessError> = Ok(());
    assert!(e.is_ok() && format!("{COUNT:?}").contains("LocalKey"));
}

/// `UnsafeCell`, as the facade documents it (std's methods plus `with`/`with_mut`).
fn cells() {
    let c = UnsafeCell::new(1);
    // SAFETY: no other reference to the data exists while these run.
    unsafe {
        *c.get() += 1;
        *UnsafeCell::raw_get(&c) += 1;
    }
    c.with_mut(|p| unsafe { *p += 1 });
    assert_eq!(c.with(|p| unsafe { *p }), 4);
    let mut c = UnsafeCell::from(c.into_inner());
    *c.get_mut() += 1;
    assert_eq!(c.into_inner(), 5);
    assert_eq!(UnsafeCell::<u8>::default().into_inner(), 0);
    assert!(format!("{:?}", UnsafeCell::new(0)).starts_with("UnsafeCell"));
    let _: Weak<u8> = Arc::downgrade(&Arc::new(0));
}

fn everything() {
    locks();
    condvar_and_barrier();
    once_cells();
    atomics();
    channels();
    threads();
    cells();
}

#[test]
fn every_stable_item_behaves_as_std_outside_executions() {
    everything();
}

#[test]
fn every_stable_item_behaves_as_std_inside_an_execution() {
    // Fixed seed; each execution runs every call above on logical threads.
    let report = Config::new().ignore_env().seed(0x57d).iterations(40).run(everything);
    assert!(report.is_ok(), "{}", report.failure().unwrap());
    assert_eq!(report.executions, 40);
}

/// An instrumented item written against std that names the paths std added or pctvb added
/// late: the instrument rewrites them to pctvb's (the compile checks the lists it keeps).
#[pctvb::instrument(force)]
fn written_against_std() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{LazyLock, Once, OnceState};
    let once = Once::new();
    once.call_once_force(|s: &OnceState| assert!(!s.is_poisoned()));
    let lazy: LazyLock<usize> = LazyLock::new(|| 1);
    let a = AtomicUsize::new(*lazy);
    let h = std::thread::spawn(|| std::thread::available_parallelism().map(|n| n.get()));
    let r: std::thread::Result<_> = h.join();
    a.update(Ordering::SeqCst, Ordering::SeqCst, |v| v + 1);
    let _ = a.try_update(Ordering::SeqCst, Ordering::SeqCst, |v| v.checked_sub(1));
    std::sync::atomic::spin_loop_hint();
    std::thread::sleep_ms(0);
    std::thread::park_timeout_ms(0);
    a.load(Ordering::SeqCst) + r.unwrap().unwrap()
}

#[test]
fn an_instrumented_item_written_against_std_uses_the_new_paths() {
    assert_eq!(written_against_std(), 1 + std::thread::available_parallelism().unwrap().get());
    // Fixed seed; inside, `available_parallelism` is 2.
    let report = Config::new().ignore_env().seed(3).iterations(20).run(|| {
        assert_eq!(written_against_std(), 3);
    });
    assert!(report.is_ok(), "{}", report.failure().unwrap());
}
