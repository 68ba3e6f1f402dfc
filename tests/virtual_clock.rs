//! The clock `std::time::Instant::now()` reads inside an execution (Linux with glibc only:
//! pctvb interposes `clock_gettime` there, `src/runtime/time.rs`): virtual, advanced by one
//! microsecond per read and by pctvb's timeouts and sleeps, blind to real time the OS thread
//! spends; outside executions, the real clock.
//!
//! These tests also check that the interposition happens at all in a test binary (the
//! symbol must win over glibc's at link time): in a build where it did not, the first
//! assertion of `reads_inside_an_execution_differ_by_one_quantum` fails.

#![cfg(all(target_os = "linux", target_env = "gnu"))]

#[path = "common/replays.rs"]
mod replays;

use std::sync::Mutex as StdMutex;
use std::time::{Duration, Instant};

use pctvb::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use pctvb::sync::{mpsc, Arc, Condvar, Mutex};
use pctvb::{thread, Config, StrategyKind};

const QUANTUM: Duration = Duration::from_micros(1);

fn config() -> Config {
    Config::new().ignore_env().seed(0x71e).workers(1)
}

/// `clock`'s reading by the kernel itself (a raw system call, which pctvb cannot see).
fn syscall_now(clock: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec for the kernel to write.
    let r = unsafe { libc::syscall(libc::SYS_clock_gettime, clock, &mut ts) };
    assert_eq!(r, 0, "clock_gettime system call");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// `clock`'s reading through the C library's `clock_gettime` (the interposed one).
fn libc_now(clock: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write.
    let r = unsafe { libc::clock_gettime(clock, &mut ts) };
    assert_eq!(r, 0, "clock_gettime");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[test]
fn reads_inside_an_execution_differ_by_one_quantum() {
    static FIRST: StdMutex<Vec<Instant>> = StdMutex::new(Vec::new());
    let report = config().iterations(20).run(|| {
        let a = Instant::now();
        let b = Instant::now();
        assert_eq!(b - a, QUANTUM, "consecutive reads inside an execution");
        // Real time the OS thread spends is not seen.
        std::thread::sleep(Duration::from_millis(3));
        let c = Instant::now();
        assert_eq!(c - b, QUANTUM, "a real sleep moved the virtual clock");
        // A deadline loop with no scheduling point ends, after exactly one read per quantum.
        let deadline = c + Duration::from_millis(10);
        let mut reads = 0u64;
        while Instant::now() < deadline {
            reads += 1;
        }
        assert_eq!(reads, 9_999, "reads before the deadline");
        FIRST.lock().unwrap().push(a);
        // A second thread, so that the run has schedules to choose from (a run of one thread
        // stops after one execution); the clock is the execution's, not the thread's.
        let d = thread::spawn(Instant::now).join().unwrap();
        assert_eq!(d - deadline, QUANTUM);
    });
    report.assert_ok();
    let first = FIRST.lock().unwrap();
    assert_eq!(first.len(), 20);
    assert!(first.iter().all(|&t| t == first[0]), "every execution starts at the same time");
    // The base is the real clock when the run started: before now, not far in the past.
    let age = Instant::now().duration_since(first[0]);
    assert!(age > Duration::ZERO && age < Duration::from_secs(600), "base {age:?} ago");
}

#[test]
fn every_monotonic_clock_is_virtual_inside_and_other_clocks_are_real() {
    let report = config().iterations(3).run(|| {
        for clock in [
            libc::CLOCK_MONOTONIC,
            libc::CLOCK_MONOTONIC_RAW,
            libc::CLOCK_MONOTONIC_COARSE,
            libc::CLOCK_BOOTTIME,
        ] {
            let a = libc_now(clock);
            std::thread::sleep(Duration::from_millis(2));
            let b = libc_now(clock);
            assert_eq!(b - a, QUANTUM, "clock {clock}");
            // The kernel's own reading has moved on by the real sleep, at least (not checked
            // for the coarse clock, which lags the others by up to a timer tick, 10 ms).
            if clock != libc::CLOCK_MONOTONIC_COARSE {
                assert!(syscall_now(clock) >= b + Duration::from_millis(2), "clock {clock}");
            }
        }
        // The wall clock stays real: bracketed by two system calls.
        let before = syscall_now(libc::CLOCK_REALTIME);
        let wall = libc_now(libc::CLOCK_REALTIME);
        let after = syscall_now(libc::CLOCK_REALTIME);
        assert!(before <= wall && wall <= after, "{before:?} {wall:?} {after:?}");
    });
    report.assert_ok();
}

#[test]
fn outside_executions_the_clock_is_real() {
    for clock in [libc::CLOCK_MONOTONIC, libc::CLOCK_BOOTTIME, libc::CLOCK_REALTIME] {
        let before = syscall_now(clock);
        let read = libc_now(clock);
        let after = syscall_now(clock);
        assert!(before <= read && read <= after, "clock {clock}: {before:?} {read:?} {after:?}");
    }
    let a = Instant::now();
    std::thread::sleep(Duration::from_millis(2));
    assert!(a.elapsed() >= Duration::from_millis(2));
    // Also between the executions of a run, and on OS threads next to one.
    let report = config().iterations(2).run(|| {
        let inside = Instant::now();
        let outside = std::thread::spawn(|| {
            let before = syscall_now(libc::CLOCK_MONOTONIC);
            let read = libc_now(libc::CLOCK_MONOTONIC);
            (before, read, syscall_now(libc::CLOCK_MONOTONIC))
        });
        let (before, read, after) = outside.join().unwrap();
        assert!(before <= read && read <= after, "an OS thread's read");
        assert_eq!(Instant::now() - inside, QUANTUM);
    });
    report.assert_ok();
}

/// The shape of oneshot's `recv_timeout` under loom (issue #17): a deadline from
/// `Instant::now()`, then a loop that yields until the message is there or the deadline
/// passed. The sender's OS thread sleeps for real (2 ms, past the 1 ms timeout) before it
/// sends: what the OS descheduling the test's thread does. With the real clock (pctvb before
/// the virtual clock, commit b232a01) this test fails at its first execution, as every
/// execution would: the deadline is taken before the sender runs, and the sleep passes it
/// (all six tests of this file fail there). The virtual clock does not see the sleep, so
/// the receiver never times out: all 100 executions must pass, whatever the seed (no
/// schedule times out).
#[test]
fn a_real_delay_does_not_time_out_a_deadline_loop() {
    let report = config().iterations(100).run(|| {
        let sent = Arc::new(AtomicBool::new(false));
        let deadline = Instant::now() + Duration::from_millis(1);
        let sender = {
            let sent = sent.clone();
            thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(2));
                sent.store(true, SeqCst);
            })
        };
        let got = loop {
            if sent.load(SeqCst) {
                break true;
            }
            if Instant::now() >= deadline {
                break false;
            }
            thread::yield_now();
        };
        assert!(got, "the receiver timed out");
        sender.join().unwrap();
    });
    report.assert_ok();
    assert_eq!(report.executions, 100);
}

/// A receiver that gives up after 15 reads of the clock, and a sender that takes 60 steps
/// before it sends: whether the receiver times out depends on the schedule alone (the
/// receiver reads once per turn of its loop, and it yields in each until the sender makes a
/// step). The
/// failing execution's token replays it (twice, each a single execution that fails the same
/// way), and the report does not say that the replay diverged. Fixed seed.
#[test]
fn a_timeout_by_the_virtual_clock_replays() {
    fn body() {
        let sent = Arc::new(AtomicBool::new(false));
        let work = Arc::new(AtomicUsize::new(0));
        let deadline = Instant::now() + 15 * QUANTUM;
        let sender = {
            let (sent, work) = (sent.clone(), work.clone());
            thread::spawn(move || {
                for _ in 0..60 {
                    work.fetch_add(1, SeqCst);
                }
                sent.store(true, SeqCst);
            })
        };
        loop {
            if sent.load(SeqCst) {
                break;
            }
            assert!(Instant::now() < deadline, "timed out");
            thread::yield_now();
        }
        sender.join().unwrap();
    }
    let config = || config().strategy(StrategyKind::Random).name("virtual_clock::timeout");
    let report = config().iterations(1000).run(body);
    let failure = report.failure().expect("some schedule times out within 1000 executions");
    assert!(failure.message.contains("timed out"), "{}", failure.message);
    assert_eq!(failure.replay_diverges, None);
    replays::assert_token_replays(config, body, failure);
}

/// pctvb's timed waits move the clock to their deadline when they time out (no thread can
/// run), and its `sleep` by its duration: the caller sees at least the timeout pass.
#[test]
fn timeouts_and_sleeps_move_the_clock() {
    let report = config().iterations(5).run(|| {
        let start = Instant::now();
        thread::park_timeout(Duration::from_millis(30));
        let parked = Instant::now();
        assert!(parked - start >= Duration::from_millis(30), "park_timeout: {:?}", parked - start);
        assert!(parked - start < Duration::from_millis(30) + 5 * QUANTUM);

        let (_tx, rx) = mpsc::channel::<u8>();
        assert!(rx.recv_timeout(Duration::from_secs(2)).is_err());
        let received = Instant::now();
        assert!(received - parked >= Duration::from_secs(2), "recv_timeout");

        let pair = (Mutex::new(()), Condvar::new());
        let guard = pair.0.lock().unwrap();
        let (_guard, result) = pair.1.wait_timeout(guard, Duration::from_millis(7)).unwrap();
        assert!(result.timed_out());
        let waited = Instant::now();
        assert!(waited - received >= Duration::from_millis(7), "wait_timeout");

        thread::sleep(Duration::from_secs(1));
        let slept = Instant::now();
        assert!(slept - waited >= Duration::from_secs(1), "sleep");
    });
    report.assert_ok();
}
