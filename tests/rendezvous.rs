//! A rendezvous channel (`sync_channel(0)`) behaves as std's, inside executions and outside:
//! - `try_send` succeeds only when the receiver waits in a receive (`recv`, `recv_timeout`)
//!   at that moment; otherwise it fails with `Full` (`Disconnected` once the receiver is gone),
//!   so a correct program that relies on that passes and one that assumes `try_send`
//!   succeeds is caught;
//! - a blocking `send` returns `Ok` only once the receiver took its message; if the receiver is
//!   dropped without taking it, the send fails and gives the message back.
//!
//! Every run inside executions uses a fixed seed (`SEED`, `ignore_env`), so each test is
//! deterministic and cannot fail by chance. The budgets are generous besides: the buggy
//! program's bug was found by execution 32 at the latest over seeds 0-199 (budget 1000), and
//! each "both outcomes were explored" check needs only one execution of each.

use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering as StdOrdering};
use std::time::Duration;

use pctvb::sync::atomic::{AtomicBool, Ordering};
use pctvb::sync::mpsc::{self, RecvTimeoutError, SendError, TryRecvError, TrySendError};
use pctvb::sync::Arc;
use pctvb::{thread, Config, Report};

/// The fixed seed of every run here.
const SEED: u64 = 0x5e4d;

fn run(iterations: u64, body: impl Fn() + Sync) -> Report {
    Config::new().ignore_env().seed(SEED).iterations(iterations).show_panics(false).run(body)
}

/// `body` passes all its `iterations` executions, over more than one schedule.
fn passes(iterations: u64, body: impl Fn() + Sync) {
    let report = run(iterations, body);
    assert!(report.error().is_none(), "could not test: {}", report.error().unwrap());
    assert!(report.is_ok(), "unexpected failure:\n{}", report.failure().unwrap());
    assert_eq!(report.executions, iterations);
    assert!(report.stats.distinct_schedules > 1, "the schedule must vary");
}

/// Correct: the receiver never waits in a receive (it only polls with `try_recv`, then goes
/// away), so a `try_send` can never succeed: std returns `Full` (or `Disconnected` once the
/// receiver is dropped) in every interleaving.
#[test]
fn try_send_without_a_waiting_receiver_fails_in_every_execution() {
    static FULL: StdAtomicUsize = StdAtomicUsize::new(0);
    static DISCONNECTED: StdAtomicUsize = StdAtomicUsize::new(0);
    passes(2000, || {
        let (tx, rx) = mpsc::sync_channel::<u32>(0);
        let worker = thread::spawn(move || {
            // Polling is no waiting: std's try_recv on a rendezvous channel takes a message
            // only from a sender blocked in `send`.
            assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
        });
        match tx.try_send(7) {
            Ok(()) => panic!("try_send succeeded with no receiver waiting"),
            Err(TrySendError::Full(7)) => FULL.fetch_add(1, StdOrdering::Relaxed),
            Err(TrySendError::Disconnected(7)) => DISCONNECTED.fetch_add(1, StdOrdering::Relaxed),
            Err(e) => panic!("the message changed: {e:?}"),
        };
        worker.join().unwrap();
        // Once the receiver is gone, always Disconnected, with the message.
        assert_eq!(tx.try_send(8), Err(TrySendError::Disconnected(8)));
    });
    // Both orders were explored: the try_send before and after the receiver's drop.
    assert!(FULL.load(StdOrdering::Relaxed) > 0, "never Full");
    assert!(DISCONNECTED.load(StdOrdering::Relaxed) > 0, "never Disconnected");
}

/// Correct, with nobody receiving at all in one thread: Full, then Disconnected.
#[test]
fn try_send_is_full_then_disconnected_in_one_thread() {
    let report = run(10, || {
        let (tx, rx) = mpsc::sync_channel::<u32>(0);
        assert_eq!(tx.try_send(1), Err(TrySendError::Full(1)));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty), "a failed try_send left nothing");
        drop(rx);
        assert_eq!(tx.try_send(2), Err(TrySendError::Disconnected(2)));
        assert_eq!(tx.send(3), Err(SendError(3)));
    });
    assert!(report.is_ok(), "unexpected failure:\n{}", report.failure().unwrap());
}

/// The buggy program: `try_send(..).unwrap()` racing the receiver's `recv`. Under std it
/// panics whenever the main thread gets there before the worker waits (most runs); the search
/// must find that interleaving.
fn try_send_races_recv() {
    let (tx, rx) = mpsc::sync_channel::<u32>(0);
    let worker = thread::spawn(move || rx.recv().unwrap());
    tx.try_send(1).unwrap(); // bug: the worker may not be waiting yet
    assert_eq!(worker.join().unwrap(), 1);
}

#[test]
fn a_try_send_that_assumes_a_waiting_receiver_is_caught() {
    let report = run(1000, try_send_races_recv);
    let failure = report.failure().unwrap_or_else(|| {
        panic!("the bug was missed: {}", report.summary());
    });
    assert!(failure.message.contains("Full"), "the unwrap of Full panics: {}", failure.message);
    // Its replay fails the same way.
    let token = failure.token.clone().expect("a replay token");
    let replayed =
        Config::new().ignore_env().show_panics(false).replay(token).run(try_send_races_recv);
    assert_eq!(replayed.failure().expect("the replay fails").message, failure.message);
}

/// The same program, fixed: retry until the worker waits. `try_send` then hands the message
/// over (it succeeded in some execution on the first try, when the worker was waiting
/// already) and the worker receives exactly it.
#[test]
fn try_send_hands_the_message_to_a_waiting_receiver() {
    static FIRST_TRY: StdAtomicUsize = StdAtomicUsize::new(0);
    static RETRIED: StdAtomicUsize = StdAtomicUsize::new(0);
    passes(2000, || {
        let (tx, rx) = mpsc::sync_channel::<u32>(0);
        let worker = thread::spawn(move || rx.recv().unwrap());
        let mut value = 1;
        let mut tries = 0;
        loop {
            tries += 1;
            match tx.try_send(value) {
                Ok(()) => break,
                Err(TrySendError::Full(v)) => {
                    value = v;
                    thread::yield_now();
                }
                Err(TrySendError::Disconnected(_)) => panic!("the receiver is alive"),
            }
        }
        let counter = if tries == 1 { &FIRST_TRY } else { &RETRIED };
        counter.fetch_add(1, StdOrdering::Relaxed);
        // A second try_send finds nobody waiting: the worker receives once, and until it has
        // the first message, that one fills the channel.
        assert!(tx.try_send(2).is_err(), "a second message handed to nobody");
        assert_eq!(worker.join().unwrap(), 1);
    });
    assert!(FIRST_TRY.load(StdOrdering::Relaxed) > 0, "never waiting at the first try");
    assert!(RETRIED.load(StdOrdering::Relaxed) > 0, "never not waiting at the first try");
}

/// A blocking send whose receiver is dropped without receiving fails and gives the message
/// back, whether the receiver was gone before the send or went while the send waited; `Ok`
/// would claim a receipt that never happened.
#[test]
fn a_send_to_a_receiver_dropped_without_receiving_returns_the_message() {
    passes(2000, || {
        let (tx, rx) = mpsc::sync_channel::<String>(0);
        let worker = thread::spawn(move || drop(rx));
        assert_eq!(tx.send("hello".to_string()), Err(SendError("hello".to_string())));
        worker.join().unwrap();
    });
}

/// `Ok` from a rendezvous send means the receiver took the message, even when the receiver
/// may also give up: the worker receives or drops its receiver, depending on a flag the main
/// thread may set concurrently.
#[test]
fn a_send_is_ok_exactly_when_the_message_was_received() {
    static OK: StdAtomicUsize = StdAtomicUsize::new(0);
    static ERR: StdAtomicUsize = StdAtomicUsize::new(0);
    passes(2000, || {
        let (tx, rx) = mpsc::sync_channel::<u32>(0);
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let worker =
            thread::spawn(
                move || {
                    if s.load(Ordering::SeqCst) {
                        None
                    } else {
                        Some(rx.recv().unwrap())
                    }
                },
            );
        stop.store(true, Ordering::SeqCst);
        let sent = tx.send(5);
        let received = worker.join().unwrap();
        match sent {
            Ok(()) => {
                assert_eq!(received, Some(5), "send returned Ok but nobody received");
                OK.fetch_add(1, StdOrdering::Relaxed);
            }
            Err(SendError(v)) => {
                assert_eq!(v, 5);
                assert_eq!(received, None, "received, yet the send failed");
                ERR.fetch_add(1, StdOrdering::Relaxed);
            }
        }
    });
    assert!(OK.load(StdOrdering::Relaxed) > 0, "the receipt was never explored");
    assert!(ERR.load(StdOrdering::Relaxed) > 0, "the receiver's drop was never explored");
}

/// The usual handoff still works: two senders, every message received once, in each sender's
/// order, and each send returns after its receipt.
#[test]
fn a_rendezvous_handoff_between_two_senders_and_a_receiver() {
    passes(2000, || {
        let (tx, rx) = mpsc::sync_channel::<(u32, u32)>(0);
        let senders: Vec<_> = (0..2)
            .map(|s| {
                let tx = tx.clone();
                thread::spawn(move || {
                    for i in 0..2 {
                        tx.send((s, i)).unwrap();
                    }
                })
            })
            .collect();
        drop(tx);
        let mut next = [0, 0];
        for (s, i) in rx.iter() {
            assert_eq!(i, next[s as usize], "out of order");
            next[s as usize] += 1;
        }
        assert_eq!(next, [2, 2]);
        for h in senders {
            h.join().unwrap();
        }
    });
}

/// A receiver in `recv_timeout` waits too: a `try_send` while it waits hands it the message,
/// which it receives (never a timeout with a message handed over). A `try_send` before the
/// receiver waits fails, and nobody else sends: the receiver times out (inside an execution
/// time passes only when no thread can run: here, once the main thread waits in `join`).
#[test]
fn a_receiver_in_recv_timeout_is_waiting() {
    static HANDED: StdAtomicUsize = StdAtomicUsize::new(0);
    static TIMED_OUT: StdAtomicUsize = StdAtomicUsize::new(0);
    passes(2000, || {
        let (tx, rx) = mpsc::sync_channel::<u32>(0);
        let worker = thread::spawn(move || match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(v) => Some(v),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => panic!("the sender is alive"),
        });
        let handed = match tx.try_send(3) {
            Ok(()) => true,
            Err(TrySendError::Full(3)) | Err(TrySendError::Disconnected(3)) => false,
            Err(e) => panic!("the message changed: {e:?}"),
        };
        let received = worker.join().unwrap();
        if handed {
            assert_eq!(received, Some(3), "a message handed over was not received");
            HANDED.fetch_add(1, StdOrdering::Relaxed);
        } else {
            assert_eq!(received, None);
            TIMED_OUT.fetch_add(1, StdOrdering::Relaxed);
        }
    });
    assert!(HANDED.load(StdOrdering::Relaxed) > 0, "never handed over");
    assert!(TIMED_OUT.load(StdOrdering::Relaxed) > 0, "never timed out");
}

// Outside any execution the facade is std's: the same rules on OS threads.

#[test]
fn outside_try_send_needs_a_waiting_receiver() {
    let (tx, rx) = mpsc::sync_channel::<u32>(0);
    assert_eq!(tx.try_send(1), Err(TrySendError::Full(1)));
    let worker = std::thread::spawn(move || {
        let got = rx.recv().unwrap();
        (got, rx)
    });
    // Full until the worker waits in recv, then handed over.
    let mut value = 2;
    loop {
        match tx.try_send(value) {
            Ok(()) => break,
            Err(TrySendError::Full(v)) => {
                value = v;
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    let (got, rx) = worker.join().unwrap();
    assert_eq!(got, 2);
    // Nobody waits now.
    assert_eq!(tx.try_send(3), Err(TrySendError::Full(3)));
    drop(rx);
    assert_eq!(tx.try_send(4), Err(TrySendError::Disconnected(4)));
}

#[test]
fn outside_a_receiver_in_recv_timeout_is_waiting_until_it_times_out() {
    let (tx, rx) = mpsc::sync_channel::<u32>(0);
    let worker = std::thread::spawn(move || {
        let first = rx.recv_timeout(Duration::from_secs(60));
        let second = rx.recv_timeout(Duration::from_millis(20));
        (first, second, rx)
    });
    let mut value = 1;
    loop {
        match tx.try_send(value) {
            Ok(()) => break,
            Err(TrySendError::Full(v)) => {
                value = v;
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    let (first, second, _rx) = worker.join().unwrap();
    assert_eq!(first, Ok(1));
    assert_eq!(second, Err(RecvTimeoutError::Timeout));
    // The timed-out receiver no longer waits.
    assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
}

#[test]
fn outside_a_send_to_a_receiver_dropped_while_it_waits_returns_the_message() {
    let (tx, rx) = mpsc::sync_channel::<u32>(0);
    let dropper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        drop(rx);
    });
    // Waits for a receipt that never comes, then gets its message back.
    assert_eq!(tx.send(9), Err(SendError(9)));
    dropper.join().unwrap();
    // And before the send: the same.
    assert_eq!(tx.send(10), Err(SendError(10)));
}

#[test]
fn outside_a_rendezvous_send_returns_after_its_receipt() {
    let (tx, rx) = mpsc::sync_channel::<u32>(0);
    let received = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let r = received.clone();
    let worker = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        let v = rx.recv().unwrap();
        r.store(true, std::sync::atomic::Ordering::SeqCst);
        v
    });
    tx.send(4).unwrap();
    assert_eq!(worker.join().unwrap(), 4);
    assert!(received.load(std::sync::atomic::Ordering::SeqCst));
}
