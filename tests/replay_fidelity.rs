//! Replay fidelity, tested adversarially: a family of small buggy programs (atomics, mutexes,
//! condvars, channels, rendezvous channels, park/unpark, RwLock, Once/OnceLock, scoped threads,
//! async tasks, data races on checked cells, yields, sleeps and timeouts) runs under many run
//! modes (serial, several workers, a shard, each strategy kind, a confidence target, counting
//! runs, race detection on and off, minimization on and off, named runs and unnamed), and
//! every failure found is held to pctvb's promises:
//!
//! - its token replays exactly that execution: the same failure kind, panic message and
//!   location, failing thread, execution index, schedule, preemptions and shape, under the
//!   search's configuration, a plain one, and one with the other detector setting (the token
//!   records the detector when it was off, and a limit's failure its limit; a race found with
//!   the detector replayed without it must diverge, never report another failure);
//! - the minimized schedule fails the same way as the one first found (same kind, same place),
//!   with no more preemptions, and the token of the one first found replays too;
//! - the printed preemption count, the schedule's `<- preempted` marks and the shape's `c`
//!   agree, and the shape's `v` is the variables at the preemptions of the schedule shown;
//! - the replay line is well-formed: it starts with the token, names the test, and carries
//!   `PCTVB_RACES` when the environment set it; run as printed in a fresh process (this test
//!   binary started again with the line's environment), it reproduces the same failure.
//!
//! Every seed here is fixed (listed in `SEEDS` and the modes), so a failure of this test
//! reproduces; the default test is sized to run in well under a minute in a debug build, and
//! `replay_fidelity_long` (ignored) runs more seeds.

use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering::SeqCst;
use std::task::{Context, Poll};
use std::time::Duration;

use pctvb::__internals::replay::decode;
use pctvb::cell::UnsafeCell;
use pctvb::report::Failure;
use pctvb::sync::atomic::{AtomicBool, AtomicUsize};
use pctvb::sync::{mpsc, Arc, Condvar, Mutex, Once, OnceLock, RwLock};
use pctvb::{thread, Config, StrategyKind};

// ---------------------------------------------------------------------------------------------
// The programs: each has a bug some schedule shows.
// ---------------------------------------------------------------------------------------------

/// A lost update on an atomic: load, then store.
fn atomic_lost_update() {
    let n = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || {
                let v = n.load(SeqCst);
                n.store(v + 1, SeqCst);
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let v = n.load(SeqCst);
    assert_eq!(v, 2, "lost update: counter is {v}");
}

/// A check-then-act over two critical sections of a mutex.
fn mutex_check_then_act() {
    let m = Arc::new(Mutex::new(0u32));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let m = m.clone();
            thread::spawn(move || {
                let seen = *m.lock().unwrap();
                thread::yield_now();
                *m.lock().unwrap() = seen + 1;
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let v = *m.lock().unwrap();
    assert_eq!(v, 2, "mutex lost update: {v}");
}

/// Two mutexes taken in opposite orders: a deadlock.
fn lock_order_deadlock() {
    let a = Arc::new(Mutex::new(()));
    let b = Arc::new(Mutex::new(()));
    let (a2, b2) = (a.clone(), b.clone());
    let h = thread::spawn(move || {
        let _x = b2.lock().unwrap();
        let _y = a2.lock().unwrap();
    });
    {
        let _x = a.lock().unwrap();
        let _y = b.lock().unwrap();
    }
    h.join().unwrap();
}

/// A condvar wait without a predicate: the notification can come first (a lost wake-up).
fn condvar_lost_wakeup() {
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let p = pair.clone();
    let h = thread::spawn(move || {
        *p.0.lock().unwrap() = true;
        p.1.notify_one();
    });
    let (m, cv) = &*pair;
    let g = m.lock().unwrap();
    let g = cv.wait(g).unwrap();
    assert!(*g);
    drop(g);
    h.join().unwrap();
}

/// Two senders on one channel; the receiver assumes an order.
fn channel_order() {
    let (tx, rx) = mpsc::channel();
    let tx2 = tx.clone();
    let h1 = thread::spawn(move || tx.send(1).unwrap());
    let h2 = thread::spawn(move || tx2.send(2).unwrap());
    let first = rx.recv().unwrap();
    let second = rx.recv().unwrap();
    h1.join().unwrap();
    h2.join().unwrap();
    assert_eq!((first, second), (1, 2), "messages out of order");
}

/// A rendezvous channel and a flag set after the send: the receiver sees it unset.
fn rendezvous_flag() {
    let (tx, rx) = mpsc::sync_channel::<u8>(0);
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    let h = thread::spawn(move || {
        tx.send(7).unwrap();
        f.store(true, SeqCst);
    });
    let got = rx.recv().unwrap();
    let set = flag.load(SeqCst);
    h.join().unwrap();
    assert!(set, "rendezvous: got {got} before the flag was set");
}

/// park/unpark: the flag is set after the unpark, so the main thread may park for good.
fn park_lost_flag() {
    let flag = Arc::new(AtomicBool::new(false));
    let main = thread::current();
    let f = flag.clone();
    let h = thread::spawn(move || {
        main.unpark();
        f.store(true, SeqCst);
    });
    thread::park();
    if !flag.load(SeqCst) {
        thread::park();
    }
    h.join().unwrap();
}

/// RwLock: read, then write back, in two locks.
fn rwlock_lost_update() {
    let l = Arc::new(RwLock::new(0u32));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let l = l.clone();
            thread::spawn(move || {
                let v = *l.read().unwrap();
                *l.write().unwrap() = v + 1;
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*l.read().unwrap(), 2, "rwlock lost update");
}

/// OnceLock: each thread assumes its own value won.
fn once_lock_winner() {
    let cell = Arc::new(OnceLock::new());
    let c = cell.clone();
    let h = thread::spawn(move || {
        let v = *c.get_or_init(|| 1u8);
        assert_eq!(v, 1, "the spawned thread's value lost");
    });
    let _ = cell.get_or_init(|| 2u8);
    h.join().unwrap();
}

/// Once: the main thread assumes the spawned thread's initializer ran.
fn once_flag() {
    let once = Arc::new(Once::new());
    let done = Arc::new(AtomicBool::new(false));
    let (o, d) = (once.clone(), done.clone());
    let h = thread::spawn(move || o.call_once(|| d.store(true, SeqCst)));
    once.call_once(|| {});
    let ran = done.load(SeqCst);
    h.join().unwrap();
    assert!(ran, "the spawned thread's initializer did not run");
}

/// Scoped threads: a lost update through a mutex's value, copied out and back.
fn scoped_lost_update() {
    let m = Mutex::new(0u32);
    thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let v = *m.lock().unwrap();
                *m.lock().unwrap() = v + 1;
            });
        }
    });
    assert_eq!(m.into_inner().unwrap(), 2, "scoped lost update");
}

/// A future that returns `Pending` once (waking itself), so the task yields.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// Async tasks: a lost update across an await.
fn async_lost_update() {
    let n = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..2)
        .map(|_| {
            let n = n.clone();
            pctvb::future::spawn(async move {
                let v = n.load(SeqCst);
                YieldOnce(false).await;
                n.store(v + 1, SeqCst);
            })
        })
        .collect();
    pctvb::future::block_on(async move {
        for t in tasks {
            t.await;
        }
    });
    assert_eq!(n.load(SeqCst), 2, "async lost update");
}

/// A data race on a checked cell (no synchronisation), with an assertion after it that fails
/// only in some orders: with race detection on the race is the failure, off the assertion.
fn cell_race() {
    let cell = Arc::new(UnsafeCell::new(0u32));
    let started = Arc::new(AtomicBool::new(false));
    let (c, s) = (cell.clone(), started.clone());
    let h = thread::spawn(move || {
        s.store(true, SeqCst);
        c.with_mut(|p| unsafe { *p += 1 });
    });
    let seen = started.load(SeqCst);
    let before = cell.with(|p| unsafe { *p });
    h.join().unwrap();
    assert!(!(seen && before == 0), "read 0 after the writer started");
}

/// Yields and sleeps: a worker sleeps before it publishes; the main thread spins a few times.
fn sleep_and_yield() {
    let ready = Arc::new(AtomicBool::new(false));
    let r = ready.clone();
    let h = thread::spawn(move || {
        thread::sleep(Duration::from_millis(5));
        r.store(true, SeqCst);
    });
    let mut tries = 0;
    while !ready.load(SeqCst) && tries < 3 {
        thread::yield_now();
        tries += 1;
    }
    let late = !ready.load(SeqCst);
    h.join().unwrap();
    assert!(!late, "gave up waiting after {tries} tries");
}

/// Three threads, a lost update with noise: minimization has work to do.
fn noisy_three() {
    let n = Arc::new(AtomicUsize::new(0));
    let noise = Arc::new(Mutex::new(0u32));
    let hs: Vec<_> = (0..3)
        .map(|i| {
            let (n, noise) = (n.clone(), noise.clone());
            thread::spawn(move || {
                for _ in 0..2 {
                    *noise.lock().unwrap() += 1;
                }
                if i < 2 {
                    let v = n.load(SeqCst);
                    n.fetch_add(0, SeqCst);
                    n.store(v + 1, SeqCst);
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let v = n.load(SeqCst);
    assert_eq!(v, 2, "noisy lost update: {v}");
}

/// A receive with a timeout races a slow sender; the elapsed virtual time is in the message,
/// so a replay must reproduce the execution's clock too.
fn timed_recv() {
    let (tx, rx) = mpsc::channel();
    let start = std::time::Instant::now();
    let h = thread::spawn(move || {
        thread::sleep(Duration::from_millis(3));
        let _ = tx.send(5u8);
    });
    let got = rx.recv_timeout(Duration::from_millis(10));
    let waited = start.elapsed();
    h.join().unwrap();
    assert!(got.is_ok(), "timed out after {waited:?}");
    assert!(waited < Duration::from_millis(2), "received after {waited:?}");
}

/// A condvar wait with a timeout and a predicate set by a thread that may come late.
fn condvar_timeout() {
    let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
    let p = pair.clone();
    let h = thread::Builder::new()
        .name("setter".into())
        .spawn(move || {
            *p.0.lock().unwrap() += 1;
            p.1.notify_all();
        })
        .unwrap();
    let (m, cv) = &*pair;
    let g = m.lock().unwrap();
    let (g, timeout) = cv.wait_timeout_while(g, Duration::from_millis(4), |v| *v == 0).unwrap();
    let v = *g;
    drop(g);
    h.join().unwrap();
    assert!(!timeout.timed_out(), "timed out with {v}");
}

/// park_timeout: the unpark may come after the timeout.
fn park_timeout_late() {
    let main = thread::current();
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    let h = thread::spawn(move || {
        f.store(true, SeqCst);
        main.unpark();
    });
    thread::park_timeout(Duration::from_millis(2));
    let seen = flag.load(SeqCst);
    h.join().unwrap();
    assert!(seen, "woke without the flag");
}

/// A named thread panics while it holds a lock; the panic is the failure.
fn named_thread_panics() {
    let m = Arc::new(Mutex::new(Vec::<u8>::new()));
    let m2 = m.clone();
    let h = thread::Builder::new()
        .name("checker".into())
        .spawn(move || {
            let g = m2.lock().unwrap();
            assert!(g.is_empty(), "checker saw {:?}", *g);
        })
        .unwrap();
    m.lock().unwrap().push(1);
    let _ = h.join();
}

/// A spin-wait for a flag that a thread sets only if it runs before the main thread's store:
/// otherwise every thread that can run spins (a livelock, found at `max_steps`).
fn conditional_flag_livelock() {
    let x = Arc::new(AtomicUsize::new(0));
    let flag = Arc::new(AtomicBool::new(false));
    let (x2, f2) = (x.clone(), flag.clone());
    let h = thread::spawn(move || {
        if x2.load(SeqCst) == 0 {
            f2.store(true, SeqCst);
        }
    });
    x.store(1, SeqCst);
    while !flag.load(SeqCst) {
        thread::yield_now();
    }
    h.join().unwrap();
}

/// A long schedule: three threads each do many atomic steps before a lost update, so the
/// printed schedule folds runs and may leave lines out.
fn long_lost_update() {
    let n = Arc::new(AtomicUsize::new(0));
    let noise = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..3)
        .map(|i| {
            let (n, noise) = (n.clone(), noise.clone());
            thread::spawn(move || {
                for _ in 0..25 {
                    noise.fetch_add(1, SeqCst);
                }
                if i > 0 {
                    let v = n.load(SeqCst);
                    noise.fetch_add(1, SeqCst);
                    n.store(v + 1, SeqCst);
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(n.load(SeqCst), 2, "long lost update");
}

/// Async tasks racing on a checked cell across an await.
fn async_cell_race() {
    let cell = Arc::new(UnsafeCell::new(0u32));
    let tasks: Vec<_> = (0..2)
        .map(|i| {
            let cell = cell.clone();
            pctvb::future::spawn(async move {
                let v = cell.with(|p| unsafe { *p });
                YieldOnce(false).await;
                cell.with_mut(|p| unsafe { *p = v + i + 1 });
            })
        })
        .collect();
    pctvb::future::block_on(async move {
        for t in tasks {
            t.await;
        }
    });
    let v = cell.with(|p| unsafe { *p });
    assert_eq!(v, 3, "async cell: {v}");
}

const PROGRAMS: &[(&str, fn())] = &[
    ("atomic_lost_update", atomic_lost_update),
    ("mutex_check_then_act", mutex_check_then_act),
    ("lock_order_deadlock", lock_order_deadlock),
    ("condvar_lost_wakeup", condvar_lost_wakeup),
    ("channel_order", channel_order),
    ("rendezvous_flag", rendezvous_flag),
    ("park_lost_flag", park_lost_flag),
    ("rwlock_lost_update", rwlock_lost_update),
    ("once_lock_winner", once_lock_winner),
    ("once_flag", once_flag),
    ("scoped_lost_update", scoped_lost_update),
    ("async_lost_update", async_lost_update),
    ("cell_race", cell_race),
    ("sleep_and_yield", sleep_and_yield),
    ("noisy_three", noisy_three),
    ("timed_recv", timed_recv),
    ("condvar_timeout", condvar_timeout),
    ("park_timeout_late", park_timeout_late),
    ("named_thread_panics", named_thread_panics),
    ("conditional_flag_livelock", conditional_flag_livelock),
    ("long_lost_update", long_lost_update),
    ("async_cell_race", async_cell_race),
];

// ---------------------------------------------------------------------------------------------
// The modes.
// ---------------------------------------------------------------------------------------------

/// A run mode: how the search runs. The replay never needs `workers` or `shard`.
#[derive(Clone)]
struct Mode {
    label: String,
    strategy: Option<&'static str>,
    workers: Option<usize>,
    shard: Option<(u64, u64)>,
    races: bool,
    minimize: bool,
    iterations: u64,
    /// A confidence target instead of the iterations (the default strategy then is the
    /// combined one, which may enumerate its class first).
    confidence: Option<f64>,
    /// Whether the run stops at its first failure (a counting run reports the first).
    stop_at_first: bool,
}

impl Mode {
    /// The run's configuration; `name`, when given, names it (the token and line carry it).
    fn config(&self, seed: u64, name: Option<&str>) -> Config {
        let mut c =
            Config::new().ignore_env().seed(seed).iterations(self.iterations).max_steps(3000);
        if let Some(name) = name {
            c = c.name(name);
        }
        if let Some(s) = self.strategy {
            c = c.strategy(StrategyKind::from_name(s).expect("a strategy"));
        }
        if let Some(w) = self.workers {
            c = c.workers(w);
        }
        if let Some((k, m)) = self.shard {
            c = c.shard(k, m);
        }
        c = c.race_detection(self.races).stop_at_first_failure(self.stop_at_first);
        if let Some(p) = self.confidence {
            c = Config::new()
                .ignore_env()
                .seed(seed)
                .max_steps(3000)
                .confidence(p)
                .race_detection(self.races)
                .stop_at_first_failure(self.stop_at_first);
            if let Some(name) = name {
                c = c.name(name);
            }
        }
        if !self.minimize {
            c = c.minimize_runs(0);
        }
        c
    }
}

fn modes() -> Vec<Mode> {
    let base = Mode {
        label: String::new(),
        strategy: None,
        workers: Some(1),
        shard: None,
        races: true,
        minimize: true,
        iterations: 300,
        confidence: None,
        stop_at_first: true,
    };
    let mut out = Vec::new();
    let mut add = |label: &str, f: &dyn Fn(&mut Mode)| {
        let mut m = base.clone();
        m.label = label.to_string();
        f(&mut m);
        out.push(m);
    };
    add("serial default", &|_| {});
    add("2 workers default", &|m| m.workers = Some(2));
    add("3 workers random", &|m| {
        m.workers = Some(3);
        m.strategy = Some("random");
    });
    add("shard 2/2 default", &|m| m.shard = Some((2, 2)));
    add("shard 1/3 random, 2 workers", &|m| {
        m.shard = Some((1, 3));
        m.workers = Some(2);
        m.strategy = Some("random");
    });
    for s in [
        "revfuzz",
        "surw",
        "pct",
        "pctvb",
        "combined",
        "random",
        "uniform",
        "pos",
        "portfolio",
        "greybox",
        "reversal",
        "threadbound",
        "systematic",
    ] {
        add(s, &|m| m.strategy = Some(s));
    }
    add("serial default, races off", &|m| m.races = false);
    add("2 workers surw, races off", &|m| {
        m.workers = Some(2);
        m.strategy = Some("surw");
        m.races = false;
    });
    add("pct, races off", &|m| {
        m.strategy = Some("pct");
        m.races = false;
    });
    add("serial default, no minimization", &|m| m.minimize = false);
    add("2 workers random, no minimization", &|m| {
        m.workers = Some(2);
        m.strategy = Some("random");
        m.minimize = false;
    });
    add("confidence target (combined, may enumerate)", &|m| m.confidence = Some(0.5));
    add("counting run, random", &|m| {
        m.strategy = Some("random");
        m.stop_at_first = false;
        m.iterations = 60;
    });
    add("counting run, pct", &|m| {
        m.strategy = Some("pct");
        m.stop_at_first = false;
        m.iterations = 60;
    });
    add("combined, no minimization, races off", &|m| {
        m.strategy = Some("combined");
        m.minimize = false;
        m.races = false;
    });
    out
}

// ---------------------------------------------------------------------------------------------
// The checks.
// ---------------------------------------------------------------------------------------------

/// Everything of a failure a replay must reproduce, as text (so a mismatch shows both).
fn fingerprint(f: &Failure) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "kind {:?}", f.kind);
    let _ = writeln!(s, "execution {}", f.execution);
    let _ = writeln!(s, "thread {:?}", f.thread.as_ref().map(|t| (t.id, t.name.clone())));
    let _ = writeln!(s, "message {}", f.message);
    let _ = writeln!(s, "location {:?}", f.location);
    let _ = writeln!(s, "preemptions {}", f.preemptions);
    let _ = writeln!(s, "shape {:?}", f.shape);
    for step in &f.schedule {
        let _ = writeln!(
            s,
            "  {} {} {} {} {} -> {}",
            step.step, step.thread_label, step.operation, step.location, step.preempted, step.next
        );
    }
    s
}

/// Which failure: kind and place (a panic's location, or its message without one; a deadlock's
/// kind), as minimization must keep it.
fn same_bug(a: &Failure, b: &Failure) -> bool {
    if a.kind == pctvb::FailureKind::DataRace {
        // The same two accesses, in either order (the report names the second one's place).
        return b.kind == a.kind && race_sites(a) == race_sites(b);
    }
    a.kind == b.kind
        && match (&a.location, &b.location) {
            (Some(x), Some(y)) => x == y,
            (None, None) => a.kind != pctvb::FailureKind::Panic || a.message == b.message,
            _ => false,
        }
}

/// A data race's two access sites, sorted: "... wrote it at <site> (step n), ...".
fn race_sites(f: &Failure) -> Vec<String> {
    let mut sites: Vec<String> = f
        .message
        .split(" at ")
        .skip(1)
        .filter_map(|rest| rest.split_once(" (step").map(|(site, _)| site.to_string()))
        .collect();
    sites.sort();
    sites
}

/// The problems found, each a line naming the case.
#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.0.push(what());
        }
    }
}

/// Checks that `token` replays `expected` (a failure of a run whose configuration `search` was,
/// of `body`), under that configuration and under a plain one with only the race setting.
fn check_replays(
    p: &mut Problems,
    case: &str,
    search: &Config,
    races: bool,
    body: fn(),
    expected: &Failure,
) {
    let Some(token) = expected.token.clone() else {
        p.check(false, || format!("{case}: no token"));
        return;
    };
    let plain = Config::new().ignore_env().race_detection(races);
    // The other detector setting: a token recorded without the detector replays without it;
    // one recorded with it replays the same without it, but for a race it found, which must
    // then say it diverged, never report another failure.
    let flipped = Config::new().ignore_env().race_detection(!races);
    for (which, config) in
        [("search config", search.clone()), ("plain config", plain), ("races flipped", flipped)]
    {
        let replay = config.replay(token.clone()).run(body);
        if let Some(e) = replay.error() {
            let allowed = which == "races flipped"
                && races
                && expected.kind == pctvb::FailureKind::DataRace
                && matches!(e, pctvb::Error::ReplayDiverged { .. });
            p.check(allowed, || format!("{case}: replay ({which}) could not test: {e}"));
            continue;
        }
        p.check(replay.replayed && replay.executions == 1, || {
            format!("{case}: replay ({which}) ran {} executions", replay.executions)
        });
        match replay.failure() {
            None => p.check(false, || format!("{case}: replay ({which}) passed")),
            Some(again) => {
                let (a, b) = (fingerprint(expected), fingerprint(again));
                p.check(a == b, || {
                    format!("{case}: replay ({which}) differs:\n--- found\n{a}--- replayed\n{b}")
                });
            }
        }
    }
}

/// The printed report agrees with itself: the preemption count in the header, the
/// schedule's marks, the shape's `c`; and the replay line is well-formed.
fn check_printed(p: &mut Problems, case: &str, name: Option<&str>, f: &Failure) {
    let marked = f.schedule.iter().filter(|s| s.preempted).count();
    p.check(marked == f.preemptions, || {
        format!("{case}: {} preemptions but {marked} marked steps", f.preemptions)
    });
    if let Some(shape) = &f.shape {
        p.check(shape.preemptions == f.preemptions, || {
            format!("{case}: shape c={} but {} preemptions", shape.preemptions, f.preemptions)
        });
    }
    if let Some(shape) = &f.shape {
        // v, recomputed from the schedule shown: the object of each preempted step (or else
        // the one its thread touched last), objects named by creation site as variables are.
        let mut last: std::collections::BTreeMap<String, String> = Default::default();
        let mut vars = std::collections::BTreeSet::new();
        for step in &f.schedule {
            let object = step
                .operation
                .split_whitespace()
                .nth(1)
                .filter(|o| o.contains('@') && !step.operation.starts_with("blocked"));
            let var = object.map(str::to_string).or_else(|| last.get(&step.thread_label).cloned());
            if step.preempted {
                vars.extend(var);
            }
            if let Some(o) = object {
                last.insert(step.thread_label.clone(), o.to_string());
            }
        }
        p.check(vars.len() == shape.variables, || {
            format!(
                "{case}: shape v={} but the schedule's preemptions are at {vars:?}",
                shape.variables
            )
        });
        let threads: std::collections::BTreeSet<_> =
            f.schedule.iter().flat_map(|s| [s.thread, s.next]).collect();
        // A spurious wake-up counts the threads it ran ahead of, which need not appear in the
        // schedule (a notifier that never ran before the failure).
        let spurious = f.schedule.iter().any(|s| s.operation.starts_with("spurious-wakeup"));
        p.check(spurious || shape.threads <= threads.len().max(1), || {
            format!(
                "{case}: shape t={} but {} threads in the schedule",
                shape.threads,
                threads.len()
            )
        });
        p.check(shape.preemptions == 0 || shape.threads >= 2, || {
            format!("{case}: shape t={} with {} preemptions", shape.threads, shape.preemptions)
        });
    }
    if let Some(from) = f.minimized_from {
        p.check(from >= f.preemptions, || {
            format!("{case}: minimized from {from} to {} preemptions", f.preemptions)
        });
    }
    let text = f.to_string();
    if !f.schedule.is_empty() {
        let header = format!("{} scheduling points, ", f.schedule.len());
        let count = if f.preemptions == 1 {
            "1 preemption)".to_string()
        } else {
            format!("{} preemptions)", f.preemptions)
        };
        p.check(text.contains(&(header + &count)), || {
            format!("{case}: the header does not say {count}:\n{text}")
        });
        if !text.contains("lines not shown") {
            let marks = text.matches("<- preempted").count();
            p.check(marks == f.preemptions, || {
                format!("{case}: {marks} printed marks, {} preemptions:\n{text}", f.preemptions)
            });
        }
    }
    if let Some(shape) = &f.shape {
        let c = if shape.preemptions == 1 {
            "c=1 preemption ".to_string()
        } else {
            format!("c={} preemptions ", shape.preemptions)
        };
        p.check(text.contains(&format!("bug shape: {c}")), || {
            format!("{case}: the printed shape does not say {c}:\n{text}")
        });
    }
    if f.replay_diverges.is_some() {
        p.check(false, || format!("{case}: the token does not replay: {f}"));
        return;
    }
    let (Some(token), Some(line)) = (&f.token, &f.replay_command) else {
        p.check(false, || format!("{case}: no token or no replay line"));
        return;
    };
    p.check(line.starts_with(&format!("PCTVB_REPLAY={token} ")), || {
        format!("{case}: the replay line does not start with the token: {line}")
    });
    p.check(text.contains(line.as_str()), || format!("{case}: the report does not print {line}"));
    match decode(token) {
        Err(e) => p.check(false, || format!("{case}: the token does not decode: {e}")),
        Ok(t) => {
            p.check(t.test == name.unwrap_or(""), || {
                format!("{case}: the token names test {:?}, not {name:?}", t.test)
            });
            p.check(t.execution == f.execution, || {
                format!("{case}: the token's execution {} is not {}", t.execution, f.execution)
            });
        }
    }
    match name {
        Some(n) => {
            let path = n.split_once("::").map_or(n, |(_, rest)| rest);
            p.check(line.ends_with(&format!("-- --exact {path}")), || {
                format!("{case}: the replay line does not select {path}: {line}")
            });
        }
        None => p.check(line.contains("Config::replay"), || {
            format!("{case}: an unnamed run's line does not say Config::replay: {line}")
        }),
    }
}

/// Runs every program under every mode with each seed and checks each failure found.
/// Returns the number of failures checked and the problems.
fn probe(seeds: &[u64]) -> (usize, Vec<String>) {
    let mut p = Problems::default();
    let mut checked = 0;
    for (name, body) in PROGRAMS {
        for (m, mode) in modes().into_iter().enumerate() {
            for &seed in seeds {
                let case = format!("{name} [{}] seed {seed}", mode.label);
                // Every other mode names its run, as `#[pctvb::test]` does.
                let test = format!("replay_fidelity::programs::{name}");
                let test = (m % 2 == 0).then_some(test.as_str());
                let config = mode.config(seed, test);
                let report = config.run(*body);
                if let Some(e) = report.error() {
                    p.check(false, || format!("{case}: could not test: {e}"));
                    continue;
                }
                let Some(f) = report.failure() else { continue };
                checked += 1;
                check_printed(&mut p, &case, test, f);
                check_replays(&mut p, &case, &config, mode.races, *body, f);
                // The schedule first found, before minimization: the same bug, no fewer
                // preemptions, and its token replays too.
                if mode.minimize {
                    let raw = mode.config(seed, test).minimize_runs(0).run(*body);
                    match raw.failure() {
                        None => p.check(false, || format!("{case}: unminimized run passed")),
                        Some(r) => {
                            p.check(same_bug(r, f), || {
                                format!(
                                    "{case}: minimization changed the bug:\n--- found\n{}--- \
                                     minimized\n{}",
                                    fingerprint(r),
                                    fingerprint(f)
                                )
                            });
                            p.check(r.execution == f.execution, || {
                                format!(
                                    "{case}: execution {} minimized as {}",
                                    r.execution, f.execution
                                )
                            });
                            p.check(r.preemptions >= f.preemptions, || {
                                format!("{case}: minimized {} -> {}", r.preemptions, f.preemptions)
                            });
                            if let Some(from) = f.minimized_from {
                                p.check(from == r.preemptions, || {
                                    format!(
                                        "{case}: says minimized from {from}, found with {}",
                                        r.preemptions
                                    )
                                });
                            }
                            let raw_case = format!("{case} (unminimized)");
                            check_printed(&mut p, &raw_case, test, r);
                            check_replays(&mut p, &raw_case, &config, mode.races, *body, r);
                        }
                    }
                }
            }
        }
    }
    (checked, p.0)
}

fn assert_probe(seeds: &[u64], at_least: usize) {
    let (checked, problems) = probe(seeds);
    eprintln!("replay fidelity: {checked} failures checked");
    assert!(
        problems.is_empty(),
        "{} problems in {checked} failures:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
    assert!(checked >= at_least, "only {checked} failures found");
}

/// Fixed seeds: the default test's, and the long test's beside them.
const SEEDS: &[u64] = &[7];
const LONG_SEEDS: &[u64] = &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];

#[test]
fn every_failure_replays_minimizes_and_prints_as_promised() {
    assert_probe(SEEDS, 100);
}

#[test]
#[ignore = "long: more seeds (cargo test --test replay_fidelity -- --ignored)"]
fn replay_fidelity_long() {
    assert_probe(LONG_SEEDS, 1000);
}

// ---------------------------------------------------------------------------------------------
// Cases the probe found, reduced.
// ---------------------------------------------------------------------------------------------

/// A race on a cell, then an assertion on the value read, with no scheduling point between
/// the racing read and the panic: without the detector the assertion fails; with it the
/// race ends the execution at the read, after as many scheduling points.
fn race_then_panic() {
    let cell = Arc::new(UnsafeCell::new(0u32));
    let c = cell.clone();
    let h = thread::spawn(move || c.with_mut(|p| unsafe { *p = 1 }));
    let v = cell.with(|p| unsafe { *p });
    assert_eq!(v, 0, "saw the write");
    h.join().unwrap();
}

/// A token recorded without the data-race detector, replayed with it on (the default, or a
/// configuration that sets it), stopped at the race on the recorded schedule and reported
/// the race, not the recorded panic, with nothing saying the replay was not the execution
/// recorded: both runs took the same choices and events. The token now records that the
/// detector was off, and its replay runs without it. Seed fixed.
#[test]
fn a_token_recorded_without_the_race_detector_replays_its_own_failure() {
    let found = Config::new()
        .ignore_env()
        .seed(3)
        .iterations(200)
        .race_detection(false)
        .run(race_then_panic);
    let f = found.failure().expect("the assertion fails without the detector");
    assert_eq!(f.kind, pctvb::FailureKind::Panic, "{f}");
    let token = f.token.clone().expect("a token");
    for config in [Config::new().ignore_env(), Config::new().ignore_env().race_detection(true)] {
        let replay = config.replay(token.clone()).run(race_then_panic);
        let again = replay.failure().unwrap_or_else(|| panic!("{:?}", replay.error()));
        assert_eq!(fingerprint(again), fingerprint(f));
    }
}

/// The same through a regression file: a failure saved by a run without the detector is
/// replayed first by a later run with it, which reported a data race as the saved failure
/// that "still fails". Seed fixed.
#[test]
fn a_saved_failure_recorded_without_the_race_detector_replays_as_saved() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pctvb-replay-fidelity-{}", std::process::id()));
    let file = dir.join("race_then_panic.txt");
    let _ = std::fs::remove_file(&file);
    let config = || Config::new().ignore_env().seed(3).iterations(200).regressions(&file);
    let found = config().race_detection(false).run(race_then_panic);
    let f = found.failure().expect("found without the detector");
    assert_eq!(f.kind, pctvb::FailureKind::Panic, "{f}");
    let later = config().run(race_then_panic);
    let again = later.failure().expect("the saved failure still fails");
    assert!(later.notes.iter().any(|n| n.contains("still fails")), "{:?}", later.notes);
    assert_eq!(fingerprint(again), fingerprint(f));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Spawns more threads than a small `max_threads` allows.
fn five_threads() {
    let hs: Vec<_> = (0..5).map(|_| thread::spawn(|| {})).collect();
    for h in hs {
        h.join().unwrap();
    }
}

/// A failure of a limit (a livelock or a runaway at `max_steps`, too many threads for
/// `max_threads`) replayed under the default limit ran on past the recorded end and diverged
/// (a token given in code, `Config::replay`, with a configuration of its own): the limit is
/// the failure, and the token did not carry it. It does now. Seeds fixed.
#[test]
fn a_limits_failure_replays_under_the_limit_it_was_recorded_with() {
    let cases: [(&str, Config, fn()); 2] = [
        ("livelock", Config::new().max_steps(3000), conditional_flag_livelock),
        ("threads", Config::new().max_threads(4), five_threads),
    ];
    for (what, config, body) in cases {
        let found = config.ignore_env().seed(7).iterations(300).run(body);
        let f = found.failure().unwrap_or_else(|| panic!("{what}: not found"));
        let token = f.token.clone().expect("a token");
        let replay = Config::new().ignore_env().replay(token).run(body);
        let again = replay.failure().unwrap_or_else(|| panic!("{what}: {:?}", replay.error()));
        assert_eq!(fingerprint(again), fingerprint(f), "{what}");
    }
}

// ---------------------------------------------------------------------------------------------
// The replay line, run as printed in a fresh process.
// ---------------------------------------------------------------------------------------------

/// The program `line_target` runs, by name, in the process the test below starts.
const PROGRAM_VAR: &str = "PCTVB_FIDELITY_PROGRAM";
const FINGERPRINT_BEGIN: &str = "FIDELITY-FINGERPRINT-BEGIN";
const FINGERPRINT_END: &str = "FIDELITY-FINGERPRINT-END";
const LINE_MARK: &str = "FIDELITY-LINE ";

/// Run only in a process `the_replay_line_run_as_printed_reproduces_the_failure` starts:
/// searches (or replays, as `PCTVB_*` says) the program `PCTVB_FIDELITY_PROGRAM` names, as a
/// named test that reads the environment, and prints its failure and replay line.
#[test]
#[ignore = "started by the_replay_line_run_as_printed_reproduces_the_failure"]
fn line_target() {
    let Ok(program) = std::env::var(PROGRAM_VAR) else { return };
    let (_, body) = PROGRAMS.iter().find(|(n, _)| *n == program).expect("a program");
    let report = Config::new()
        .name("replay_fidelity::line_target")
        .iterations(300)
        .max_steps(3000)
        .run(*body);
    if let Some(e) = report.error() {
        println!("FIDELITY-ERROR {e}");
    }
    if let Some(f) = report.failure() {
        println!("{FINGERPRINT_BEGIN}\n{}{FINGERPRINT_END}", fingerprint(f));
        println!("{LINE_MARK}{}", f.replay_command.as_deref().unwrap_or(""));
    }
    println!("FIDELITY-REPLAYED {}", report.replayed);
}

/// Starts this test binary with `env` (and no other `PCTVB_*`) and `args`; its stdout.
fn run_self(env: &[(String, String)], args: &[String]) -> String {
    let mut cmd = std::process::Command::new(std::env::current_exe().expect("this binary"));
    for (k, _) in std::env::vars() {
        if k.starts_with("PCTVB_") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v))).args(args).arg("--ignored").arg("--nocapture");
    let out = cmd.output().expect("the test binary runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What `line_target` printed: the failure's fingerprint and its replay line.
fn printed(out: &str) -> (Option<String>, Option<String>) {
    let fp = out.split_once(FINGERPRINT_BEGIN).and_then(|(_, rest)| {
        rest.split_once(FINGERPRINT_END).map(|(fp, _)| fp.trim_start_matches('\n').to_string())
    });
    let line = out.lines().find_map(|l| l.strip_prefix(LINE_MARK)).map(str::to_string);
    (fp, line)
}

/// The line `PCTVB_RACES=0 PCTVB_REPLAY=... cargo test -- --exact <test>` as the environment
/// it sets and the harness arguments after `--`.
fn parse_line(line: &str) -> (Vec<(String, String)>, Vec<String>) {
    let words: Vec<&str> = line.split_whitespace().collect();
    let env = words
        .iter()
        .take_while(|w| **w != "cargo")
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let args = match words.iter().position(|w| *w == "--") {
        Some(i) => words[i + 1..].iter().map(|w| w.to_string()).collect(),
        None => Vec::new(),
    };
    (env, args)
}

/// The replay line, run as printed (its environment, its harness arguments) in a fresh
/// process of this binary, reproduces the failure its run found: the detector's setting from
/// `PCTVB_RACES`, the virtual clock, a livelock's limit included. Seed fixed (`PCTVB_SEED=7`).
#[test]
fn the_replay_line_run_as_printed_reproduces_the_failure() {
    let cases = [
        ("atomic_lost_update", None),
        ("cell_race", Some("0")),
        ("cell_race", Some("1")),
        ("timed_recv", None),
        ("conditional_flag_livelock", Some("0")),
        ("async_cell_race", Some("0")),
    ];
    let mut problems = Vec::new();
    for (program, races) in cases {
        let case = format!("{program} PCTVB_RACES={races:?}");
        let mut env = vec![
            (PROGRAM_VAR.to_string(), program.to_string()),
            ("PCTVB_SEED".to_string(), "7".to_string()),
        ];
        if let Some(r) = races {
            env.push(("PCTVB_RACES".to_string(), r.to_string()));
        }
        let target = vec!["--exact".to_string(), "line_target".to_string()];
        let out = run_self(&env, &target);
        let (Some(found), Some(line)) = printed(&out) else {
            problems.push(format!("{case}: no failure found:\n{out}"));
            continue;
        };
        if let Some(r) = races {
            if !line.starts_with(&format!("PCTVB_RACES={r} PCTVB_REPLAY=")) {
                problems.push(format!("{case}: the line does not carry PCTVB_RACES: {line}"));
            }
        }
        let (mut line_env, args) = parse_line(&line);
        line_env.push((PROGRAM_VAR.to_string(), program.to_string()));
        let out = run_self(&line_env, &args);
        match printed(&out) {
            (Some(again), _) if again == found && out.contains("FIDELITY-REPLAYED true") => {}
            (Some(again), _) => {
                problems.push(format!("{case}: replayed\n{again}\nnot\n{found}\nby {line}"))
            }
            (None, _) => problems.push(format!("{case}: the line did not fail: {line}\n{out}")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

// ---------------------------------------------------------------------------------------------
// A token too long for a command line.
// ---------------------------------------------------------------------------------------------

/// Set in the process the test below starts: `long_line_target` runs only there.
const LONG_VAR: &str = "PCTVB_FIDELITY_LONG";
const LONG_MARK: &str = "LONG-FAILURE ";

/// Two threads that each wait, yielding, for a flag only the other sets after its own wait: a
/// livelock in every schedule. The yields switch threads at every step, so the token grows
/// with `max_steps` (about 3 characters for 4 steps): past 100,000 characters at 200,000.
fn mutual_wait_livelock() {
    let flags = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
    let f2 = flags.clone();
    let h = thread::spawn(move || {
        while !f2[0].load(SeqCst) {
            thread::yield_now();
        }
        f2[1].store(true, SeqCst);
    });
    while !flags[1].load(SeqCst) {
        thread::yield_now();
    }
    flags[0].store(true, SeqCst);
    h.join().unwrap();
}

/// Run only in a process `a_token_too_long_for_a_command_line_is_replayed_from_its_file`
/// starts: searches (or replays, as `PCTVB_REPLAY` says) the livelock with a step limit whose
/// token is too long for a command line, and prints the failure and its replay line.
#[test]
#[ignore = "started by a_token_too_long_for_a_command_line_is_replayed_from_its_file"]
fn long_line_target() {
    if std::env::var_os(LONG_VAR).is_none() {
        return;
    }
    let report = Config::new()
        .name("replay_fidelity::long_line_target")
        .iterations(1)
        .max_steps(200_000)
        .run(mutual_wait_livelock);
    if let Some(e) = report.error() {
        println!("FIDELITY-ERROR {e}");
    }
    if let Some(f) = report.failure() {
        let first = f.message.lines().next().unwrap_or("");
        let steps = f.schedule.len();
        println!("{LONG_MARK}{:?} execution {} steps {steps}: {first}", f.kind, f.execution);
        println!("{LINE_MARK}{}", f.replay_command.as_deref().unwrap_or(""));
        let text = f.to_string();
        let says = text.contains("is too long for a command line: PCTVB_REPLAY=@<file> reads it");
        println!("LONG-SAYS-WHY {says}");
    }
    println!("FIDELITY-REPLAYED {}", report.replayed);
}

/// A token longer than the 128 KiB Linux takes for one environment string (`MAX_ARG_STRLEN`)
/// made a replay line the shell refused ("Argument list too long"): such a token is written
/// to a file, and the line, short, reads it from there (`PCTVB_REPLAY=@<path>`); run as
/// printed in a fresh process, it reproduces the failure. A file that is missing or holds no
/// token is an error naming `PCTVB_REPLAY` and the path.
#[test]
fn a_token_too_long_for_a_command_line_is_replayed_from_its_file() {
    let long = (LONG_VAR.to_string(), "1".to_string());
    let target = vec!["--exact".to_string(), "long_line_target".to_string()];
    let seed = ("PCTVB_SEED".to_string(), "7".to_string());
    let out = run_self(&[long.clone(), seed], &target);
    let found = out.lines().find(|l| l.starts_with(LONG_MARK));
    let line = out.lines().find_map(|l| l.strip_prefix(LINE_MARK));
    let (Some(found), Some(line)) = (found, line) else { panic!("no failure found:\n{out}") };
    assert!(found.contains("Livelock"), "{found}");
    let limit = pctvb::__internals::replay::INLINE_LIMIT;
    assert!(line.len() < 1000, "the line is {} bytes long: {:.300}...", line.len(), line);
    let path = line
        .strip_prefix("PCTVB_REPLAY=@")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("the line does not read the token from a file: {line:.300}"));
    assert!(line.ends_with("-- --exact long_line_target"), "{line}");
    assert!(out.contains("LONG-SAYS-WHY true"), "the report says why the line has no token");
    let token = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(token.trim().len() > limit, "a {}-byte token went to a file", token.trim().len());
    let decoded = decode(&token).expect("the file holds the token");
    assert_eq!(decoded.test, "replay_fidelity::long_line_target");

    // Run as printed: the same failure, replayed.
    let (mut env, args) = parse_line(line);
    env.push(long.clone());
    let again = run_self(&env, &args);
    let replayed = again.lines().find(|l| l.starts_with(LONG_MARK));
    assert_eq!(replayed, Some(found), "the line did not reproduce the failure:\n{again}");
    assert!(again.contains("FIDELITY-REPLAYED true"), "{again}");

    // Given to another test that this run does not include, the error's line for the token's
    // own test reads the file too.
    let program = (PROGRAM_VAR.to_string(), "atomic_lost_update".to_string());
    let other = vec!["--exact".to_string(), "line_target".to_string()];
    let out = run_self(&[program, ("PCTVB_REPLAY".to_string(), format!("@{path}"))], &other);
    assert!(out.contains("FIDELITY-ERROR PCTVB_REPLAY holds a token recorded for"), "{out:.2000}");
    let line = out.lines().map(str::trim).find(|l| l.starts_with("PCTVB_REPLAY="));
    let line = line.unwrap_or_else(|| panic!("no line in the error:\n{out:.2000}"));
    assert!(line.starts_with("PCTVB_REPLAY=@") && line.len() < 1000, "{line:.300}");
    assert!(line.ends_with("-- --exact long_line_target"), "{line:.300}");

    // A missing file, and a file without a token: errors naming the variable and the path.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pctvb-long-token-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let garbage = dir.join("garbage.token");
    std::fs::write(&garbage, "not a token\n").unwrap();
    let missing = dir.join("missing.token");
    let unreadable = format!(
        "names a file to read the replay token from, but cannot read the token file {}: ",
        missing.display()
    );
    for (file, why) in [(&missing, &unreadable[..]), (&garbage, "(the file's text): ")] {
        let value = format!("@{}", file.display());
        let env = [long.clone(), ("PCTVB_REPLAY".to_string(), value.clone())];
        let out = run_self(&env, &target);
        let error = out.lines().find_map(|l| l.strip_prefix("FIDELITY-ERROR "));
        let error = error.unwrap_or_else(|| panic!("{value}: no error:\n{out}"));
        assert!(error.contains(&format!("PCTVB_REPLAY={value}")), "{error}");
        assert!(error.contains(why), "{error}");
        assert!(!out.contains(LONG_MARK), "{value} searched:\n{out}");
        // The same value in code.
        let report = Config::new().ignore_env().replay(value.clone()).run(mutual_wait_livelock);
        match report.error() {
            Some(pctvb::Error::Token { origin, message }) => {
                assert_eq!(origin, &format!("Config::replay(\"{value}\")"));
                assert!(message.contains(why), "{message}");
            }
            other => panic!("{value} in code: expected a token error, got {other:?}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
