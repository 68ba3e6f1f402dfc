//! Small programs shared by the runtime's test files: a lost update and its fix.

use pctvb::sync::atomic::{AtomicUsize, Ordering};
use pctvb::sync::Arc;
use pctvb::thread;

/// Two threads each load a counter and store it plus one: an increment can be lost (needs one
/// preemption between a thread's load and store).
#[allow(dead_code)] // not every test file that includes this module uses it
pub fn lost_update() {
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
    assert_eq!(n.load(Ordering::SeqCst), 2);
}

/// The same counter with atomic increments: correct under every schedule.
#[allow(dead_code)] // not every test file that includes this module uses it
pub fn fixed_update() {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    let h = thread::spawn(move || {
        n2.fetch_add(1, Ordering::SeqCst);
    });
    n.fetch_add(1, Ordering::SeqCst);
    h.join().unwrap();
    assert_eq!(n.load(Ordering::SeqCst), 2);
}

/// A thread that retries a compare-exchange without yielding until another thread raises a
/// flag: each failed retry is a write loop's next iteration (the same read-modify-write on the
/// same atomic), which SURW and race reversal run whole in most executions, for a bounded run.
#[allow(dead_code)] // not every test file that includes this module uses it
pub fn spin_until_raised() {
    let flag = Arc::new(AtomicUsize::new(0));
    let f2 = flag.clone();
    let spinner = thread::spawn(move || {
        while f2.compare_exchange(1, 2, Ordering::SeqCst, Ordering::SeqCst).is_err() {}
    });
    let raiser = thread::spawn(move || flag.store(1, Ordering::SeqCst));
    spinner.join().unwrap();
    raiser.join().unwrap();
}
