//! Spurious wake-ups. std allows `Condvar::wait` (and its timed variants) and `thread::park` to
//! return with no notification or unpark, and an executor may poll a task no waker woke, so
//! code that takes the return (or the poll) as proof of one (`if !ready { cvar.wait(g) }`
//! where a loop is needed) has a bug no schedule of a model without them shows. A waiting
//! thread may wake spuriously until it has done so once since another thread's last
//! progress: it is among the enabled threads at the decision of its wait, and if the strategy
//! chooses it there, it wakes spuriously at once (a step of its own in the schedule).
//! So:
//!
//! - a wait with `if` (the condition variable's or park's) fails under every strategy, and the
//!   report's schedule shows the spurious wake-up; its replay line reproduces it;
//! - correct waits in a loop pass under every strategy, each wake-up at most once per change
//!   another thread makes (no livelock, few steps);
//! - the bug is found at least at the bound each priority strategy prints for its class.
//!
//! Every run uses the fixed seed [`SEED`].

use pctvb::sync::atomic::{AtomicBool, Ordering::*};
use pctvb::sync::{Arc, Condvar, Mutex};
use pctvb::{thread, Config, FailureKind, Report, StrategyKind};
use std::time::Duration;

#[path = "common/bounds.rs"]
mod bounds;
use bounds::assert_rate_reaches_bound;

const SEED: u64 = 0x5b_0001;

fn config() -> Config {
    Config::new().ignore_env().seed(SEED)
}

/// Every strategy, with the parameters the tests use.
fn every_strategy() -> Vec<StrategyKind> {
    vec![
        StrategyKind::Random,
        StrategyKind::UniformWalk,
        StrategyKind::Pct { depth: 1 },
        StrategyKind::Pctvb { depth: 1, vars: 1 },
        StrategyKind::ThreadBound { threads: 2, preemptions: 0 },
        StrategyKind::Combined { depth: 1, vars: 1, threads: 2 },
        StrategyKind::systematic(0, 0, 2),
    ]
}

/// The waiter checks a flag once and waits with `if`: a spurious wake-up lets it past the
/// wait with the flag still unset.
fn condvar_wait_with_if() {
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let p = pair.clone();
    let setter = thread::spawn(move || {
        *p.0.lock().unwrap() = true;
        p.1.notify_one();
    });
    let (lock, cvar) = &*pair;
    let mut ready = lock.lock().unwrap();
    if !*ready {
        ready = cvar.wait(ready).unwrap();
    }
    assert!(*ready, "woke with the flag unset");
    drop(ready);
    setter.join().unwrap();
}

/// The same with `while`: correct.
fn condvar_wait_with_while() {
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let p = pair.clone();
    let setter = thread::spawn(move || {
        *p.0.lock().unwrap() = true;
        p.1.notify_one();
    });
    let (lock, cvar) = &*pair;
    let mut ready = lock.lock().unwrap();
    while !*ready {
        ready = cvar.wait(ready).unwrap();
    }
    drop(ready);
    setter.join().unwrap();
}

/// Two waiters and a notifier that notifies every waiter twice, all in loops (`wait_while`,
/// `wait_timeout`): correct.
fn condvar_loops() {
    let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
    let waiters: Vec<_> = (0..2)
        .map(|i| {
            let p = pair.clone();
            thread::spawn(move || {
                let (lock, cvar) = &*p;
                if i == 0 {
                    let g = cvar.wait_while(lock.lock().unwrap(), |n| *n < 2).unwrap();
                    assert!(*g >= 2);
                } else {
                    let mut g = lock.lock().unwrap();
                    while *g < 2 {
                        g = cvar.wait_timeout(g, Duration::from_secs(60)).unwrap().0;
                    }
                }
            })
        })
        .collect();
    for _ in 0..2 {
        *pair.0.lock().unwrap() += 1;
        pair.1.notify_all();
    }
    for w in waiters {
        w.join().unwrap();
    }
}

/// The parked thread takes its return from `park` as the unpark (shuttle's example of the bug
/// class).
fn park_with_if() {
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    let parked = thread::spawn(move || {
        thread::park();
        assert!(f.load(SeqCst), "park returned before the unpark");
    });
    flag.store(true, SeqCst);
    parked.thread().unpark();
    parked.join().unwrap();
}

/// The same in a loop: correct.
fn park_in_a_loop() {
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    let parked = thread::spawn(move || {
        while !f.load(SeqCst) {
            thread::park();
        }
    });
    flag.store(true, SeqCst);
    parked.thread().unpark();
    parked.join().unwrap();
}

fn run(kind: &StrategyKind, executions: u64, body: fn()) -> Report {
    config().strategy(kind.clone()).iterations(executions).run(body)
}

fn assert_found_everywhere(name: &str, body: fn(), message: &str) {
    for kind in every_strategy() {
        let report = run(&kind, 200, body);
        let f = report.failure().unwrap_or_else(|| panic!("{name} under {kind:?}: missed"));
        assert_eq!(f.kind, FailureKind::Panic, "{name} under {kind:?}:\n{f}");
        assert!(f.message.contains(message), "{name} under {kind:?}:\n{f}");
        let shown = f.to_string();
        // Minimized: the one spurious wake-up the bug needs, shown.
        let spurious = f.schedule.iter().filter(|s| s.operation.starts_with("spurious")).count();
        assert_eq!(spurious, 1, "{name} under {kind:?}:\n{shown}");
        assert!(shown.contains("spurious-wakeup"), "{name} under {kind:?}: not shown:\n{shown}");
        // The replay line reproduces it, spurious wake-up included.
        let replayed = config().replay(f.token.clone().unwrap()).run(body);
        let again = replayed.failure().unwrap_or_else(|| panic!("{name}: the replay passed"));
        assert_eq!(again.message, f.message, "{name} under {kind:?}");
    }
}

fn assert_passes_everywhere(name: &str, body: fn()) {
    for kind in every_strategy() {
        let report = run(&kind, 300, body);
        if let Some(f) = report.failure() {
            panic!("{name} under {kind:?} failed:\n{f}");
        }
        report.assert_ok();
        // Each wake-up at most once per change another thread makes: a few steps.
        assert!(report.stats.max_steps < 100, "{name} {kind:?}: {}", report.stats.max_steps);
    }
}

#[test]
fn a_condvar_wait_with_if_is_found_under_every_strategy() {
    assert_found_everywhere("wait with if", condvar_wait_with_if, "woke with the flag unset");
}

#[test]
fn a_park_with_if_is_found_under_every_strategy() {
    assert_found_everywhere("park with if", park_with_if, "park returned before the unpark");
}

#[test]
fn correct_waits_in_loops_pass_under_every_strategy() {
    assert_passes_everywhere("wait with while", condvar_wait_with_while);
    assert_passes_everywhere("wait_while and wait_timeout loops", condvar_loops);
    assert_passes_everywhere("park in a loop", park_in_a_loop);
}

/// A spurious wake-up of a timed wait is no timeout: `timed_out()` is false, and the flag is
/// still unset.
#[test]
fn a_spurious_wakeup_of_a_timed_wait_is_not_a_timeout() {
    let report = config().strategy(StrategyKind::Pct { depth: 1 }).iterations(100).run(|| {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let p = pair.clone();
        let setter = thread::spawn(move || {
            *p.0.lock().unwrap() = true;
            p.1.notify_one();
        });
        let (lock, cvar) = &*pair;
        let ready = lock.lock().unwrap();
        if !*ready {
            let (ready, result) = cvar.wait_timeout(ready, Duration::from_secs(5)).unwrap();
            assert!(*ready || !result.timed_out(), "a spurious wake-up timed out");
            assert!(*ready, "woke spuriously, not timed out");
        }
        setter.join().unwrap();
    });
    let f = report.failure().expect("the spurious wake-up is found");
    assert!(f.message.contains("woke spuriously, not timed out"), "{f}");
}

/// The bug's class: depth 1 (the waiter's wake-up before the setter's write), one variable
/// (the mutex's flag), two threads. Each priority strategy's measured rate must reach the
/// bound it prints (the bound is at most the Wilson 99.9% upper limit of the rate). Measured
/// with this seed: PCT and PCTVB d=1 (bound 1/2) and thread bounding and the combined
/// strategy with t=2, c=0 find it in about half the executions.
#[test]
fn the_if_wait_bug_is_found_at_least_at_the_printed_bound() {
    for kind in [
        StrategyKind::Pct { depth: 1 },
        StrategyKind::Pctvb { depth: 1, vars: 1 },
        StrategyKind::ThreadBound { threads: 2, preemptions: 0 },
        StrategyKind::Combined { depth: 1, vars: 1, threads: 2 },
    ] {
        let report = config()
            .strategy(kind.clone())
            .iterations(2000)
            .stop_at_first_failure(false)
            .run(condvar_wait_with_if);
        assert!(report.failures > 0, "{kind:?}");
        assert_rate_reaches_bound(&kind, &report);
    }
}

/// Two workers wait in a loop for a start signal, then increment a counter without a lock (a
/// lost update). The bug needs no spurious wake-up: the minimized report shows none, although
/// the random walk's first failing executions wake waiters spuriously.
fn lost_update_after_a_start_signal() {
    let start = Arc::new((Mutex::new(false), Condvar::new()));
    let n = Arc::new(pctvb::sync::atomic::AtomicUsize::new(0));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (start, n) = (start.clone(), n.clone());
            thread::spawn(move || {
                let mut go = start.0.lock().unwrap();
                while !*go {
                    go = start.1.wait(go).unwrap();
                }
                drop(go);
                let v = n.load(SeqCst);
                n.store(v + 1, SeqCst);
            })
        })
        .collect();
    *start.0.lock().unwrap() = true;
    start.1.notify_all();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(n.load(SeqCst), 2, "lost an update");
}

#[test]
fn minimization_removes_spurious_wakeups_the_bug_does_not_need() {
    let (mut found, mut had_spurious) = (0, 0);
    for seed in 0..20 {
        let report = Config::new()
            .ignore_env()
            .seed(seed)
            .strategy(StrategyKind::Random)
            .iterations(200)
            .run(lost_update_after_a_start_signal);
        let Some(f) = report.failure() else { continue };
        found += 1;
        let shown = f.to_string();
        assert!(shown.contains("lost an update"), "{shown}");
        had_spurious += usize::from(f.schedule.iter().any(|s| s.operation.starts_with("spurious")));
    }
    assert!(found >= 15, "found in {found} of 20 seeds");
    assert_eq!(had_spurious, 0, "spurious wake-ups left in {had_spurious} of {found} reports");
}

/// The bug's shape counts the thread the spurious wake-up ran ahead of (the setter, which
/// never ran before the failure): two threads, as the class the bound is printed for.
#[test]
fn the_shape_of_an_if_wait_bug_counts_the_notifier() {
    for body in [condvar_wait_with_if as fn(), park_with_if] {
        let report = run(&StrategyKind::Pct { depth: 1 }, 100, body);
        let f = report.failure().expect("found");
        let shape = f.to_string();
        assert!(shape.contains("among t=2 threads"), "{shape}");
    }
}

/// What one execution of [`waits_and_counts`] saw, across its executions (logical threads run
/// one at a time on the run's OS thread: the std mutex is never contended).
static OUTCOMES: std::sync::Mutex<Vec<(u32, u32)>> = std::sync::Mutex::new(Vec::new());

/// A waiter counts its wake-ups (spurious or not) until a setter has raised a level twice,
/// notifying each time; the outcome is the level it saw and how often it woke. Correct (the
/// waiter loops), with outcomes only spurious wake-ups reach (more wake-ups than
/// notifications).
fn waits_and_counts() {
    let state = Arc::new((Mutex::new(0u32), Condvar::new()));
    let s = state.clone();
    let waiter = thread::spawn(move || {
        let mut level = s.0.lock().unwrap();
        let mut wakes = 0;
        while *level < 2 {
            level = s.1.wait(level).unwrap();
            wakes += 1;
        }
        (*level, wakes)
    });
    for _ in 0..2 {
        *state.0.lock().unwrap() += 1;
        state.1.notify_one();
    }
    let (level, wakes) = waiter.join().unwrap();
    OUTCOMES.lock().unwrap().push((level, wakes));
}

fn outcomes_of(config: Config) -> (std::collections::BTreeSet<(u32, u32)>, Report) {
    OUTCOMES.lock().unwrap().clear();
    let report = config.run(waits_and_counts);
    let set = OUTCOMES.lock().unwrap().iter().copied().collect();
    (set, report)
}

/// The systematic search with bounds no schedule of this program exceeds reports that it
/// explored every schedule; it must then have reached every outcome 20,000 random executions
/// (fixed seed) reach, spurious wake-ups included: its pruning (happens-before, and the order
/// of operations from the first spurious wake-up on) loses none.
#[test]
fn the_exhausted_systematic_search_reaches_every_outcome_of_spurious_wakeups() {
    let (random, report) = outcomes_of(config().strategy(StrategyKind::Random).iterations(20_000));
    report.assert_ok();
    assert_eq!(report.executions, 20_000);
    let (systematic, report) =
        outcomes_of(config().strategy(StrategyKind::systematic(12, 4, 2)).iterations(2_000_000));
    report.assert_ok();
    let sys = report.systematic.as_ref().unwrap();
    assert!(sys.complete, "{sys}");
    let missed: Vec<_> = random.difference(&systematic).collect();
    assert!(missed.is_empty(), "missed {missed:?}; random {random:?}, systematic {systematic:?}");
    // Spurious wake-ups made some of them: the waiter woke more often than it was notified.
    assert!(random.iter().any(|&(_, wakes)| wakes > 2), "{random:?}");
    println!("{} outcomes, {} executions of the search", systematic.len(), report.executions);
}

/// A hand-written future that takes being polled again as its wake-up: its first poll
/// registers the waker, the next one takes the value the setter left. A spurious poll (an
/// executor may poll a task no waker woke) finds no value.
struct TakesPollAsWake {
    slot: Arc<Mutex<(Option<u32>, Option<std::task::Waker>)>>,
    registered: bool,
}

impl std::future::Future for TakesPollAsWake {
    type Output = u32;
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<u32> {
        let mut slot = self.slot.lock().unwrap();
        if self.registered {
            let value = slot.0.take().expect("polled again before the value was set");
            return std::task::Poll::Ready(value);
        }
        if let Some(value) = slot.0.take() {
            return std::task::Poll::Ready(value);
        }
        slot.1 = Some(cx.waker().clone());
        drop(slot);
        self.registered = true;
        std::task::Poll::Pending
    }
}

fn poll_taken_as_wake() {
    let slot = Arc::new(Mutex::new((None, None::<std::task::Waker>)));
    let s = slot.clone();
    let setter = thread::spawn(move || {
        let waker = {
            let mut slot = s.lock().unwrap();
            slot.0 = Some(7);
            slot.1.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    });
    let value = pctvb::future::block_on(TakesPollAsWake { slot, registered: false });
    assert_eq!(value, 7);
    setter.join().unwrap();
}

#[test]
fn a_future_that_takes_a_poll_as_its_wake_up_fails_under_every_strategy() {
    for kind in every_strategy() {
        let report = run(&kind, 300, poll_taken_as_wake);
        let f = report.failure().unwrap_or_else(|| panic!("{kind:?}: the spurious poll is missed"));
        assert!(f.message.contains("polled again before the value was set"), "{kind:?}:\n{f}");
        let spurious = f.schedule.iter().filter(|s| s.operation.starts_with("spurious")).count();
        assert_eq!(spurious, 1, "{kind:?}:\n{f}");
    }
}
