//! `pctvb::future` under every strategy, with fixed seeds: tasks joined and awaited, an async
//! mutex and a channel built on `pctvb::sync::Mutex` and wakers pass every execution, and a
//! channel that loses a wake-up is reported as a lost wake-up that replays. A wake is not a
//! scheduling point, and the tests at the end show that no interleaving is lost by that (guide
//! section 13): the woken task runs before and after the waker's next operation, and what the
//! waker does after the wake races with the woken task.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex as StdMutex;
use std::task::{Context, Poll, Waker};

use pctvb::future::{block_on, spawn, yield_now};
use pctvb::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use pctvb::sync::{mpsc, Arc, Mutex};
use pctvb::{Config, FailureKind, StrategyKind};

fn strategies() -> Vec<StrategyKind> {
    vec![
        StrategyKind::UniformWalk,
        StrategyKind::Random,
        StrategyKind::Pct { depth: 3 },
        StrategyKind::Pctvb { depth: 3, vars: 2 },
        StrategyKind::ThreadBound { threads: 2, preemptions: 2 },
        StrategyKind::Combined { depth: 3, vars: 2, threads: 2 },
        StrategyKind::systematic(2, 2, 2),
    ]
}

/// Runs `body` 300 times (seed 7) under every strategy and asserts every execution passes.
fn passes_everywhere(body: impl Fn() + Sync) {
    for strategy in strategies() {
        let name = format!("{strategy:?}");
        let report =
            Config::new().ignore_env().seed(7).iterations(300).strategy(strategy).run(&body);
        assert!(report.is_ok(), "{name}: unexpected failure:\n{}", report.failure().unwrap());
        assert!(report.executions > 1, "{name}: ran {} executions", report.executions);
    }
}

#[test]
fn spawned_tasks_are_awaited_and_joined() {
    passes_everywhere(|| {
        let n = Arc::new(AtomicUsize::new(0));
        let total = block_on(async {
            let handles: Vec<_> = (1..=3)
                .map(|i| {
                    let n = n.clone();
                    spawn(async move {
                        n.fetch_add(i, Ordering::SeqCst);
                        yield_now().await;
                        i * 10
                    })
                })
                .collect();
            let mut total = 0;
            for h in handles {
                total += h.await;
            }
            total
        });
        assert_eq!(total, 60);
        assert_eq!(n.load(Ordering::SeqCst), 6);
        // A blocking join from a thread that is not in block_on.
        let h = spawn(async { 5 });
        assert_eq!(h.join(), 5);
    });
}

#[test]
fn the_schedule_varies_between_tasks() {
    let report = Config::new().ignore_env().seed(3).iterations(200).run(|| {
        let order = Arc::new(Mutex::new(Vec::new()));
        let hs: Vec<_> = (0..2)
            .map(|i| {
                let order = order.clone();
                spawn(async move { order.lock().unwrap().push(i) })
            })
            .collect();
        block_on(async {
            for h in hs {
                h.await
            }
        });
        let order = order.lock().unwrap().clone();
        assert_eq!(order, vec![0, 1], "task 1 ran first");
    });
    let failure = report.failure().expect("both orders of two tasks are explored");
    assert!(failure.message.contains("task 1 ran first"), "{}", failure.message);
}

/// Queues `waker`, or replaces the queued waker of the same task: a future polled again
/// before its wake-up (a spurious poll, which pctvb explores) must not queue itself twice, or
/// the duplicate takes a wake-up meant for another task.
fn register(queue: &mut VecDeque<Waker>, waker: &Waker) {
    match queue.iter_mut().find(|w| w.will_wake(waker)) {
        Some(queued) => queued.clone_from(waker),
        None => queue.push_back(waker.clone()),
    }
}

/// An async mutex: a `pctvb::sync::Mutex` over "locked" and the wakers of waiting tasks.
struct AsyncMutex<T> {
    state: Mutex<(bool, VecDeque<Waker>)>,
    value: Mutex<T>,
}

impl<T> AsyncMutex<T> {
    fn new(value: T) -> Self {
        AsyncMutex { state: Mutex::new((false, VecDeque::new())), value: Mutex::new(value) }
    }

    fn lock(&self) -> Acquire<'_, T> {
        Acquire { mutex: self }
    }

    fn unlock(&self) {
        let next = {
            let mut st = self.state.lock().unwrap();
            st.0 = false;
            st.1.pop_front()
        };
        if let Some(w) = next {
            w.wake();
        }
    }
}

struct Acquire<'a, T> {
    mutex: &'a AsyncMutex<T>,
}

impl<T> Future for Acquire<'_, T> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut st = self.mutex.state.lock().unwrap();
        if !st.0 {
            st.0 = true;
            // Polled before its wake-up (a spurious poll), its waker is still queued: out, or
            // it would take the next unlock's wake-up from a waiting task.
            st.1.retain(|w| !w.will_wake(cx.waker()));
            return Poll::Ready(());
        }
        // Registered in the same critical section as the check: no wake-up can be missed. Once
        // per task (a spurious poll replaces its queued waker, as `Future::poll` asks).
        register(&mut st.1, cx.waker());
        Poll::Pending
    }
}

#[test]
fn async_mutex_counter_never_loses_an_update() {
    passes_everywhere(|| {
        let counter = Arc::new(AsyncMutex::new(0));
        let tasks: Vec<_> = (0..3)
            .map(|_| {
                let counter = counter.clone();
                spawn(async move {
                    counter.lock().await;
                    let v = *counter.value.lock().unwrap();
                    yield_now().await;
                    *counter.value.lock().unwrap() = v + 1;
                    counter.unlock();
                })
            })
            .collect();
        block_on(async {
            for t in tasks {
                t.await;
            }
        });
        assert_eq!(*counter.value.lock().unwrap(), 3);
    });
}

/// A channel: a queue under a `pctvb::sync::Mutex` and the receivers' wakers. `one_slot`
/// keeps a single waker, so a second receiver's registration drops the first's: the bug.
struct Channel {
    state: Mutex<(VecDeque<u32>, VecDeque<Waker>)>,
    one_slot: bool,
}

impl Channel {
    fn new(one_slot: bool) -> Arc<Channel> {
        Arc::new(Channel { state: Mutex::new((VecDeque::new(), VecDeque::new())), one_slot })
    }

    fn send(&self, v: u32) {
        let waiter = {
            let mut st = self.state.lock().unwrap();
            st.0.push_back(v);
            st.1.pop_front()
        };
        if let Some(w) = waiter {
            w.wake();
        }
    }

    fn recv(self: &Arc<Self>) -> Recv {
        Recv { channel: self.clone() }
    }
}

struct Recv {
    channel: Arc<Channel>,
}

impl Future for Recv {
    type Output = u32;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        let mut st = self.channel.state.lock().unwrap();
        if let Some(v) = st.0.pop_front() {
            st.1.retain(|w| !w.will_wake(cx.waker()));
            return Poll::Ready(v);
        }
        if self.channel.one_slot {
            st.1.clear(); // the bug: drops (and never calls) another receiver's waker
        }
        register(&mut st.1, cx.waker());
        Poll::Pending
    }
}

fn two_receivers(one_slot: bool) -> impl Fn() + Sync {
    move || {
        let channel = Channel::new(one_slot);
        let receivers: Vec<_> = (0..2)
            .map(|_| {
                let channel = channel.clone();
                spawn(async move { channel.recv().await })
            })
            .collect();
        channel.send(1);
        channel.send(2);
        let mut got = block_on(async {
            let mut got = Vec::new();
            for r in receivers {
                got.push(r.await);
            }
            got
        });
        got.sort();
        assert_eq!(got, vec![1, 2]);
    }
}

#[test]
fn channel_with_a_waker_per_receiver_never_loses_a_wakeup() {
    passes_everywhere(two_receivers(false));
}

#[test]
fn channel_that_drops_a_waker_is_reported_as_a_lost_wakeup_that_replays() {
    let config = || Config::new().ignore_env().seed(11).iterations(2000).name("future::lost");
    let report = config().run(two_receivers(true));
    let failure = report.failure().expect("the lost wake-up is found");
    assert_eq!(failure.kind, FailureKind::Deadlock);
    let message = &failure.message;
    assert!(message.starts_with("lost wake-up"), "{message}");
    assert!(
        message.contains("lost wake-up: task ")
            && message.contains("(spawned at tests/future.rs:")
            && message.contains("waits in poll at tests/future.rs:")
            && message.contains("no one holds its waker"),
        "{message}"
    );
    // The main thread waits in block_on for a waker the stuck task's handle holds.
    assert!(message.contains("thread 0 (main) waits in block_on at tests/future.rs:"), "{message}");
    let token = failure.token.clone().expect("a replay token");
    assert!(failure.replay_command.as_deref().unwrap().starts_with("PCTVB_REPLAY="));
    let replay = config().replay(token).run(two_receivers(true));
    let again = replay.failure().expect("the replay reproduces the lost wake-up");
    assert!(again.message.starts_with("lost wake-up"), "{}", again.message);
    let text = failure.to_string();
    assert!(text.contains("wake") && text.contains("poll"), "the schedule shows polls:\n{text}");
}

#[test]
fn a_waker_held_but_never_called_is_a_lost_wakeup_too() {
    let report = Config::new().ignore_env().seed(1).iterations(10).run(|| {
        let stash: Arc<Mutex<Option<Waker>>> = Arc::new(Mutex::new(None));
        block_on(std::future::poll_fn(|cx| {
            *stash.lock().unwrap() = Some(cx.waker().clone());
            Poll::<()>::Pending
        }));
    });
    let failure = report.failure().expect("the wait never ends");
    assert!(failure.message.starts_with("lost wake-up"), "{}", failure.message);
    assert!(failure.message.contains("a clone of its waker is held"), "{}", failure.message);
}

#[test]
fn wakers_outside_executions_and_after_them_are_harmless() {
    // Outside executions: block_on and spawn run on OS threads.
    let h = spawn(async { 2 });
    assert_eq!(
        block_on(async {
            yield_now().await;
            h.await
        }),
        2
    );
    // A waker kept from an execution and called after it (and from another OS thread).
    let kept: std::sync::Mutex<Option<Waker>> = std::sync::Mutex::new(None);
    let report = Config::new().ignore_env().seed(1).iterations(20).run(|| {
        block_on(std::future::poll_fn(|cx| {
            *kept.lock().unwrap() = Some(cx.waker().clone());
            Poll::Ready(())
        }))
    });
    assert!(report.is_ok());
    let waker = kept.lock().unwrap().take().unwrap();
    waker.wake_by_ref();
    std::thread::spawn(move || waker.wake()).join().unwrap();
}

// `#[pctvb::test] async fn`: the body runs under `block_on` (fixed seeds).

#[pctvb::test(iterations = 200, seed = 5, regressions = false)]
async fn async_test_bodies_run_under_block_on() {
    let h = spawn(async {
        yield_now().await;
        21
    });
    assert_eq!(h.await * 2, 42);
}

#[pctvb::test(iterations = 50, seed = 5, regressions = false)]
async fn async_test_bodies_may_return_results() -> Result<(), String> {
    let v: u32 = spawn(async { "7".parse::<u32>() }).await.map_err(|e| e.to_string())?;
    assert_eq!(v, 7);
    Ok(())
}

#[pctvb::test(iterations = 2000, seed = 11, regressions = false)]
#[should_panic(expected = "lost wake-up: task ")]
async fn async_test_bodies_report_lost_wakeups() {
    two_receivers(true)();
}

/// Async bodies run on every core as thread bodies do: the same first failure (index, message)
/// on one worker and on three, and a passing run counts every execution (fixed seeds).
#[test]
fn async_bodies_run_in_parallel_with_the_serial_result() {
    let config = || Config::new().ignore_env().seed(3).iterations(2000).name("future::parallel");
    let serial = config().workers(1).run(two_receivers(true));
    let parallel = config().workers(3).run(two_receivers(true));
    let (s, p) = (serial.failure().expect("found serially"), parallel.failure().expect("found"));
    assert_eq!((s.execution, &s.message), (p.execution, &p.message));

    let correct = || Config::new().ignore_env().seed(3).iterations(600);
    let serial = correct().workers(1).run(two_receivers(false));
    let parallel = correct().workers(3).run(two_receivers(false));
    assert!(serial.is_ok() && parallel.is_ok());
    assert_eq!((serial.executions, parallel.executions), (600, 600));
}

/// A lost wake-up found in an async body is saved to the regression file and replayed first
/// by the next run, which fails the same way before any search (fixed seed).
#[test]
fn async_failures_are_saved_and_replayed_as_regressions() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pctvb-future-regressions-{}", std::process::id()));
    let path = dir.join("lost.txt");
    let _ = std::fs::remove_dir_all(&dir);
    let config = || {
        Config::new()
            .ignore_env()
            .seed(11)
            .iterations(2000)
            .name("future::regression")
            .regressions(&path)
    };
    let first = config().run(two_receivers(true));
    assert!(first.failure().is_some(), "found");
    assert!(std::fs::read_to_string(&path).is_ok_and(|t| t.contains("pctvb2-")), "saved");
    let second = config().run(two_receivers(true));
    assert!(second.replayed, "the saved token was replayed first");
    assert_eq!(second.executions, 1, "and failed on its first replay");
    assert!(second.notes.iter().any(|n| n.contains("still fails")), "{:?}", second.notes);
    let failure = second.failure().expect("the saved failure fails again");
    assert!(failure.message.starts_with("lost wake-up"), "{}", failure.message);
    let _ = std::fs::remove_dir_all(&dir);
}

// A wake is not a scheduling point of its own (wakers run under locks pctvb does not see); the
// waker's next scheduling point stands in for it. These tests show that nothing is lost: the
// woken task's first operation runs before the waker's next operation in some executions and
// after it in others, under every strategy and in the systematic search alone.

/// Returns `Pending` once, after sending its waker over `tx`, and `Ready` when polled again
/// (after a wake).
async fn park_once(tx: &mpsc::Sender<Waker>) {
    let mut parked = false;
    std::future::poll_fn(|cx| {
        if parked {
            return Poll::Ready(());
        }
        parked = true;
        tx.send(cx.waker().clone()).unwrap();
        Poll::Pending
    })
    .await
}

/// Task B parks its waker (sent over a channel) and, once woken, logs `B`; the main thread
/// takes the waker, wakes B, and logs `A` as its next operation. Each execution adds the log
/// to `orders`, with how many executions produced it.
fn wake_then_log(orders: &StdMutex<BTreeMap<String, u64>>) -> impl Fn() + Sync + '_ {
    move || {
        let (tx, rx) = mpsc::channel::<Waker>();
        let log = Arc::new(Mutex::new(String::new()));
        let task = {
            let log = log.clone();
            spawn(async move {
                park_once(&tx).await;
                log.lock().unwrap().push('B');
            })
        };
        let waker = rx.recv().unwrap();
        waker.wake();
        // The waker's next scheduling point: where the woken task may run first.
        log.lock().unwrap().push('A');
        task.join();
        let log = log.lock().unwrap().clone();
        *orders.lock().unwrap().entry(log).or_default() += 1;
    }
}

fn orders_seen(orders: &StdMutex<BTreeMap<String, u64>>) -> Vec<String> {
    orders.lock().unwrap().keys().cloned().collect()
}

#[test]
fn a_woken_task_runs_before_and_after_the_wakers_next_operation() {
    // Every strategy, fixed seed 7, 300 executions each.
    for strategy in strategies() {
        let name = format!("{strategy:?}");
        let orders = StdMutex::new(BTreeMap::new());
        let report = Config::new()
            .ignore_env()
            .seed(7)
            .iterations(300)
            .strategy(strategy)
            .run(wake_then_log(&orders));
        assert!(report.is_ok(), "{name}: {}", report.failure().unwrap());
        assert_eq!(orders_seen(&orders), ["AB", "BA"], "{name}");
    }
}

#[test]
fn the_systematic_search_reaches_both_orders_of_a_wake() {
    // Exhaustive: c <= 1 is enough (the switch at the waker's next operation is one
    // preemption, or none when the woken task has the higher priority). The search needs one
    // profiling execution (a random one); each order is seen in more executions than that one,
    // so the search itself produced both.
    let orders = StdMutex::new(BTreeMap::new());
    let report = Config::new()
        .ignore_env()
        .seed(7)
        .strategy(StrategyKind::systematic(1, 1, 2))
        .profile_runs(1)
        .iterations(10_000)
        .run(wake_then_log(&orders));
    assert!(report.is_ok(), "{:?} {:?}", report.error(), report.failure());
    let systematic = report.systematic.as_ref().expect("a systematic report");
    assert!(systematic.complete, "{systematic:?}");
    assert_eq!(systematic.profile_runs, 1);
    let orders = orders.lock().unwrap();
    assert_eq!(orders.keys().collect::<Vec<_>>(), ["AB", "BA"]);
    assert!(orders.values().all(|&n| n >= 2), "{orders:?}");
}

/// A oneshot whose sender wakes the receiver before it stores the value (`wake_first`), or
/// after (the fix). With `wake_first`, a receiver that polls between the wake and the store
/// parks its waker again and is never woken: a bug only an interleaving with the woken task
/// running before the waker's next operation (the store's lock) shows.
fn oneshot(wake_first: bool) -> impl Fn() + Sync {
    move || {
        let state: Arc<Mutex<(Option<u32>, Option<Waker>)>> = Arc::new(Mutex::new((None, None)));
        let consumer = {
            let state = state.clone();
            spawn(std::future::poll_fn(move |cx| {
                let mut st = state.lock().unwrap();
                match st.0.take() {
                    Some(v) => Poll::Ready(v),
                    None => {
                        st.1 = Some(cx.waker().clone());
                        Poll::Pending
                    }
                }
            }))
        };
        let waiter = if wake_first {
            state.lock().unwrap().1.take()
        } else {
            let mut st = state.lock().unwrap();
            st.0 = Some(7);
            st.1.take()
        };
        if let Some(w) = waiter {
            w.wake();
        }
        if wake_first {
            state.lock().unwrap().0 = Some(7);
        }
        assert_eq!(consumer.join(), 7);
    }
}

#[test]
fn a_wake_before_the_value_is_stored_is_found_and_the_fix_passes() {
    for strategy in strategies() {
        let name = format!("{strategy:?}");
        let config =
            || Config::new().ignore_env().seed(7).iterations(300).strategy(strategy.clone());
        let report = config().run(oneshot(true));
        let failure = report.failure().unwrap_or_else(|| panic!("{name}: not found"));
        assert_eq!(failure.kind, FailureKind::Deadlock, "{name}: {}", failure.message);
        assert!(
            failure.message.contains("a clone of its waker is held"),
            "{name}: {}",
            failure.message
        );
        let fixed = config().run(oneshot(false));
        assert!(fixed.is_ok(), "{name}: {}", fixed.failure().unwrap());
    }
    // The systematic search (fixed seed for its one profiling execution): finds the bug, and
    // exhausts the fix.
    let systematic = || {
        Config::new()
            .ignore_env()
            .seed(7)
            .strategy(StrategyKind::systematic(1, 1, 2))
            .profile_runs(1)
            .iterations(10_000)
    };
    let report = systematic().run(oneshot(true));
    assert_eq!(report.failure().expect("found").kind, FailureKind::Deadlock);
    // Found by the search, not by its one profiling execution.
    assert!(report.systematic.as_ref().unwrap().found_at.is_some(), "{:?}", report.systematic);
    let fixed = systematic().run(oneshot(false));
    assert!(fixed.is_ok(), "{}", fixed.failure().unwrap());
    assert!(fixed.systematic.as_ref().unwrap().complete, "{:?}", fixed.systematic);
}

/// A cell shared without synchronization (its accesses race).
struct Shared(pctvb::cell::UnsafeCell<u32>);
// SAFETY: the test is about the race; pctvb's checked cell reports it.
unsafe impl Sync for Shared {}

/// Which side of [`wake_then_race`] accessed the cell first (a static: a task is `'static`;
/// only one test uses it).
static FIRST: StdMutex<String> = StdMutex::new(String::new());

/// The waker writes a checked cell after the wake; the woken task reads it in the poll the
/// wake allows. [`FIRST`] gets the side whose access ran first (the second access fails the
/// execution as a data race before its side can write).
fn wake_then_race() {
    FIRST.lock().unwrap().clear();
    let (tx, rx) = mpsc::channel::<Waker>();
    let cell = Arc::new(Shared(pctvb::cell::UnsafeCell::new(0)));
    let task = {
        let cell = cell.clone();
        spawn(async move {
            park_once(&tx).await;
            // SAFETY: a plain read; the race is the point.
            cell.0.with(|p| unsafe { *p });
            FIRST.lock().unwrap().push('B');
        })
    };
    let waker = rx.recv().unwrap();
    waker.wake();
    // SAFETY: a plain write; the race is the point.
    cell.0.with_mut(|p| unsafe { *p = 1 });
    FIRST.lock().unwrap().push('A');
    task.join();
}

#[test]
fn an_access_after_a_wake_races_with_the_woken_task_whichever_runs_first() {
    // The wake orders only what the waker did before it. Fixed seeds 0..20, 300 executions
    // each, no minimization (so the last execution is the failing one).
    let mut seen = BTreeMap::new();
    for seed in 0..20 {
        let report = Config::new()
            .ignore_env()
            .seed(seed)
            .iterations(300)
            .strategy(StrategyKind::Random)
            .minimize_runs(0)
            .run(wake_then_race);
        let failure = report.failure().unwrap_or_else(|| panic!("seed {seed}: no race found"));
        assert_eq!(failure.kind, FailureKind::DataRace, "seed {seed}: {}", failure.message);
        let first = FIRST.lock().unwrap().clone();
        assert!(first == "A" || first == "B", "seed {seed}: {first:?}");
        *seen.entry(first).or_insert(0) += 1;
    }
    assert_eq!(seen.keys().collect::<Vec<_>>(), ["A", "B"], "{seen:?}");
}

/// Waits for `flag` the way hand-written futures and other runtimes' `yield_now` give way: the
/// poll wakes its own task and returns `Pending`.
fn self_waking_wait(flag: &AtomicBool) -> impl Future<Output = ()> + '_ {
    std::future::poll_fn(move |cx| {
        if flag.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    })
}

#[test]
fn a_poll_that_wakes_its_own_task_yields_under_every_strategy() {
    // Polled again at once, the wait would spin without a yield, which the priority strategies
    // never preempt: every execution ran out of steps (fixed seed 7, 300 executions each).
    passes_everywhere(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let setter = spawn(async move { f.store(true, Ordering::SeqCst) });
        block_on(self_waking_wait(&flag));
        block_on(setter);
    });
    // The default with a target (the combined strategy and its explorer), fixed seed.
    let report = Config::new().ignore_env().seed(1).confidence(0.9).run(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let setter = pctvb::thread::spawn(move || f.store(true, Ordering::SeqCst));
        block_on(self_waking_wait(&flag));
        setter.join().unwrap();
    });
    assert!(report.is_ok(), "{}", report.failure().unwrap());
    // The yield is a step of its own, at the `block_on`, and `yield_now`'s is not doubled:
    // with the setter blocked on a mutex the body holds, the self-waking wait spins (and ends
    // in a livelock report naming the block_on's line), while `yield_now` counts once.
    let report = Config::new().ignore_env().seed(1).iterations(5).max_steps(2000).run(|| {
        let lock = Arc::new(Mutex::new(()));
        let flag = AtomicBool::new(false);
        let _held = lock.lock().unwrap();
        let l = lock.clone();
        let _t = pctvb::thread::spawn(move || drop(l.lock().unwrap()));
        block_on(self_waking_wait(&flag));
    });
    let failure = report.failure().expect("the wait never ends");
    assert!(failure.message.contains("spins at tests/future.rs"), "{}", failure.message);
}

#[test]
fn a_block_on_nested_in_a_poll_keeps_the_outer_futures_wakeups() {
    // The outer future registers its waker and then, in the same poll, runs a synchronous
    // helper that `block_on`s an inner future; a thread calls the outer waker while the inner
    // one waits. The inner `block_on` must not take that wake-up: the outer would then wait
    // for one that already came (a false lost wake-up). Fixed seed 7, 300 executions each.
    passes_everywhere(|| {
        let ready = Arc::new(AtomicBool::new(false));
        let outer_waker: Arc<Mutex<Option<Waker>>> = Arc::new(Mutex::new(None));
        let inner_done = Arc::new(AtomicBool::new(false));
        let (r, w, d) = (ready.clone(), outer_waker.clone(), inner_done.clone());
        let t = pctvb::thread::spawn(move || {
            r.store(true, Ordering::SeqCst);
            if let Some(waker) = w.lock().unwrap().take() {
                waker.wake();
            }
            d.store(true, Ordering::SeqCst);
        });
        let mut helped = false;
        block_on(std::future::poll_fn(|cx| {
            *outer_waker.lock().unwrap() = Some(cx.waker().clone());
            if ready.load(Ordering::SeqCst) {
                return Poll::Ready(());
            }
            if !helped {
                helped = true;
                block_on(yield_until(&inner_done));
            }
            if ready.load(Ordering::SeqCst) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }));
        t.join().unwrap();
    });
}

/// Waits for `flag` with `yield_now`.
async fn yield_until(flag: &AtomicBool) {
    while !flag.load(Ordering::SeqCst) {
        yield_now().await;
    }
}

// A task's completion happens before whatever takes or sees its output through its handle,
// for the race detector too. The waker gave that edge only when the awaiter polled first: a
// task that finished before the handle's first poll left the awaiter's later accesses racing
// with the task's (a false race in ~15% of executions of the probe's reproducer).

/// The task writes the cell, then the awaiter writes it after the handle returns (awaited:
/// `block_on` polls the handle itself; or joined), or after `is_finished` says the task is
/// done.
fn write_after_the_task(how: &str) {
    let cell = Arc::new(Shared(pctvb::cell::UnsafeCell::new(0)));
    let theirs = cell.clone();
    // SAFETY (both writes): ordered by the task's completion, which is the point.
    let h = spawn(async move { theirs.0.with_mut(|p| unsafe { *p = 1 }) });
    match how {
        "await" => block_on(h),
        "join" => h.join(),
        "is_finished" => {
            while !h.is_finished() {
                pctvb::thread::yield_now();
            }
        }
        _ => unreachable!(),
    }
    cell.0.with_mut(|p| unsafe { *p = 2 });
}

#[test]
fn a_finished_tasks_accesses_happen_before_its_output_is_taken() {
    // Every strategy, fixed seed 7, 300 executions each: in some the task finishes before the
    // first poll, in others after (the waker's edge).
    for how in ["await", "join", "is_finished"] {
        passes_everywhere(|| write_after_the_task(how));
    }
}

#[test]
fn awaiting_a_task_that_finished_before_the_first_poll_orders_its_accesses() {
    // The handle is first polled only once the task has published its output: the task's
    // last operation is a relaxed store (no edge), with no scheduling point after it before
    // the output is published, so the awaiter that reads it finds the output there, and
    // without the completion's edge its write would race with the task's. Every strategy,
    // fixed seed 7, 300 executions each.
    passes_everywhere(|| {
        let cell = Arc::new(Shared(pctvb::cell::UnsafeCell::new(0)));
        let done = Arc::new(AtomicBool::new(false));
        let (theirs, d) = (cell.clone(), done.clone());
        let h = spawn(async move {
            // SAFETY: ordered before the awaiter's write by the task's completion.
            theirs.0.with_mut(|p| unsafe { *p = 1 });
            d.store(true, Ordering::Relaxed);
            7
        });
        while !done.load(Ordering::Relaxed) {
            pctvb::thread::yield_now();
        }
        assert_eq!(block_on(h), 7);
        // SAFETY: as above.
        cell.0.with_mut(|p| unsafe { *p = 2 });
    });
}

#[test]
fn an_access_before_the_await_still_races_with_the_task() {
    // The edge is the completion's, at the await: a write before it races with the task's.
    // Fixed seeds 0..5, the uniform walk and the random strategy, 300 executions each.
    for strategy in [StrategyKind::UniformWalk, StrategyKind::Random] {
        for seed in 0..5 {
            let report = Config::new()
                .ignore_env()
                .seed(seed)
                .iterations(300)
                .strategy(strategy.clone())
                .run(|| {
                    let cell = Arc::new(Shared(pctvb::cell::UnsafeCell::new(0)));
                    let theirs = cell.clone();
                    // SAFETY (both writes): unordered; the race is the point.
                    let h = spawn(async move { theirs.0.with_mut(|p| unsafe { *p = 1 }) });
                    cell.0.with_mut(|p| unsafe { *p = 2 });
                    block_on(h);
                });
            let f = report.failure().unwrap_or_else(|| panic!("{strategy:?} seed {seed}: none"));
            assert_eq!(f.kind, FailureKind::DataRace, "{strategy:?} seed {seed}: {f}");
        }
    }
}
