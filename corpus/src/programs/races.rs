// Programs whose only symptom is a data race: no assertion can fail, the values read are
// thrown away (`black_box`). Only a race detector finds these bugs: pctvb's (a race fails the
// execution) and loom's (`loom::cell::UnsafeCell` reports a causality violation); shuttle has
// none, so the corpus does not run them under shuttle. Each accesses its shared data through
// `super::rt::cell::UnsafeCell`'s `with`/`with_mut` (loom's convention; `crate::race_cells`).
// Included once per tool by `crate::on_tool!`.

use std::hint::black_box;

use super::rt::cell::UnsafeCell;
use super::rt::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use super::rt::sync::{Arc, Mutex};
use super::rt::thread;

/// Data and a flag that says it is ready.
struct Flagged {
    ready: AtomicBool,
    data: UnsafeCell<u64>,
}

fn flagged() -> Arc<Flagged> {
    Arc::new(Flagged { ready: AtomicBool::new(false), data: UnsafeCell::new(0) })
}

/// A writer publishes data with a flag stored and loaded with `publish`/`observe`; a reader
/// that sees the flag reads the data. `write_first`: the writer writes before it sets the flag
/// (else after: published before written).
fn publish(publish: Ordering, observe: Ordering, write_first: bool) {
    let s = flagged();
    let w = s.clone();
    let writer = thread::spawn(move || {
        if write_first {
            w.data.with_mut(|p| unsafe { *p = 42 });
            w.ready.store(true, publish);
        } else {
            w.ready.store(true, publish);
            w.data.with_mut(|p| unsafe { *p = 42 });
        }
    });
    let r = s.clone();
    let reader = thread::spawn(move || {
        if r.ready.load(observe) {
            black_box(r.data.with(|p| unsafe { *p }));
        }
    });
    writer.join().unwrap();
    reader.join().unwrap();
}

/// A Relaxed flag "publishes" data: nothing orders the write before the read.
pub fn relaxed_flag(_: usize) {
    publish(Ordering::Relaxed, Ordering::Relaxed, true);
}

/// The flag is set (Release) before the data is written: a reader that sees it (Acquire)
/// reads while, or after, the writer writes, unordered.
pub fn publish_before_write(_: usize) {
    publish(Ordering::Release, Ordering::Acquire, false);
}

/// Release/Acquire publication, written before set: correct, no race.
pub fn release_acquire_flag(_: usize) {
    publish(Ordering::Release, Ordering::Acquire, true);
}

/// Two threads update a counter under a mutex, except that one of them skips the lock on its
/// second update (a fast path that forgot it).
pub fn missing_lock(_: usize) {
    let m = Arc::new(Mutex::new(()));
    let data = Arc::new(UnsafeCell::new(0u64));
    let hs: Vec<_> = (0..2)
        .map(|i| {
            let (m, data) = (m.clone(), data.clone());
            thread::spawn(move || {
                {
                    let _g = m.lock().unwrap();
                    data.with_mut(|p| unsafe { *p += 1 });
                }
                if i == 1 {
                    data.with_mut(|p| unsafe { *p += 1 });
                } else {
                    let _g = m.lock().unwrap();
                    data.with_mut(|p| unsafe { *p += 1 });
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

/// Double-checked lazy initialization whose initializer sets the flag with a Relaxed store:
/// a thread that finds the flag set on the fast path (Acquire load) reads the value without
/// anything ordering the initializer's write before it.
pub fn double_checked_relaxed(_: usize) {
    struct Lazy {
        init: AtomicBool,
        lock: Mutex<()>,
        value: UnsafeCell<u64>,
    }
    let lazy = Arc::new(Lazy {
        init: AtomicBool::new(false),
        lock: Mutex::new(()),
        value: UnsafeCell::new(0),
    });
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let l = lazy.clone();
            thread::spawn(move || {
                if !l.init.load(Ordering::Acquire) {
                    let _g = l.lock.lock().unwrap();
                    if !l.init.load(Ordering::Relaxed) {
                        l.value.with_mut(|p| unsafe { *p = 7 });
                        l.init.store(true, Ordering::Relaxed);
                    }
                }
                black_box(l.value.with(|p| unsafe { *p }));
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

/// A one-slot queue whose consumer marks the slot free (Release) before reading it: the
/// producer's next write into the slot is not ordered after that read.
pub fn slot_freed_early(_: usize) {
    struct Slot {
        full: AtomicBool,
        value: UnsafeCell<u64>,
    }
    let q = Arc::new(Slot { full: AtomicBool::new(false), value: UnsafeCell::new(0) });
    let p = q.clone();
    let producer = thread::spawn(move || {
        for v in 1..=2u64 {
            while p.full.load(Ordering::Acquire) {
                thread::yield_now();
            }
            p.value.with_mut(|x| unsafe { *x = v });
            p.full.store(true, Ordering::Release);
        }
    });
    let c = q.clone();
    let consumer = thread::spawn(move || {
        for _ in 0..2 {
            while !c.full.load(Ordering::Acquire) {
                thread::yield_now();
            }
            c.full.store(false, Ordering::Release);
            black_box(c.value.with(|x| unsafe { *x }));
        }
    });
    producer.join().unwrap();
    consumer.join().unwrap();
}

/// A writer marks its work started (Relaxed), writes, then marks it done (Release); a reader
/// that reads whenever the work has started (instead of done) reads unordered with the write.
/// The race needs the reader's check between the writer's two marks: one preemption.
pub fn read_when_started(_: usize) {
    let state = Arc::new(AtomicUsize::new(0));
    let data = Arc::new(UnsafeCell::new(0u64));
    let (s, d) = (state.clone(), data.clone());
    let writer = thread::spawn(move || {
        s.store(1, Ordering::Relaxed);
        d.with_mut(|p| unsafe { *p = 5 });
        s.store(2, Ordering::Release);
    });
    let (s, d) = (state.clone(), data.clone());
    let reader = thread::spawn(move || {
        if s.load(Ordering::Acquire) == 1 {
            black_box(d.with(|p| unsafe { *p }));
        }
    });
    writer.join().unwrap();
    reader.join().unwrap();
}
