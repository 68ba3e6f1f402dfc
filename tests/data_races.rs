//! The data-race detector (issue #16): correctly synchronized accesses of
//! `pctvb::cell::UnsafeCell` never fail, unsynchronized ones fail as `FailureKind::DataRace`
//! with both sites and steps.
//!
//! Every run uses a fixed seed and `ignore_env` (a developer's `PCTVB_*` variables cannot
//! change the outcome) and the default strategy (`Config::new()`: the uniform random walk).
//! The "no race" programs must pass all 2000 executions; the racy ones must fail, and were
//! checked to fail well within their budget on every seed listed.

use pctvb::cell::UnsafeCell;
use pctvb::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use pctvb::sync::{mpsc, Arc, Barrier, Condvar, Mutex, Once, OnceLock, RwLock};
use pctvb::{thread, Config, FailureKind, Report};

const NO_RACE_RUNS: u64 = 2000;

fn config(seed: u64) -> Config {
    Config::new().ignore_env().seed(seed)
}

fn assert_passes(report: &Report) {
    if let Some(f) = report.failure() {
        panic!("expected no race, got:\n{f}");
    }
    assert_eq!(report.executions, NO_RACE_RUNS);
}

fn no_race<F: Fn() + Sync>(body: F) {
    assert_passes(&config(0x0dace).iterations(NO_RACE_RUNS).run(body));
}

/// A cell shared between threads.
#[derive(Default)]
struct Data(UnsafeCell<u64>);

impl Data {
    #[track_caller]
    fn write(&self, v: u64) {
        self.0.with_mut(|p| unsafe { *p = v });
    }
    #[track_caller]
    fn read(&self) -> u64 {
        self.0.with(|p| unsafe { *p })
    }
}

#[test]
fn mutex_protected_data_has_no_race() {
    no_race(|| {
        let shared = Arc::new((Mutex::new(()), Data::default()));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let s = shared.clone();
                thread::spawn(move || {
                    let _g = s.0.lock().unwrap();
                    let v = s.1.read();
                    s.1.write(v + 1);
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(shared.1.read(), 2);
    });
}

#[test]
fn rwlock_protected_data_has_no_race() {
    no_race(|| {
        let shared = Arc::new((RwLock::new(()), Data::default()));
        let s = shared.clone();
        let writer = thread::spawn(move || {
            let _g = s.0.write().unwrap();
            s.1.write(1);
        });
        let s = shared.clone();
        let reader = thread::spawn(move || {
            let _g = s.0.read().unwrap();
            s.1.read();
        });
        {
            let _g = shared.0.read().unwrap();
            shared.1.read();
        }
        writer.join().unwrap();
        reader.join().unwrap();
        let _g = shared.0.write().unwrap();
        shared.1.write(2);
    });
}

/// A downgrade publishes the writer's writes to the readers after it, as a write unlock; what
/// it writes after the downgrade (beside the data, under its read lock) is not.
#[test]
fn a_downgrade_orders_the_writes_before_it_only() {
    use pctvb::sync::RwLockWriteGuard;
    let body = |write_after: bool| {
        let shared = Arc::new((RwLock::new(()), Data::default()));
        let s = shared.clone();
        let reader = thread::spawn(move || {
            let _g = s.0.read().unwrap();
            s.1.read();
        });
        let w = shared.0.write().unwrap();
        shared.1.write(1);
        let _r = RwLockWriteGuard::downgrade(w);
        if write_after {
            shared.1.write(2);
        }
        drop(_r);
        reader.join().unwrap();
    };
    no_race(|| body(false));
    let (read_line, write_line) = (line!() - 12, line!() - 6);
    let _ = expect_race(31, 1000, [read_line, write_line], || body(true));
}

/// A pointer's tag bit set with a Release `fetch_or` publishes the data written before it to
/// an Acquire load that sees the tag; a Relaxed `fetch_or` does not.
#[test]
fn a_pointer_tag_set_with_release_publishes_what_was_written_before() {
    use pctvb::sync::atomic::AtomicPtr;
    let body = |order: Ordering| {
        let shared = Arc::new((AtomicPtr::new(std::ptr::null_mut::<u64>()), Data::default()));
        let s = shared.clone();
        let reader = thread::spawn(move || {
            if s.0.load(Ordering::Acquire) as usize & 1 == 1 {
                assert_eq!(s.1.read(), 5);
            }
        });
        shared.1.write(5);
        shared.0.fetch_or(1, order);
        reader.join().unwrap();
    };
    no_race(|| body(Ordering::Release));
    let (read_line, write_line) = (line!() - 8, line!() - 5);
    let _ = expect_race(41, 1000, [write_line, read_line], || body(Ordering::Relaxed));
}

#[test]
fn release_acquire_message_passing_has_no_race() {
    no_race(|| {
        let shared = Arc::new((AtomicBool::new(false), Data::default()));
        let s = shared.clone();
        let reader = thread::spawn(move || {
            if s.0.load(Ordering::Acquire) {
                assert_eq!(s.1.read(), 42);
            }
        });
        shared.1.write(42);
        shared.0.store(true, Ordering::Release);
        reader.join().unwrap();
    });
}

#[test]
fn rmw_release_sequence_and_fences_have_no_race() {
    no_race(|| {
        let shared = Arc::new((AtomicUsize::new(0), AtomicBool::new(false), Data::default()));
        let s = shared.clone();
        let reader = thread::spawn(move || {
            // Release sequence: 2 is only seen after main's release store and the relaxed
            // RMW that continues its release sequence.
            if s.0.load(Ordering::Acquire) == 2 {
                assert_eq!(s.2.read(), 7);
            }
            // Fences: a relaxed load of a store after a release fence, then an acquire fence.
            if s.1.load(Ordering::Relaxed) {
                fence(Ordering::Acquire);
                assert_eq!(s.2.read(), 7);
            }
        });
        let s = shared.clone();
        let bumper = thread::spawn(move || {
            s.0.fetch_add(1, Ordering::Relaxed);
        });
        shared.2.write(7);
        shared.0.store(1, Ordering::Release);
        fence(Ordering::Release);
        shared.1.store(true, Ordering::Relaxed);
        reader.join().unwrap();
        bumper.join().unwrap();
        shared.2.write(1);
    });
}

#[test]
fn spawn_and_join_order_accesses() {
    no_race(|| {
        let shared = Arc::new(Data::default());
        shared.write(1);
        let s = shared.clone();
        let child = thread::spawn(move || {
            assert_eq!(s.read(), 1);
            s.write(2);
        });
        child.join().unwrap();
        assert_eq!(shared.read(), 2);
        thread::scope(|scope| {
            scope.spawn(|| shared.write(3));
        });
        assert_eq!(shared.read(), 3);
    });
}

/// Spawns, on `s`, a scoped thread that spawns one more, `depth` deep; the deepest writes
/// `value` to `data`.
fn spawn_nested<'scope>(
    s: &'scope thread::Scope<'scope, '_>,
    depth: usize,
    data: &'scope Data,
    value: u64,
) {
    if depth == 0 {
        data.write(value);
    } else {
        s.spawn(move || spawn_nested(s, depth - 1, data, value));
    }
}

/// A scope's end joins the threads its scoped threads spawned (2 and 3 deep), so their
/// accesses happen before what follows the scope. Before the fix the scope joined only the
/// threads spawned by its closure: the write after it raced with the nested thread's in about
/// 3 executions in 4. Several fixed seeds.
#[test]
fn a_scope_orders_the_threads_its_scoped_threads_spawn() {
    for seed in [1, 2, 3] {
        for depth in [2, 3] {
            let report = config(seed).iterations(NO_RACE_RUNS).run(|| {
                let shared = Data::default();
                thread::scope(|s| spawn_nested(s, depth, &shared, 1));
                assert_eq!(shared.read(), 1);
                shared.write(2);
            });
            if let Some(f) = report.failure() {
                panic!("seed {seed}, depth {depth}: expected no race, got:\n{f}");
            }
            assert_eq!(report.executions, NO_RACE_RUNS);
        }
    }
}

#[test]
fn channel_orders_send_before_receive() {
    no_race(|| {
        let shared = Arc::new((Data::default(), Data::default()));
        let (tx, rx) = mpsc::channel();
        let s = shared.clone();
        let tx2 = tx.clone();
        let a = thread::spawn(move || {
            s.0.write(1);
            tx.send(0).unwrap();
        });
        let s = shared.clone();
        let b = thread::spawn(move || {
            s.1.write(1);
            tx2.send(1).unwrap();
        });
        for _ in 0..2 {
            match rx.recv().unwrap() {
                0 => assert_eq!(shared.0.read(), 1),
                _ => assert_eq!(shared.1.read(), 1),
            }
        }
        a.join().unwrap();
        b.join().unwrap();
    });
}

#[test]
fn rendezvous_receive_happens_before_the_send_completes() {
    no_race(|| {
        let shared = Arc::new(Data::default());
        let (tx, rx) = mpsc::sync_channel(0);
        let s = shared.clone();
        let receiver = thread::spawn(move || {
            s.write(3);
            rx.recv().unwrap();
        });
        tx.send(()).unwrap();
        assert_eq!(shared.read(), 3);
        receiver.join().unwrap();
    });
}

#[test]
fn condvar_handoff_has_no_race() {
    no_race(|| {
        let shared = Arc::new((Mutex::new(false), Condvar::new(), Data::default()));
        let s = shared.clone();
        let producer = thread::spawn(move || {
            s.2.write(5);
            *s.0.lock().unwrap() = true;
            s.1.notify_one();
        });
        let mut ready = shared.0.lock().unwrap();
        while !*ready {
            ready = shared.1.wait(ready).unwrap();
        }
        drop(ready);
        assert_eq!(shared.2.read(), 5);
        producer.join().unwrap();
    });
}

#[test]
fn barrier_orders_before_and_after() {
    no_race(|| {
        let shared =
            Arc::new((Barrier::new(3), [Data::default(), Data::default(), Data::default()]));
        let handles: Vec<_> = (0..2)
            .map(|i| {
                let s = shared.clone();
                thread::spawn(move || {
                    s.1[i].write(i as u64 + 1);
                    s.0.wait();
                    assert_eq!(s.1[(i + 1) % 3].read(), ((i + 1) % 3) as u64 + 1);
                })
            })
            .collect();
        shared.1[2].write(3);
        shared.0.wait();
        assert_eq!(shared.1[0].read(), 1);
        for h in handles {
            h.join().unwrap();
        }
    });
}

#[test]
fn once_and_once_lock_initialization_happens_before_readers() {
    no_race(|| {
        let shared = Arc::new((Once::new(), OnceLock::new(), Data::default(), Data::default()));
        let work = |s: &(Once, OnceLock<u64>, Data, Data)| {
            s.0.call_once(|| s.2.write(9));
            assert_eq!(s.2.read(), 9);
            let v = *s.1.get_or_init(|| {
                s.3.write(4);
                4
            });
            assert_eq!(s.3.read(), v);
        };
        let s = shared.clone();
        let t = thread::spawn(move || work(&s));
        work(&shared);
        t.join().unwrap();
    });
}

/// `Once::wait`, `wait_force` and `OnceLock::wait` return after the initialization, and what
/// the initializing thread wrote before it is ordered before what the waiters read after.
#[test]
fn the_initialization_happens_before_the_waits_it_ends() {
    no_race(|| {
        let shared = Arc::new((Once::new(), OnceLock::new(), Data::default()));
        let waiters: Vec<_> = (0..3)
            .map(|i| {
                let s = shared.clone();
                thread::spawn(move || match i {
                    0 => {
                        s.0.wait();
                        assert_eq!(s.2.read(), 5);
                    }
                    1 => {
                        s.0.wait_force();
                        assert_eq!(s.2.read(), 5);
                    }
                    _ => {
                        let v = *s.1.wait();
                        assert_eq!(s.2.read(), v);
                    }
                })
            })
            .collect();
        shared.2.write(5);
        shared.0.call_once(|| ());
        shared.1.set(5u64).unwrap();
        for w in waiters {
            w.join().unwrap();
        }
    });
}

#[test]
fn a_write_after_the_initialization_races_with_the_waiters_read() {
    for seed in [21, 22, 23] {
        let (write_line, read_line) = (line!() + 10, line!() + 6);
        let _ = expect_race(seed, 1000, [write_line, read_line], || {
            let shared = Arc::new((OnceLock::new(), Data::default()));
            let s = shared.clone();
            let waiter = thread::spawn(move || {
                let _ = s.0.wait();
                s.1.read();
            });
            shared.0.set(1u8).unwrap();
            // Written after the value is published: not ordered before the waiter's read.
            shared.1.write(2);
            waiter.join().unwrap();
        });
    }
}

/// The parker parks only once the unpark has made its token available (the `Relaxed` flag,
/// set after the unpark, orders nothing): the park consumes the token without waiting, and
/// only the unpark's edge orders the write before the read. (A park that waits may return
/// spuriously, as std's may, with no edge: a program that reads after such a park races.)
#[test]
fn unpark_happens_before_the_park_it_releases() {
    no_race(|| {
        let shared = Arc::new(Data::default());
        let unparked = Arc::new(AtomicBool::new(false));
        let (s, u) = (shared.clone(), unparked.clone());
        let parker = thread::spawn(move || {
            while !u.load(Ordering::Relaxed) {
                thread::yield_now();
            }
            thread::park();
            assert_eq!(s.read(), 8);
        });
        shared.write(8);
        parker.thread().unpark();
        unparked.store(true, Ordering::Relaxed);
        parker.join().unwrap();
    });
}

/// Runs `body` on `seed`, expects a data race, and checks its message names `lines` (the two
/// sites) and the steps.
fn expect_race<F: Fn() + Sync>(seed: u64, runs: u64, lines: [u32; 2], body: F) -> Report {
    let report = config(seed).name("data_races::expect_race").iterations(runs).run(body);
    let failure = report.failure().unwrap_or_else(|| panic!("no race found on seed {seed}"));
    assert_eq!(failure.kind, FailureKind::DataRace, "{failure}");
    let m = &failure.message;
    assert!(m.starts_with("data race on UnsafeCell@tests/data_races.rs:"), "{m}");
    assert!(m.contains("with no happens-before between them"), "{m}");
    for line in lines {
        assert!(m.contains(&format!("tests/data_races.rs:{line} (step ")), "line {line}: {m}");
    }
    let text = failure.to_string();
    assert!(text.contains("PCTVB_REPLAY="), "{text}");
    report
}

#[test]
fn relaxed_flag_protecting_data_is_a_race() {
    for seed in [1, 2, 3, 4, 5] {
        let write_line = line!() + 10;
        let read_line = line!() + 6;
        let _ = expect_race(seed, 1000, [write_line, read_line], || {
            let shared = Arc::new((AtomicBool::new(false), Data::default()));
            let s = shared.clone();
            let reader = thread::spawn(move || {
                if s.0.load(Ordering::Relaxed) {
                    s.1.read();
                }
            });
            shared.1.write(42);
            shared.0.store(true, Ordering::Relaxed);
            reader.join().unwrap();
        });
    }
}

#[test]
fn missing_lock_is_a_race_and_its_replay_reproduces_it() {
    let body = || {
        let shared = Arc::new((Mutex::new(()), Data::default()));
        let s = shared.clone();
        let t = thread::spawn(move || {
            let _g = s.0.lock().unwrap();
            s.1.write(1);
        });
        // Forgot the lock.
        shared.1.write(2);
        t.join().unwrap();
    };
    let (locked, unlocked) = (line!() - 6, line!() - 3);
    let report = expect_race(7, 1000, [locked, unlocked], body);
    let failure = report.failure().unwrap();
    let token = failure.token.clone().expect("a token");
    let replay = config(7).name("data_races::expect_race").replay(token).run(body);
    let again = replay.failure().expect("the replay fails again");
    assert_eq!(again.kind, FailureKind::DataRace);
    assert_eq!(again.message, failure.message);
}

#[test]
fn read_before_the_writers_release_store_is_a_race() {
    for seed in [11, 12, 13] {
        let (write_line, read_line) = (line!() + 5, line!() + 9);
        let _ = expect_race(seed, 1000, [write_line, read_line], || {
            let shared = Arc::new((AtomicBool::new(false), Data::default()));
            let s = shared.clone();
            let writer = thread::spawn(move || {
                s.1.write(1);
                s.0.store(true, Ordering::Release);
            });
            // Reads first, checks the flag after: the read is not ordered after the write.
            let v = shared.1.read();
            if shared.0.load(Ordering::Acquire) {
                let _ = v;
            }
            writer.join().unwrap();
        });
    }
}

#[test]
fn race_detection_can_be_turned_off() {
    let report = config(1).iterations(300).race_detection(false).run(|| {
        let shared = Arc::new(Data::default());
        let s = shared.clone();
        let t = thread::spawn(move || s.write(1));
        shared.write(2);
        t.join().unwrap();
    });
    assert!(report.failure().is_none());
}

/// The injected bugs, in miniature: each must be found as a race on every seed.
mod injected {
    use super::*;

    /// A one-slot queue whose pop marks the slot free (a Release store) before reading it: a
    /// push that sees the slot free writes it while (or after) the pop reads, with no
    /// happens-before from the read to the write.
    #[test]
    fn queue_pop_marking_the_slot_free_before_reading_is_found_on_every_seed() {
        for seed in 1..=10 {
            let report = config(seed).iterations(1000).run(|| {
                let q = Arc::new((AtomicBool::new(false), Data::default()));
                let q2 = q.clone();
                let pusher = thread::spawn(move || {
                    for v in 1..=2 {
                        while q2.0.load(Ordering::Acquire) {
                            thread::yield_now();
                        }
                        q2.1.write(v);
                        q2.0.store(true, Ordering::Release);
                    }
                });
                for _ in 0..2 {
                    while !q.0.load(Ordering::Acquire) {
                        thread::yield_now();
                    }
                    // The bug: free the slot, then read it.
                    q.0.store(false, Ordering::Release);
                    q.1.read();
                }
                pusher.join().unwrap();
            });
            let f = report.failure().unwrap_or_else(|| panic!("seed {seed}: not found"));
            assert_eq!(f.kind, FailureKind::DataRace, "seed {seed}: {f}");
        }
    }

    /// A try-lock whose acquiring swap is split into a load and a store: two threads can both
    /// take it and write the guarded data unordered.
    #[test]
    fn split_try_lock_is_found_on_every_seed() {
        for seed in 1..=10 {
            let report = config(seed).iterations(1000).run(|| {
                let lock = Arc::new((AtomicBool::new(false), Data::default()));
                let work = |l: &(AtomicBool, Data)| {
                    if !l.0.load(Ordering::Acquire) {
                        l.0.store(true, Ordering::Relaxed);
                        let v = l.1.read();
                        l.1.write(v + 1);
                        l.0.store(false, Ordering::Release);
                    }
                };
                let l2 = lock.clone();
                let t = thread::spawn(move || work(&l2));
                work(&lock);
                t.join().unwrap();
            });
            let f = report.failure().unwrap_or_else(|| panic!("seed {seed}: not found"));
            assert_eq!(f.kind, FailureKind::DataRace, "seed {seed}: {f}");
            assert!(f.execution < 1000);
        }
    }
}

/// The race is found by the guarantee strategy a `#[pctvb::test]` with a target uses too
/// (Combined, depth 2), and reported the same way.
#[test]
fn combined_strategy_finds_a_missing_lock_race() {
    let report = config(3).depth(2).confidence(0.99).run(|| {
        let shared = Arc::new(Data::default());
        let s = shared.clone();
        let t = thread::spawn(move || s.write(1));
        shared.write(2);
        t.join().unwrap();
    });
    let f = report.failure().expect("found");
    assert_eq!(f.kind, FailureKind::DataRace, "{f}");
}

/// A data race is between two threads: its bug shape counts both (it counted only the thread
/// of the second access: "t=1 thread" without preemptions), and the body that spawned the
/// second while the first existed, as the guarantees count it. Fixed seeds 1..=5; every
/// execution races.
#[test]
fn a_data_races_shape_counts_both_racing_threads() {
    for seed in 1..=5 {
        // The body and the thread it spawned: t=2.
        let report = config(seed).iterations(100).run(|| {
            let shared = Arc::new(Data::default());
            let s = shared.clone();
            let t = thread::spawn(move || s.write(1));
            shared.write(2);
            t.join().unwrap();
        });
        let f = report.failure().unwrap_or_else(|| panic!("seed {seed}: no race"));
        assert_eq!(f.kind, FailureKind::DataRace, "seed {seed}: {f}");
        let shape = f.shape.expect("measured");
        assert_eq!((shape.threads, shape.spawners), (2, 0), "{f}");
        assert!(f.to_string().contains("among t=2 threads;"), "{f}");

        // Two spawned threads: t=3, counting the body.
        let report = config(seed).iterations(100).run(|| {
            let shared = Arc::new(Data::default());
            let writers: Vec<_> = (1..=2)
                .map(|v| {
                    let s = shared.clone();
                    thread::spawn(move || s.write(v))
                })
                .collect();
            for w in writers {
                w.join().unwrap();
            }
        });
        let f = report.failure().unwrap_or_else(|| panic!("seed {seed}: no race"));
        assert_eq!(f.kind, FailureKind::DataRace, "seed {seed}: {f}");
        let shape = f.shape.expect("measured");
        // The body counts as the spawner, or as preempted when minimization leaves it a
        // preemption (after its first spawn: then it counts, with the two writers).
        assert_eq!(shape.threads, 3, "{f}");
        if shape.preemptions == 0 {
            assert_eq!(shape.spawners, 1, "{f}");
        }
    }
}

/// `update` and `try_update` (std 1.95) order as their orderings say: a `Release` update
/// publishes what its thread wrote before to an `Acquire` reader; a `Relaxed` one does not.
#[test]
fn a_release_update_publishes_and_a_relaxed_one_races() {
    let publish = |order: Ordering| {
        move || {
            let shared = Arc::new((AtomicUsize::new(0), Data::default()));
            let s = shared.clone();
            let reader = thread::spawn(move || {
                if s.0.try_update(Ordering::Relaxed, Ordering::Acquire, |_| None) == Err(1) {
                    assert_eq!(s.1.read(), 3);
                }
            });
            shared.1.write(3);
            shared.0.update(order, Ordering::Relaxed, |v| v + 1);
            reader.join().unwrap();
        }
    };
    no_race(publish(Ordering::Release));
    let (write_line, read_line) = (line!() - 6, line!() - 9);
    let _ = expect_race(1, 1000, [write_line, read_line], publish(Ordering::Relaxed));
}

/// A thread of `Builder::spawn_unchecked` (std 1.82) starts after what its spawner did and
/// ends before what its joiner does, as `spawn`'s; reading while it runs is a race.
#[test]
fn unchecked_threads_are_ordered_by_spawn_and_join() {
    no_race(|| {
        let data = Data::default();
        data.write(1);
        // SAFETY: joined before `data` ends.
        let h = unsafe { thread::Builder::new().spawn_unchecked(|| data.write(data.read() + 1)) };
        h.unwrap().join().unwrap();
        assert_eq!(data.read(), 2);
    });
    let write_line = line!() + 5;
    let read_line = line!() + 5;
    let _ = expect_race(2, 1000, [write_line, read_line], || {
        let data = Data::default();
        // SAFETY: joined before `data` ends.
        let h = unsafe { thread::Builder::new().spawn_unchecked(|| data.write(1)) }.unwrap();
        let _ = data.read();
        h.join().unwrap();
    });
}

/// What the initializer of a `LazyLock` or the setter of a `OnceLock` wrote before is ordered
/// before what a thread reads after `LazyLock::get` (std 1.94) or a `OnceLock` clone found
/// the value.
#[test]
fn lazy_lock_get_and_once_lock_clone_acquire_the_initialization() {
    no_race(|| {
        let shared = Arc::new((OnceLock::new(), Data::default(), Data::default()));
        let s = shared.clone();
        let lazy = Arc::new(pctvb::sync::LazyLock::new(move || {
            s.2.write(4);
            4u64
        }));
        let (s, l) = (shared.clone(), lazy.clone());
        let reader = thread::spawn(move || {
            if let Some(v) = OnceLock::clone(&s.0).into_inner() {
                assert_eq!(s.1.read(), v);
            }
            if let Some(v) = pctvb::sync::LazyLock::get(&l) {
                assert_eq!(s.2.read(), *v);
            }
        });
        shared.1.write(5);
        shared.0.set(5u64).unwrap();
        assert_eq!(**lazy, 4);
        reader.join().unwrap();
    });
}
