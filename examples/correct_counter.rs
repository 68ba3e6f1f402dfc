//! A correct program: three threads increment a `Mutex`-protected counter, and pctvb finds
//! nothing, and says what that proves.
//!
//! Each increment is one critical section (`*counter.lock().unwrap() += 1`), so no schedule
//! can lose an update: whichever order the threads take the lock in, the counter ends at 6.
//! Compare `quickstart.rs`, where the read and the write of the counter are separate operations
//! and an update is lost.
//!
//! The buggy examples use the default, the selectively uniform random walk (SURW), which finds
//! bugs but proves nothing when it finds none. This one asks for bug depth 2 (one preemption),
//! which selects the combined variable- and thread-bounding strategy (and, since the strategy
//! is not named, revfuzz, race reversal then schedule fuzzing, in every second execution, for
//! bugs outside that class): after 4,000
//! executions the summary states the probability with which the strategy's 2,000 would have
//! found any bug of that depth among at most 3 threads (counting the test body's, which spawns
//! the others), with the counts the bound was computed from and the shared variables it was
//! placed on.
//!
//! Run with `cargo run --release --example correct_counter`; it exits with status 0 when no
//! failure is found, and prints the failure and exits with status 1 otherwise.

use pctvb::sync::{Arc, Mutex};
use pctvb::thread;

/// Executions the example runs.
pub const ITERATIONS: u64 = 4000;

/// Three threads each add 2 to a shared counter, one locked increment at a time.
pub fn locked_increments() {
    let counter = Arc::new(Mutex::new(0u32));
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let counter = counter.clone();
            thread::spawn(move || {
                for _ in 0..2 {
                    *counter.lock().unwrap() += 1;
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(*counter.lock().unwrap(), 6);
}

/// The run's settings: 2,000 executions searching for bugs of depth 2.
pub fn config() -> pctvb::Config {
    pctvb::Config::new()
        .name("correct_counter::locked_increments")
        .rerun_command("cargo run --release --example correct_counter")
        .iterations(ITERATIONS)
        .depth(2)
}

fn main() {
    let report = config().run(locked_increments);
    if let Some(error) = report.error() {
        println!("pctvb could not run: {error}");
        std::process::exit(2);
    }
    match report.failure() {
        Some(failure) => {
            println!("{failure}");
            std::process::exit(1);
        }
        // The summary ends with the guarantee, the per-execution bound and the variables.
        None => println!("{}", report.summary()),
    }
}
