//! Objects shared by executions that run at the same time on different OS threads (parallel
//! workers of one run, or two runs started at once) never let two OS threads reach one
//! object's data together.
//!
//! Every critical section counts its holders with a real `std` atomic (entry checks that
//! nobody else is inside, with scheduling points inside the section so that another OS
//! thread's execution has time to barge in); each test asserts that no section ever saw
//! another holder. Runs use fixed seeds, four workers and 20,000 executions of the random
//! strategy or the uniform walk (parallel from 256 executions); the assertions do not depend on
//! the seeds, the seeds only make a failure reproducible.

use std::sync::atomic::{AtomicU64 as StdAtomicU64, AtomicUsize as StdAtomicUsize, Ordering};

use pctvb::sync::mpsc::{self, Receiver, Sender};
use pctvb::sync::{Condvar, LazyLock, Mutex, OnceLock, RwLock};
use pctvb::{thread, Config, StrategyKind};

const ITERATIONS: u64 = 20_000;
const WORKERS: usize = 4;

fn config(kind: StrategyKind, seed: u64) -> Config {
    Config::new()
        .ignore_env()
        .seed(seed)
        .strategy(kind)
        .workers(WORKERS)
        .iterations(ITERATIONS)
        .minimize_runs(0)
}

/// Holders of one critical section, counted with a real atomic.
struct Section {
    inside: StdAtomicUsize,
    overlaps: StdAtomicUsize,
}

impl Section {
    const fn new() -> Section {
        Section { inside: StdAtomicUsize::new(0), overlaps: StdAtomicUsize::new(0) }
    }

    fn enter(&self) {
        if self.inside.fetch_add(1, Ordering::SeqCst) != 0 {
            self.overlaps.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn exit(&self) {
        self.inside.fetch_sub(1, Ordering::SeqCst);
    }

    /// A section with a few scheduling points inside.
    fn hold(&self) {
        self.enter();
        for _ in 0..3 {
            thread::yield_now();
        }
        self.exit();
    }

    fn overlaps(&self) -> usize {
        self.overlaps.load(Ordering::SeqCst)
    }
}

/// Two logical threads lock `m` and hold it across scheduling points.
fn lock_twice(m: &'static Mutex<u64>, section: &'static Section) {
    let h = thread::spawn(move || {
        let mut g = m.lock().unwrap();
        section.enter();
        *g += 1;
        thread::yield_now();
        *g += 1;
        thread::yield_now();
        section.exit();
    });
    {
        let mut g = m.lock().unwrap();
        section.enter();
        *g += 1;
        thread::yield_now();
        section.exit();
    }
    h.join().unwrap();
}

#[test]
fn static_mutex_under_parallel_workers() {
    static M: Mutex<u64> = Mutex::new(0);
    static SECTION: Section = Section::new();
    for (kind, seed) in [(StrategyKind::Random, 11), (StrategyKind::UniformWalk, 12)] {
        let report = config(kind, seed).run(|| lock_twice(&M, &SECTION));
        assert!(report.is_ok(), "{}", report.failure().unwrap());
    }
    assert_eq!(SECTION.overlaps(), 0, "two OS threads held the static mutex at once");
}

#[test]
fn captured_mutex_under_parallel_workers() {
    // Created before the run and captured by the body: every worker's executions share it.
    let m: &'static Mutex<u64> = Box::leak(Box::new(Mutex::new(0)));
    let section: &'static Section = Box::leak(Box::new(Section::new()));
    let report = config(StrategyKind::Random, 21).run(|| lock_twice(m, section));
    assert!(report.is_ok(), "{}", report.failure().unwrap());
    assert_eq!(section.overlaps(), 0, "two OS threads held the captured mutex at once");
}

#[test]
fn static_rwlock_readers_and_writers() {
    static L: RwLock<u64> = RwLock::new(0);
    static WRITERS: Section = Section::new();
    static READERS: StdAtomicUsize = StdAtomicUsize::new(0);
    static BAD: StdAtomicUsize = StdAtomicUsize::new(0);
    fn write() {
        let mut g = L.write().unwrap();
        WRITERS.enter();
        if READERS.load(Ordering::SeqCst) != 0 {
            BAD.fetch_add(1, Ordering::SeqCst);
        }
        *g += 1;
        thread::yield_now();
        if READERS.load(Ordering::SeqCst) != 0 {
            BAD.fetch_add(1, Ordering::SeqCst);
        }
        WRITERS.exit();
    }
    fn read() {
        let g = L.read().unwrap();
        READERS.fetch_add(1, Ordering::SeqCst);
        if WRITERS.inside.load(Ordering::SeqCst) != 0 {
            BAD.fetch_add(1, Ordering::SeqCst);
        }
        let _ = *g;
        thread::yield_now();
        if WRITERS.inside.load(Ordering::SeqCst) != 0 {
            BAD.fetch_add(1, Ordering::SeqCst);
        }
        READERS.fetch_sub(1, Ordering::SeqCst);
    }
    for (kind, seed) in [(StrategyKind::Random, 31), (StrategyKind::UniformWalk, 32)] {
        let report = config(kind, seed).run(|| {
            let a = thread::spawn(read);
            let b = thread::spawn(write);
            read();
            write();
            a.join().unwrap();
            b.join().unwrap();
        });
        assert!(report.is_ok(), "{}", report.failure().unwrap());
    }
    assert_eq!(WRITERS.overlaps(), 0, "two OS threads held the write lock at once");
    assert_eq!(BAD.load(Ordering::SeqCst), 0, "a reader and a writer held the lock at once");
}

#[test]
fn static_condvar_handoff() {
    // The mutex's data is shared by every execution, so each execution hands off under its
    // own key (a number no other execution uses).
    static M: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    static CV: Condvar = Condvar::new();
    static NEXT: StdAtomicU64 = StdAtomicU64::new(1);
    static SECTION: Section = Section::new();
    let report = config(StrategyKind::Random, 41).run(|| {
        let key = NEXT.fetch_add(1, Ordering::SeqCst);
        let h = thread::spawn(move || {
            let mut g = M.lock().unwrap();
            SECTION.enter();
            g.push(key);
            thread::yield_now();
            SECTION.exit();
            drop(g);
            CV.notify_all();
        });
        let mut g = M.lock().unwrap();
        SECTION.hold();
        while !g.contains(&key) {
            g = CV.wait(g).unwrap();
            SECTION.hold();
        }
        g.retain(|&k| k != key);
        drop(g);
        h.join().unwrap();
    });
    assert!(report.is_ok(), "{}", report.failure().unwrap());
    assert_eq!(SECTION.overlaps(), 0, "two OS threads held the condvar's mutex at once");
}

#[test]
fn captured_channel_under_parallel_workers() {
    // One channel for every execution of the run: each execution sends ten messages from two
    // logical threads and drains what it can; nothing may be lost or duplicated.
    let (tx, rx): (Sender<u64>, Receiver<u64>) = mpsc::channel();
    let rx = std::sync::Mutex::new(rx);
    let received = StdAtomicU64::new(0);
    let executions = StdAtomicU64::new(0);
    let report = config(StrategyKind::Random, 51).run(|| {
        executions.fetch_add(1, Ordering::SeqCst);
        let tx2 = tx.clone();
        let h = thread::spawn(move || {
            for i in 0..5 {
                tx2.send(i).unwrap();
            }
        });
        let tx3 = tx.clone();
        for i in 0..5 {
            tx3.send(i).unwrap();
        }
        drop(tx3);
        h.join().unwrap();
        let rx = rx.lock().unwrap();
        while rx.try_recv().is_ok() {
            received.fetch_add(1, Ordering::SeqCst);
        }
    });
    assert!(report.is_ok(), "{}", report.failure().unwrap());
    // Outside the run, the channel is std's: what the executions left behind, then the
    // disconnection once the last sender is gone.
    let rx = rx.into_inner().unwrap();
    while rx.try_recv().is_ok() {
        received.fetch_add(1, Ordering::SeqCst);
    }
    let sent = 10 * executions.load(Ordering::SeqCst);
    assert_eq!(received.load(Ordering::SeqCst), sent, "messages lost or duplicated");
    drop(tx);
    assert_eq!(rx.try_recv(), Err(mpsc::TryRecvError::Disconnected));
}

#[test]
fn static_once_and_lazy_values_are_per_execution() {
    static CELL: OnceLock<u64> = OnceLock::new();
    static COUNT: LazyLock<Mutex<u64>> = LazyLock::new(|| Mutex::new(0));
    static NEXT: StdAtomicU64 = StdAtomicU64::new(1);
    static WRONG: StdAtomicUsize = StdAtomicUsize::new(0);
    let report = config(StrategyKind::Random, 61).run(|| {
        let mine = NEXT.fetch_add(1, Ordering::SeqCst);
        let h = thread::spawn(|| {
            *COUNT.lock().unwrap() += 1;
        });
        CELL.set(mine).unwrap();
        thread::yield_now();
        *COUNT.lock().unwrap() += 1;
        h.join().unwrap();
        if CELL.get() != Some(&mine) {
            WRONG.fetch_add(1, Ordering::SeqCst);
        }
        if *COUNT.lock().unwrap() != 2 {
            WRONG.fetch_add(1, Ordering::SeqCst);
        }
    });
    assert!(report.is_ok(), "{}", report.failure().unwrap());
    assert_eq!(WRONG.load(Ordering::SeqCst), 0, "an execution saw another one's value");
}

#[test]
fn two_runs_at_once_share_a_static() {
    static M: Mutex<u64> = Mutex::new(0);
    static SECTION: Section = Section::new();
    std::thread::scope(|s| {
        for seed in [71, 72] {
            s.spawn(move || {
                let report = Config::new()
                    .ignore_env()
                    .seed(seed)
                    .strategy(StrategyKind::Random)
                    .workers(1)
                    .iterations(ITERATIONS / 2)
                    .minimize_runs(0)
                    .run(|| lock_twice(&M, &SECTION));
                assert!(report.is_ok(), "{}", report.failure().unwrap());
            });
        }
    });
    assert_eq!(SECTION.overlaps(), 0, "two runs held the static mutex at once");
}
