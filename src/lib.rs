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
//! # Architecture
//! - [`runtime`]: the execution engine (logical threads as coroutines, scheduling points,
//!   blocking, deadlock and runaway detection).
//! - [`thread`], [`sync`], [`cell`], [`hint`]: the std-mirroring facade user code imports.
//! - [`schedulers`]: who runs next (each strategy, and the crate-private trait they implement).
//! - [`vars`]: variables (allocation sites) and their access profiles.
//! - [`guarantee`]: the probability bounds and what a passing run proves.
//! - [`replay`]: replay tokens. [`report`]: what a run found. [`Config`]: how to run.
//! - [`error`]: why a run could not test ([`Error`]), kept apart from the bugs it finds
//!   ([`Failure`]).

#![deny(missing_docs)]

pub mod cell;
pub mod error;
pub mod guarantee;
pub mod hint;
pub mod instrument;
pub mod replay;
pub mod report;
pub mod runner;
pub mod runtime;
pub mod schedulers;
pub mod sync;
pub mod thread;
pub mod vars;

pub use error::Error;
pub use report::{Failure, FailureKind, Report};
pub use runner::{Config, StrategyKind};

pub use pctvb_macros::instrument;
pub use pctvb_macros::test;

/// Support for the `#[pctvb::test]` macro; not a public API.
#[doc(hidden)]
pub mod __private {
    use crate::Config;

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
