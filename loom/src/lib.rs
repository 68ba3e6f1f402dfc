//! loom 0.7's public API on top of [pctvb]: a crate switches its loom tests to pctvb with one
//! line in its `Cargo.toml` and no source edit,
//!
//! ```toml
//! [target.'cfg(loom)'.dev-dependencies]
//! loom = { package = "pctvb-loom", version = "0.1" }
//! ```
//!
//! in place of its `loom = "0.7"` line. Every `loom::model(|| ...)` then runs pctvb's default
//! strategy (the selectively uniform random walk, SURW, 1000 executions) instead of loom's exhaustive search,
//! and a failure panics with pctvb's report: the original panic, the schedule, and a
//! `PCTVB_REPLAY=...` line that reruns exactly that execution (with the package, test target
//! and `RUSTFLAGS` the test binary can tell, see [`mod@model`], "Replay lines").
//!
//! ```
//! use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
//! use loom::sync::Arc;
//! # use pctvb_loom as loom;
//!
//! loom::model(|| {
//!     let n = Arc::new(AtomicUsize::new(0));
//!     let n2 = n.clone();
//!     let h = loom::thread::spawn(move || n2.fetch_add(1, SeqCst));
//!     n.fetch_add(1, SeqCst);
//!     h.join().unwrap();
//!     assert_eq!(n.load(SeqCst), 2);
//! });
//! ```
//!
//! # What maps to what
//! - [`model()`], [`model::Builder`]: a [`pctvb::Config`] run; see [`mod@model`] for the
//!   environment variables (`PCTVB_*`, including `PCTVB_STRATEGY` and `PCTVB_CONFIDENCE`,
//!   and loom's `LOOM_*`) and the builder fields pctvb honours.
//! - [`thread`] (but [`thread::LocalKey`], loom's with its hidden fields, and
//!   [`thread::spawn`] and [`thread::Builder`], which track their threads), [`sync`] (but
//!   [`sync::atomic`], [`sync::Arc`] and [`sync::Notify`]): pctvb's types, re-exported.
//! - [`sync::Arc`]: loom's `Arc` over std's, with `from_std` and loom's leak report; its
//!   clones, drops, `get_mut`, `try_unwrap` and `strong_count` are scheduling points, as
//!   loom's branch points (operations on a pctvb atomic that mirrors the count).
//! - [`sync::atomic`]: newtypes over pctvb's atomics that add loom's inherent `with_mut`,
//!   `unsync_load` and `compare_and_swap`, and dereference to pctvb's for the rest.
//!   `unsync_load` (and `into_inner`) and `with_mut` are non-atomic accesses that pctvb's
//!   race detector checks against the atomic's other accesses as loom does (a data race
//!   naming the atomic and both accesses), not scheduling points.
//! - [`cell`]: loom's `UnsafeCell` shape (`get`/`get_mut` returning [`cell::ConstPtr`] and
//!   [`cell::MutPtr`]) over [`pctvb::cell::UnsafeCell`]: each access is a race check, not a
//!   scheduling point (as in loom: the synchronising operations decide a race-free
//!   execution's cell accesses, see [`mod@cell`]), and lasts, as in loom, until the pointer
//!   is dropped (the closure of `with`/`with_mut` returns).
//! - [`alloc`]: loom's allocation functions and [`alloc::Track`], with loom's leak report
//!   at the end of each execution.
//! - [`hint`], [`future`], [`lazy_static!`], [`thread_local!`], [`explore`],
//!   [`stop_exploring`], [`skip_branch`]: see each.
//!
//! Semantics are pctvb's, not loom's: atomics are sequentially consistent whatever ordering
//! is passed (loom explores some weak-memory behaviours), and the executions are sampled, not
//! enumerated (set `PCTVB_STRATEGY=systematic` for a bounded exhaustive search, or
//! `PCTVB_CONFIDENCE=0.99` for a guarantee on pctvb's default class: enumerated where that is
//! cheaper than sampling it, see [`mod@model`]).
//!
//! # Coverage
//! Every public item of loom 0.7.3 (the latest 0.7.x) is here with loom's signature, trait
//! impls (auto traits included) and, for `thread::LocalKey` and `lazy_static::Lazy`, loom's
//! hidden public fields, so the struct literals loom's macros expand to compile:
//! `loom/tests/api_parity.rs` checks each against loom's rustdoc, so that a missing item or
//! a changed signature fails to compile, and `loom/tests/api.rs` what each does. Where
//! pctvb-loom differs it accepts more: pctvb's types re-exported here keep their extra methods
//! (`Condvar::wait_while`, `sync::mpsc::sync_channel`, `thread::scope`, ...), atomics'
//! `new` are `const`, `thread_local!` takes std's `const { ... }` initializers, and
//! `sync::Barrier::wait` returns pctvb's `BarrierWaitResult`, not std's (loom's `Barrier`
//! is a stub whose `new` panics).
//!
//! `sync::Mutex`, `RwLock` and `Condvar` are pctvb's wrapped so that, as loom's, they are never
//! poisoned (their guards are pctvb's), and, as loom's, unlocking one is no scheduling point in
//! a model (see [`mod@model`], "Unlocks"). As in loom, a thread of [`thread::spawn`] or
//! [`thread::Builder`] that never finishes (left waiting forever after the model's body
//! returned) fails the execution as a deadlock; pctvb alone ends such an execution normally,
//! as a process exit would end it.
//!
//! The other differences from loom 0.7: an atomic's creation is not checked as a write
//! against its first accesses (loom's is: an atomic published without synchronization
//! fails there, here only its non-atomic accesses do); [`sync::Notify::wait`] returns spuriously only with
//! no permit there (loom's may with one too); `Condvar::wait` and `thread::park` may wake
//! spuriously (loom's never do; std's may); [`sync::Barrier`] works (loom's panics).
//! `model::Builder`'s `max_branches` counts only above pctvb's limit of 100,000 scheduling
//! points per execution, which it raises; checkpoint files and `log` are not honoured (see
//! [`mod@model`]). On Linux with glibc, `std::time::Instant::now()` inside a model reads the
//! execution's virtual clock (it starts at the same value in every execution, advances 1 µs
//! per read and does not see real time; pctvb's guide, section 3a, "Time"), so code that
//! takes deadlines from std's clock times out by the schedule alone and replays; loom's
//! models read the real clock (elsewhere, so do pctvb's).

#![deny(missing_docs)]

pub mod alloc;
pub mod cell;
mod explore;
pub mod future;
pub mod hint;
pub mod lazy_static;
mod leaks;
pub mod model;
mod rerun;
pub mod sync;
pub mod thread;

#[doc(inline)]
pub use crate::model::model;

/// loom's thread limit, the default of [`model::Builder::max_threads`] (the test body's
/// thread included). pctvb itself has no such cap: raise the builder's field to spawn more.
pub const MAX_THREADS: usize = 5;

/// Turns exploration on again after [`stop_exploring`] (or, with
/// [`model::Builder::expect_explicit_explore`], for the first time in the execution): from
/// here on the strategy chooses at every scheduling point again.
///
/// # Panics
/// As loom: when exploration is already on ("not in critical state"), and outside
/// [`model()`]. After [`skip_branch`] it does nothing.
#[track_caller]
pub fn explore() {
    explore::explore()
}

/// Turns exploration off for the rest of the execution, or until [`explore`]: the running
/// thread is not preempted (it runs until it blocks, yields or ends, and then the enabled
/// thread with the lowest id runs), and no scheduling point branches, as loom explores no
/// branch there. Assertions still run: a failure while exploration is off fails the model.
///
/// With `PCTVB_CONFIDENCE`, the run's summary warns that the bound, which assumes any
/// scheduling point may preempt, is not proved for such schedules.
///
/// # Panics
/// As loom: when exploration is already off ("not in exploring state"), and outside
/// [`model()`]. After [`skip_branch`] it does nothing.
#[track_caller]
pub fn stop_exploring() {
    explore::stop_exploring()
}

/// Turns exploration off for the rest of the execution, for good: as [`stop_exploring`], but
/// [`explore`] no longer turns it on. The execution still runs to its end and a failure in
/// it still fails the model (loom, too, runs the rest and only explores no branch of it).
/// The run's summary counts the executions that called it.
///
/// # Panics
/// Outside [`model()`].
#[track_caller]
pub fn skip_branch() {
    explore::skip_branch()
}

/// `std::thread_local!`, with one value per logical thread of an execution, as loom's: each
/// `static` is a [`thread::LocalKey`], built with loom's struct literal. std's
/// `const { ... }` initializers are accepted too (loom's macro rejects them).
///
/// ```
/// # use pctvb_loom as loom;
/// use std::cell::Cell;
/// loom::thread_local! {
///     static DEPTH: Cell<u32> = Cell::new(0);
/// }
/// loom::model(|| {
///     DEPTH.with(|d| d.set(d.get() + 1));
///     let h = loom::thread::spawn(|| DEPTH.with(|d| d.get()));
///     assert_eq!(h.join().unwrap(), 0, "each thread has its own value");
/// });
/// ```
#[macro_export]
macro_rules! thread_local {
    () => {};
    // std's `const { ... }` initializer (loom's macro takes none): the block is the
    // initializer.
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const $init:block; $($rest:tt)*) => (
        $crate::__thread_local_inner!($(#[$attr])* $vis $name, $t, $init);
        $crate::thread_local!($($rest)*);
    );
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const $init:block) => (
        $crate::__thread_local_inner!($(#[$attr])* $vis $name, $t, $init);
    );
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr; $($rest:tt)*) => (
        $crate::__thread_local_inner!($(#[$attr])* $vis $name, $t, $init);
        $crate::thread_local!($($rest)*);
    );
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr) => (
        $crate::__thread_local_inner!($(#[$attr])* $vis $name, $t, $init);
    );
}

#[doc(hidden)]
#[macro_export]
macro_rules! __thread_local_inner {
    ($(#[$attr:meta])* $vis:vis $name:ident, $t:ty, $init:expr) => {
        $(#[$attr])* $vis static $name: $crate::thread::LocalKey<$t> =
            $crate::thread::LocalKey {
                init: (|| { $init }) as fn() -> $t,
                _p: ::core::marker::PhantomData,
            };
    };
}

/// `lazy_static::lazy_static!`, with values reset in every execution, as loom's: each
/// `static ref` is a [`lazy_static::Lazy`] (built with loom's struct literal) whose value is
/// initialized afresh in each execution.
///
/// ```
/// # use pctvb_loom as loom;
/// use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
/// loom::lazy_static! {
///     static ref HITS: AtomicUsize = AtomicUsize::new(0);
/// }
/// loom::model(|| {
///     // Every execution starts from 0.
///     assert_eq!(HITS.fetch_add(1, SeqCst), 0);
/// });
/// ```
#[macro_export]
macro_rules! lazy_static {
    ($(#[$attr:meta])* static ref $N:ident : $T:ty = $e:expr; $($t:tt)*) => {
        $crate::__lazy_static_one!($(#[$attr])* () $N, $T, $e);
        $crate::lazy_static!($($t)*);
    };
    ($(#[$attr:meta])* pub static ref $N:ident : $T:ty = $e:expr; $($t:tt)*) => {
        $crate::__lazy_static_one!($(#[$attr])* (pub) $N, $T, $e);
        $crate::lazy_static!($($t)*);
    };
    ($(#[$attr:meta])* pub ($($vis:tt)+) static ref $N:ident : $T:ty = $e:expr; $($t:tt)*) => {
        $crate::__lazy_static_one!($(#[$attr])* (pub ($($vis)+)) $N, $T, $e);
        $crate::lazy_static!($($t)*);
    };
    () => {};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __lazy_static_one {
    ($(#[$attr:meta])* ($($vis:tt)*) $N:ident, $T:ty, $e:expr) => {
        #[allow(non_camel_case_types, missing_copy_implementations, dead_code)]
        $(#[$attr])*
        $($vis)* struct $N {
            __private_field: (),
        }
        #[doc(hidden)]
        $($vis)* static $N: $N = $N { __private_field: () };
        impl ::core::ops::Deref for $N {
            type Target = $T;
            fn deref(&self) -> &$T {
                fn __init() -> $T {
                    $e
                }
                static LAZY: $crate::lazy_static::Lazy<$T> = $crate::lazy_static::Lazy {
                    init: __init,
                    _p: ::core::marker::PhantomData,
                };
                LAZY.get()
            }
        }
    };
}
