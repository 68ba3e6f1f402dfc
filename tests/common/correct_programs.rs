//! Correct programs of different shapes, shared by the strategies' test files (each must
//! pass every execution under any strategy).

use pctvb::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use pctvb::sync::{Arc, Condvar, Mutex};
use pctvb::thread;

/// Correct programs of different shapes: atomic increments, a mutex, a condition variable, a
/// spin-wait on a flag with `yield_now`, and a thread that spawns threads.
pub fn correct_programs() -> Vec<(&'static str, fn())> {
    vec![
        ("atomic increments", || {
            let n = Arc::new(AtomicUsize::new(0));
            let hs: Vec<_> = (0..3)
                .map(|_| {
                    let n = n.clone();
                    thread::spawn(move || {
                        n.fetch_add(1, SeqCst);
                        n.fetch_add(1, SeqCst);
                    })
                })
                .collect();
            hs.into_iter().for_each(|h| h.join().unwrap());
            assert_eq!(n.load(SeqCst), 6);
        }),
        ("mutex counter", || {
            let m = Arc::new(Mutex::new(0));
            let hs: Vec<_> = (0..3)
                .map(|_| {
                    let m = m.clone();
                    thread::spawn(move || {
                        let mut g = m.lock().unwrap();
                        let v = *g;
                        *g = v + 1;
                    })
                })
                .collect();
            hs.into_iter().for_each(|h| h.join().unwrap());
            assert_eq!(*m.lock().unwrap(), 3);
        }),
        ("condvar handoff", || {
            let pair = Arc::new((Mutex::new(None), Condvar::new()));
            let p2 = pair.clone();
            let producer = thread::spawn(move || {
                *p2.0.lock().unwrap() = Some(7);
                p2.1.notify_one();
            });
            let mut slot = pair.0.lock().unwrap();
            while slot.is_none() {
                slot = pair.1.wait(slot).unwrap();
            }
            assert_eq!(*slot, Some(7));
            drop(slot);
            producer.join().unwrap();
        }),
        ("spin-wait on a flag", || {
            let ready = Arc::new(AtomicBool::new(false));
            let data = Arc::new(AtomicUsize::new(0));
            let (r2, d2) = (ready.clone(), data.clone());
            let writer = thread::spawn(move || {
                for i in 1..=5 {
                    d2.store(i, SeqCst);
                }
                r2.store(true, SeqCst);
            });
            while !ready.load(SeqCst) {
                thread::yield_now();
            }
            assert_eq!(data.load(SeqCst), 5);
            writer.join().unwrap();
        }),
        ("nested spawns", || {
            let n = Arc::new(AtomicUsize::new(0));
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    let n = n.clone();
                    thread::spawn(move || {
                        let inner: Vec<_> = (0..2)
                            .map(|_| {
                                let n = n.clone();
                                thread::spawn(move || {
                                    n.fetch_add(1, SeqCst);
                                })
                            })
                            .collect();
                        inner.into_iter().for_each(|h| h.join().unwrap());
                        n.fetch_add(10, SeqCst);
                    })
                })
                .collect();
            hs.into_iter().for_each(|h| h.join().unwrap());
            assert_eq!(n.load(SeqCst), 24);
        }),
    ]
}

/// Runs every program of [`correct_programs`] `iterations` executions on seeds 0..3 under the
/// configuration `config(seed)` builds, and asserts that each run passed all of them.
pub fn assert_never_fails(config: impl Fn(u64) -> pctvb::Config, iterations: u64) {
    for (name, body) in correct_programs() {
        for seed in 0..3 {
            let report = config(seed).iterations(iterations).run(body);
            assert!(report.is_ok(), "{name}, seed {seed}: {:?}", report.failure());
            assert_eq!(report.executions, iterations, "{name}");
        }
    }
}
