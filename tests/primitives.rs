//! The std-mirroring primitives behave as std's under every explored schedule: correct programs
//! pass every execution (no false alarms), with fixed seeds.

use std::collections::VecDeque;
use std::time::Duration;

use pctvb::sync::atomic::{AtomicUsize, Ordering};
use pctvb::sync::{mpsc, Arc, Barrier, Condvar, LazyLock, Mutex, Once, OnceLock, RwLock};
use pctvb::{thread, Config};

fn passes(iterations: u64, body: impl Fn() + Sync) {
    let report = Config::new().ignore_env().seed(0xc0ffee).iterations(iterations).run(body);
    assert!(report.is_ok(), "unexpected failure:\n{}", report.failure().unwrap());
    assert_eq!(report.executions, iterations);
    assert!(report.stats.distinct_schedules > 1, "the schedule must vary");
}

#[test]
fn producer_consumer_with_condvar_never_fails() {
    passes(1000, || {
        let shared = Arc::new((Mutex::new(VecDeque::new()), Condvar::new()));
        let producer = {
            let shared = shared.clone();
            thread::spawn(move || {
                for i in 0..3 {
                    let (queue, ready) = &*shared;
                    queue.lock().unwrap().push_back(i);
                    ready.notify_one();
                }
            })
        };
        let (queue, ready) = &*shared;
        let mut got = Vec::new();
        while got.len() < 3 {
            let mut q = ready.wait_while(queue.lock().unwrap(), |q| q.is_empty()).unwrap();
            got.extend(q.drain(..));
        }
        producer.join().unwrap();
        assert_eq!(got, vec![0, 1, 2]);
    });
}

#[test]
fn mpsc_channels_deliver_everything_in_order() {
    passes(1000, || {
        let (tx, rx) = mpsc::channel();
        let tx2 = tx.clone();
        let a = thread::spawn(move || {
            for i in 0..3 {
                tx.send(i).unwrap();
            }
        });
        let b = thread::spawn(move || {
            for i in 10..13 {
                tx2.send(i).unwrap();
            }
        });
        let got: Vec<i32> = rx.iter().collect();
        a.join().unwrap();
        b.join().unwrap();
        let (small, big): (Vec<i32>, Vec<i32>) = got.iter().partition(|&&x| x < 10);
        assert_eq!(small, vec![0, 1, 2]);
        assert_eq!(big, vec![10, 11, 12]);
    });
}

#[test]
fn sync_channels_bounded_and_rendezvous() {
    for bound in [0, 1, 2] {
        passes(500, move || {
            let (tx, rx) = mpsc::sync_channel(bound);
            let sent = Arc::new(AtomicUsize::new(0));
            let s2 = sent.clone();
            let p = thread::spawn(move || {
                for i in 0..4 {
                    tx.send(i).unwrap();
                    s2.fetch_add(1, Ordering::SeqCst);
                }
            });
            for i in 0..4 {
                assert_eq!(rx.recv().unwrap(), i);
                // A bounded channel never lets the producer run further ahead than its bound.
                assert!(sent.load(Ordering::SeqCst) <= i + 1 + bound);
            }
            p.join().unwrap();
            assert!(rx.recv().is_err(), "disconnected after the sender is dropped");
        });
    }
}

#[test]
fn barrier_releases_all_and_elects_one_leader() {
    passes(1000, || {
        let barrier = Arc::new(Barrier::new(3));
        let before = Arc::new(AtomicUsize::new(0));
        let leaders = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..3)
            .map(|_| {
                let (barrier, before, leaders) = (barrier.clone(), before.clone(), leaders.clone());
                thread::spawn(move || {
                    before.fetch_add(1, Ordering::SeqCst);
                    if barrier.wait().is_leader() {
                        leaders.fetch_add(1, Ordering::SeqCst);
                    }
                    assert_eq!(before.load(Ordering::SeqCst), 3, "nobody passes early");
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(leaders.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn rwlock_readers_share_writers_exclude() {
    passes(1000, || {
        let lock = Arc::new(RwLock::new((0, 0)));
        let writer = {
            let lock = lock.clone();
            thread::spawn(move || {
                for _ in 0..2 {
                    let mut g = lock.write().unwrap();
                    g.0 += 1;
                    g.1 += 1;
                }
            })
        };
        let reader = {
            let lock = lock.clone();
            thread::spawn(move || {
                for _ in 0..2 {
                    let g = lock.read().unwrap();
                    assert_eq!(g.0, g.1, "a reader never sees half a write");
                }
            })
        };
        writer.join().unwrap();
        reader.join().unwrap();
        assert_eq!(*lock.read().unwrap(), (2, 2));
    });
}

static CALLS: LazyLock<AtomicUsize> = LazyLock::new(|| AtomicUsize::new(0));
static CONFIG: OnceLock<String> = OnceLock::new();

#[test]
fn statics_are_fresh_in_every_execution() {
    passes(200, || {
        // If state leaked between executions, these would count up across them.
        assert_eq!(CALLS.fetch_add(1, Ordering::SeqCst), 0);
        assert!(CONFIG.get().is_none());
        CONFIG.set("set".to_string()).unwrap();
        let h = thread::spawn(|| CALLS.fetch_add(1, Ordering::SeqCst));
        h.join().unwrap();
        assert_eq!(CALLS.load(Ordering::SeqCst), 2);
    });
}

#[test]
fn once_runs_its_initializer_exactly_once_per_execution() {
    passes(500, || {
        let once = Arc::new(Once::new());
        let runs = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let (once, runs) = (once.clone(), runs.clone());
                thread::spawn(move || {
                    once.call_once(|| {
                        runs.fetch_add(1, Ordering::SeqCst);
                    });
                    assert!(once.is_completed());
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    });
}

/// The message of a caught panic.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

const POISONED: &str = "Once instance has previously been poisoned";

#[test]
fn a_once_poisoned_by_a_caught_panic_panics_as_std_not_a_deadlock() {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    passes(500, || {
        let once = Arc::new(Once::new());
        let spawn = |init_panics: bool| {
            let once = once.clone();
            thread::spawn(move || {
                catch_unwind(AssertUnwindSafe(|| {
                    once.call_once(|| {
                        if init_panics {
                            panic!("init failed");
                        }
                    })
                }))
                .map_err(|p| panic_message(&*p))
            })
        };
        let (panicking, waiting) = (spawn(true), spawn(false));
        let (a, b) = (panicking.join().unwrap(), waiting.join().unwrap());
        match (&a, &b) {
            // The panicking initializer ran first: the other call (blocked on it or later)
            // panics with std's message.
            (Err(first), Err(second)) => {
                assert_eq!(first, "init failed");
                assert_eq!(second, POISONED);
                assert!(!once.is_completed());
                let mut saw_poison = false;
                once.call_once_force(|state| saw_poison = state.is_poisoned());
                assert!(saw_poison, "call_once_force runs again and sees the poison");
                assert!(once.is_completed());
                once.call_once(|| unreachable!("completed"));
            }
            // The other initializer ran first: nothing panics.
            (Ok(()), Ok(())) => assert!(once.is_completed()),
            _ => panic!("unexpected outcome {a:?} {b:?}"),
        }
    });
}

#[test]
fn a_poisoned_once_outside_executions_is_stds() {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    let once = Once::new();
    let first = catch_unwind(AssertUnwindSafe(|| once.call_once(|| panic!("init failed"))));
    assert!(first.is_err());
    let second = catch_unwind(AssertUnwindSafe(|| once.call_once(|| ())));
    assert_eq!(panic_message(&*second.unwrap_err()), POISONED);
    let third = catch_unwind(AssertUnwindSafe(|| once.wait()));
    assert_eq!(panic_message(&*third.unwrap_err()), POISONED, "std's `wait` on a poisoned Once");
    let mut saw_poison = false;
    once.call_once_force(|state| saw_poison = state.is_poisoned());
    assert!(saw_poison && once.is_completed());
    once.wait();
    once.wait_force();
}

#[test]
fn once_and_once_lock_wait_until_another_thread_initializes_them() {
    // Inside executions (fixed seed): the waiters may run before, during or after the
    // initialization, and return only after it, with the value.
    passes(500, || {
        let once = Arc::new(Once::new());
        let cell = Arc::new(OnceLock::new());
        let waiters: Vec<_> = (0..2)
            .map(|i| {
                let (once, cell) = (once.clone(), cell.clone());
                thread::spawn(move || {
                    if i == 0 {
                        once.wait();
                    } else {
                        once.wait_force();
                    }
                    assert!(once.is_completed(), "`wait` returned before the completion");
                    *cell.wait()
                })
            })
            .collect();
        once.call_once(|| ());
        cell.get_or_init(|| 5u32);
        for w in waiters {
            assert_eq!(w.join().unwrap(), 5);
        }
        once.wait();
        assert_eq!(cell.wait(), &5);
    });
    // Outside executions: std's, between OS threads.
    let once = Arc::new(Once::new());
    let cell = Arc::new(OnceLock::new());
    let (o, c) = (once.clone(), cell.clone());
    let waiter = thread::spawn(move || {
        o.wait();
        *c.wait()
    });
    std::thread::sleep(Duration::from_millis(10));
    once.call_once(|| ());
    cell.set(9u32).unwrap();
    assert_eq!(waiter.join().unwrap(), 9);
    once.wait_force();
}

/// As std's: `Once::wait` panics on a poisoned `Once`, also one poisoned while it waits;
/// `wait_force` waits on until `call_once_force` completes it; `OnceLock::wait` is not ended
/// by a panicking initializer.
#[test]
fn once_wait_panics_on_poison_and_wait_force_waits_on() {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::AtomicUsize as StdAtomic;
    // How many executions' waiter saw the poison, and how many the completion.
    static OUTCOMES: [StdAtomic; 2] = [StdAtomic::new(0), StdAtomic::new(0)];
    passes(500, || {
        let once = Arc::new(Once::new());
        let cell = Arc::new(OnceLock::new());
        let (o, c) = (once.clone(), cell.clone());
        let waiter = thread::spawn(move || {
            let waited = catch_unwind(AssertUnwindSafe(|| o.wait()));
            // A panicking initializer leaves the cell empty: its waiter waits on.
            let value = *c.wait();
            (waited.map_err(|p| panic_message(&*p)), value)
        });
        let o = once.clone();
        let forced = thread::spawn(move || {
            o.wait_force();
            o.is_completed()
        });
        let first = catch_unwind(AssertUnwindSafe(|| once.call_once(|| panic!("init failed"))));
        assert!(first.is_err());
        let second = catch_unwind(AssertUnwindSafe(|| once.wait()));
        assert_eq!(panic_message(&*second.unwrap_err()), POISONED);
        let empty = catch_unwind(AssertUnwindSafe(|| cell.get_or_init(|| panic!("no value"))));
        assert!(empty.is_err() && cell.get().is_none());
        once.call_once_force(|state| assert!(state.is_poisoned()));
        cell.set(1u8).unwrap();
        assert!(forced.join().unwrap(), "wait_force returns only once the Once completes");
        let (waited, value) = waiter.join().unwrap();
        assert_eq!(value, 1);
        match waited {
            Ok(()) => OUTCOMES[1].fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            Err(m) => {
                assert_eq!(m, POISONED);
                OUTCOMES[0].fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            }
        };
    });
    let [poisoned, completed] =
        OUTCOMES.each_ref().map(|n| n.load(std::sync::atomic::Ordering::Relaxed));
    assert!(poisoned > 0 && completed > 0, "both outcomes occur: {poisoned} {completed}");
}

#[test]
fn available_parallelism_is_fixed_inside_executions_and_std_outside() {
    assert_eq!(
        thread::available_parallelism().unwrap(),
        std::thread::available_parallelism().unwrap()
    );
    passes(20, || {
        let n = thread::available_parallelism().unwrap().get();
        assert_eq!(n, thread::EXECUTION_PARALLELISM);
        thread::spawn(|| ()).join().unwrap();
    });
}

pctvb::thread_local! {
    static LOCAL: std::cell::Cell<u32> = std::cell::Cell::new(7);
}

#[test]
fn thread_locals_are_per_logical_thread() {
    passes(100, || {
        LOCAL.with(|c| c.set(1));
        let h = thread::spawn(|| {
            let start = LOCAL.with(|c| c.get());
            LOCAL.with(|c| c.set(2));
            start
        });
        assert_eq!(h.join().unwrap(), 7, "a new thread starts from the initializer");
        assert_eq!(LOCAL.with(|c| c.get()), 1, "other threads' writes are invisible");
    });
}

#[test]
fn scoped_threads_borrow_and_are_joined() {
    passes(300, || {
        let data = [1, 2, 3, 4];
        let sum = AtomicUsize::new(0);
        thread::scope(|s| {
            for chunk in data.chunks(2) {
                let sum = &sum;
                s.spawn(move || {
                    sum.fetch_add(chunk.iter().sum(), Ordering::SeqCst);
                });
            }
        });
        assert_eq!(sum.load(Ordering::SeqCst), 10);
    });
}

/// Counts, in `done`, the threads of a chain `depth` deep spawned on `s` (each by the one
/// before) as each ends, after a yield (a point where the scope's owner could run on).
fn spawn_chain<'scope>(
    s: &'scope thread::Scope<'scope, '_>,
    depth: usize,
    done: &'scope AtomicUsize,
) {
    s.spawn(move || {
        if depth > 1 {
            spawn_chain(s, depth - 1, done);
        }
        thread::yield_now();
        done.fetch_add(1, Ordering::SeqCst);
    });
}

/// A scope never returns before a thread spawned on it by a scoped thread has ended (std's
/// scope joins every thread spawned in it, by whichever thread), 2 and 3 deep. The race
/// detector is off: this checks the order itself, not the happens-before edge
/// (`tests/data_races.rs` checks that).
#[test]
fn a_scope_waits_for_the_threads_its_scoped_threads_spawn() {
    for depth in [2, 3] {
        let report =
            Config::new().ignore_env().seed(0xc0ffee).iterations(1000).race_detection(false).run(
                || {
                    let done = AtomicUsize::new(0);
                    thread::scope(|s| spawn_chain(s, depth, &done));
                    assert_eq!(done.load(Ordering::SeqCst), depth, "the scope returned early");
                },
            );
        assert!(report.is_ok(), "depth {depth}:\n{}", report.failure().unwrap());
        assert_eq!(report.executions, 1000);
    }
}

/// A panic of the scope's closure leaves the scope only once every thread spawned on it, nested
/// ones included, has ended (as std's: no scoped thread outlives the borrows of a caller that
/// catches the panic), and goes on as the same panic.
#[test]
fn a_panicking_scope_joins_its_threads_before_the_panic_leaves_it() {
    passes(500, || {
        let done = AtomicUsize::new(0);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            thread::scope(|s| {
                spawn_chain(s, 2, &done);
                std::panic::panic_any(7u32);
            })
        }));
        let payload = caught.expect_err("the closure's panic leaves the scope");
        assert_eq!(payload.downcast_ref::<u32>(), Some(&7), "the same panic");
        assert_eq!(done.load(Ordering::SeqCst), 2, "the panic left before the threads ended");
    });
}

/// Uncaught, that panic fails the execution as the panic it is (the joins on its way out do
/// not turn it into something else).
#[test]
fn an_uncaught_panic_in_a_scope_fails_as_a_panic() {
    let report = Config::new().ignore_env().seed(0xc0ffee).iterations(100).run(|| {
        let done = AtomicUsize::new(0);
        thread::scope(|s| {
            spawn_chain(s, 2, &done);
            panic!("the scope's closure panics");
        });
    });
    let f = report.failure().expect("the panic fails the first execution");
    assert_eq!(f.kind, pctvb::FailureKind::Panic, "{f}");
    assert_eq!(f.message, "the scope's closure panics", "{f}");
    assert_eq!(f.execution, 0, "{f}");
}

/// A spawned thread's closure waits on its thread's own stack until the thread first runs.
/// In passing executions every closure runs and its captures are dropped exactly once; when an
/// execution fails before a thread started, that thread's closure is neither run nor dropped
/// (leaked, as a failed execution's suspended threads are), and the next execution starts
/// clean. Fixed seed.
#[test]
fn spawned_closures_run_once_and_never_started_ones_are_leaked() {
    use std::sync::atomic::AtomicUsize as StdCount;
    static DROPS: StdCount = StdCount::new(0);
    static RUNS: StdCount = StdCount::new(0);
    struct Counted;
    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::SeqCst);
        }
    }
    // The thread drops its capture when its body returns, before its exit's scheduling point:
    // a thread that ran has dropped it.
    let spawn_counted = || {
        let captured = Counted;
        thread::spawn(move || {
            let _mine = captured;
            RUNS.fetch_add(1, Ordering::SeqCst);
        })
    };
    let config = Config::new().ignore_env().seed(7).iterations(200).minimize_runs(0);
    let report = config.clone().run(|| {
        let handles: Vec<_> = (0..3).map(|_| spawn_counted()).collect();
        for h in handles {
            h.join().unwrap();
        }
    });
    assert!(report.is_ok(), "{:?}", report.failure());
    assert_eq!(RUNS.load(Ordering::SeqCst), 600);
    assert_eq!(DROPS.load(Ordering::SeqCst), 600);

    RUNS.store(0, Ordering::SeqCst);
    DROPS.store(0, Ordering::SeqCst);
    let report = config.clone().stop_at_first_failure(false).run(|| {
        for _ in 0..3 {
            spawn_counted();
        }
        panic!("main fails before some threads start");
    });
    assert_eq!(report.failures, 200, "every execution fails");
    let (runs, drops) = (RUNS.load(Ordering::SeqCst), DROPS.load(Ordering::SeqCst));
    assert_eq!(drops, runs, "only the closures that ran were dropped");
    assert!(runs < 600, "some threads never started ({runs} of 600 ran)");

    let report = config.iterations(50).run(|| {
        let handles: Vec<_> = (0..3).map(|_| spawn_counted()).collect();
        for h in handles {
            h.join().unwrap();
        }
    });
    assert!(report.is_ok(), "{:?}", report.failure());
}

/// A thread's result waits in the execution until its handle takes it: `join` returns it, a
/// handle dropped after the thread finished drops it then and there (inside the execution), one
/// dropped before makes the thread drop it when it returns, and `is_finished` tells which.
/// Every result is dropped exactly once. Fixed seed.
#[test]
fn thread_results_are_joined_or_dropped_exactly_once() {
    use std::sync::atomic::AtomicUsize as StdCount;
    static DROPS: StdCount = StdCount::new(0);
    // The first thread's result, dropped by the main thread (its handle went after it finished)
    // or by the thread itself (the handle went first): both must happen.
    static EARLY_BY_MAIN: StdCount = StdCount::new(0);
    static EARLY_BY_ITSELF: StdCount = StdCount::new(0);
    struct Counted(u64);
    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::SeqCst);
            if self.0 == 1 {
                let by_main = thread::current().id() == thread::ThreadId::MAIN;
                let count = if by_main { &EARLY_BY_MAIN } else { &EARLY_BY_ITSELF };
                count.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    let executions = 300;
    // One worker: the body reads the process-wide count, which parallel workers would share.
    let config = Config::new().ignore_env().seed(11).iterations(executions).workers(1);
    let report = config.run(|| {
        let early = thread::spawn(|| Counted(1));
        let late = thread::spawn(|| Counted(2));
        let joined = thread::spawn(|| Counted(3));
        drop(early);
        let value = joined.join().unwrap();
        assert_eq!(value.0, 3);
        while !late.is_finished() {
            thread::yield_now();
        }
        let before = DROPS.load(Ordering::SeqCst);
        drop(late);
        assert_eq!(DROPS.load(Ordering::SeqCst), before + 1, "a finished thread's result");
    });
    assert!(report.is_ok(), "{:?}", report.failure());
    assert!(report.stats.distinct_schedules > 1, "the schedule must vary");
    assert_eq!(DROPS.load(Ordering::SeqCst), 3 * executions as usize);
    assert!(EARLY_BY_MAIN.load(Ordering::SeqCst) > 0);
    assert!(EARLY_BY_ITSELF.load(Ordering::SeqCst) > 0);
}

/// A handle kept past its execution (in a static) and joined in the next one fails that
/// execution with a message that says what happened, rather than joining whichever thread of
/// the new execution has the same id.
#[test]
fn a_handle_kept_across_executions_fails_with_a_clear_message() {
    static KEPT: std::sync::Mutex<Option<thread::JoinHandle<u32>>> = std::sync::Mutex::new(None);
    let report = Config::new().ignore_env().seed(3).iterations(10).minimize_runs(0).run(|| {
        let kept = KEPT.lock().unwrap().take();
        match kept {
            Some(handle) => {
                thread::spawn(|| 1);
                let _ = handle.join();
            }
            None => *KEPT.lock().unwrap() = Some(thread::spawn(|| 7)),
        }
    });
    let failure = report.failure().expect("the second execution joins a stale handle");
    let text = failure.to_string();
    assert!(text.contains("JoinHandle::join on a thread of another execution"), "{text}");
}

#[test]
fn park_and_unpark_hand_over() {
    passes(500, || {
        let flag = Arc::new(AtomicUsize::new(0));
        let f2 = flag.clone();
        let parked = thread::spawn(move || {
            while f2.load(Ordering::SeqCst) == 0 {
                thread::park();
            }
        });
        flag.store(1, Ordering::SeqCst);
        parked.thread().unpark();
        parked.join().unwrap();
    });
}

#[test]
fn timeouts_fire_only_when_nothing_else_can_run() {
    let report = Config::new().ignore_env().seed(1).iterations(20).run(|| {
        let pair = Mutex::new(false);
        let cv = Condvar::new();
        let (_guard, result) =
            cv.wait_timeout(pair.lock().unwrap(), Duration::from_secs(1)).unwrap();
        assert!(result.timed_out(), "nobody notifies: the wait times out instead of deadlocking");
        let (_tx, rx) = mpsc::channel::<u8>();
        assert_eq!(rx.recv_timeout(Duration::from_millis(5)), Err(mpsc::RecvTimeoutError::Timeout));
        thread::park_timeout(Duration::from_millis(1));
        thread::sleep(Duration::from_millis(1));
    });
    assert!(report.is_ok(), "{}", report.failure().unwrap());
}

#[test]
fn a_lost_wakeup_is_reported_as_a_deadlock() {
    // notify_one before the waiter waits, and the waiter does not re-check a condition.
    let report = Config::new().ignore_env().seed(3).iterations(1000).run(|| {
        let pair = Arc::new((Mutex::new(()), Condvar::new()));
        let p2 = pair.clone();
        let notifier = thread::spawn(move || p2.1.notify_one());
        let guard = pair.0.lock().unwrap();
        drop(pair.1.wait(guard).unwrap());
        notifier.join().unwrap();
    });
    let failure = report.failure().expect("the lost wakeup is found");
    assert!(
        failure.message.contains("waits on Condvar@tests/primitives.rs"),
        "{}",
        failure.message
    );
}

#[test]
fn current_thread_ids_and_names_are_stable() {
    passes(50, || {
        assert_eq!(thread::current().name(), Some("main"));
        assert_eq!(thread::current().id(), pctvb::thread::ThreadId::MAIN);
        let h = thread::Builder::new().name("named".into()).spawn(thread::current).unwrap();
        let t = h.join().unwrap();
        assert_eq!(t.name(), Some("named"));
        assert_eq!(t.id().index(), 1);
    });
}

#[test]
fn once_lock_get_mut_and_atomic_bool_fetch_not_behave_as_std() {
    // Inside executions: the value set in this execution, changed through `get_mut` after the
    // threads that set and read it were joined; `fetch_not` flips and returns the old value.
    passes(300, || {
        let cell = Arc::new(OnceLock::new());
        let flag = Arc::new(pctvb::sync::atomic::AtomicBool::new(false));
        let (c, f) = (cell.clone(), flag.clone());
        let t = thread::spawn(move || {
            let _ = c.set(1u32);
            f.fetch_not(Ordering::SeqCst)
        });
        let _ = cell.get_or_init(|| 2);
        let mine = flag.fetch_not(Ordering::SeqCst);
        let theirs = t.join().unwrap();
        assert_ne!(mine, theirs, "one flip saw false, the other true");
        assert!(!flag.load(Ordering::SeqCst), "flipped twice");
        let mut cell = Arc::try_unwrap(cell).unwrap();
        let first = *cell.get().unwrap();
        *cell.get_mut().unwrap() += 10;
        assert_eq!(cell.get(), Some(&(first + 10)));
        assert_eq!(OnceLock::<u32>::new().get_mut(), None);
    });
    // Outside executions, as std's.
    let mut cell = OnceLock::new();
    assert_eq!(cell.get_mut(), None);
    cell.set(5).unwrap();
    *cell.get_mut().unwrap() = 6;
    assert_eq!(cell.get(), Some(&6));
    let flag = pctvb::sync::atomic::AtomicBool::new(true);
    assert!(flag.fetch_not(Ordering::Relaxed));
    assert!(!flag.load(Ordering::Relaxed));
}

#[test]
fn once_lock_from_and_unsafe_cell_raw_get_behave_as_std() {
    // Inside executions (fixed seed): a cell made from a value holds it in every execution;
    // `raw_get` reaches the data without a reference to the cell.
    passes(100, || {
        let cell = Arc::new(OnceLock::from(7u32));
        let c = cell.clone();
        let t = thread::spawn(move || *c.get().unwrap());
        assert_eq!(cell.get(), Some(&7));
        assert_eq!(cell.set(8), Err(8));
        assert_eq!(t.join().unwrap(), 7);
        let data = pctvb::cell::UnsafeCell::new(1u64);
        // SAFETY: no other access of `data` is live.
        unsafe { *pctvb::cell::UnsafeCell::raw_get(&data) += 1 };
        assert_eq!(data.into_inner(), 2);
    });
    // Outside executions.
    let cell = OnceLock::from("set");
    assert_eq!(cell.get(), Some(&"set"));
    let data = pctvb::cell::UnsafeCell::new(5u8);
    assert_eq!(pctvb::cell::UnsafeCell::raw_get(&data), data.get());
}

/// Schedules, reports and the run's variables name a one-time object by the type the user
/// wrote: `OnceLock@...` and `LazyLock@...`, not the `Once` they are built like.
#[test]
fn once_lock_and_lazy_lock_are_named_as_written() {
    static LAZY: LazyLock<u32> = LazyLock::new(|| 3);
    // Fixed seed; the body fails at its end on purpose, so the report carries its schedule.
    let report = Config::new().ignore_env().seed(7).iterations(10).minimize_runs(0).run(|| {
        let cell = OnceLock::new();
        let once = Once::new();
        let t = thread::spawn(|| *LAZY);
        cell.set(*LAZY).unwrap();
        once.call_once(|| ());
        assert_eq!(t.join().unwrap(), 3);
        panic!("the end {:?} {:?}", cell.get(), once);
    });
    let failure = report.failure().expect("the body fails at its end");
    let ops: Vec<&str> = failure.schedule.iter().map(|s| s.operation.as_str()).collect();
    for named in ["once OnceLock@primitives.rs:", "once LazyLock@primitives.rs:", "once Once@"] {
        assert!(ops.iter().any(|op| op.starts_with(named)), "no `{named}` in {ops:?}");
    }
    let kinds: Vec<String> = report.stats.variables.iter().map(|(v, _)| v.to_string()).collect();
    for named in ["OnceLock@tests/primitives.rs:", "LazyLock@tests/primitives.rs:"] {
        assert!(kinds.iter().any(|k| k.starts_with(named)), "no `{named}` in {kinds:?}");
    }
    assert!(failure.message.contains("the end Some(3) Once@tests/primitives.rs:"), "{failure}");
}

/// `RwLockWriteGuard::downgrade` keeps the lock: no writer gets in between the write and the
/// reads after it, readers waiting for the lock may go on while the downgraded guard lives,
/// and writers wait for it.
#[test]
fn a_downgraded_write_lock_lets_readers_in_and_keeps_writers_out() {
    use pctvb::sync::atomic::AtomicBool;
    use pctvb::sync::RwLockWriteGuard;
    // Executions where a reader read while the downgraded guard lived.
    static READ_ALONGSIDE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    passes(500, || {
        let lock = Arc::new(RwLock::new(1));
        let downgraded = Arc::new(AtomicBool::new(false));
        let mut w = lock.write().unwrap();
        let (l, d) = (lock.clone(), downgraded.clone());
        let writer = thread::spawn(move || {
            let mut g = l.write().unwrap();
            assert!(!d.load(Ordering::SeqCst), "a writer got in beside the downgraded guard");
            assert_eq!(*g, 2);
            *g = 3;
        });
        let (l, d) = (lock.clone(), downgraded.clone());
        let reader = thread::spawn(move || {
            let g = l.read().unwrap();
            (*g, d.load(Ordering::SeqCst))
        });
        *w = 2;
        let r = RwLockWriteGuard::downgrade(w);
        downgraded.store(true, Ordering::SeqCst);
        assert_eq!(*r, 2, "no writer between the write and the downgrade");
        downgraded.store(false, Ordering::SeqCst);
        drop(r);
        writer.join().unwrap();
        let (seen, alongside) = reader.join().unwrap();
        assert!(seen == 2 || seen == 3, "the reader waited for the first write: {seen}");
        if alongside {
            READ_ALONGSIDE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        assert_eq!(*lock.read().unwrap(), 3);
    });
    assert!(READ_ALONGSIDE.load(std::sync::atomic::Ordering::Relaxed) > 0);

    // Outside executions, as std's: readers share the downgraded lock, writers wait for it.
    let lock = RwLock::new(1);
    let mut w = lock.write().unwrap();
    *w = 2;
    let r = RwLockWriteGuard::downgrade(w);
    std::thread::scope(|s| {
        s.spawn(|| {
            assert_eq!(*lock.try_read().expect("a reader joins the downgraded guard"), 2);
            assert!(lock.try_write().is_err(), "a writer waits for it");
        });
    });
    drop(r);
    *lock.try_write().expect("free again") = 3;
    assert_eq!(*lock.read().unwrap(), 3);
}

/// `AtomicPtr`'s pointer arithmetic and address bit operations (std 1.91) return the previous
/// pointer and leave std's result: two threads that claim slots with `fetch_ptr_add` get
/// distinct ones, a tag set with `fetch_or` is seen and cleared with `fetch_and`.
#[test]
fn atomic_ptr_arithmetic_and_tags_behave_as_std() {
    use pctvb::sync::atomic::AtomicPtr;
    // Shared by the executions: `passes` runs them one after another on this OS thread.
    static SLOTS: [u64; 4] = [10, 20, 30, 40];
    let base = SLOTS.as_ptr() as *mut u64;
    // The pointer as a `usize`, to share it with the threads (a raw pointer is not `Send`).
    let base_addr = base as usize;
    passes(300, move || {
        let base = base_addr as *mut u64;
        let cursor = Arc::new(AtomicPtr::new(base));
        let c = cursor.clone();
        let t = thread::spawn(move || c.fetch_ptr_add(1, Ordering::SeqCst) as usize);
        let mine = cursor.fetch_ptr_add(1, Ordering::SeqCst) as usize;
        let theirs = t.join().unwrap();
        let mut claimed = [mine, theirs];
        claimed.sort();
        assert_eq!(claimed, [base_addr, base_addr + 8], "each thread claims its own slot");
        assert_eq!(cursor.fetch_byte_add(8, Ordering::SeqCst), base.wrapping_add(2));
        assert_eq!(cursor.fetch_ptr_sub(2, Ordering::SeqCst), base.wrapping_add(3));
        assert_eq!(cursor.fetch_byte_sub(8, Ordering::SeqCst), base.wrapping_add(1));
        // A tag in the low bit (the slots are 8-aligned), set by one thread, seen by the other.
        let c = cursor.clone();
        let tagger = thread::spawn(move || c.fetch_or(1, Ordering::SeqCst) as usize);
        let seen = cursor.load(Ordering::SeqCst) as usize;
        assert!(seen == base_addr || seen == base_addr | 1, "{seen:#x}");
        assert_eq!(tagger.join().unwrap(), base_addr);
        assert_eq!(cursor.fetch_xor(1, Ordering::SeqCst) as usize, base_addr | 1);
        assert_eq!(cursor.fetch_or(1, Ordering::SeqCst), base);
        assert_eq!(cursor.fetch_and(!1, Ordering::SeqCst) as usize, base_addr | 1);
        // SAFETY: untagged, the pointer is the first slot's again, with its provenance.
        assert_eq!(unsafe { *cursor.load(Ordering::SeqCst) }, 10);
    });
    // Outside executions, as std's.
    let cursor = AtomicPtr::new(base);
    assert_eq!(cursor.fetch_ptr_add(3, Ordering::Relaxed), base);
    assert_eq!(cursor.fetch_byte_sub(16, Ordering::Relaxed), base.wrapping_add(3));
    assert_eq!(cursor.fetch_ptr_sub(1, Ordering::Relaxed), base.wrapping_add(1));
    assert_eq!(cursor.fetch_byte_add(24, Ordering::Relaxed), base);
    assert_eq!(cursor.fetch_or(1, Ordering::Relaxed), base.wrapping_add(3));
    assert_eq!(cursor.fetch_xor(3, Ordering::Relaxed) as usize, base_addr + 24 + 1);
    assert_eq!(cursor.fetch_and(!7, Ordering::Relaxed) as usize, base_addr + 24 + 2);
    // SAFETY: the fourth slot, untagged.
    assert_eq!(unsafe { *cursor.load(Ordering::Relaxed) }, 40);
}

/// `update` and `try_update` (std 1.95) are compare-exchange loops: concurrent updates never
/// lose one, and an update whose closure refuses leaves the value alone.
#[test]
fn atomic_update_and_try_update_never_lose_an_update() {
    passes(500, || {
        let count = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let c = count.clone();
                thread::spawn(move || {
                    c.update(Ordering::AcqRel, Ordering::Acquire, |v| v + 1);
                    c.try_update(Ordering::AcqRel, Ordering::Acquire, |v| (v < 3).then(|| v + 10))
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        // The first `try_update` to store sees at most 2 and adds 10; the other then sees 11
        // or more and refuses.
        let added = results.iter().filter(|r| r.is_ok()).count();
        assert_eq!(added, 1, "{results:?}");
        assert_eq!(count.load(Ordering::SeqCst), 12);
    });
}

/// `LazyLock::get`, `get_mut` and `force_mut` (std 1.94) and `DerefMut` (1.89): `get` reads
/// the cell without initializing it (a scheduling point, so it sees the value only once a
/// thread forced it), `force_mut` initializes without one; a `static` is fresh in every
/// execution. `OnceLock`'s `Clone` and `PartialEq` read the cell as `get` does.
#[test]
fn lazy_lock_get_and_force_mut_and_once_lock_clone_behave_as_std() {
    static LAZY: LazyLock<usize> = LazyLock::new(|| 7);
    passes(300, || {
        assert_eq!(LazyLock::get(&LAZY), None, "fresh in every execution");
        let t = thread::spawn(|| *LAZY);
        let seen = LazyLock::get(&LAZY).copied();
        assert!(seen.is_none() || seen == Some(7));
        assert_eq!(t.join().unwrap(), 7);
        assert_eq!(LazyLock::get(&LAZY), Some(&7), "the join orders the force before");

        let mut lazy = LazyLock::new(|| vec![1]);
        assert_eq!(LazyLock::get_mut(&mut lazy), None);
        LazyLock::force_mut(&mut lazy).push(2);
        lazy.push(3);
        assert_eq!(*lazy, [1, 2, 3]);

        let cell = Arc::new(OnceLock::new());
        let c = cell.clone();
        let setter = thread::spawn(move || c.set(5).unwrap());
        let copy = OnceLock::clone(&cell);
        assert!(copy.get().is_none() || copy.get() == Some(&5));
        setter.join().unwrap();
        assert!(OnceLock::clone(&cell) == OnceLock::from(5));
    });
}
