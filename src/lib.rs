//! pctvb finds concurrency bugs in ordinary Rust tests by controlling thread interleavings
//! with randomized priority schedulers that carry computed probability guarantees.
//!
//! Write the test as you would with std, import threads and synchronization from `pctvb`, and
//! mark it `#[pctvb::test]`: the body runs many times, each time under a different schedule
//! chosen at every synchronization operation, atomic access and thread event. A failure comes
//! with the original panic message, the schedule that caused it, and one line that replays
//! exactly that execution.
//!
//! ```
//! use pctvb::sync::{Arc, atomic::{AtomicUsize, Ordering}};
//! use pctvb::thread;
//!
//! let report = pctvb::Config::new().iterations(1000).seed(1).run(|| {
//!     let n = Arc::new(AtomicUsize::new(0));
//!     let hs: Vec<_> = (0..2).map(|_| {
//!         let n = n.clone();
//!         thread::spawn(move || {
//!             let v = n.load(Ordering::SeqCst);
//!             n.store(v + 1, Ordering::SeqCst); // lost update: not atomic with the load
//!         })
//!     }).collect();
//!     for h in hs { h.join().unwrap(); }
//!     assert_eq!(n.load(Ordering::SeqCst), 2);
//! });
//! let failure = report.failure().expect("the lost update is found");
//! assert!(failure.message.contains("assertion"));
//! assert!(failure.replay_command.as_ref().unwrap().starts_with("PCTVB_REPLAY="));
//! ```
//!
//! # What is here
//! - [`thread`], [`sync`], [`cell`], [`hint`]: the std-mirroring facade user code imports.
//! - [`future`]: async code: `block_on`, tasks (`spawn`), `yield_now`; lost wake-ups found.
//! - [`Config`] and [`StrategyKind`]: how to run; `#[pctvb::test]` sets them from its
//!   arguments.
//! - [`Report`]: what a run found, with its parts in [`report`]; a [`Failure`] is a bug found,
//!   an [`Error`] a run that could not test.
//! - [`guarantee`]: the probability bounds and what a passing run proves.
//! - [`instrument`](mod@instrument): `#[pctvb::instrument]`, for code that uses std's types or raw pointers.
//!
//! The engine, the strategies and replay tokens are private; `ARCHITECTURE.md` in the
//! repository says how they fit together.

#![deny(missing_docs)]

pub mod alloc;
pub mod cell;
mod error;
pub mod future;
pub mod guarantee;
pub mod hint;
pub mod instrument;
mod replay;
pub mod report;
mod runner;
mod runtime;
mod schedulers;
pub mod sync;
pub mod thread;
mod vars;

pub use error::Error;
pub use report::{Failure, FailureKind, Report};
pub use runner::{Config, StrategyKind};

pub use pctvb_macros::instrument;
pub use pctvb_macros::test;

/// Support for the `#[pctvb::test]` macro; not a public API.
#[doc(hidden)]
pub mod __private {
    use crate::Config;

    pub use crate::replay::CargoTarget;

    /// What a `#[pctvb::test]` function may return: `()`, or a `Result` whose error fails the
    /// test. Its own trait, not std's `Termination` (whose `report` exits with a code rather
    /// than failing the execution), so that another return type reads as what to change.
    #[diagnostic::on_unimplemented(
        message = "a `#[pctvb::test]` function returns `()` or `Result<(), E>` with `E: Debug`, \
                   not `{Self}`",
        label = "this return type",
        note = "return `Result<(), E>` and let an `Err` fail the test, or assert inside the body"
    )]
    pub trait TestOutput {
        /// Fails the execution (a panic of the test body's thread) if this is an error.
        #[track_caller]
        fn check(self);
    }

    impl TestOutput for () {
        fn check(self) {}
    }

    impl<E: std::fmt::Debug> TestOutput for Result<(), E> {
        #[track_caller]
        fn check(self) {
            if let Err(error) = self {
                panic!("test body returned an error: {error:?}");
            }
        }
    }

    /// Runs a `#[pctvb::test]` body. Panics with the failure report if it found a bug, and
    /// with a message that starts "pctvb could not run this test" if it could not test (an
    /// invalid configuration or token, a replay that diverged, an internal error), so the two
    /// never read alike.
    #[track_caller]
    pub fn run_test(config: Config, body: impl Fn() + Sync) {
        let report = config.run(body);
        let notes: String = report.notes.iter().map(|n| format!("\npctvb: {n}")).collect();
        if let Some(error) = report.error() {
            panic!(
                "pctvb could not run this test: {error}\n\npctvb: this is not a bug found in the \
                 test; the test did not run to the end{notes}"
            )
        }
        match report.failure() {
            Some(failure) => panic!("pctvb found a bug in this test:\n{failure}{notes}"),
            None => println!("{}", report.summary()),
        }
    }
}

/// Internals that pctvb's own tests, corpus and benchmarks check against (the statistics
/// behind the guarantee tests, token encoding, execution numbering). Not an API: anything
/// here may change in any release.
#[doc(hidden)]
pub mod __internals {
    /// Replay tokens.
    pub mod replay {
        pub use crate::replay::{
            command_line, decode, encode, unreplayed_env_token, CargoTarget, ReplayToken,
            INLINE_LIMIT,
        };
    }
    /// Execution numbering and defaults.
    pub mod runner {
        pub use crate::runner::{
            DEFAULT_EXPLORE_EVERY, DEFAULT_PROFILE_RUNS, MAX_DEPTH, MAX_STACK_SIZE, MIN_STACK_SIZE,
            PROFILE_INDEX_BASE,
        };
    }
    /// Strategy limits.
    pub mod schedulers {
        pub use crate::schedulers::MAX_RANDOM_ORDERS;
    }
    /// Non-atomic accesses of atomics, for pctvb-loom's `unsync_load` and `with_mut`.
    pub mod atomic {
        pub use crate::sync::atomic::unsync::UnsyncAccess;
    }
    /// Cell accesses that stay open, for pctvb-loom's `ConstPtr`/`MutPtr`.
    pub mod cell {
        pub use crate::cell::span::{access_span, AccessSpan};
    }
    /// Threads, for pctvb-loom's `thread::spawn`.
    pub mod thread {
        /// Spawns a logical thread of the running execution, as [`crate::thread::spawn`] but
        /// without its `Send` bounds, as loom's `spawn`: every logical thread of an execution
        /// runs on the OS thread that runs the execution, so `f` and its result never leave
        /// it (a failed execution's suspended threads are never resumed nor dropped elsewhere).
        ///
        /// # Panics
        /// Outside an execution (there it would need an OS thread, and `f` is not `Send`).
        #[track_caller]
        pub fn spawn_unsent<F, T>(f: F) -> crate::thread::JoinHandle<T>
        where
            F: FnOnce() -> T + 'static,
            T: 'static,
        {
            let location = std::panic::Location::caller();
            if !crate::runtime::in_execution() {
                panic!("loom::thread::spawn was called outside loom::model (its threads are logical threads of an execution)");
            }
            crate::thread::spawn_named(f, None, location)
        }
    }
    /// The end of an execution, for pctvb-loom's leak report, and exploration on or off, for
    /// its `explore`, `stop_exploring` and `skip_branch`.
    pub mod execution {
        /// Makes `check` run when the current execution ends normally, after every thread
        /// finished and the execution's thread-locals and once cells were dropped; a message
        /// it returns fails the execution as a panic of the main thread. Replaces the check
        /// set earlier in the same execution; cleared when the next execution starts.
        ///
        /// # Panics
        /// Outside an execution.
        #[track_caller]
        pub fn at_end(check: fn() -> Option<String>) {
            crate::runtime::with_execution("pctvb::__internals::execution::at_end", |e| {
                e.at_end(check)
            })
        }

        /// Makes unlocking a mutex or rwlock a scheduling point (`true`, the default) or not
        /// (`false`, as loom's unlock) in the current execution; back to the default when the
        /// next execution starts.
        ///
        /// # Panics
        /// Outside an execution.
        #[track_caller]
        pub fn set_unlock_points(on: bool) {
            crate::runtime::with_execution(
                "pctvb::__internals::execution::set_unlock_points",
                |e| e.set_unlock_points(on),
            )
        }

        /// Makes the data-race detector check pctvb-loom's non-atomic accesses of atomics
        /// (`unsync_load`, `with_mut`, through [`super::atomic::UnsyncAccess`]) against the
        /// atomics' loads and stores in the current execution, as loom does: called when the
        /// execution starts, it keeps the detector's clocks from there on. Off again when the
        /// next execution starts; nothing with the detector off.
        ///
        /// # Panics
        /// Outside an execution.
        #[track_caller]
        pub fn check_unsync_atomics() {
            crate::runtime::with_execution(
                "pctvb::__internals::execution::check_unsync_atomics",
                |e| e.check_unsync_atomics(),
            )
        }

        /// Turns exploration of the current execution off (`false`) or on again: while it is
        /// off, every scheduling point offers the strategy a single thread, the running one
        /// while it can run (else the enabled thread with the lowest id), so no thread is
        /// preempted and no choice branches. On again when the next execution starts.
        ///
        /// # Panics
        /// Outside an execution.
        #[track_caller]
        pub fn set_exploring(on: bool) {
            crate::runtime::with_execution("pctvb::__internals::execution::set_exploring", |e| {
                e.set_exploring(on)
            })
        }
    }
}
