//! `pctvb::future` composes with executor-independent crates: `futures`'s oneshot channel
//! and `join!` run under pctvb's control (fixed seeds), and a dropped sender is a canceled
//! receive, not a hang; `event-listener`'s `Event` and `async-lock`'s `Mutex` run under
//! every strategy, and a notification sent before its flag is found (with the limits stated
//! above those tests).

use futures::channel::oneshot;
use pctvb::future::{block_on, spawn, yield_now};
use pctvb::sync::atomic::{AtomicUsize, Ordering};
use pctvb::sync::Arc;
use pctvb::{Config, StrategyKind};

fn passes(strategy: StrategyKind, body: impl Fn() + Sync) {
    let report = Config::new().ignore_env().seed(9).iterations(500).strategy(strategy).run(body);
    assert!(report.is_ok(), "unexpected failure:\n{}", report.failure().unwrap());
    assert!(report.stats.distinct_schedules > 1, "the schedule must vary");
}

#[test]
fn oneshot_and_join_run_under_every_strategy() {
    for strategy in
        [StrategyKind::UniformWalk, StrategyKind::Random, StrategyKind::Pct { depth: 3 }]
    {
        passes(strategy, || {
            let hits = Arc::new(AtomicUsize::new(0));
            let (tx_a, rx_a) = oneshot::channel::<u32>();
            let (tx_b, rx_b) = oneshot::channel::<u32>();
            let h = hits.clone();
            let producer = spawn(async move {
                h.fetch_add(1, Ordering::SeqCst);
                tx_a.send(1).unwrap();
                yield_now().await;
                tx_b.send(2).unwrap();
            });
            let (a, b, ()) = block_on(async { futures::join!(rx_a, rx_b, producer) });
            assert_eq!((a.unwrap(), b.unwrap()), (1, 2));
            assert_eq!(hits.load(Ordering::SeqCst), 1);
        });
    }
}

#[test]
fn a_dropped_oneshot_sender_cancels_the_receiver() {
    passes(StrategyKind::UniformWalk, || {
        let (tx, rx) = oneshot::channel::<u32>();
        let dropper = spawn(async move { drop(tx) });
        assert!(block_on(rx).is_err());
        block_on(dropper);
    });
}

#[test]
fn a_lost_wakeup_through_futures_is_found() {
    // A receiver whose sender is leaked (kept alive but never used) waits forever.
    let report = Config::new().ignore_env().seed(9).iterations(20).run(|| {
        let (tx, rx) = oneshot::channel::<u32>();
        let task = spawn(async move { rx.await.ok() });
        std::mem::forget(tx);
        block_on(task);
    });
    let failure = report.failure().expect("the receiver waits forever");
    assert!(failure.message.starts_with("lost wake-up"), "{}", failure.message);
}

// smol-rs's executor-independent `event-listener` (5.x) and `async-lock` (3.x, built on it).
//
// What pctvb controls here, and what it does not: these crates synchronize with std's
// atomics and a std `Mutex` (event-listener's list of listeners), which pctvb does not see.
// Its scheduling points in these tests are only its own: the polls `block_on` makes, the
// operations on pctvb's atomics the programs do themselves, and `yield_now` (a wake is not
// one: it only makes the woken task runnable). So pctvb explores the orders
// of those points, not the interleavings inside `listen`, `notify` or the lock's
// compare-exchanges; a bug whose window lies entirely between two of the crates' own atomic
// operations is invisible to it. A notification lost between the program's own state and
// the event, as below, is in reach.
//
// event-listener calls a listener's waker while it holds its std `Mutex`. When a wake was a
// scheduling point, pctvb could switch there to a task that then listens to or notifies the
// same event and blocks its OS thread on that std mutex: two tasks running `wait_for` and one
// notifier hung in the first execution of seed 9 until the watchdog ended the process. A wake
// is no longer a scheduling point (the waking thread's next pctvb operation is), and
// `several_waiters_on_one_event_do_not_hang` below checks that case.

use async_lock::Mutex as AsyncMutex;
use event_listener::Event;
use pctvb::sync::atomic::AtomicBool;

/// Waits for `ready` with event-listener's documented pattern: check, listen, check again,
/// await.
async fn wait_for(ready: &AtomicBool, event: &Event) {
    loop {
        if ready.load(Ordering::SeqCst) {
            return;
        }
        let listener = event.listen();
        if ready.load(Ordering::SeqCst) {
            return;
        }
        listener.await;
    }
}

/// A flag published through an `Event`; `publish_first` is the correct order (the flag, then
/// the notification), false the lost-notification bug.
fn flag_and_event(publish_first: bool) {
    let ready = Arc::new(AtomicBool::new(false));
    let event = Arc::new(Event::new());
    let (r, e) = (ready.clone(), event.clone());
    let waiter = spawn(async move { wait_for(&r, &e).await });
    if publish_first {
        ready.store(true, Ordering::SeqCst);
        event.notify(usize::MAX);
    } else {
        event.notify(usize::MAX);
        ready.store(true, Ordering::SeqCst);
    }
    waiter.join();
}

#[test]
fn event_listener_runs_under_every_strategy() {
    for strategy in
        [StrategyKind::UniformWalk, StrategyKind::Random, StrategyKind::Pct { depth: 3 }]
    {
        passes(strategy, || flag_and_event(true));
    }
}

/// Two tasks wait on one event and the body notifies it: a wake under event-listener's std
/// `Mutex` must not hand the processor to a task that takes that mutex (fixed seed 9, which
/// hung when a wake was a scheduling point).
#[test]
fn several_waiters_on_one_event_do_not_hang() {
    for strategy in
        [StrategyKind::UniformWalk, StrategyKind::Random, StrategyKind::Pct { depth: 3 }]
    {
        passes(strategy, || {
            let ready = Arc::new(AtomicBool::new(false));
            let event = Arc::new(Event::new());
            let waiters: Vec<_> = (0..2)
                .map(|_| {
                    let (r, e) = (ready.clone(), event.clone());
                    spawn(async move { wait_for(&r, &e).await })
                })
                .collect();
            ready.store(true, Ordering::SeqCst);
            event.notify(usize::MAX);
            for w in waiters {
                w.join();
            }
        });
    }
}

#[test]
fn an_event_notified_before_its_flag_is_found() {
    // The notification comes before the flag: sent while the waiter has no listener yet (or
    // taken by a listener it then replaces), it is lost, the waiter sees no flag after
    // listening and waits forever. Seed 9 finds it in the first execution (1 preemption).
    let report = Config::new().ignore_env().seed(9).iterations(500).run(|| flag_and_event(false));
    let failure = report.failure().expect("the notification is lost");
    assert!(
        failure.message.starts_with("lost wake-up") || failure.message.contains("deadlock"),
        "{}",
        failure.message
    );
}

#[test]
fn async_lock_mutex_runs_under_every_strategy() {
    for strategy in
        [StrategyKind::UniformWalk, StrategyKind::Random, StrategyKind::Pct { depth: 3 }]
    {
        passes(strategy, || {
            let counter = std::sync::Arc::new(AsyncMutex::new(0u32));
            let tasks: Vec<_> = (0..2)
                .map(|_| {
                    let counter = counter.clone();
                    spawn(async move {
                        // Holding the guard across an await: the other task's `lock` waits on
                        // the mutex's event and is woken by the unlock.
                        let mut guard = counter.lock().await;
                        let seen = *guard;
                        yield_now().await;
                        *guard = seen + 1;
                    })
                })
                .collect();
            for task in tasks {
                task.join();
            }
            assert_eq!(*block_on(counter.lock()), 2);
        });
    }
}
