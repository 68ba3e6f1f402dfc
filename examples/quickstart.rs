//! Quickstart: a lost update that pctvb finds, explains and replays.
//!
//! Two threads each read a shared counter and then write back the value plus one. The read and
//! the write are separate atomic operations, so if one thread runs between the other's read
//! and write, an increment is lost and the counter ends at 1 instead of 2.
//!
//! Fix: make the increment one atomic operation, `n.fetch_add(1, Ordering::SeqCst)`.
//!
//! Run with `cargo run --release --example quickstart`; it prints the failure report and the
//! line that replays exactly the failing execution.

use pctvb::sync::atomic::{AtomicUsize, Ordering};
use pctvb::sync::Arc;
use pctvb::thread;

fn lost_update() {
    let n = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || {
                let v = n.load(Ordering::SeqCst);
                n.store(v + 1, Ordering::SeqCst);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(n.load(Ordering::SeqCst), 2, "an increment was lost");
}

fn main() -> std::process::ExitCode {
    pctvb::Config::new()
        .name("quickstart::lost_update")
        .rerun_command("cargo run --release --example quickstart")
        .iterations(1000)
        .run(lost_update)
        .print_expecting_bug()
}
