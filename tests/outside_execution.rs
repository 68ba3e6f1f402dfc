//! Outside any execution (plain `#[test]`s, setup code shared with production), pctvb's
//! primitives behave like std's: real locks, real waits, real OS threads. And an object used
//! both outside and inside executions keeps its data and lock across the two worlds, while
//! one-time values (`OnceLock`, `LazyLock`, `Once`) are separate in each.

use std::time::{Duration, Instant};

use pctvb::sync::atomic::{AtomicUsize, Ordering};
use pctvb::sync::mpsc;
use pctvb::sync::{Arc, Barrier, Condvar, LazyLock, Mutex, Once, OnceLock, RwLock, TryLockError};
use pctvb::{thread, Config, StrategyKind};

// The endpoints are `Send`/`Sync` as std's (a `Receiver` is not `Sync`: see
// compile-tests/tests/ui/receiver_not_sync.rs).
const _: () = {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    let _ = send_sync::<mpsc::Sender<u32>>;
    let _ = send_sync::<mpsc::SyncSender<u32>>;
    let _ = send::<mpsc::Receiver<u32>>;
    let _ = send_sync::<Mutex<u32>>;
    let _ = send_sync::<OnceLock<u32>>;
};

#[test]
fn a_mutex_counts_right_on_two_os_threads() {
    static COUNT: Mutex<u64> = Mutex::new(0);
    let handles: Vec<_> = (0..2)
        .map(|_| {
            // Outside executions `thread::spawn` starts a real OS thread.
            thread::spawn(|| {
                for _ in 0..20_000 {
                    let mut g = COUNT.lock().unwrap();
                    let v = *g;
                    std::hint::spin_loop();
                    *g = v + 1;
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(*COUNT.lock().unwrap(), 40_000);
}

#[test]
fn a_condvar_hands_off_between_os_threads() {
    let pair = Arc::new((Mutex::new(None::<u32>), Condvar::new()));
    let theirs = pair.clone();
    let h = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        let (m, cv) = &*theirs;
        *m.lock().unwrap() = Some(7);
        cv.notify_one();
    });
    let (m, cv) = &*pair;
    let g = cv.wait_while(m.lock().unwrap(), |v| v.is_none()).unwrap();
    assert_eq!(*g, Some(7));
    drop(g);
    h.join().unwrap();

    // A timed wait with nobody to notify times out after the real timeout.
    let start = Instant::now();
    let (g, result) = cv.wait_timeout(m.lock().unwrap(), Duration::from_millis(30)).unwrap();
    assert!(!result.timed_out() || start.elapsed() >= Duration::from_millis(25));
    assert_eq!(*g, Some(7));
}

#[test]
fn a_rwlock_shares_readers_and_excludes_writers() {
    let lock = Arc::new(RwLock::new(0u64));
    std::thread::scope(|s| {
        for _ in 0..2 {
            let lock = lock.clone();
            s.spawn(move || {
                for _ in 0..5_000 {
                    *lock.write().unwrap() += 1;
                    let r1 = lock.read().unwrap();
                    let r2 = lock.read().unwrap();
                    assert_eq!(*r1, *r2);
                }
            });
        }
    });
    assert_eq!(*lock.read().unwrap(), 10_000);
    let w = lock.write().unwrap();
    assert!(matches!(lock.try_read(), Err(TryLockError::WouldBlock)));
    drop(w);
    assert!(lock.try_write().is_ok());
}

#[test]
fn locking_twice_on_one_os_thread_is_reported() {
    let m = Mutex::new(0);
    let g = m.lock().unwrap();
    assert!(matches!(m.try_lock(), Err(TryLockError::WouldBlock)));
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(m.lock())))
        .expect_err("a recursive lock panics instead of deadlocking");
    let message = err.downcast_ref::<String>().unwrap();
    assert!(message.contains("already holds it"), "{message}");
    drop(g);
    assert_eq!(*m.lock().unwrap(), 0);
}

#[test]
fn atomics_once_and_lazy_work_outside() {
    static HITS: AtomicUsize = AtomicUsize::new(0);
    static ONCE: Once = Once::new();
    static LAZY: LazyLock<usize> = LazyLock::new(|| HITS.fetch_add(1, Ordering::SeqCst) + 100);
    ONCE.call_once(|| {
        HITS.fetch_add(1, Ordering::SeqCst);
    });
    ONCE.call_once(|| panic!("runs once"));
    assert!(ONCE.is_completed());
    assert_eq!(*LAZY, 101);
    assert_eq!(*LAZY, 101);
    assert_eq!(HITS.load(Ordering::SeqCst), 2);
    let cell = OnceLock::new();
    assert_eq!(cell.get(), None);
    assert_eq!(cell.set(3), Ok(()));
    assert_eq!(cell.set(4), Err(4));
    assert_eq!(cell.into_inner(), Some(3));
}

#[test]
fn channels_work_between_os_threads() {
    let (tx, rx) = mpsc::channel();
    let producers: Vec<_> = (0..2)
        .map(|p| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for i in 0..1000 {
                    tx.send(p * 1000 + i).unwrap();
                }
            })
        })
        .collect();
    drop(tx);
    let mut got: Vec<u32> = rx.iter().collect();
    for p in producers {
        p.join().unwrap();
    }
    got.sort_unstable();
    assert_eq!(got, (0..2000).collect::<Vec<_>>());
    assert_eq!(rx.recv(), Err(mpsc::RecvError));

    // Rendezvous: the send returns once the receiver took the message.
    let (tx, rx) = mpsc::sync_channel(0);
    let h = std::thread::spawn(move || {
        tx.send(1).unwrap();
        tx.send(2).unwrap();
    });
    assert_eq!(rx.recv(), Ok(1));
    assert_eq!(rx.recv(), Ok(2));
    h.join().unwrap();

    let (tx, rx) = mpsc::sync_channel::<u8>(1);
    tx.try_send(1).unwrap();
    assert_eq!(tx.try_send(2), Err(mpsc::TrySendError::Full(2)));
    assert_eq!(rx.recv_timeout(Duration::from_millis(5)), Ok(1));
    assert_eq!(rx.recv_timeout(Duration::from_millis(5)), Err(mpsc::RecvTimeoutError::Timeout));
    drop(rx);
    assert_eq!(tx.send(3), Err(mpsc::SendError(3)));
}

#[test]
fn threads_barriers_and_parking_are_std_s() {
    let barrier = Arc::new(Barrier::new(3));
    let leaders = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..3)
        .map(|i| {
            let (barrier, leaders) = (barrier.clone(), leaders.clone());
            thread::Builder::new()
                .name(format!("worker-{i}"))
                .spawn(move || {
                    assert_eq!(thread::current().name(), Some(format!("worker-{i}").as_str()));
                    if barrier.wait().is_leader() {
                        leaders.fetch_add(1, Ordering::SeqCst);
                    }
                })
                .unwrap()
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(leaders.load(Ordering::SeqCst), 1);

    let parked = thread::spawn(|| {
        thread::park();
        5
    });
    thread::sleep(Duration::from_millis(10));
    thread::yield_now();
    parked.thread().unpark();
    assert_eq!(parked.join().unwrap(), 5);

    let mut data = [1, 2, 3];
    thread::scope(|s| {
        let (a, b) = data.split_at_mut(1);
        s.spawn(|| a[0] += 10);
        let h = s.spawn(|| b.iter().sum::<i32>());
        assert_eq!(h.join().unwrap(), 5);
    });
    assert_eq!(data, [11, 2, 3]);

    pctvb::thread_local! {
        static LOCAL: std::cell::Cell<u32> = std::cell::Cell::new(0);
    }
    LOCAL.with(|c| c.set(4));
    let other = std::thread::spawn(|| LOCAL.with(|c| c.get())).join().unwrap();
    assert_eq!((LOCAL.with(|c| c.get()), other), (4, 0));
}

/// Outside executions a scope is std's: it waits for the OS threads scoped threads spawn on
/// it too, 2 and 3 deep, and when its closure panics.
#[test]
fn an_os_scope_waits_for_the_threads_its_scoped_threads_spawn() {
    fn chain<'scope>(
        s: &'scope thread::Scope<'scope, '_>,
        depth: usize,
        done: &'scope AtomicUsize,
    ) {
        s.spawn(move || {
            if depth > 1 {
                chain(s, depth - 1, done);
            }
            // Long enough that a scope that did not wait would return first.
            std::thread::sleep(Duration::from_millis(20));
            done.fetch_add(1, Ordering::SeqCst);
        });
    }
    for depth in [2, 3] {
        let done = AtomicUsize::new(0);
        thread::scope(|s| chain(s, depth, &done));
        assert_eq!(done.load(Ordering::SeqCst), depth);
        let done = AtomicUsize::new(0);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            thread::scope(|s| {
                chain(s, depth, &done);
                panic!("the scope's closure panics");
            })
        }));
        assert!(caught.is_err());
        assert_eq!(done.load(Ordering::SeqCst), depth);
    }
}

#[test]
fn an_object_used_outside_and_inside_keeps_its_data_and_lock() {
    static M: Mutex<u64> = Mutex::new(0);
    *M.lock().unwrap() += 1;
    // An OS thread holds the lock while the run starts: the execution that locks it waits for
    // the real lock (timing only), then goes on.
    let held = M.lock().unwrap();
    let report = std::thread::scope(|s| {
        let run = s.spawn(|| {
            Config::new().ignore_env().seed(1).iterations(50).workers(1).run(|| {
                *M.lock().unwrap() += 1;
            })
        });
        std::thread::sleep(Duration::from_millis(20));
        drop(held);
        run.join().unwrap()
    });
    assert!(report.is_ok(), "{}", report.failure().unwrap());
    // A one-thread body has one schedule, so the run stops after its first execution; every
    // execution it ran added one to the data the outside world sees.
    assert!(report.executions >= 1);
    assert_eq!(*M.lock().unwrap(), 1 + report.executions, "the data is shared by both worlds");
}

#[test]
fn one_time_values_are_separate_outside_and_inside() {
    static CELL: OnceLock<u32> = OnceLock::new();
    CELL.set(1).unwrap();
    let report = Config::new()
        .ignore_env()
        .seed(2)
        .strategy(StrategyKind::Random)
        .iterations(20)
        .workers(1)
        .run(|| {
            // Inside, every execution starts with an empty cell of its own.
            assert_eq!(CELL.get(), None);
            CELL.set(2).unwrap();
            assert_eq!(CELL.get(), Some(&2));
        });
    assert!(report.is_ok(), "{}", report.failure().unwrap());
    assert_eq!(CELL.get(), Some(&1), "the outside value is untouched");
    assert_eq!(CELL.wait(), &1);

    // So a `wait` inside does not see a value or a completion made outside: with no thread to
    // make one, it waits for good, a deadlock.
    static DONE: Once = Once::new();
    DONE.call_once(|| ());
    DONE.wait();
    for wait_once in [true, false] {
        let report = Config::new().ignore_env().seed(2).iterations(5).workers(1).run(|| {
            if wait_once {
                DONE.wait();
            } else {
                CELL.wait();
            }
        });
        let failure = report.failure().expect("nothing initializes the execution's own");
        assert!(failure.message.contains("and no thread initializes it"), "{failure}");
    }
}

/// `LazyLock::get`, `get_mut` and `force_mut` (std 1.94) see the value of their world: forced
/// outside, a `LazyLock` is still unforced inside every execution, and forcing it mutably
/// inside does not change the outside value. `OnceLock`'s `Clone` and `PartialEq` too.
#[test]
fn lazy_lock_get_and_force_mut_see_their_world_s_value() {
    static LAZY: LazyLock<u32> = LazyLock::new(|| 1);
    assert_eq!(LazyLock::get(&LAZY), None);
    assert_eq!(*LAZY, 1);
    assert_eq!(LazyLock::get(&LAZY), Some(&1));
    let mut own = LazyLock::new(|| vec![1]);
    LazyLock::force_mut(&mut own).push(2);
    assert_eq!(LazyLock::get_mut(&mut own).map(|v| v.len()), Some(2));
    let cell = OnceLock::from(3);
    assert!(cell.clone() == cell);

    let own = std::sync::Mutex::new(own);
    let report = Config::new().ignore_env().seed(4).iterations(20).workers(1).run(|| {
        assert_eq!(LazyLock::get(&LAZY), None, "forced outside, not inside");
        let mut own = own.lock().unwrap();
        assert_eq!(LazyLock::get_mut(&mut own), None, "the execution's own value");
        LazyLock::force_mut(&mut own).push(9);
        assert_eq!(**own, [1, 9]);
        assert!(cell.clone() == OnceLock::new(), "the cell is empty inside");
    });
    assert!(report.is_ok(), "{}", report.failure().unwrap());
    assert_eq!(*own.lock().unwrap().as_slice(), [1, 2], "the outside value is untouched");
}

/// `Builder::spawn_unchecked` (std 1.82) outside executions starts an OS thread, which may
/// borrow the spawner's stack; `spawn_scoped` takes the builder's name and stack size there.
#[test]
fn unchecked_and_scoped_builder_threads_are_os_threads_outside() {
    let mut data = vec![1];
    let os_thread = std::thread::current().id();
    let borrowed = &mut data;
    // SAFETY: joined below, before `data` is used again.
    let h = unsafe {
        thread::Builder::new().name("unchecked".into()).spawn_unchecked(move || {
            borrowed.push(2);
            (std::thread::current().id(), std::thread::current().name().map(str::to_owned))
        })
    };
    let (id, name) = h.unwrap().join().unwrap();
    assert_ne!(id, os_thread);
    assert_eq!((name.as_deref(), data), (Some("unchecked"), vec![1, 2]));

    // A stack of 32 MiB holds a 3 MiB array (a few copies of it, unoptimized) that std's
    // default 2 MiB thread stack would not.
    let big = thread::scope(|s| {
        let h =
            thread::Builder::new().name("big".into()).stack_size(32 << 20).spawn_scoped(s, || {
                let a = std::hint::black_box([1u8; 3 << 20]);
                (
                    a.iter().map(|&b| b as usize).sum::<usize>(),
                    std::thread::current().name().map(str::to_owned),
                )
            });
        h.unwrap().join().unwrap()
    });
    assert_eq!(big, (3 << 20, Some("big".to_string())));
}
