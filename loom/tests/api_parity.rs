//! loom 0.7.3's public API (the latest 0.7.x), checked against pctvb-loom's signature by
//! signature: every function and method of loom's, taken as a function pointer of loom's exact
//! type where it is not generic and called with loom's argument types where it is; every trait
//! loom's types implement (auto traits included: `Send`, `Sync`, `Unpin`, `UnwindSafe`,
//! `RefUnwindSafe`, with loom's negative ones asserted too where code can tell); the struct
//! literals loom's own macros expand to (`LocalKey { init, _p }`, `Lazy { init, _p }`), which
//! crates also write by hand; and the std types loom's signatures name (`std::sync::LockResult`,
//! `std::sync::mpsc::RecvError`, `std::io::Result`, ...). The list is loom 0.7.3's rustdoc
//! (`cargo +nightly rustdoc -- --output-format json`), module by module: a missing item or a
//! changed signature fails to compile. `tests/api.rs` checks what each item does; the last
//! tests here check what the items added for parity do.
#![allow(deprecated, clippy::type_complexity)]
extern crate pctvb_loom as loom;

use std::future::Future;
use std::marker::PhantomData;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::path::PathBuf;
use std::pin::Pin;
use std::task::Waker;
use std::time::Duration;

use loom::sync::atomic::Ordering::SeqCst;

fn send<T: Send>() {}
fn sync<T: Sync>() {}
fn unpin<T: Unpin>() {}
fn unwind_safe<T: UnwindSafe>() {}
fn ref_unwind_safe<T: RefUnwindSafe>() {}
fn debug<T: std::fmt::Debug>() {}
fn default<T: Default>() {}
fn clone<T: Clone>() {}

/// `T: Sync` is false (an autoref-specialization probe: the inherent method wins only when
/// the bound holds).
macro_rules! is_sync {
    ($t:ty) => {{
        struct Probe<T: ?Sized>(PhantomData<T>);
        #[allow(dead_code)]
        trait NotSync {
            fn is_sync(&self) -> bool {
                false
            }
        }
        impl<T: ?Sized> NotSync for Probe<T> {}
        #[allow(dead_code)]
        impl<T: ?Sized + Sync> Probe<T> {
            fn is_sync(&self) -> bool {
                true
            }
        }
        Probe::<$t>(PhantomData).is_sync()
    }};
}

macro_rules! is_send {
    ($t:ty) => {{
        struct Probe<T: ?Sized>(PhantomData<T>);
        #[allow(dead_code)]
        trait NotSend {
            fn is_send(&self) -> bool {
                false
            }
        }
        impl<T: ?Sized> NotSend for Probe<T> {}
        #[allow(dead_code)]
        impl<T: ?Sized + Send> Probe<T> {
            fn is_send(&self) -> bool {
                true
            }
        }
        Probe::<$t>(PhantomData).is_send()
    }};
}

#[test]
fn root() {
    let _: usize = loom::MAX_THREADS;
    let _: fn() = loom::explore;
    let _: fn() = loom::stop_exploring;
    let _: fn() = loom::skip_branch;
    let _: fn(fn()) = loom::model::<fn()>;
    let _: fn(fn()) = loom::model::model::<fn()>;
}

#[test]
fn model_builder() {
    // Every pub field, with loom's type.
    let mut b = loom::model::Builder::new();
    let _: &mut usize = &mut b.max_threads;
    let _: &mut usize = &mut b.max_branches;
    let _: &mut Option<usize> = &mut b.max_permutations;
    let _: &mut Option<Duration> = &mut b.max_duration;
    let _: &mut Option<usize> = &mut b.preemption_bound;
    let _: &mut Option<PathBuf> = &mut b.checkpoint_file;
    let _: &mut usize = &mut b.checkpoint_interval;
    let _: &mut bool = &mut b.expect_explicit_explore;
    let _: &mut bool = &mut b.location;
    let _: &mut bool = &mut b.log;
    let _: fn() -> loom::model::Builder = loom::model::Builder::new;
    let _: for<'a, 'b> fn(&'a mut loom::model::Builder, &'b str) -> &'a mut loom::model::Builder =
        loom::model::Builder::checkpoint_file;
    let _: fn(&loom::model::Builder, fn()) = loom::model::Builder::check::<fn()>;
    debug::<loom::model::Builder>();
    default::<loom::model::Builder>();
    send::<loom::model::Builder>();
    sync::<loom::model::Builder>();
    unwind_safe::<loom::model::Builder>();
    ref_unwind_safe::<loom::model::Builder>();
}

#[test]
fn alloc() {
    let _: std::alloc::Layout = loom::alloc::Layout::new::<u8>();
    let _: unsafe fn(loom::alloc::Layout) -> *mut u8 = loom::alloc::alloc;
    let _: unsafe fn(loom::alloc::Layout) -> *mut u8 = loom::alloc::alloc_zeroed;
    let _: unsafe fn(*mut u8, loom::alloc::Layout) = loom::alloc::dealloc;
    type T = loom::alloc::Track<u8>;
    let _: fn(u8) -> T = T::new;
    let _: fn(&T) -> &u8 = T::get_ref;
    let _: fn(&mut T) -> &mut u8 = T::get_mut;
    let _: fn(T) -> u8 = T::into_inner;
    debug::<T>();
    send::<T>();
    sync::<T>();
    unpin::<T>();
    unwind_safe::<T>();
    ref_unwind_safe::<T>();
}

#[test]
fn cell() {
    type U = loom::cell::UnsafeCell<u8>;
    let _: fn(u8) -> U = U::new;
    let _: fn(U) -> u8 = U::into_inner;
    let _: fn(&U, fn(*const u8) -> u8) -> u8 = U::with::<fn(*const u8) -> u8, u8>;
    let _: fn(&U, fn(*mut u8) -> u8) -> u8 = U::with_mut::<fn(*mut u8) -> u8, u8>;
    let _: fn(&U) -> loom::cell::ConstPtr<u8> = U::get;
    let _: fn(&U) -> loom::cell::MutPtr<u8> = U::get_mut;
    debug::<U>();
    default::<U>();
    let _: U = U::from(1u8);
    send::<U>();
    unpin::<U>();
    unwind_safe::<U>();
    // As loom's (and std's): an `UnsafeCell` is `Send` but not `Sync`; share it through a
    // type that promises `Sync`.
    assert!(!is_sync!(U));
    assert!(is_send!(U));
    assert!(!is_send!(loom::cell::UnsafeCell<std::rc::Rc<u8>>));
    // Unsized, as loom's `T: ?Sized`.
    let _: Option<&loom::cell::UnsafeCell<[u8]>> = None;

    type C = loom::cell::ConstPtr<u8>;
    let _: unsafe fn(&C) -> &u8 = C::deref;
    let _: fn(&C, fn(*const u8) -> u8) -> u8 = C::with::<fn(*const u8) -> u8, u8>;
    debug::<C>();
    assert!(!is_send!(C));
    assert!(!is_sync!(C));
    type M = loom::cell::MutPtr<u8>;
    let _: unsafe fn(&M) -> &mut u8 = M::deref;
    let _: fn(&M, fn(*mut u8) -> u8) -> u8 = M::with::<fn(*mut u8) -> u8, u8>;
    debug::<M>();
    assert!(!is_send!(M));
    assert!(!is_sync!(M));
    let _: Option<loom::cell::ConstPtr<[u8]>> = None;
    let _: Option<loom::cell::MutPtr<[u8]>> = None;

    type Cl = loom::cell::Cell<u8>;
    let _: fn(u8) -> Cl = Cl::new;
    let _: fn(&Cl, u8) = Cl::set;
    let _: fn(&Cl, &Cl) = Cl::swap;
    let _: fn(&Cl, u8) -> u8 = Cl::replace;
    let _: fn(&Cl) -> u8 = Cl::get;
    let _: fn(&Cl) -> u8 = Cl::take;
    let _: fn(Cl) -> u8 = Cl::into_inner;
    debug::<Cl>();
    default::<Cl>();
    clone::<Cl>();
    fn ord<T: Ord + Eq + PartialOrd + PartialEq + From<u8>>() {}
    ord::<Cl>();
    send::<Cl>();
    assert!(!is_sync!(Cl));
}

#[test]
fn future() {
    let _: fn(std::future::Ready<u8>) -> u8 = loom::future::block_on::<std::future::Ready<u8>>;
    fn takes_future<F: Future<Output = u8>>(f: F) -> u8 {
        loom::future::block_on(f)
    }
    let _ = takes_future::<Pin<Box<dyn Future<Output = u8>>>>;
    type W = loom::future::AtomicWaker;
    let _: fn() -> W = W::new;
    let _: fn(&W, Waker) = W::register;
    let _: fn(&W, &Waker) = W::register_by_ref;
    let _: fn(&W) = W::wake;
    let _: fn(&W) -> Option<Waker> = W::take_waker;
    debug::<W>();
    default::<W>();
    send::<W>();
    sync::<W>();
    unpin::<W>();
    unwind_safe::<W>();
    ref_unwind_safe::<W>();
}

#[test]
fn hint() {
    let _: fn() = loom::hint::spin_loop;
    let _: unsafe fn() -> ! = loom::hint::unreachable_unchecked;
}

#[test]
fn lazy_static_module() {
    let _: fn() = loom::lazy_static::yield_now;
    let _: fn() -> bool = loom::lazy_static::panicking;
    debug::<loom::lazy_static::AccessError>();
    fn display<T: std::fmt::Display>() {}
    display::<loom::lazy_static::AccessError>();
    send::<loom::lazy_static::AccessError>();
    sync::<loom::lazy_static::AccessError>();
    type L = loom::lazy_static::Lazy<u8>;
    let _: fn(&'static L) -> &'static u8 = L::get;
    debug::<L>();
    send::<L>();
    sync::<L>();
    unpin::<L>();
    unwind_safe::<L>();
    ref_unwind_safe::<L>();
    // The literal loom's `lazy_static!` expands to (its fields are `#[doc(hidden)]` but
    // public, and crates' own macros build it so).
    fn seven() -> u8 {
        7
    }
    static SEVEN: loom::lazy_static::Lazy<u8> =
        loom::lazy_static::Lazy { init: seven, _p: PhantomData };
    let _: fn() -> u8 = SEVEN.init;
    loom::model(|| assert_eq!(*SEVEN.get(), 7));
}

#[test]
fn thread_module() {
    type T = loom::thread::Thread;
    let _: fn(&T) -> loom::thread::ThreadId = T::id;
    let _: fn(&T) -> Option<&str> = T::name;
    let _: fn(&T) = T::unpark;
    clone::<T>();
    debug::<T>();
    send::<T>();
    sync::<T>();
    unwind_safe::<T>();
    ref_unwind_safe::<T>();
    type Id = loom::thread::ThreadId;
    fn id_traits<I: Clone + Copy + Eq + PartialEq + std::hash::Hash + std::fmt::Debug>() {}
    id_traits::<Id>();
    send::<Id>();
    sync::<Id>();

    type J = loom::thread::JoinHandle<u8>;
    let _: fn(J) -> std::thread::Result<u8> = J::join;
    let _: fn(&J) -> &T = J::thread;
    debug::<J>();
    send::<J>();
    sync::<J>();
    unpin::<J>();
    unwind_safe::<J>();
    ref_unwind_safe::<J>();

    type B = loom::thread::Builder;
    let _: fn() -> B = B::new;
    let _: fn(B, String) -> B = B::name;
    let _: fn(B, usize) -> B = B::stack_size;
    let _: fn(B, fn() -> u8) -> std::io::Result<J> = B::spawn::<fn() -> u8, u8>;
    debug::<B>();
    send::<B>();
    sync::<B>();

    let _: fn() -> T = loom::thread::current;
    let _: fn(fn() -> u8) -> J = loom::thread::spawn::<fn() -> u8, u8>;
    let _: fn() = loom::thread::park;
    let _: fn() = loom::thread::yield_now;
    let _: fn() -> bool = loom::thread::panicking;
    debug::<loom::thread::AccessError>();

    type K = loom::thread::LocalKey<u8>;
    let _: fn(&'static K, fn(&u8) -> u8) -> u8 = K::with::<fn(&u8) -> u8, u8>;
    let _: fn(&'static K, fn(&u8) -> u8) -> Result<u8, loom::thread::AccessError> =
        K::try_with::<fn(&u8) -> u8, u8>;
    debug::<K>();
    send::<K>();
    sync::<K>();
    // The literal loom's `thread_local!` expands to, which crates also write by hand.
    fn nine() -> u8 {
        9
    }
    static NINE: loom::thread::LocalKey<u8> =
        loom::thread::LocalKey { init: nine, _p: PhantomData };
    let _: fn() -> u8 = NINE.init;
    loom::model(|| assert_eq!(NINE.with(|v| *v), 9));
    // loom's macro takes any visibility and the last declaration without a `;`.
    loom::thread_local! {
        pub(crate) static A: u8 = 1;
        static B2: u8 = 2
    }
    let _: &'static loom::thread::LocalKey<u8> = &A;
    let _: &'static loom::thread::LocalKey<u8> = &B2;
}

#[test]
fn sync_module() {
    use loom::sync::*;
    // loom's result aliases are std's.
    let _: Option<LockResult<u8>> = None::<std::sync::LockResult<u8>>;
    let _: Option<TryLockResult<u8>> = None::<std::sync::TryLockResult<u8>>;

    type A = Arc<u8>;
    let _: fn(u8) -> A = A::new;
    let _: fn(u8) -> Pin<A> = A::pin;
    let _: fn(A) -> Result<u8, A> = A::try_unwrap;
    let _: fn(std::sync::Arc<u8>) -> A = A::from_std;
    let _: fn(&A) -> usize = A::strong_count;
    let _: unsafe fn(*const u8) = A::increment_strong_count;
    let _: unsafe fn(*const u8) = A::decrement_strong_count;
    let _: fn(&mut A) -> Option<&mut u8> = A::get_mut;
    let _: fn(&A, &A) -> bool = A::ptr_eq;
    let _: fn(A) -> *const u8 = A::into_raw;
    let _: fn(&A) -> *const u8 = A::as_ptr;
    let _: unsafe fn(*const u8) -> A = A::from_raw;
    fn arc_traits<X>()
    where
        X: Clone + std::fmt::Debug + Default + From<u8> + AsRef<u8>,
        X: std::borrow::Borrow<u8> + std::ops::Deref<Target = u8>,
    {
    }
    arc_traits::<A>();
    send::<A>();
    sync::<A>();
    unpin::<A>();
    unwind_safe::<A>();
    ref_unwind_safe::<A>();
    let _: Option<Arc<dyn Fn() + Send + Sync>> = None;
    let _: fn(std::sync::Arc<[u8]>) -> Arc<[u8]> = Arc::<[u8]>::from_std;

    // `Barrier`: loom's is a stub whose `new` panics; pctvb's works (its `wait` returns
    // pctvb's `BarrierWaitResult`, not std's: see the README).
    let _: fn(usize) -> Barrier = Barrier::new;
    debug::<Barrier>();
    send::<Barrier>();
    sync::<Barrier>();

    let _: fn() -> Condvar = Condvar::new;
    let _: for<'a> fn(&Condvar, MutexGuard<'a, u8>) -> LockResult<MutexGuard<'a, u8>> =
        Condvar::wait::<u8>;
    let _: for<'a> fn(
        &Condvar,
        MutexGuard<'a, u8>,
        Duration,
    ) -> LockResult<(MutexGuard<'a, u8>, WaitTimeoutResult)> = Condvar::wait_timeout::<u8>;
    let _: fn(&Condvar) = Condvar::notify_one;
    let _: fn(&Condvar) = Condvar::notify_all;
    debug::<Condvar>();
    default::<Condvar>();
    send::<Condvar>();
    sync::<Condvar>();
    unwind_safe::<Condvar>();
    ref_unwind_safe::<Condvar>();
    let _: fn(&WaitTimeoutResult) -> bool = WaitTimeoutResult::timed_out;
    debug::<WaitTimeoutResult>();

    type Mx = Mutex<u8>;
    let _: fn(u8) -> Mx = Mx::new;
    let _: fn(Mx) -> LockResult<u8> = Mx::into_inner;
    let _: fn(&Mx) -> LockResult<MutexGuard<'_, u8>> = Mx::lock;
    let _: fn(&Mx) -> TryLockResult<MutexGuard<'_, u8>> = Mx::try_lock;
    let _: fn(&mut Mx) -> LockResult<&mut u8> = Mx::get_mut;
    debug::<Mx>();
    default::<Mx>();
    let _: Mx = Mx::from(1);
    send::<Mx>();
    sync::<Mx>();
    unwind_safe::<Mx>();
    ref_unwind_safe::<Mx>();
    let _: Option<&Mutex<[u8]>> = None;
    debug::<MutexGuard<'static, u8>>();
    sync::<MutexGuard<'static, u8>>();
    assert!(!is_send!(MutexGuard<'static, u8>));

    let _: fn() -> Notify = Notify::new;
    let _: fn(&Notify) = Notify::notify;
    let _: fn(&Notify) = Notify::wait;
    debug::<Notify>();
    default::<Notify>();
    send::<Notify>();
    sync::<Notify>();
    unwind_safe::<Notify>();
    ref_unwind_safe::<Notify>();

    type Rw = RwLock<u8>;
    let _: fn(u8) -> Rw = Rw::new;
    let _: fn(Rw) -> LockResult<u8> = Rw::into_inner;
    let _: fn(&Rw) -> LockResult<RwLockReadGuard<'_, u8>> = Rw::read;
    let _: fn(&Rw) -> TryLockResult<RwLockReadGuard<'_, u8>> = Rw::try_read;
    let _: fn(&Rw) -> LockResult<RwLockWriteGuard<'_, u8>> = Rw::write;
    let _: fn(&Rw) -> TryLockResult<RwLockWriteGuard<'_, u8>> = Rw::try_write;
    let _: fn(&mut Rw) -> LockResult<&mut u8> = Rw::get_mut;
    debug::<Rw>();
    default::<Rw>();
    let _: Rw = Rw::from(1);
    send::<Rw>();
    sync::<Rw>();
    unwind_safe::<Rw>();
    ref_unwind_safe::<Rw>();
    let _: Option<&RwLock<[u8]>> = None;
    debug::<RwLockReadGuard<'static, u8>>();
    debug::<RwLockWriteGuard<'static, u8>>();
    sync::<RwLockReadGuard<'static, u8>>();
    sync::<RwLockWriteGuard<'static, u8>>();
    assert!(!is_send!(RwLockReadGuard<'static, u8>));
    assert!(!is_send!(RwLockWriteGuard<'static, u8>));
}

#[test]
fn mpsc_module() {
    use loom::sync::mpsc::{self, Receiver, Sender};
    use std::sync::mpsc::{RecvError, RecvTimeoutError, SendError, TryRecvError};
    let _: fn() -> (Sender<u8>, Receiver<u8>) = mpsc::channel::<u8>;
    let _: fn(&Sender<u8>, u8) -> Result<(), SendError<u8>> = Sender::send;
    let _: fn(&Receiver<u8>) -> Result<u8, RecvError> = Receiver::recv;
    let _: fn(&Receiver<u8>, Duration) -> Result<u8, RecvTimeoutError> = Receiver::recv_timeout;
    let _: fn(&Receiver<u8>) -> Result<u8, TryRecvError> = Receiver::try_recv;
    clone::<Sender<u8>>();
    debug::<Sender<u8>>();
    debug::<Receiver<u8>>();
    send::<Sender<u8>>();
    sync::<Sender<u8>>();
    send::<Receiver<u8>>();
    assert!(!is_sync!(Receiver<u8>));
    unwind_safe::<Sender<u8>>();
    ref_unwind_safe::<Sender<u8>>();
    unwind_safe::<Receiver<u8>>();
    ref_unwind_safe::<Receiver<u8>>();
}

#[test]
fn atomic_module() {
    use loom::sync::atomic::*;
    let _: fn(Ordering) = fence;
    let _: fn() = spin_loop_hint;
    let _: Ordering = std::sync::atomic::Ordering::Relaxed;

    macro_rules! common {
        ($a:ty, $v:ty) => {{
            let _: fn($v) -> $a = <$a>::new;
            let _: unsafe fn(&$a) -> $v = <$a>::unsync_load;
            let _: fn($a) -> $v = <$a>::into_inner;
            let _: fn(&$a, Ordering) -> $v = <$a>::load;
            let _: fn(&$a, $v, Ordering) = <$a>::store;
            let _: fn(&$a, $v, Ordering) -> $v = <$a>::swap;
            let _: fn(&$a, $v, $v, Ordering) -> $v = <$a>::compare_and_swap;
            let _: fn(&$a, $v, $v, Ordering, Ordering) -> Result<$v, $v> = <$a>::compare_exchange;
            let _: fn(&$a, $v, $v, Ordering, Ordering) -> Result<$v, $v> =
                <$a>::compare_exchange_weak;
            let _: fn(&$a, Ordering, Ordering, fn($v) -> Option<$v>) -> Result<$v, $v> =
                <$a>::fetch_update::<fn($v) -> Option<$v>>;
            // loom 0.7.3.
            let _: fn(&$a, Ordering, Ordering, fn($v) -> Option<$v>) -> Result<$v, $v> =
                <$a>::try_update;
            let _: fn(&$a, Ordering, Ordering, fn($v) -> $v) -> $v = <$a>::update;
            debug::<$a>();
            default::<$a>();
            let _: fn($v) -> $a = <$a as From<$v>>::from;
            send::<$a>();
            sync::<$a>();
            unpin::<$a>();
            unwind_safe::<$a>();
            ref_unwind_safe::<$a>();
        }};
    }
    macro_rules! ints {
        ($($a:ident: $v:ty),*) => {$(
            common!($a, $v);
            let _: fn(&mut $a, fn(&mut $v) -> u8) -> u8 = $a::with_mut::<u8>;
            let _: fn(&$a, $v, Ordering) -> $v = $a::fetch_add;
            let _: fn(&$a, $v, Ordering) -> $v = $a::fetch_sub;
            let _: fn(&$a, $v, Ordering) -> $v = $a::fetch_and;
            let _: fn(&$a, $v, Ordering) -> $v = $a::fetch_nand;
            let _: fn(&$a, $v, Ordering) -> $v = $a::fetch_or;
            let _: fn(&$a, $v, Ordering) -> $v = $a::fetch_xor;
            let _: fn(&$a, $v, Ordering) -> $v = $a::fetch_max;
            let _: fn(&$a, $v, Ordering) -> $v = $a::fetch_min;
        )*};
    }
    ints!(AtomicU8: u8, AtomicU16: u16, AtomicU32: u32, AtomicU64: u64, AtomicUsize: usize,
          AtomicI8: i8, AtomicI16: i16, AtomicI32: i32, AtomicI64: i64, AtomicIsize: isize);
    common!(AtomicBool, bool);
    let _: fn(&AtomicBool, bool, Ordering) -> bool = AtomicBool::fetch_and;
    let _: fn(&AtomicBool, bool, Ordering) -> bool = AtomicBool::fetch_nand;
    let _: fn(&AtomicBool, bool, Ordering) -> bool = AtomicBool::fetch_or;
    let _: fn(&AtomicBool, bool, Ordering) -> bool = AtomicBool::fetch_xor;
    common!(AtomicPtr<u8>, *mut u8);
    let _: fn(&mut AtomicPtr<u8>, fn(&mut *mut u8) -> u8) -> u8 = AtomicPtr::<u8>::with_mut::<u8>;
}

#[test]
fn macros() {
    loom::lazy_static! {
        static ref A: u8 = 1;
        pub static ref B: u8 = 2;
        pub(crate) static ref C: u8 = 3;
    }
    loom::thread_local! {
        static D: u8 = 4;
    }
    loom::model(|| {
        assert_eq!(*A + *B + *C, 6);
        assert_eq!(D.with(|d| *d), 4);
    });
}

// ---- What the items added for parity do (fixed seeds: pctvb's default seed, `PCTVB_SEED`
// unset, as every pctvb-loom test) ----

/// `update` is one compare-exchange loop: two threads' increments never lose one.
#[test]
fn update_never_loses_an_increment() {
    loom::model(|| {
        let n = loom::sync::Arc::new(loom::sync::atomic::AtomicUsize::new(0));
        let n2 = n.clone();
        let h = loom::thread::spawn(move || n2.update(SeqCst, SeqCst, |v| v + 1));
        let mine = n.update(SeqCst, SeqCst, |v| v + 1);
        let theirs = h.join().unwrap();
        assert_eq!(mine + theirs, 1, "one saw 0, the other 1");
        assert_eq!(n.load(SeqCst), 2);
    });
}

/// `try_update`'s `None` stores nothing and returns what `f` saw; its `Some` stores.
#[test]
fn try_update_returns_what_it_saw() {
    loom::model(|| {
        let a = loom::sync::atomic::AtomicU32::new(3);
        assert_eq!(a.try_update(SeqCst, SeqCst, |_| None), Err(3));
        assert_eq!(a.try_update(SeqCst, SeqCst, |v| Some(v * 2)), Ok(3));
        assert_eq!(a.load(SeqCst), 6);
        let b = loom::sync::atomic::AtomicBool::new(false);
        assert!(!b.update(SeqCst, SeqCst, |v| !v));
        assert!(b.load(SeqCst));
    });
}

/// A bug that depends on `try_update`'s scheduling points: a claim that assumes the spawned
/// thread claims first. pctvb finds the schedule where the body's claim wins.
#[test]
#[should_panic(expected = "the worker claims first")]
fn a_bug_across_try_update_is_found() {
    loom::model(|| {
        let owner = loom::sync::Arc::new(loom::sync::atomic::AtomicUsize::new(0));
        let o2 = owner.clone();
        let claim = |o: &loom::sync::atomic::AtomicUsize, me: usize| {
            let _ = o.try_update(SeqCst, SeqCst, |v| (v == 0).then_some(me));
        };
        let h = loom::thread::spawn(move || claim(&o2, 1));
        claim(&owner, 2);
        h.join().unwrap();
        assert_eq!(owner.load(SeqCst), 1, "the worker claims first");
    });
}

/// A hand-written `LocalKey { init, _p }`: one value per logical thread, as `thread_local!`'s.
#[test]
fn a_literal_local_key_is_per_thread() {
    fn zero() -> std::cell::Cell<u32> {
        std::cell::Cell::new(0)
    }
    static COUNT: loom::thread::LocalKey<std::cell::Cell<u32>> =
        loom::thread::LocalKey { init: zero, _p: PhantomData };
    loom::model(|| {
        COUNT.with(|c| c.set(c.get() + 1));
        let h = loom::thread::spawn(|| COUNT.with(|c| c.replace(5)));
        assert_eq!(h.join().unwrap(), 0, "the worker's value starts afresh");
        assert_eq!(COUNT.try_with(|c| c.get()), Ok(1), "the body's value is its own");
    });
}

/// A hand-written `Lazy { init, _p }`: initialized afresh in every execution, and its
/// initialization happens before every other thread's use (no race on what it built).
#[test]
fn a_literal_lazy_is_per_execution() {
    fn start() -> loom::sync::atomic::AtomicUsize {
        loom::sync::atomic::AtomicUsize::new(10)
    }
    static NEXT: loom::lazy_static::Lazy<loom::sync::atomic::AtomicUsize> =
        loom::lazy_static::Lazy { init: start, _p: PhantomData };
    loom::model(|| {
        let h = loom::thread::spawn(|| NEXT.get().fetch_add(1, SeqCst));
        let mine = NEXT.get().fetch_add(1, SeqCst);
        let mut both = [mine, h.join().unwrap()];
        both.sort();
        assert_eq!(both, [10, 11], "every execution starts from 10");
    });
}

/// A lost update through a hand-written `Lazy`'s value is found (its value is shared by the
/// execution's threads, and its accesses are scheduled).
#[test]
#[should_panic(expected = "lost an update")]
fn a_bug_through_a_literal_lazy_is_found() {
    fn start() -> loom::sync::atomic::AtomicUsize {
        loom::sync::atomic::AtomicUsize::new(0)
    }
    static N: loom::lazy_static::Lazy<loom::sync::atomic::AtomicUsize> =
        loom::lazy_static::Lazy { init: start, _p: PhantomData };
    loom::model(|| {
        let bump = || {
            let v = N.get().load(SeqCst);
            N.get().store(v + 1, SeqCst);
        };
        let h = loom::thread::spawn(bump);
        bump();
        h.join().unwrap();
        assert_eq!(N.get().load(SeqCst), 2, "lost an update");
    });
}

/// As loom's, pctvb-loom's `UnsafeCell` is not `Sync`: a type that shares one declares it,
/// and a race through it is found.
#[test]
#[should_panic(expected = "data race")]
fn a_race_through_a_shared_unsafe_cell_is_found() {
    struct Shared(loom::cell::UnsafeCell<u32>);
    // SAFETY: the test's point is that this promise is broken, which pctvb reports.
    unsafe impl Sync for Shared {}
    loom::model(|| {
        let s = loom::sync::Arc::new(Shared(loom::cell::UnsafeCell::new(0)));
        let s2 = s.clone();
        let h = loom::thread::spawn(move || s2.0.with_mut(|p| unsafe { *p += 1 }));
        s.0.with_mut(|p| unsafe { *p += 1 });
        h.join().unwrap();
    });
}

/// `catch_unwind` takes a closure that owns a channel's ends (as with loom's and std's) or a
/// `JoinHandle` (as with loom's).
#[test]
fn channels_and_handles_cross_catch_unwind() {
    loom::model(|| {
        let (tx, rx) = loom::sync::mpsc::channel::<u8>();
        let h = loom::thread::spawn(move || tx.send(1).unwrap());
        let r = std::panic::catch_unwind(move || {
            h.join().unwrap();
            rx.recv().unwrap()
        });
        assert_eq!(r.unwrap(), 1);
    });
}

/// An execution of 120,000 scheduling points: over pctvb's default limit of 100,000.
fn long_model() {
    let n = loom::sync::atomic::AtomicUsize::new(0);
    for _ in 0..120_000 {
        n.fetch_add(1, SeqCst);
    }
}

/// A `max_branches` above pctvb's limit of scheduling points raises it: an execution loom's
/// setting allows runs.
#[test]
fn a_large_max_branches_raises_the_step_limit() {
    let mut b = loom::model::Builder::new();
    b.max_permutations = Some(1);
    b.max_branches = 200_000;
    b.check(long_model);
}

/// Without it, the execution is a runaway, as before.
#[test]
#[should_panic(expected = "more than max_steps = 100000 scheduling points")]
fn the_default_step_limit_stays() {
    let mut b = loom::model::Builder::new();
    b.max_permutations = Some(1);
    b.check(long_model);
}
