//! Speed of the runtime core (issue: runtime core performance targets):
//! - `scheduling_point/*`: cost of one scheduling point that keeps the same thread, and of one
//!   that switches to another thread (a rendezvous ping-pong forces a switch at every handoff);
//! - `executions/2x10_mutex/*`: executions per second of 2 threads x 10 mutex operations under
//!   pctvb's random strategy and under shuttle 0.9's random scheduler, side by side;
//! - `first_failure/*`: a whole run (default strategy, no minimization) whose first execution
//!   fails: setup, one execution and the failure report, which is what a run costs when the
//!   bug is shallow. `long_schedule` has a schedule too long to print, so the report also
//!   writes the whole schedule to a file.
//!
//! - `executions/lifecycle/*`: executions per second of a body that spawns one or four
//!   threads that do nothing and joins them, under pctvb's random strategy and shuttle 0.9's
//!   random scheduler: what an execution's start and end and each thread's spawn, start, exit
//!   and join cost, apart from any operation.
//!
//! - `executions/twostage_100/*`: executions per second of a bug-free program in the shape of
//!   SCTBench's twostage with 100 threads, every one contending for the same two mutexes, under
//!   pctvb's uniform walk, pctvb's default strategy without a target (SURW), pctvb's combined
//!   strategy (the default with a target's priority half, with its profiling), shuttle 0.9's
//!   URW scheduler and shuttle's PCT (depth 3), side by side on one OS thread; before
//!   measuring, it prints each tool's
//!   scheduling points per execution (pctvb: the longest of a run; shuttle: mean and longest,
//!   counted by a wrapper around its scheduler).
//!
//! - `executions/correct/*`: executions per second of the corpus's bug-free programs
//!   (`corpus/src/programs/correct.rs`: `counter`, `atomic_counter`, `prodcons_fixed`,
//!   `ws_deque_fixed`), the same source compiled against each tool, under pctvb's default as
//!   docs/RESULTS.md runs it (`pctvb_corpus::run`: the default priority strategy with its
//!   profiling and one search execution in two its explorer's, revfuzz, one worker, no
//!   minimization), its two halves alone (`pctvb_combined`: the priority strategy and its
//!   profiling without the explorer; `pctvb_explorer`: revfuzz alone for the executions the
//!   default gives it, [`EXPLORER_EXECUTIONS`], so it stays in its race reversal phase as in
//!   the default), and
//!   under shuttle 0.9's random, URW and PCT (depth 3, as shuttle's `check_pct` examples)
//!   schedulers, side by side on one OS thread; each program's benchmarks run back to
//!   back, so a load that changes over the whole run weighs on them alike. PCT is shuttle's
//!   fastest in some runs of these programs, so the comparison takes the fastest of the three.
//!
//! - `cell_access/*`: a checked `pctvb::cell::UnsafeCell` access (a write, then a read: each a
//!   scheduling point that keeps the thread) with the data-race detector on and off.
//!
//! - `object_use/*`: an atomic load (a scheduling point that keeps the thread), in runs of
//!   ten executions, of an atomic used for the first time in the execution (`first_use`: the
//!   object is registered and its variable looked up) and of one already used (`reused`): the
//!   difference is what an object's first use costs (issue #17: sharded-slab's loom tests
//!   register about 85 objects per execution).
//!
//! - `pointer_access/*`: an instrumented raw-pointer access (`#[pctvb::instrument]`, no
//!   tracking session: no scheduling point) of memory the test body allocated, with the
//!   data-race detector on (the run arms the pointer hooks and checks each access) and off
//!   (the hooks stay unarmed: one load and one branch).
//!
//! `cargo bench` runs it (it is the package `pctvb-benches`, a workspace default member);
//! `scripts/bench-results.sh` runs it and writes the numbers to `docs/RESULTS-runtime.md`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use pctvb::StrategyKind;

const EXECUTIONS: u64 = 1000;

fn pctvb_2x10_mutex() {
    use pctvb::sync::{Arc, Mutex};
    let m = Arc::new(Mutex::new(0u32));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let m = m.clone();
            pctvb::thread::spawn(move || {
                for _ in 0..10 {
                    *m.lock().unwrap() += 1;
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*m.lock().unwrap(), 20);
}

fn shuttle_2x10_mutex() {
    use shuttle::sync::{Arc, Mutex};
    let m = Arc::new(Mutex::new(0u32));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let m = m.clone();
            shuttle::thread::spawn(move || {
                for _ in 0..10 {
                    *m.lock().unwrap() += 1;
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*m.lock().unwrap(), 20);
}

/// The random strategy with a fixed seed, environment ignored: what most benchmarks measure.
fn random_config() -> pctvb::Config {
    pctvb::Config::new().strategy(StrategyKind::Random).ignore_env().seed(1)
}

fn executions(c: &mut Criterion) {
    let mut group = c.benchmark_group("executions/2x10_mutex");
    group.throughput(Throughput::Elements(EXECUTIONS));
    group.bench_function("pctvb_random", |b| {
        // One worker: the same single OS thread shuttle uses (parallel runs are measured below).
        let config = random_config().iterations(EXECUTIONS).workers(1);
        b.iter(|| assert!(config.run(pctvb_2x10_mutex).is_ok()))
    });
    group.bench_function("pctvb_random_all_cores", |b| {
        let config = random_config().iterations(EXECUTIONS);
        b.iter(|| assert!(config.run(pctvb_2x10_mutex).is_ok()))
    });
    // The uniform walk (the default's explorer before SURW), on one and on every core.
    let uniform = pctvb::Config::new()
        .ignore_env()
        .seed(1)
        .strategy(pctvb::StrategyKind::UniformWalk)
        .iterations(EXECUTIONS);
    group.bench_function("pctvb_uniform", |b| {
        let config = uniform.clone().workers(1);
        b.iter(|| assert!(config.run(pctvb_2x10_mutex).is_ok()))
    });
    group.bench_function("pctvb_uniform_all_cores", |b| {
        b.iter(|| assert!(uniform.run(pctvb_2x10_mutex).is_ok()))
    });
    // The default strategy without a target: SURW, on one OS thread.
    group.bench_function("pctvb_surw", |b| {
        let config = pctvb::Config::new().ignore_env().seed(1).iterations(EXECUTIONS).workers(1);
        b.iter(|| assert!(config.run(pctvb_2x10_mutex).is_ok()))
    });
    group.bench_function("shuttle_random", |b| {
        b.iter(|| shuttle::check_random(shuttle_2x10_mutex, EXECUTIONS as usize))
    });
    group.finish();
}

/// Threads of the twostage-shaped program, and executions per measured iteration.
const TWOSTAGE_THREADS: usize = 100;
const TWOSTAGE_EXECUTIONS: u64 = 20;

/// SCTBench's twostage shape without its bug, with `TWOSTAGE_THREADS` threads: one source in
/// the corpus (`correct::twostage_ok`), compiled against each tool.
fn pctvb_twostage() {
    pctvb_corpus::on_pctvb::correct::twostage_ok(TWOSTAGE_THREADS);
}

fn shuttle_twostage() {
    pctvb_corpus::on_shuttle::correct::twostage_ok(TWOSTAGE_THREADS);
}

/// A shuttle scheduler that counts the decisions of the one it wraps, per execution.
struct Counting<S> {
    inner: S,
    points: std::rc::Rc<std::cell::RefCell<Vec<u64>>>,
}

impl<S: shuttle::scheduler::Scheduler> shuttle::scheduler::Scheduler for Counting<S> {
    fn new_execution(&mut self) -> Option<shuttle::scheduler::Schedule> {
        let schedule = self.inner.new_execution();
        if schedule.is_some() {
            self.points.borrow_mut().push(0);
        }
        schedule
    }

    fn next_task(
        &mut self,
        runnable: &[&shuttle::scheduler::Task],
        current: Option<shuttle::scheduler::TaskId>,
        is_yielding: bool,
    ) -> Option<shuttle::scheduler::TaskId> {
        if let Some(n) = self.points.borrow_mut().last_mut() {
            *n += 1;
        }
        self.inner.next_task(runnable, current, is_yielding)
    }

    fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }
}

/// shuttle's configuration for every scheduler these benchmarks run: a failing schedule is
/// neither printed nor saved.
fn shuttle_config() -> shuttle::Config {
    let mut config = shuttle::Config::new();
    config.failure_persistence = shuttle::FailurePersistence::None;
    config
}

fn contention(c: &mut Criterion) {
    let mut group = c.benchmark_group("executions/twostage_100");
    group.throughput(Throughput::Elements(TWOSTAGE_EXECUTIONS));
    group.sample_size(10);
    let pctvb_config = pctvb::Config::new()
        .ignore_env()
        .seed(1)
        .strategy(pctvb::StrategyKind::UniformWalk)
        .iterations(TWOSTAGE_EXECUTIONS)
        .workers(1);
    // The default without a target, SURW.
    let surw_config =
        pctvb::Config::new().ignore_env().seed(1).iterations(TWOSTAGE_EXECUTIONS).workers(1);
    // The priority half of the default with a target, with its profiling executions.
    let combined_config = surw_config
        .clone()
        .strategy(pctvb::StrategyKind::from_name("combined").expect("a registered strategy"));
    // Scheduling points per execution, printed once (not timed).
    let report = pctvb_config.run(pctvb_twostage);
    assert!(report.is_ok());
    let points = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let urw = shuttle::scheduler::UrwRandomScheduler::new_from_seed(1, 100);
    let counting = Counting { inner: urw, points: points.clone() };
    shuttle::Runner::new(counting, shuttle_config()).run(shuttle_twostage);
    let points = points.borrow();
    let mean = points.iter().sum::<u64>() as f64 / points.len() as f64;
    eprintln!(
        "twostage_100 scheduling points per execution: pctvb uniform at most {} (over {} executions); \
         shuttle urw mean {mean:.1}, at most {} (over {} executions)",
        report.stats.max_steps,
        report.executions,
        points.iter().max().unwrap(),
        points.len(),
    );
    group.bench_function("pctvb_uniform", |b| {
        b.iter(|| assert!(pctvb_config.run(pctvb_twostage).is_ok()))
    });
    group.bench_function("pctvb_surw", |b| {
        b.iter(|| assert!(surw_config.run(pctvb_twostage).is_ok()))
    });
    group.bench_function("pctvb_combined", |b| {
        b.iter(|| assert!(combined_config.run(pctvb_twostage).is_ok()))
    });
    group.bench_function("shuttle_urw", |b| {
        b.iter(|| {
            let urw = shuttle::scheduler::UrwRandomScheduler::new_from_seed(
                1,
                TWOSTAGE_EXECUTIONS as usize,
            );
            shuttle::Runner::new(urw, shuttle_config()).run(shuttle_twostage)
        })
    });
    group.bench_function("shuttle_pct", |b| {
        b.iter(|| {
            let pct =
                shuttle::scheduler::PctScheduler::new_from_seed(1, 3, TWOSTAGE_EXECUTIONS as usize);
            shuttle::Runner::new(pct, shuttle_config()).run(shuttle_twostage)
        })
    });
    group.finish();
}

/// Executions per measured iteration of `executions/correct/*`.
const CORRECT_EXECUTIONS: u64 = 1000;

/// Executions of the default's explorer in a run of `CORRECT_EXECUTIONS` (one in two of the
/// executions after the profiling): what `executions/correct/*/pctvb_explorer` runs.
const EXPLORER_EXECUTIONS: u64 = (CORRECT_EXECUTIONS - pctvb_corpus::run::PROFILE_RUNS) / 2;

/// The correct programs of `executions/correct/*`: name, pctvb body, shuttle body.
type CorrectProgram = (&'static str, fn(usize), fn(usize));

const CORRECT: [CorrectProgram; 4] = {
    use pctvb_corpus::{on_pctvb::correct as p, on_shuttle::correct as s};
    [
        ("counter", p::counter, s::counter),
        ("atomic_counter", p::atomic_counter, s::atomic_counter),
        ("prodcons_fixed", p::producer_consumer_fixed, s::producer_consumer_fixed),
        ("ws_deque_fixed", p::ws_deque_fixed, s::ws_deque_fixed),
    ]
};

fn correct_programs(c: &mut Criterion) {
    use pctvb_corpus::run::{pctvb_default, PROFILE_RUNS};
    use shuttle::scheduler::{PctScheduler, RandomScheduler, UrwRandomScheduler};
    let mut group = c.benchmark_group("executions/correct");
    group.throughput(Throughput::Elements(CORRECT_EXECUTIONS));
    for (name, pctvb_body, shuttle_body) in CORRECT {
        // As `pctvb_corpus::run` runs pctvb's default: profiling executions, then the search,
        // CORRECT_EXECUTIONS in all.
        let config = pctvb::Config::new()
            .ignore_env()
            .seed(1)
            .strategy(pctvb_default())
            .explore_every(pctvb::__internals::runner::DEFAULT_EXPLORE_EVERY)
            .profile_runs(PROFILE_RUNS)
            .iterations(CORRECT_EXECUTIONS - PROFILE_RUNS)
            .minimize_runs(0)
            .workers(1);
        group.bench_function(format!("{name}/pctvb_default"), |b| {
            b.iter(|| assert!(config.run(move || pctvb_body(0)).is_ok()))
        });
        // The default's two halves alone, to show where its time goes: the priority strategy
        // with its profiling (no explorer), and the explorer for the executions the default
        // gives it.
        let combined = config.clone().explore_every(0);
        group.bench_function(format!("{name}/pctvb_combined"), |b| {
            b.iter(|| assert!(combined.run(move || pctvb_body(0)).is_ok()))
        });
        let explorer = pctvb::Config::new()
            .ignore_env()
            .seed(1)
            .strategy(pctvb::StrategyKind::Revfuzz)
            .iterations(EXPLORER_EXECUTIONS)
            .minimize_runs(0)
            .workers(1);
        group.throughput(Throughput::Elements(EXPLORER_EXECUTIONS));
        group.bench_function(format!("{name}/pctvb_explorer"), |b| {
            b.iter(|| assert!(explorer.run(move || pctvb_body(0)).is_ok()))
        });
        group.throughput(Throughput::Elements(CORRECT_EXECUTIONS));
        let n = CORRECT_EXECUTIONS as usize;
        group.bench_function(format!("{name}/shuttle_random"), |b| {
            b.iter(|| {
                let scheduler = RandomScheduler::new_from_seed(1, n);
                shuttle::Runner::new(scheduler, shuttle_config()).run(move || shuttle_body(0))
            })
        });
        group.bench_function(format!("{name}/shuttle_urw"), |b| {
            b.iter(|| {
                let scheduler = UrwRandomScheduler::new_from_seed(1, n);
                shuttle::Runner::new(scheduler, shuttle_config()).run(move || shuttle_body(0))
            })
        });
        group.bench_function(format!("{name}/shuttle_pct"), |b| {
            b.iter(|| {
                let scheduler = PctScheduler::new_from_seed(1, 3, n);
                shuttle::Runner::new(scheduler, shuttle_config()).run(move || shuttle_body(0))
            })
        });
    }
    group.finish();
}

/// The lifecycle of an execution and of its threads, apart from their operations:
/// executions per second of a body that spawns `n` threads that do nothing and joins them
/// (`spawn_join_1/*`, `spawn_join_4/*`: each thread's spawn, start, exit and join, each with
/// its scheduling point, and the execution's start and end), under pctvb's random strategy
/// and shuttle's random scheduler (seeded, with [`shuttle_config`], as `correct_programs`
/// runs it), side by side on one OS thread. The difference of the two
/// rows over three is what one thread's lifecycle costs, the rest what an execution's own
/// costs. (A body with no thread has no choice: pctvb runs it once, so it measures a run,
/// not an execution.) The corpus's work-stealing deque spawns four threads an execution, so
/// the rows say how much of its time is the threads' lifecycle.
fn lifecycle(c: &mut Criterion) {
    use pctvb_corpus::on_pctvb::correct;
    use pctvb_corpus::on_shuttle;
    let mut group = c.benchmark_group("executions/lifecycle");
    group.throughput(Throughput::Elements(EXECUTIONS));
    let config = random_config().iterations(EXECUTIONS).workers(1);
    for n in [1, 4] {
        group.bench_function(format!("spawn_join_{n}/pctvb_random"), |b| {
            b.iter(|| assert!(config.run(|| correct::spawn_join(n)).is_ok()))
        });
        group.bench_function(format!("spawn_join_{n}/shuttle_random"), |b| {
            b.iter(|| {
                let scheduler =
                    shuttle::scheduler::RandomScheduler::new_from_seed(1, EXECUTIONS as usize);
                shuttle::Runner::new(scheduler, shuttle_config())
                    .run(move || on_shuttle::correct::spawn_join(n))
            })
        });
    }
    group.finish();
}

const POINTS: u64 = 10_000;

fn scheduling_points(c: &mut Criterion) {
    let mut group = c.benchmark_group("scheduling_point");
    group.throughput(Throughput::Elements(POINTS));
    // The points are fences: a scheduling point with no object that leaves the thread
    // runnable. (Not yields: a thread that yields while another can run waits until that
    // thread makes progress, so two yielding threads switch at every yield.)
    use pctvb::sync::atomic::{fence, Ordering::SeqCst};
    // One thread: every point is a decision that keeps the running thread.
    group.bench_function("same_thread", |b| {
        let config = random_config().iterations(1).workers(1);
        b.iter(|| {
            config.run(|| {
                for _ in 0..POINTS {
                    fence(SeqCst);
                }
            })
        })
    });
    // Two threads under the random strategy: at each point both can run, so the scheduler
    // switches with probability 1/2; the script derives the cost of one switch as twice the
    // difference to `same_thread`.
    group.bench_function("random_two_threads", |b| {
        let config = random_config().iterations(1).workers(1);
        b.iter(|| {
            config.run(|| {
                let h = pctvb::thread::spawn(|| {
                    for _ in 0..POINTS / 2 {
                        fence(SeqCst);
                    }
                });
                for _ in 0..POINTS / 2 {
                    fence(SeqCst);
                }
                h.join().unwrap();
            })
        })
    });
    // Two threads handing a value back and forth over a rendezvous channel: each handoff
    // blocks the sender, so every message costs at least one switch; throughput is per
    // message (a send and a receive, each with its scheduling point and switch).
    group.bench_function("switch_ping_pong", |b| {
        let config = random_config().iterations(1).workers(1);
        b.iter_batched(
            || (),
            |()| {
                config.run(|| {
                    let (tx, rx) = pctvb::sync::mpsc::sync_channel::<u64>(0);
                    let h = pctvb::thread::spawn(move || {
                        for i in 0..POINTS {
                            tx.send(i).unwrap();
                        }
                    });
                    for _ in 0..POINTS {
                        rx.recv().unwrap();
                    }
                    h.join().unwrap();
                })
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

/// `threads` threads each storing to a shared atomic `ops` times, then an assertion that always
/// fails: every execution fails, at its end.
fn always_fails(threads: usize, ops: usize) {
    use pctvb::sync::atomic::{AtomicUsize, Ordering};
    use pctvb::sync::Arc;
    let x = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..threads)
        .map(|i| {
            let x = x.clone();
            pctvb::thread::spawn(move || {
                for _ in 0..ops {
                    x.store(i, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(x.load(Ordering::Relaxed), usize::MAX, "always fails");
}

fn first_failure(c: &mut Criterion) {
    let mut group = c.benchmark_group("first_failure");
    let config = random_config().minimize_runs(0).workers(1);
    // About 20 scheduling points: the schedule fits the report.
    group.bench_function("short_schedule", |b| {
        b.iter(|| assert!(config.run(|| always_fails(2, 4)).failure().is_some()))
    });
    // 8 threads, about 100 scheduling points: the report writes the whole schedule to
    // `target/pctvb/`.
    group.bench_function("long_schedule", |b| {
        b.iter(|| {
            let report = config.run(|| always_fails(8, 10));
            assert!(report.failure().is_some_and(|f| f.trace_file.is_some()));
        })
    });
    group.finish();
}

/// Checked cell accesses, with the data-race detector on (the default) and off: the difference
/// is the detector's cost per access (its clocks, its check and the record of the access).
fn cell_accesses(c: &mut Criterion) {
    let mut group = c.benchmark_group("cell_access");
    group.throughput(Throughput::Elements(POINTS));
    for (name, races) in [("race_detection_on", true), ("race_detection_off", false)] {
        group.bench_function(name, |b| {
            let config = random_config().iterations(1).workers(1).race_detection(races);
            b.iter(|| {
                config.run(|| {
                    let cell = pctvb::sync::Arc::new(pctvb::cell::UnsafeCell::new(0u64));
                    // A second thread, joined, so the clocks have two entries.
                    let c2 = cell.clone();
                    pctvb::thread::spawn(move || c2.with_mut(|p| unsafe { *p += 1 }))
                        .join()
                        .unwrap();
                    for _ in 0..POINTS / 2 {
                        cell.with_mut(|p| unsafe { *p += 1 });
                        cell.with(|p| unsafe { std::hint::black_box(*p) });
                    }
                })
            })
        });
    }
    group.finish();
}

/// Executions per iteration of `object_use/*`.
const OBJECT_EXECUTIONS: u64 = 10;

/// POINTS atomic loads in OBJECT_EXECUTIONS executions of one run, each of a fresh atomic
/// (`first_use`) or all of one (`reused`); the atomics are built before the loads in both (the
/// same allocation and construction), so the difference is the registration of an object at
/// its first use. Several executions, so that the engine's tables have their capacity from
/// the first, as in any run of more than one execution.
fn object_uses(c: &mut Criterion) {
    use pctvb::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let per_execution = (POINTS / OBJECT_EXECUTIONS) as usize;
    let mut group = c.benchmark_group("object_use");
    group.throughput(Throughput::Elements(POINTS));
    for (name, fresh) in [("first_use", true), ("reused", false)] {
        group.bench_function(name, |b| {
            let config = random_config().iterations(OBJECT_EXECUTIONS).workers(1);
            b.iter(|| {
                let report = config.run(move || {
                    // A second thread, joined first: without a choice the run would stop
                    // after one execution (every execution would be that one).
                    pctvb::thread::spawn(|| {}).join().unwrap();
                    let atomics: Vec<AtomicUsize> =
                        (0..per_execution).map(|_| AtomicUsize::new(1)).collect();
                    let mut sum = 0;
                    for i in 0..per_execution {
                        sum += atomics[if fresh { i } else { 0 }].load(Relaxed);
                    }
                    assert_eq!(sum, per_execution);
                });
                assert!(report.is_ok());
            })
        });
    }
    group.finish();
}

/// Instrumented code for `pointer_access/*`.
#[pctvb::instrument(force)]
mod pointers {
    /// `n / 2` writes and `n / 2` reads through `p`.
    pub fn access(p: *mut u64, n: u64) {
        for _ in 0..n / 2 {
            unsafe { *p += 1 };
            let v = unsafe { *p };
            std::hint::black_box(v);
        }
    }
}

/// A pointer that crosses to the second thread.
#[derive(Clone, Copy)]
struct SendPtr(*mut u64);
// SAFETY: the second thread is joined before the first uses the pointer again.
unsafe impl Send for SendPtr {}

/// Instrumented pointer accesses, with the data-race detector on (the default) and off: the
/// difference is the cost of the armed hook and the check per access.
fn pointer_accesses(c: &mut Criterion) {
    let mut group = c.benchmark_group("pointer_access");
    group.throughput(Throughput::Elements(POINTS));
    for (name, races) in [("race_detection_on", true), ("race_detection_off", false)] {
        group.bench_function(name, |b| {
            let config = random_config().iterations(1).workers(1).race_detection(races);
            b.iter(|| {
                config.run(|| {
                    let p = SendPtr(Box::into_raw(Box::new(0u64)));
                    // A second thread, joined, so the clocks have two entries.
                    pctvb::thread::spawn(move || {
                        let q = p;
                        pointers::access(q.0, 2)
                    })
                    .join()
                    .unwrap();
                    pointers::access(p.0, POINTS);
                    drop(unsafe { Box::from_raw(p.0) });
                })
            })
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    scheduling_points,
    executions,
    lifecycle,
    correct_programs,
    contention,
    first_failure,
    cell_accesses,
    object_uses,
    pointer_accesses
);
criterion_main!(benches);
