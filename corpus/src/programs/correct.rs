// Correct programs: no strategy may ever report a failure. Included once per tool by
// `crate::on_tool!`.

use super::rt::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use super::rt::sync::{Arc, Condvar, Mutex};
use super::rt::thread;

/// `n` threads that do nothing, spawned and joined: not a corpus program (no interleaving can
/// go wrong), the body that `benches/runtime.rs` (`executions/lifecycle`) and
/// `corpus/examples/strategy_instructions.rs` (`spawn4`) time the threads' lifecycle with.
pub fn spawn_join(n: usize) {
    let hs: Vec<_> = (0..n).map(|_| thread::spawn(|| {})).collect();
    for h in hs {
        h.join().unwrap();
    }
}

/// Three threads each increment a counter twice under a mutex.
pub fn counter(_: usize) {
    let n = Arc::new(Mutex::new(0));
    let hs: Vec<_> = (0..3)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || {
                for _ in 0..2 {
                    *n.lock().unwrap() += 1;
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*n.lock().unwrap(), 6);
}

/// The Account program with each update in one critical section.
pub fn account_fixed(_: usize) {
    let balance = Arc::new(Mutex::new(100i64));
    let hs: Vec<_> = [(50i64, -20i64), (30, -10)]
        .into_iter()
        .map(|(dep, wd)| {
            let balance = balance.clone();
            thread::spawn(move || {
                *balance.lock().unwrap() += dep;
                *balance.lock().unwrap() += wd;
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*balance.lock().unwrap(), 150);
}

/// Producer/Consumer with `while`: two producers, two consumers.
pub fn producer_consumer_fixed(_: usize) {
    let q = Arc::new((Mutex::new(Vec::<u32>::new()), Condvar::new()));
    let mut hs = Vec::new();
    for i in 0..2u32 {
        let q = q.clone();
        hs.push(thread::spawn(move || {
            let (m, cv) = &*q;
            m.lock().unwrap().push(i);
            cv.notify_all();
        }));
    }
    for _ in 0..2 {
        let q = q.clone();
        hs.push(thread::spawn(move || {
            let (m, cv) = &*q;
            let mut buf = m.lock().unwrap();
            while buf.is_empty() {
                buf = cv.wait(buf).unwrap();
            }
            buf.pop().expect("an item");
        }));
    }
    for h in hs {
        h.join().unwrap();
    }
    assert!(q.0.lock().unwrap().is_empty());
}

/// The work-stealing deque with the correct size check in `pop` and capacity check in
/// `try_push`, in both scenarios.
pub fn ws_deque_fixed(_: usize) {
    super::lockfree::deque_scenario(false);
    super::lockfree::deque_capacity_scenario(false);
}

/// A lock-free counter: three threads each `fetch_add` twice.
pub fn atomic_counter(_: usize) {
    let n = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..3)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || {
                for _ in 0..2 {
                    n.fetch_add(1, SeqCst);
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(n.load(SeqCst), 6);
}

/// SCTBench's twostage shape without its bug (for the side-by-side benches, not in the
/// catalog): each of `threads` threads writes the first stage under one mutex, then the second
/// stage from the first under another, so every thread contends for both locks; the main
/// thread joins them and checks the stages. The stages are atomics, so each critical section
/// has scheduling points (as SCTBench's shared data accesses are) where other threads find the
/// lock held.
pub fn twostage_ok(threads: usize) {
    let first = Arc::new(Mutex::new(AtomicU64::new(0)));
    let second = Arc::new(Mutex::new(AtomicU64::new(0)));
    let hs: Vec<_> = (0..threads)
        .map(|_| {
            let (first, second) = (first.clone(), second.clone());
            thread::spawn(move || {
                let seen = first.lock().unwrap().fetch_add(1, SeqCst) + 1;
                let s = second.lock().unwrap();
                if s.load(SeqCst) < seen {
                    s.store(seen, SeqCst);
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(first.lock().unwrap().load(SeqCst), threads as u64);
    assert_eq!(second.lock().unwrap().load(SeqCst), threads as u64);
}
