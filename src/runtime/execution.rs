//! One execution: the host loop that resumes the chosen thread's coroutine, and the scheduling
//! point that every primitive calls.
//!
//! This file owns the thread table's life cycle (reset, start, exit), the scheduling decision,
//! blocking, failing, object registration, and the few named accessors the runner and
//! `#[pctvb::instrument]` use (they never see `State`). The semantics of each kind of object
//! live beside it, one file per kind (`mutex.rs`, `rwlock.rs`, `condvar.rs`, `barrier.rs`,
//! `once.rs`, `channel.rs`, `park.rs`, `join.rs`, `local.rs`, `task.rs`); this file must not grow
//! object-specific rules beyond describing what a blocked thread waits for.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe, Location};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use corosensei::stack::{DefaultStack, Stack};
use corosensei::{CoroutineResult, Yielder};
use rand::SeedableRng;

use super::context;
use super::coroutine::{Running, StackPool, ThreadCoroutine};
use super::crash::{self, RunInfo, Watch};
use super::data_lock::{LiveSlot, LockError};
use super::object::{ErasedValue, Handle, Object, ObjectState, MAX_OBJECTS};
use super::state::{describe_object, Kept, Offer, State, Status};
use super::time;
use super::{BlockedOn, Event, EventKind, FailureCause, ObjectId, Step, ThreadId};
use crate::schedulers::{Decision, ExecutionStart, ScheduleRng, Strategy};
use crate::vars::{VarInfo, VarKind, VarTable};

/// Execution generations are unique in the process, so a handle's cached key can never match
/// an execution it was not registered in. Starts at 1: key 0 means "never registered".
static GENERATION: AtomicU64 = AtomicU64::new(1);

/// Profiling execution `i` runs as execution index `PROFILE_INDEX_BASE + i`: the random
/// streams of profiling never overlap those of the search (indices `0..`), so both stay
/// reproducible from the seed.
pub const PROFILE_INDEX_BASE: u64 = 1 << 63;

/// Limits that end a runaway execution with a clear error, and what a crash report says
/// about the run.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    pub(crate) max_steps: u64,
    pub(crate) max_threads: usize,
    /// Whether the data-race detector runs (`race.rs`).
    pub(crate) races: bool,
    /// Whether `compare_exchange_weak` may fail spuriously (`Execution::weak_cas_failures`).
    pub(crate) weak_cas_failures: bool,
    /// Whether panics inside the execution are printed as they happen (the panic hook).
    pub(crate) show_panics: bool,
    pub(crate) run: Arc<RunInfo>,
}

/// What one execution did.
pub(crate) struct ExecutionOutcome {
    pub(crate) failure: Option<FailureCause>,
    pub(crate) steps: u64,
    pub(crate) threads: usize,
    pub(crate) digest: u64,
}

/// A copy of one execution's schedule and the names of what it touched.
#[derive(Clone, Debug)]
pub(crate) struct Captured {
    /// The thread chosen at each scheduling point.
    pub(crate) choices: Vec<u32>,
    /// The trace of scheduling points.
    pub(crate) trace: Vec<Step>,
    /// Each object's kind, creation site and variable, by object id (a report describes the
    /// objects it names, with `describe_object`).
    pub(crate) objects: Vec<(VarKind, &'static Location<'static>, crate::vars::VarId)>,
    /// Each thread, by thread id.
    pub(crate) threads: Vec<super::ThreadInfo>,
    /// The waits on particular threads the trace does not show (`State::waits_on`).
    pub(crate) waits_on: Vec<super::state::WaitOn>,
}

/// What the scheduling point decided.
enum Next {
    /// The calling thread keeps running.
    Same,
    /// Another thread runs: suspend the caller.
    Other,
    /// The execution is over (failure or normal end): suspend the caller for good.
    Stop,
}

/// An execution engine for one run: state reused across its executions.
pub(crate) struct Execution {
    pub(super) state: RefCell<State>,
    seen_threads: Cell<usize>,
    seen_steps: Cell<u64>,
    /// This engine's entry in the registry of running generations (see `data_lock.rs`).
    live: LiveSlot,
    /// What the crash handlers and the watchdog see of the running execution.
    watch: Arc<Watch>,
    /// Whether the panic hook prints panics raised in this execution ([`Limits::show_panics`]).
    show_panics: bool,
    /// Whether a weak compare-exchange makes a store-conditional point at which it may fail
    /// spuriously ([`Limits::weak_cas_failures`]).
    weak_cas_failures: bool,
    /// The check to run when this execution ends normally ([`Execution::at_end`]); cleared
    /// when the next execution starts.
    end_check: Cell<Option<EndCheck>>,
    /// The host loop's table of coroutines, by thread id; every slot empty between
    /// executions (kept, slots included, for the next).
    coroutines: Cell<Vec<Option<Started>>>,
    /// The run's stacks, lent by the caller of [`Execution::run_one`] while an execution
    /// runs: a spawn takes its thread's stack from them, a finished thread gives it back.
    pool: RefCell<StackPool>,
    /// The next execution's [`ExecutionStart::ordinal`] when it is not its index, and
    /// whether it profiles ([`Execution::set_ordinal`]); taken when it starts.
    ordinal: Cell<Option<(u64, bool)>>,
}

/// A check of an execution's end state (pctvb-loom's leak report): the message of the
/// failure, or `None` when the execution passes.
pub(crate) type EndCheck = fn() -> Option<String>;

const DIGEST_SEED: u64 = 0xcbf2_9ce4_8422_2325;
const DIGEST_PRIME: u64 = 0x0000_0100_0000_01b3;

impl Execution {
    pub(crate) fn new(strategy: Box<dyn Strategy>, limits: Limits) -> Execution {
        let show_panics = limits.show_panics;
        Execution {
            show_panics,
            weak_cas_failures: limits.weak_cas_failures,
            state: RefCell::new(State::new(
                strategy,
                limits.max_steps,
                limits.max_threads,
                limits.races,
            )),
            seen_threads: Cell::new(1),
            seen_steps: Cell::new(0),
            live: LiveSlot::register(),
            watch: Watch::new(limits.run),
            end_check: Cell::new(None),
            coroutines: Cell::new(Vec::new()),
            pool: RefCell::new(StackPool::EMPTY),
            ordinal: Cell::new(None),
        }
    }

    /// Whether a weak compare-exchange may fail spuriously (`Config::weak_cas_failures`): it
    /// then makes a store-conditional point after finding the value it expects
    /// ([`Execution::store_conditional`]).
    pub(crate) fn weak_cas_failures(&self) -> bool {
        self.weak_cas_failures
    }

    /// The store-conditional scheduling point of a weak compare-exchange on `object` that found
    /// the value it expects: whether it holds its reservation, that is, whether no other
    /// thread ran at the point (a context switch between the load-linked and the
    /// store-conditional loses it, and the compare-exchange fails spuriously). The point's
    /// preemption is the spurious failure, so it is counted and bounded as any other. Returns
    /// the point's trace step when the reservation holds (where the store is recorded,
    /// [`Execution::atomic_done`]), `None` when it was lost.
    pub(crate) fn store_conditional(
        &self,
        handle: &Handle,
        location: &'static Location<'static>,
    ) -> Option<usize> {
        let before = {
            let object = self.object(handle, VarKind::Atomic);
            let mut st = self.state.borrow_mut();
            // Another thread's step here changes this one's outcome even if no other thread
            // accesses the variable: it counts as shared, so variable bounding can put a
            // preemption here (PCTVB's class covers the spurious failure).
            let var = st.objects[object.index()].var;
            st.vars.mark_shared(var);
            st.steps
        };
        let (_, step) =
            self.point_at_step(handle, VarKind::Atomic, EventKind::StoreConditional, location);
        // At most one step: this thread's own point, chosen to go on, or none when
        // `#[pctvb::instrument]`'s gating made no point of it (no other thread could run).
        // Another thread's run adds its points (its exit is one).
        (self.state.borrow().steps <= before + 1).then_some(step)
    }

    /// Makes `check` run when the current execution ends normally: after every thread
    /// finished (or blocked for good after the body returned) and the values the execution
    /// owned (thread-locals, once cells) were dropped. A message it returns fails the
    /// execution as a panic of the main thread. One check per execution; a second replaces it.
    pub(crate) fn at_end(&self, check: EndCheck) {
        self.end_check.set(Some(check));
    }

    /// Tells the strategy that the next execution is its `ordinal`-th of the run (from 0;
    /// [`ExecutionStart::ordinal`]), for a run whose strategies take turns (the explorer
    /// beside a priority strategy, profiling before it), and whether it is a profiling
    /// execution ([`ExecutionStart::profiling`]). Without it, an execution's ordinal is its
    /// index, as in a run of one strategy, and it does not profile.
    pub(crate) fn set_ordinal(&self, ordinal: u64, profiling: bool) {
        self.ordinal.set(Some((ordinal, profiling)));
    }

    /// Turns exploration of the current execution off or on again (pctvb-loom's
    /// `stop_exploring`, `skip_branch` and `explore`). While it is off, each scheduling point
    /// offers the strategy one thread: the running thread while it can run, else the enabled
    /// thread with the lowest id. So no thread is preempted and no choice branches, as loom
    /// does outside its exploring state; replays and the systematic search see the same single
    /// choice. On again at the start of every execution.
    pub(crate) fn set_exploring(&self, on: bool) {
        let mut st = self.state.borrow_mut();
        st.exploring = on;
        st.set_offer();
    }

    /// Makes unlocking a mutex or rwlock in the current execution a scheduling point (`true`,
    /// the default) or not, as loom's unlock (pctvb-loom's `model`). Without the point, the
    /// release is seen by the other threads from the unlocking thread's next scheduling point
    /// on, which no thread passes before the unlocking thread does: the same interleavings of
    /// the threads' operations, with fewer points. A pointer of a cell dropped right after a
    /// guard then ends covered by the unlock, as under loom (`Races::release_unlock`). On again
    /// at the start of every execution.
    pub(crate) fn set_unlock_points(&self, on: bool) {
        self.state.borrow_mut().unlock_points = on;
    }

    /// Whether the panic hook prints panics raised in this execution as they happen.
    pub(crate) fn show_panics(&self) -> bool {
        self.show_panics
    }

    /// What the crash handlers and the watchdog see of this engine's execution.
    pub(crate) fn watch(&self) -> &Watch {
        &self.watch
    }

    /// Runs `body` once as execution `index` of the run seeded with `seed`.
    pub(crate) fn run_one(
        &self,
        pool: &mut StackPool,
        seed: u64,
        index: u64,
        body: &dyn Fn(),
        body_location: &'static Location<'static>,
    ) -> ExecutionOutcome {
        self.reset(seed, index, body_location);
        self.watch.begin(index, body_location);
        // Lent for the execution, given back at its end.
        std::mem::swap(pool, &mut *self.pool.borrow_mut());
        let enter = context::enter(self);
        time::Virtual::start(self.watch.run.clock_base);
        // Each thread's coroutine, with its stack's mapping for the stack-overflow handler
        // (`crash.rs`).
        let mut coroutines = self.coroutines.take();
        debug_assert!(coroutines.iter().all(Option::is_none));
        // The main thread runs the borrowed test body (not boxed: it outlives the execution),
        // on a coroutine made now, as a spawn makes its thread's.
        match self.pooled_stack() {
            Ok(stack) => {
                if coroutines.is_empty() {
                    coroutines.push(None);
                }
                let name = thread_name(&self.state.borrow(), 0);
                coroutines[0] = Some((self.thread_coroutine(ThreadId::MAIN, stack, body), name));
            }
            Err(e) => {
                let cause = stack_failure(self.pool.borrow().size(), ThreadId::MAIN, &e);
                self.state.borrow_mut().failure = Some(cause);
            }
        }
        loop {
            // Over (a failure, the main thread's stack included, or a normal end), or the
            // thread to resume.
            let i = {
                let st = self.state.borrow();
                if st.failure.is_some() || st.over {
                    break;
                }
                st.current.index()
            };
            if coroutines.len() <= i {
                coroutines.resize_with(i + 1, || None);
            }
            if coroutines[i].is_none() {
                match self.start_coroutine(ThreadId(i as u32)) {
                    Ok(c) => coroutines[i] = Some((c, thread_name(&self.state.borrow(), i))),
                    Err(message) => {
                        self.state.borrow_mut().failure = Some(FailureCause::Internal { message });
                        break;
                    }
                }
            }
            // Resumed in place: the coroutine does not move out of the table and back at every
            // switch.
            let Some(((coroutine, stack), name)) = coroutines[i].as_mut() else { unreachable!() };
            self.watch.switch(i as u32);
            crash::running_stack(stack.0, stack.1, *name);
            // The logical thread's code reads the execution's clock (`time.rs`); the host loop
            // and everything between executions read the real one.
            let resumed = {
                let _virtual = time::Virtual::on();
                coroutine.resume(())
            };
            if let CoroutineResult::Return(()) = resumed {
                if let Some(((coroutine, _), _)) = coroutines[i].take() {
                    self.pool.borrow_mut().give(coroutine.into_stack());
                }
            }
        }
        // Threads still suspended (after a failure, or blocked forever after main finished) are
        // not unwound: their destructors could block, schedule or panic again (a double panic
        // aborts the process). Their stack values are leaked instead, as are the closures of
        // threads spawned but never started (an enabled thread runs before an execution ends
        // normally, so only a failed one has any).
        let mut st = self.state.borrow_mut();
        debug_assert!(st.failure.is_some() || st.pending.iter().all(Option::is_none));
        // Slots taken one by one (a chain of drains cost ~100 instructions an execution more,
        // most of them in the drains' drops; every slot is empty after a normal end), each
        // tested first: a take copies the whole slot out (64 bytes), empty or not, ~10
        // instructions a slot more.
        let retire = |(mut coroutine, _): Running| {
            // SAFETY: the coroutine is never resumed again; skipping its destructors is a
            // leak.
            unsafe { coroutine.force_reset() };
            self.pool.borrow_mut().give(coroutine.into_stack());
        };
        // Two loops: the table's slots also hold the thread's name.
        for slot in &mut coroutines {
            if slot.is_some() {
                if let Some((coroutine, _)) = slot.take() {
                    retire(coroutine);
                }
            }
        }
        for slot in &mut st.pending {
            if slot.is_some() {
                if let Some(coroutine) = slot.take() {
                    retire(coroutine);
                }
            }
        }
        // The empty slots stay for the next execution (clearing them cost a check of each).
        drop(st);
        self.coroutines.set(coroutines);
        std::mem::swap(pool, &mut *self.pool.borrow_mut());
        crash::running_stack(0, 0, (std::ptr::null(), 0));
        let leftovers = self.take_leftovers();
        self.watch.end();
        drop(enter);
        let mut st = self.state.borrow_mut();
        if st.failure.is_some() {
            std::mem::forget(leftovers);
        } else {
            drop(st);
            drop(leftovers);
            // After the leftovers: what they held was freed when the execution ended.
            let end = self.end_check.take().and_then(|check| check());
            st = self.state.borrow_mut();
            if let Some(message) = end {
                let thread = st.thread_info(ThreadId::MAIN);
                st.failure = Some(FailureCause::Panic { thread, message, location: None });
            }
        }
        // From here the execution is dead: locks its leaked guards still hold may be taken
        // by other executions (the leftovers, which may hold guards, are gone).
        self.live.set(0);
        self.finish(&mut st)
    }

    fn reset(&self, seed: u64, index: u64, body_location: &'static Location<'static>) {
        let mut guard = self.state.borrow_mut();
        let st = &mut *guard;
        st.gen = GENERATION.fetch_add(1, Ordering::Relaxed);
        self.end_check.set(None);
        self.live.set(st.gen);
        st.current = ThreadId::MAIN;
        st.clear_tables();
        st.push_thread(None, body_location);
        st.enabled.start();
        st.by_address.clear();
        st.pending.clear();
        st.steps = 0;
        st.asked_until = 0;
        st.reset_progress();
        st.spinners.clear();
        st.spin_epoch = 0;
        st.digest = DIGEST_SEED;
        st.trace.clear();
        st.waits_on.clear();
        st.failure = None;
        st.over = false;
        st.exploring = true;
        st.unlock_points = true;
        st.had_choice = false;
        st.deferred_wait = None;
        st.races.begin(st.gen);
        st.rng = ScheduleRng::seed_from_u64(seed);
        st.rng.set_stream(index);
        st.vars.begin_execution();
        let (ordinal, profiling) = self.ordinal.take().unwrap_or((index, false));
        let start = ExecutionStart {
            max_threads: self.seen_threads.get(),
            max_steps: self.seen_steps.get(),
            vars: st.vars.infos(),
            profiles: st.vars.profiles(),
            ordinal,
            profiling,
        };
        st.strategy.begin_execution(&start, &mut st.rng);
        // A step keeps its access count in 32 bits (`Step::var_access`).
        st.skips_forced = st.max_steps < u64::from(u32::MAX) && st.strategy.skips_forced();
        st.keeps = st.skips_forced && st.strategy.may_keep_running();
        st.set_offer();
        let reads = st.strategy.reads_changes();
        st.enabled.tell(reads, &mut *st.strategy);
    }

    /// Values owned by the execution that must be dropped (or leaked) outside its borrow.
    fn take_leftovers(&self) -> Vec<Box<dyn std::any::Any>> {
        let mut st = self.state.borrow_mut();
        let mut out: Vec<Box<dyn std::any::Any>> = Vec::new();
        for obj in &mut st.objects {
            if let ObjectState::Once { value: Some(v), .. } = &mut obj.state {
                let v = std::mem::replace(v, ErasedValue::new(()));
                out.push(Box::new(v));
            }
        }
        // Only what holds values: this runs after every execution, and most have no
        // thread-locals left.
        for t in &mut st.threads {
            // A result no handle took (its handle was leaked, or outlived the execution): left
            // to leak, never dropped here. A scoped thread's may borrow what its scope
            // borrowed, which is gone by now.
            if let Some(result) = t.result.take() {
                std::mem::forget(result);
            }
            if !t.locals.is_empty() {
                let locals = std::mem::take(&mut t.locals);
                out.push(Box::new(locals));
            }
        }
        out
    }

    fn finish(&self, st: &mut State) -> ExecutionOutcome {
        st.vars.end_execution();
        let steps = st.steps;
        let digest = st.digest;
        st.strategy.observe_trace(&st.trace);
        if let Err(e) = st.strategy.end_execution(digest, steps) {
            let message = match st.failure.take() {
                None => e.0.into(),
                Some(other) => {
                    format!("{} (the replayed execution also failed: {})", e.0, other.summary())
                }
            };
            st.failure = Some(FailureCause::Strategy { message });
        }
        self.seen_threads.set(self.seen_threads.get().max(st.threads.len()));
        self.seen_steps.set(self.seen_steps.get().max(steps));
        ExecutionOutcome { failure: st.failure.clone(), steps, threads: st.threads.len(), digest }
    }

    /// The coroutine of a spawned thread the strategy picked for the first time, made at its
    /// spawn ([`Execution::thread_coroutine`]).
    fn start_coroutine(&self, id: ThreadId) -> Result<Running, String> {
        self.state
            .borrow_mut()
            .pending
            .get_mut(id.index())
            .and_then(Option::take)
            .ok_or_else(|| format!("thread {id} has no body to start"))
    }

    /// A coroutine, on `stack`, that runs `body` as thread `id` when it is first resumed.
    /// `body` lives on the coroutine's stack until then: a spawn allocates nothing for it.
    /// Generic over `body`, so compiled into the spawning crate; the stack comes from
    /// [`Execution::thread_stack`], compiled with pctvb.
    pub(super) fn thread_coroutine<F: FnOnce()>(
        &self,
        id: ThreadId,
        stack: DefaultStack,
        body: F,
    ) -> Running {
        let range = (stack.limit().get(), stack.base().get());
        let exec: *const Execution = self;
        let start = move |yielder: &Yielder<(), ()>, ()| {
            // SAFETY: the execution outlives every coroutine it runs (see `run_one`).
            let ex = unsafe { &*exec };
            ex.thread_main(id, yielder, body)
        };
        // SAFETY: `body` need not be 'static. The main thread's is the test body `run_one`
        // borrows, and a scoped thread's borrows outlive the thread (the scope joins it before
        // it returns); every coroutine of an execution has finished, or is reset and never run
        // again, when `run_one` returns.
        let coroutine = unsafe { ThreadCoroutine::with_stack_unchecked(stack, start) };
        (coroutine, range)
    }

    /// The id of the next thread, and a stack for it ([`Execution::pooled_stack`]). Fails the
    /// execution past the thread limit or when no stack can be mapped.
    pub(super) fn thread_stack(
        &self,
        location: &'static Location<'static>,
    ) -> (ThreadId, DefaultStack) {
        let next = {
            let st = self.state.borrow();
            let limit = st.max_threads;
            if st.threads.len() >= limit {
                drop(st);
                self.fail(FailureCause::TooManyThreads { limit, location });
            }
            ThreadId(st.threads.len() as u32)
        };
        match self.pooled_stack() {
            Ok(stack) => (next, stack),
            Err(e) => self.fail(stack_failure(self.pool.borrow().size(), next, &e)),
        }
    }

    /// A stack from the run's pool for a new thread, its old contents forgotten by the race
    /// detector. An error is the allocator's, which the caller turns into the `stack_size`
    /// setting's failure ([`stack_failure`]) with the thread's id.
    #[inline(always)]
    fn pooled_stack(&self) -> std::io::Result<DefaultStack> {
        let stack = self.pool.borrow_mut().take()?;
        let (limit, base) = (stack.limit().get(), stack.base().get());
        // A stack another thread of this execution ran on: its old locals' accesses are not
        // ordered before the new thread's by anything the race detector sees.
        self.state.borrow_mut().races.forget_range(limit, base - limit);
        Ok(stack)
    }

    /// Thread `id`'s body, on its coroutine. Generic over `body`: what comes before and after
    /// it is in [`Execution::thread_started`], [`Execution::exit_current`] and
    /// [`Execution::thread_panicked`], compiled with pctvb (see the module docs of `runtime`).
    fn thread_main(&self, id: ThreadId, yielder: &Yielder<(), ()>, body: impl FnOnce()) {
        self.thread_started(id, yielder);
        match panic::catch_unwind(AssertUnwindSafe(body)) {
            Ok(()) => self.exit_current(),
            Err(payload) => self.thread_panicked(id, payload),
        }
    }

    /// Thread `id` starts on its coroutine, whose yielder is `yielder`.
    fn thread_started(&self, id: ThreadId, yielder: &Yielder<(), ()>) {
        let spawned_at = {
            let mut st = self.state.borrow_mut();
            let thread = &mut st.threads[id.index()];
            thread.yielder = yielder;
            thread.spawned_at
        };
        // No scheduling point at a thread's start: the strategy just chose this thread (at
        // its parent's spawn or a later point), and until its first operation it runs only
        // code no other thread can observe, so a choice here could only reorder invisible
        // work. It cost a decision, and a switch when another thread was drawn, per thread
        // (4-13% of revfuzz's instructions per execution on the bug-free corpus programs, 3-8%
        // of the combined strategy's).
        // The watchdog's location is the spawn's until the thread's first point.
        self.watch.point(spawned_at);
    }

    /// Thread `id`'s body panicked with `payload`: the execution's failure.
    fn thread_panicked(&self, id: ThreadId, payload: Box<dyn std::any::Any + Send>) {
        let message = panic_message(payload.as_ref());
        drop(payload);
        let mut st = self.state.borrow_mut();
        let thread = st.thread_info(id);
        let location = context::take_panic_location();
        st.failure = Some(FailureCause::Panic { thread, message, location });
    }

    fn exit_current(&self) {
        // Thread-local destructors run on the exiting thread, where they may use primitives.
        loop {
            let local = {
                let mut st = self.state.borrow_mut();
                let cur = st.current.index();
                st.threads[cur].locals.pop()
            };
            match local {
                Some(value) => drop(value),
                None => break,
            }
        }
        let mut st = self.state.borrow_mut();
        let cur = st.current;
        let location = st.threads[cur.index()].spawned_at;
        st.threads[cur.index()].status = Status::Finished;
        st.progress();
        st.disable(cur);
        let mut joiners = std::mem::take(&mut st.threads[cur.index()].joiners);
        for &joiner in &joiners {
            st.wake(joiner);
        }
        // Keep the allocation for the next join.
        joiners.clear();
        st.threads[cur.index()].joiners = joiners;
        // Returning from the coroutine hands control back to the host, which runs whoever
        // `decide` picked.
        decide(&mut st, EventKind::ThreadExit, None, location);
    }

    /// A scheduling point of the calling thread: records it, asks the strategy who runs next
    /// and switches to that thread if it is another one.
    #[inline]
    pub(crate) fn schedule(
        &self,
        kind: EventKind,
        object: Option<ObjectId>,
        location: &'static Location<'static>,
    ) {
        self.schedule_inlined(kind, object, location);
    }

    /// [`Execution::schedule`], always inlined: for the engine's own points of one kind
    /// (a spawn's, a join's, a mutex's unlock), where the kind is a constant and `decide`'s
    /// tests of it fold away, as for an atomic operation's point (`sync::atomic::point`).
    #[inline(always)]
    pub(super) fn schedule_inlined(
        &self,
        kind: EventKind,
        object: Option<ObjectId>,
        location: &'static Location<'static>,
    ) {
        self.watch.point(location);
        self.decide_and_switch(self.state.borrow_mut(), kind, object, location);
    }

    /// The decision of a scheduling point whose state borrow the caller holds (and may have
    /// used for the point's object and wait), then the switch if another thread runs next; a
    /// cell write is progress (see [`Execution::point`]).
    #[inline(always)]
    fn decide_and_switch(
        &self,
        mut st: std::cell::RefMut<'_, State>,
        kind: EventKind,
        object: Option<ObjectId>,
        location: &'static Location<'static>,
    ) {
        let cur = st.current;
        if let Next::Same = decide(&mut st, kind, object, location) {
            if kind == EventKind::CellWrite {
                st.progress();
            }
            return;
        }
        // Looked up only when this thread stops (most points go on with it).
        let yielder = st.threads[cur.index()].yielder;
        drop(st);
        // SAFETY: the yielder lives on this thread's coroutine stack, which is alive while the
        // thread runs; we are that thread.
        unsafe { (*yielder).suspend(()) };
        // Running again: this thread's last scheduling point is this one.
        self.watch.point(location);
        if kind == EventKind::CellWrite {
            self.state.borrow_mut().progress();
        }
    }

    /// Registers `handle` in this execution (if needed) and runs a scheduling point for an
    /// operation on it. A cell write (`UnsafeCell::with_mut`, an instrumented write) is
    /// progress (see `State::progress`): it is about to happen, and no other thread runs
    /// before it does.
    #[inline]
    pub(crate) fn point(
        &self,
        handle: &Handle,
        var_kind: VarKind,
        kind: EventKind,
        location: &'static Location<'static>,
    ) -> ObjectId {
        self.point_inlined(handle, var_kind, kind, location)
    }

    /// [`Execution::point`], always inlined: for a checked cell access, whose call of `point`
    /// cost a measured share (criterion's `cell_access`, detector off: 18.5 ns an access,
    /// against 17.1 ns with the point inlined).
    #[inline(always)]
    pub(super) fn point_inlined(
        &self,
        handle: &Handle,
        var_kind: VarKind,
        kind: EventKind,
        location: &'static Location<'static>,
    ) -> ObjectId {
        self.point_at_step(handle, var_kind, kind, location).0
    }

    /// [`Execution::point`], also returning the trace step of the calling thread's operation
    /// (its `last_step` once the point is over), for the record of what the operation did
    /// ([`Execution::atomic_done`]): handed over rather than read back from the thread's
    /// entry after the operation, a dependent chain of loads on every atomic operation.
    #[inline(always)]
    pub(crate) fn point_at_step(
        &self,
        handle: &Handle,
        var_kind: VarKind,
        kind: EventKind,
        location: &'static Location<'static>,
    ) -> (ObjectId, usize) {
        self.point_then(handle, var_kind, kind, location, None::<(fn(&State, ObjectId) -> _, bool)>)
    }

    /// [`Execution::point`] for an operation on a lock: `waits` says, from the state at the
    /// point, what the operation waits on (`None`: nothing, as for a lock the thread holds
    /// already); the thread waits on it from this point on (`State::wait_at_point`), so the
    /// strategy can choose it only while the lock can serve it, and once chosen its operation
    /// succeeds: one scheduling point per acquisition, whoever held the lock.
    #[inline]
    pub(super) fn lock_point(
        &self,
        handle: &Handle,
        var_kind: VarKind,
        kind: EventKind,
        location: &'static Location<'static>,
        waits: impl FnOnce(&State, ObjectId) -> Option<BlockedOn>,
    ) -> ObjectId {
        self.point_then(handle, var_kind, kind, location, Some((waits, false))).0
    }

    /// [`Execution::lock_point`] for a wait that also ends when no thread can run (a receive
    /// with a `timeout`, as [`Execution::block`]'s: the virtual clock then reaches the wait's
    /// deadline): returns the object and whether the thread waited at the point and timed out
    /// there.
    #[inline]
    pub(super) fn timed_wait_point(
        &self,
        handle: &Handle,
        var_kind: VarKind,
        kind: EventKind,
        location: &'static Location<'static>,
        timeout: std::time::Duration,
        waits: impl FnOnce(&State, ObjectId) -> Option<BlockedOn>,
    ) -> (ObjectId, bool) {
        let deadline = time::deadline(Some(timeout));
        let waited = std::cell::Cell::new(false);
        let waits = |st: &State, object| {
            let on = waits(st, object);
            waited.set(on.is_some());
            on
        };
        let (object, _) = self.point_then(handle, var_kind, kind, location, Some((waits, true)));
        (object, waited.get() && self.timed_out(deadline))
    }

    /// After a wait with a timeout (at a point or a `Block`): whether it ended by timing out,
    /// which moves the virtual clock to its `deadline` (`time.rs`), so the caller sees at least
    /// the timeout pass.
    fn timed_out(&self, deadline: Option<u64>) -> bool {
        let timed_out = {
            let st = self.state.borrow();
            st.threads[st.current.index()].timed_out
        };
        if timed_out {
            time::reach(deadline);
        }
        timed_out
    }

    #[inline(always)]
    fn point_then(
        &self,
        handle: &Handle,
        var_kind: VarKind,
        kind: EventKind,
        location: &'static Location<'static>,
        waits: Option<(impl FnOnce(&State, ObjectId) -> Option<BlockedOn>, bool)>,
    ) -> (ObjectId, usize) {
        // `#[pctvb::instrument]`'s hooks: one relaxed load while no session switches one on.
        if super::hooks::any_active() {
            if let Some(ungated) = self.hooked_point(handle, var_kind, kind, location) {
                return ungated;
            }
        }
        self.watch.point(location);
        // One borrow of the state for the object's id, the wait and the decision (a borrow
        // of its own for each cost a flag check and two writes more per scheduling point).
        let mut st = self.state.borrow_mut();
        let object = match handle.cached(st.gen) {
            Some(id) => id,
            None => register(&mut st, handle, var_kind),
        };
        if let Some((waits, timeout_able)) = waits {
            if let Some(on) = waits(&st, object) {
                if timeout_able || !st.defer_wait(on) {
                    st.wait_at_point(on, timeout_able);
                }
            }
        }
        // The step `decide` records for this operation: the thread runs again only after it
        // did (a decision that stops the execution never resumes it).
        let step = st.trace.len();
        self.decide_and_switch(st, kind, Some(object), location);
        (object, step)
    }

    /// The hooks of a point while a session has one on (`hooks.rs`): `#[pctvb::instrument]`'s
    /// soundness check, then variable bounding for primitives (`Tracking::gate_primitives`).
    /// Returns the object and step of an operation the gate makes no scheduling point (its
    /// access is counted here); `None` when the point goes on.
    #[cold]
    #[inline(never)]
    fn hooked_point(
        &self,
        handle: &Handle,
        var_kind: VarKind,
        kind: EventKind,
        location: &'static Location<'static>,
    ) -> Option<(ObjectId, usize)> {
        if super::hooks::soundness_active() {
            super::hooks::check_operation(handle.site(), kind, location);
        }
        if !super::hooks::gating_active() {
            return None;
        }
        let object = self.object(handle, var_kind);
        if super::hooks::gate(object, self.generation(), handle.site(), kind) {
            return None;
        }
        // Not a scheduling point, but still an access: its variable's sharing and `k_q` are
        // measured in every execution.
        let mut st = self.state.borrow_mut();
        let (var, thread) = (st.objects[object.index()].var, st.current.0);
        st.vars.record_access(var, thread);
        if kind == EventKind::CellWrite {
            st.progress();
        }
        Some((object, st.threads[thread as usize].last_step))
    }

    /// Counts an access of `var` by the running thread that is no scheduling point (an
    /// instrumented access of a variable the execution does not track): the variable's sharing
    /// and `k_q` are measured in every execution, whichever variables it tracks.
    #[inline]
    pub(crate) fn count_access(&self, var: crate::vars::VarId) {
        let mut st = self.state.borrow_mut();
        let thread = st.current.0;
        st.vars.record_access(var, thread);
    }

    /// The run's id of the variable created at `site` (registered on first sight).
    pub(crate) fn var_id(
        &self,
        site: &'static Location<'static>,
        kind: VarKind,
    ) -> crate::vars::VarId {
        self.state.borrow_mut().vars.intern(site, kind)
    }

    /// The generation of the current execution (unique in the process): lets per-execution
    /// caches outside the runtime (instrumented heap variables) notice a new execution.
    /// Inlined: a spawn and a join read it from generic code compiled in the user's crate,
    /// where a call of a non-generic function is not inlined without `#[inline]`.
    #[inline]
    pub(crate) fn generation(&self) -> u64 {
        self.state.borrow().gen
    }

    /// The id of `handle`'s object in this execution, registering it on first use.
    #[inline]
    pub(crate) fn object(&self, handle: &Handle, var_kind: VarKind) -> ObjectId {
        let mut st = self.state.borrow_mut();
        match handle.cached(st.gen) {
            Some(id) => id,
            None => register(&mut st, handle, var_kind),
        }
    }

    /// Runs `f` on the execution's state (for the object files of the runtime). Always
    /// inlined: a borrow and a call, which the object files' hot paths (a mutex's lock) paid
    /// as a call of their own when the compiler left it out of line.
    #[inline(always)]
    pub(super) fn with_state<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.borrow_mut())
    }

    /// Blocks the calling thread on `on` until another thread wakes it; returns whether it was
    /// woken by a timeout instead (only with a `timeout`: when no thread can run, whatever
    /// its length). A wait that timed out leaves the virtual clock at or past its deadline
    /// (`time.rs`), so the caller sees at least `timeout` pass.
    pub(crate) fn block(
        &self,
        on: BlockedOn,
        timeout: Option<std::time::Duration>,
        location: &'static Location<'static>,
    ) -> bool {
        let deadline = time::deadline(timeout);
        self.state.borrow_mut().block_current(on, timeout.is_some());
        self.schedule(EventKind::Block, on.object(), location);
        self.timed_out(deadline)
    }

    /// [`Execution::block`] for a wait that may end spuriously (`Condvar::wait`,
    /// `thread::park`, std allows both to return with no notification or unpark; a task's wait
    /// for a wake-up, which an executor may end with a poll no waker asked for): while the
    /// thread may wake spuriously (`State::may_wake_spuriously`) and another thread can run
    /// when it starts to wait, it is among the enabled threads at the decision of its block
    /// point: chosen there, it wakes spuriously at once; passed over, it waits for good (for a
    /// notification, an unpark or a wake). A wait that ends spuriously only at its start is
    /// one std allows, and is the one that matters to code that takes the wait's return as
    /// proof (the condition it waits for is still false); a waiter kept enabled while it
    /// waits was woken spuriously so often that it hid lost wake-ups (the lost-notify example
    /// needed 42 executions on average instead of 7, the async one 241 instead of 9). A
    /// wait that starts when no other thread can run blocks as before (a timed one times out,
    /// an untimed one is a deadlock): waking spuriously could only delay that by a round; so
    /// does one while exploration is off (`Execution::set_exploring`), which has no choices
    /// to make. Returns whether it timed out and whether it woke spuriously; a spurious
    /// wake-up is then a scheduling point of its own (`EventKind::SpuriousWakeup` on `on`'s
    /// object), so reports show it.
    pub(crate) fn block_or_wake_spuriously(
        &self,
        on: BlockedOn,
        timeout: Option<std::time::Duration>,
        location: &'static Location<'static>,
    ) -> (bool, bool) {
        let deadline = time::deadline(timeout);
        let (me, before) = {
            let mut st = self.state.borrow_mut();
            st.block_current(on, timeout.is_some());
            let me = st.current;
            if st.exploring && !st.enabled.is_empty() && st.may_wake_spuriously() {
                st.enable(me);
            }
            (me, st.threads[me.index()].spurious_at)
        };
        self.schedule(EventKind::Block, on.object(), location);
        // Chosen while it waited, it woke spuriously (`State::run_ready` noted when).
        let spurious = self.state.borrow().threads[me.index()].spurious_at != before;
        if spurious {
            self.schedule(EventKind::SpuriousWakeup, on.object(), location);
            return (false, true);
        }
        (self.timed_out(deadline), false)
    }

    /// Fails the execution with `cause`; the calling thread never runs again.
    pub(crate) fn fail(&self, cause: FailureCause) -> ! {
        let yielder = {
            let mut st = self.state.borrow_mut();
            if st.failure.is_none() {
                st.failure = Some(cause);
            }
            st.threads[st.current.index()].yielder
        };
        // SAFETY: as in `schedule`.
        unsafe { (*yielder).suspend(()) };
        unreachable!("pctvb: a failed execution was resumed")
    }

    /// Everything a report needs from the last execution, copied out so that later executions
    /// (minimization replays) cannot overwrite it.
    pub(crate) fn capture(&self) -> Captured {
        let st = self.state.borrow();
        Captured {
            choices: st.choices().collect(),
            trace: st.trace.clone(),
            objects: st.objects.iter().map(|o| (o.kind, o.site, o.var)).collect(),
            threads: (0..st.threads.len()).map(|i| st.thread_info(ThreadId(i as u32))).collect(),
            waits_on: st.waits_on.clone(),
        }
    }

    /// Whether a scheduling point of the last execution had two or more threads to choose
    /// from (without one, every execution of the body is this one). Kept by the engine, not by
    /// a wrapper around the strategy: a second virtual call at every point cost ~2% of a small
    /// program's run.
    pub(crate) fn had_choice(&self) -> bool {
        self.state.borrow().had_choice
    }

    /// A hash of the last execution's choices, to count distinct schedules.
    pub(crate) fn schedule_hash(&self) -> u64 {
        let st = self.state.borrow();
        st.choices().fold(DIGEST_SEED, |h, c| (h ^ c as u64).wrapping_mul(DIGEST_PRIME))
    }

    /// The strategy's description.
    pub(crate) fn describe_strategy(&self) -> String {
        self.state.borrow().strategy.describe()
    }

    /// Fails the execution because `error` kept the calling thread from taking the data lock
    /// of the object of kind `kind` created at `site`.
    #[cold]
    pub(super) fn fail_lock(
        &self,
        error: LockError,
        kind: VarKind,
        site: &'static Location<'static>,
    ) -> ! {
        self.fail(lock_failure(&error, &describe_object(kind, site)))
    }

    /// The logical thread running now.
    pub(crate) fn current_thread(&self) -> ThreadId {
        self.state.borrow().current
    }

    /// The logical thread running now, unless the state is borrowed (inside the panic hook,
    /// which may run in the middle of an engine call).
    pub(crate) fn try_current_thread(&self) -> Option<ThreadId> {
        self.state.try_borrow().ok().map(|st| st.current)
    }

    /// Installs `strategy` for the next executions and returns the one it replaces.
    pub(crate) fn replace_strategy(&self, strategy: Box<dyn Strategy>) -> Box<dyn Strategy> {
        std::mem::replace(&mut self.state.borrow_mut().strategy, strategy)
    }

    /// Enters the variable of kind `kind` created at `site` in the run's table.
    pub(crate) fn intern_var(&self, site: &'static Location<'static>, kind: VarKind) {
        self.state.borrow_mut().vars.intern(site, kind);
    }

    /// The run's variables and their profiles so far (read-only).
    pub(crate) fn vars(&self) -> std::cell::Ref<'_, VarTable> {
        std::cell::Ref::map(self.state.borrow(), |st| &st.vars)
    }

    /// The variables the strategy chose for the latest execution, if it bounds variables.
    pub(crate) fn chosen_vars(&self) -> Option<Vec<VarInfo>> {
        let st = self.state.borrow();
        let all = st.vars.infos();
        st.strategy.bounds_variables().then(|| {
            st.strategy.chosen_variables().iter().map(|v| all[v.index()].clone()).collect()
        })
    }

    /// Variables met by the run and their profiles.
    pub(crate) fn var_report(&self) -> Vec<(crate::vars::VarInfo, crate::vars::VarProfile)> {
        let st = self.state.borrow();
        st.vars.infos().iter().cloned().zip(st.vars.profiles().iter().cloned()).collect()
    }
}

/// Records the value the calling thread's latest operation read or wrote, for the trace,
/// and whether the operation changed shared state (an atomic store or read-modify-write
/// that wrote a different value): that is progress, which ends other threads' spinning.
/// A failed compare-exchange, a swap of the same value, a load is not.
/// `step` is the operation's trace step (the thread's `last_step`).
#[inline]
pub(super) fn note_access(st: &mut State, step: usize, value: super::Value, changed: bool) {
    if changed {
        st.progress();
    }
    if let Some(s) = st.trace.get_mut(step) {
        s.value = Some(value);
    }
}

fn register(st: &mut State, handle: &Handle, var_kind: VarKind) -> ObjectId {
    // A handle that carries another execution's key belongs to a long-lived object (a static,
    // or an object built outside the run) that another test running at the same time may have
    // re-keyed for its own execution: find this execution's object by address. A handle that
    // was never registered is new, so the address map is not consulted (a stale entry could
    // belong to an object that moved away), only updated.
    if handle.ever_registered() {
        if let Some(id) = st.by_address.get(handle.address()) {
            handle.remember(st.gen, id);
            return id;
        }
    }
    assert!(
        st.objects.len() < MAX_OBJECTS,
        "pctvb: more than {MAX_OBJECTS} objects in one execution"
    );
    let var = st.vars.intern(handle.site(), var_kind);
    let id = ObjectId::from_index(st.objects.len());
    // Written in place: a push built the object on the stack in pieces and copied it in wider
    // loads, which stalled store forwarding (half of this function's time).
    st.objects.reserve(1);
    let len = st.objects.len();
    // SAFETY: `reserve` made room for one more object at index `len`, which is written before
    // the length covers it.
    unsafe {
        st.objects.as_mut_ptr().add(len).write(Object {
            var,
            kind: var_kind,
            site: handle.site(),
            waiters: Vec::new(),
            open: 0,
            state: ObjectState::for_kind(var_kind),
        });
        st.objects.set_len(len + 1);
    }
    st.by_address.insert(handle.address(), id);
    handle.remember(st.gen, id);
    id
}

/// A started thread's coroutine (in `run_one`'s table) and its name for the crash handler
/// (`crash::running_stack`): the pointer and length of the string its thread entry owns, read
/// once at its start rather than looked up in the thread table at every resume (~6
/// instructions a resume; the entry's string, never changed, outlives the coroutine).
type Started = (Running, (*const u8, usize));

/// Thread `i`'s name for a [`Started`] coroutine, null and 0 for none.
fn thread_name(st: &State, i: usize) -> (*const u8, usize) {
    st.threads[i].name.as_deref().map_or((std::ptr::null(), 0), |n| (n.as_ptr(), n.len()))
}

/// Why thread `id`'s stack of `size` bytes could not be mapped (`error`). The size is the
/// run's `stack_size` setting, the user's own (or its default): a setting the system cannot
/// honour for this many threads is one the run could not test with, not an internal error
/// (whose report asks the user to report it to pctvb).
#[cold]
fn stack_failure(size: usize, id: ThreadId, error: &std::io::Error) -> FailureCause {
    let others = match id.index() {
        0 => String::new(),
        n => format!(" (the execution's {n} earlier threads have theirs)"),
    };
    FailureCause::Setting {
        what: "stack_size",
        message: format!(
            "the stack of thread {id} could not be allocated{others}: the stack_size setting \
             asks for {size} bytes per logical thread, and the system refused them ({error}); \
             use a smaller stack_size (the default, 2 MiB, or a few MiB for deep recursion, \
             suits most tests) or fewer threads (max_threads)"
        ),
    }
}

/// The failure of a data lock's `error` on the object described by `what`. A wait on another
/// execution (or an OS thread outside) comes of the program's sharing of objects, which pctvb
/// cannot test in parallel: a could-not-test error, not an internal one (whose report asks
/// the user to report it to pctvb).
fn lock_failure(error: &LockError, what: &str) -> FailureCause {
    let message = error.message(what);
    match error {
        LockError::TooLong { .. } => FailureCause::Unsupported { message },
        _ => FailureCause::Internal { message },
    }
}

/// The scheduling decision: record the step, then pick who runs next. Inlined into every
/// caller (a scheduling point on an object, a lock's and an unlock's, a join's, a block's, a
/// thread's exit): a call of its own cost its frame at each, 2.5-2.9% of the default's
/// instructions on the mutex programs (`strategy_instructions`).
#[inline(always)]
fn decide(
    st: &mut State,
    kind: EventKind,
    object: Option<ObjectId>,
    location: &'static Location<'static>,
) -> Next {
    let cur = st.current;
    let step = st.steps;
    st.steps += 1;
    // Threads spinning since before another thread's progress may run again (all spinners
    // started at or before `spin_epoch`, and progress since then is at a later step).
    if !st.spinners.is_empty() && st.last_progress >= st.spin_epoch {
        st.release_spinners();
    }

    let mut var = None;
    let mut var_access = 0;
    if let Some(obj) = object {
        if kind != EventKind::Block {
            let v = st.objects[obj.index()].var;
            var_access = st.vars.record_access(v, cur.0);
            var = Some(v);
        }
    }
    // A thread at a lock operation waits on the lock (`State::wait_at_point`): enabled while
    // the lock can serve it. Otherwise a blocked thread (`Block`) or an exiting one cannot go
    // on.
    // The status is read again in the rare branch, not bound once: binding it (a copy or a
    // reference) moved the atomic points' register allocation, +0.6% instructions on the
    // deque and producer/consumer (`strategy_instructions PROGRAM default 1000`).
    let runnable = matches!(st.threads[cur.index()].status, Status::Runnable);
    let mut current_enabled = runnable
        || match st.threads[cur.index()].status {
            Status::Blocked(_) if kind != EventKind::Block => st.enabled.has(cur),
            _ => false,
        };
    let waits = !current_enabled && kind != EventKind::ThreadExit;
    if kind == EventKind::Yield && current_enabled {
        current_enabled = yield_current(st, location);
    } else if kind == EventKind::Sleep && current_enabled {
        current_enabled = sleep_current(st, location);
    }
    // What the check of the strategy's choice below relies on.
    debug_assert!(
        !current_enabled || st.enabled.has(cur),
        "{cur} can go on but is not in the enabled list"
    );
    let obj_bits = object.map_or(u32::MAX, |o| o.0) as u64;
    st.digest = (st.digest ^ (cur.0 as u64 | (kind as u64) << 24 | obj_bits << 32))
        .wrapping_mul(DIGEST_PRIME);

    if st.steps > st.max_steps {
        st.undefer_wait();
        st.failure = Some(match livelock(st) {
            Some(cause) => cause,
            None => FailureCause::MaxSteps {
                limit: st.max_steps,
                thread: st.thread_info(cur),
                location,
                left_running: left_running(st),
            },
        });
        return Next::Stop;
    }
    if st.enabled.is_empty() {
        if !st.spinners.is_empty() {
            // Only spinning threads are left to run: their wait is over.
            st.release_spinners();
        } else if !nothing_runnable(st) {
            // The operation that left no thread to run ends the trace, as the step of a
            // thread that waits (a deadlock's report shows where its last thread waits); it
            // has no choice.
            if waits && kind != EventKind::Block {
                record(st, kind, object, location, (cur, waits), var_access);
            }
            return Next::Stop;
        }
    }
    let only;
    let enabled: &[ThreadId] = match st.offer {
        Offer::Enabled => &st.enabled,
        // No choice (the running thread alone can run, it is no lock waiter to hand a lock
        // to, and it does not block): a strategy that reads such points from the trace at its
        // next decision (`Strategy::skips_forced`) is not asked, and none of what follows a
        // choice among threads applies (another thread to check, wake or switch to, a wait put
        // off, an unwinding thread kept running).
        // So are the points the strategy said it keeps the running thread at (`State::kept`,
        // `Strategy::keeps_running`; none for a strategy that never says so).
        Offer::EnabledOrNone | Offer::EnabledOrKept => {
            // `runnable` as read above: a thread that can go on here was runnable then and still
            // is (a yield or sleep that lets it go on leaves its status; releasing spinners or
            // waking timed waiters changes only threads that could not go on), and one waiting
            // at a lock still waits (read once: a second look at the thread's entry cost a
            // bounds check and a load at every point passed over).
            if (st.enabled.len() == 1 || st.kept.covers(step, var, &st.enabled))
                && current_enabled
                && kind != EventKind::Block
                && runnable
            {
                return pass_over(st, kind, object, location, var_access);
            }
            &st.enabled
        }
        // Exploration off (`Execution::set_exploring`): one thread to choose from, the running
        // one while it can run, so nothing preempts it and no choice branches.
        Offer::Running => {
            only = if current_enabled { cur } else { st.enabled[0] };
            std::slice::from_ref(&only)
        }
    };
    st.had_choice |= enabled.len() > 1;
    let event = Event { kind, object, var, location };
    let skipped_from = std::mem::replace(&mut st.asked_until, step as usize + 1);
    let decision = Decision {
        enabled,
        engine: &st.enabled,
        current: cur,
        current_enabled,
        event: &event,
        step,
        var_access,
        pending: super::Pending::new(&st.threads, &st.trace, &st.objects, skipped_from),
    };
    let mut chosen = match st.strategy.choose(&decision, &mut st.rng) {
        Ok(t) => t,
        Err(e) => {
            st.undefer_wait();
            st.failure = Some(FailureCause::Strategy { message: e.0.into() });
            return Next::Stop;
        }
    };
    // The running thread, when it can go on, is enabled (a thread that spins or waits at this
    // point has left the list, and then `current_enabled` is false): only another choice is
    // looked up (a test of its bit), which spares most decisions of the priority strategies
    // the test.
    if !(chosen == cur && current_enabled || st.enabled.has(chosen)) {
        st.undefer_wait();
        st.failure = Some(FailureCause::Internal {
            message: format!(
                "strategy '{}' chose thread {chosen}, which cannot run",
                st.strategy.describe()
            ),
        });
        return Next::Stop;
    }
    // What the strategy keeps the running thread at, if it chose it (asked before the unwinding
    // rule below may keep a thread the strategy did not choose).
    if st.offer == Offer::EnabledOrKept {
        st.kept = match chosen == cur {
            true => Kept::new(st.strategy.keeps_running(), &st.enabled),
            false => Kept::NONE,
        };
    }
    // Never switch away from a thread that is unwinding: the panic count is per OS thread, so
    // another logical thread would see `panicking()` and could abort the process.
    if chosen != cur && current_enabled && std::thread::panicking() {
        chosen = cur;
    }
    // A thread whose wait at a free mutex was put off (`State::defer_wait`) and that stops
    // here waits now, before the chosen thread leaves its own wait.
    if chosen != cur {
        st.undefer_wait();
    } else {
        st.deferred_wait = None;
    }
    // A wait that may end spuriously is a choice at its own block only
    // (`Execution::block_or_wake_spuriously`): passed over there, the thread waits for good.
    if kind == EventKind::Block && chosen != cur {
        if let Status::Blocked(on) = st.threads[cur.index()].status {
            if on.wakes_spuriously() {
                st.disable(cur);
            }
        }
    }
    // A blocked thread the strategy could choose is a waiter whose lock is available, or one
    // at its own block that may wake spuriously.
    if let Status::Blocked(on) = st.threads[chosen.index()].status {
        st.run_ready(chosen, on);
    }
    record(st, kind, object, location, (chosen, waits), var_access);
    if chosen == cur {
        Next::Same
    } else {
        st.current = chosen;
        Next::Other
    }
}

/// [`decide`] at a point with no choice that the strategy lets the engine pass over
/// (`Strategy::skips_forced`): the current thread goes on, and the step is recorded.
#[inline(always)]
fn pass_over(
    st: &mut State,
    kind: EventKind,
    object: Option<ObjectId>,
    location: &'static Location<'static>,
    var_access: u64,
) -> Next {
    st.deferred_wait = None;
    record(st, kind, object, location, (st.current, false), var_access);
    Next::Same
}

/// Records the current thread's step at its scheduling point: its operation `kind` on
/// `object` at `location`, the thread `chosen` and whether the current one `waits` there, and
/// the decision's `var_access` (`Step::var_access`), kept in 32 bits: exact for a variable
/// whose every access is a scheduling point (those a priority strategy chose, the only ones
/// whose counts it reads) in an execution below `u32::MAX` steps, the only ones whose points
/// the engine passes over.
#[inline(always)]
fn record(
    st: &mut State,
    kind: EventKind,
    object: Option<ObjectId>,
    location: &'static Location<'static>,
    (chosen, waits): (ThreadId, bool),
    var_access: u64,
) {
    let cur = st.current;
    st.threads[cur.index()].last_step = st.trace.len();
    let var_access = var_access as u32;
    st.trace.push(Step {
        thread: cur,
        kind,
        object,
        location,
        chosen,
        value: None,
        waits,
        var_access,
    });
}

/// The current thread yields (`yield_now`, `sleep`, `hint::spin_loop`): it spins, that is, it
/// is not enabled until another thread makes progress, if another thread can run now.
/// Otherwise the yield ends every spinner's wait, the current thread's included: nothing but
/// spinning threads can run, so waiting longer cannot help (a lone thread polling a clock
/// keeps running). Returns whether the current thread stays enabled.
///
/// This is what makes a yield part of the program the strategies' bounds are proved for:
/// whether a thread is enabled is a function of the execution so far (its operations and
/// whether they changed shared state), exactly as for a thread blocked on a lock, and a
/// priority strategy runs the highest-priority enabled thread, as PCT's theorem assumes.
fn yield_current(st: &mut State, location: &'static Location<'static>) -> bool {
    let cur = st.current;
    let thread = &mut st.threads[cur.index()];
    thread.last_yield = st.steps;
    thread.yield_location = Some(location);
    // Never switch away from an unwinding thread (see `decide`).
    if st.enabled.len() > 1 && !std::thread::panicking() {
        st.spin_current();
        false
    } else {
        if !st.spinners.is_empty() {
            st.release_spinners();
        }
        true
    }
}

/// The current thread sleeps (`thread::sleep`): a sleep is no synchronization, so the thread
/// stays enabled and the strategy may run it on at once, as a machine whose other threads are
/// slow would (a test that sleeps "to let the worker finish" fails in the schedules where the
/// worker has not). A sleep with no progress by another thread since the thread's previous
/// sleep or yield polls for a change that has not come (`while !done { sleep(..) }`): it
/// spins, as a yield
/// does ([`yield_current`]), so a polling loop runs at most twice per change and never
/// livelocks a correct program. Returns whether the current thread stays enabled.
///
/// Whether it stays enabled is a function of the execution so far (its operations and
/// whether they changed shared state), as for a yield, so the bounds hold as they are proved.
fn sleep_current(st: &mut State, location: &'static Location<'static>) -> bool {
    let others = st.progress_by_others(st.current);
    let thread = &mut st.threads[st.current.index()];
    // Its last yield or sleep came after the other threads' last progress: nothing changed
    // since but what it changed itself (a loop that locks a mutex to read a flag, then
    // sleeps, changes the mutex at every round; counting that kept the loop going forever
    // under a priority strategy).
    if thread.yield_location.is_some() && thread.last_yield > others {
        return yield_current(st, location);
    }
    thread.last_yield = st.steps;
    thread.yield_location = Some(location);
    true
}

/// Scheduling points without progress after which an execution that runs out of steps while
/// every thread that can run spins is reported as a livelock (fewer when `max_steps` is small).
const LIVELOCK_WINDOW: u64 = 1000;

/// The livelock an execution that ran out of steps is in, if it is one: every thread that is
/// neither blocked nor finished yielded (or slept) since the other threads' last progress, and
/// they made none in the last `LIVELOCK_WINDOW` scheduling points (or the last half of
/// `max_steps`, if that is fewer): it spins, polling for a change no other thread makes (its
/// own changes, such as the lock it takes to read a flag, do not count). A runaway thread that
/// never yields is not a livelock: `MaxSteps` tells the user to add a yield.
fn livelock(st: &State) -> Option<FailureCause> {
    let window = LIVELOCK_WINDOW.min(st.max_steps / 2).max(1);
    let mut spins = Vec::new();
    let mut waits = Vec::new();
    for (i, t) in st.threads.iter().enumerate() {
        let id = ThreadId(i as u32);
        match t.status {
            Status::Finished => {}
            // A waiter whose lock is available can run: no livelock while it waits.
            Status::Blocked(_) if st.enabled.has(id) => return None,
            Status::Blocked(on) => waits.push(describe_wait(st, id, on)),
            Status::Runnable | Status::Spinning => {
                // Its own changes are no news to it (see `sleep_current`): it spins if the
                // others made none in the window and none since its last yield or sleep.
                let others = st.progress_by_others(id);
                if st.steps - others < window || t.last_yield <= others {
                    return None;
                }
                let at = t.yield_location.map_or_else(String::new, |l| format!(" at {l}"));
                spins.push(format!("{} spins{at}", st.thread_info(id)));
            }
        }
    }
    if spins.is_empty() {
        return None;
    }
    let body_returned = body_returned(st);
    Some(FailureCause::Livelock { spins, waits, limit: st.max_steps, window, body_returned })
}

/// Whether the test body's thread has finished.
fn body_returned(st: &State) -> bool {
    st.threads[ThreadId::MAIN.index()].status == Status::Finished
}

/// When the test body's thread has finished: the threads and tasks it left that have not,
/// each with where it was spawned (an execution that runs out of steps then is one of them
/// that never ends). Empty while the body runs.
fn left_running(st: &State) -> Vec<String> {
    if !body_returned(st) {
        return Vec::new();
    }
    (0..st.threads.len())
        .map(|i| ThreadId(i as u32))
        .filter(|&id| st.threads[id.index()].status != Status::Finished)
        .map(|id| super::task::describe_thread(st, id))
        .collect()
}

/// Handles a point where no thread is runnable: wakes threads waiting with a timeout (time
/// passes only when nothing else can happen), ends the execution normally, or reports a
/// deadlock. Returns true when some thread became runnable.
#[cold]
fn nothing_runnable(st: &mut State) -> bool {
    let timed_waiter =
        |t: &super::state::Thread| t.timeout_able && matches!(t.status, Status::Blocked(_));
    // Looked for before they are listed: every execution that ends normally comes here, and
    // most have no timed waiter (collecting none cost ~70 instructions an execution).
    if st.threads.iter().any(timed_waiter) {
        let timed: Vec<ThreadId> = st
            .threads
            .iter()
            .enumerate()
            .filter(|(_, t)| timed_waiter(t))
            .map(|(i, _)| ThreadId(i as u32))
            .collect();
        for id in timed {
            if let Status::Blocked(on) = st.threads[id.index()].status {
                if let Some(obj) = on.object() {
                    st.objects[obj.index()].waiters.retain(|&w| w != id);
                }
            }
            st.threads[id.index()].timed_out = true;
            st.wake(id);
        }
        return true;
    }
    if body_returned(st) {
        // Everyone finished, or the rest wait forever after the test body returned (in a real
        // process they would die with it): a normal end.
        st.over = true;
        return false;
    }
    // A lost wake-up: a task no one holds a waker of (listed first), or only tasks waiting
    // for wake-ups (then no one will ever call a waker).
    let waiting = |i: usize| st.threads[i].status == Status::Blocked(BlockedOn::Waker);
    let lost = |i: usize| waiting(i) && super::task::is_lost(st, ThreadId(i as u32));
    let mut blocked: Vec<usize> = (0..st.threads.len())
        .filter(|&i| matches!(st.threads[i].status, Status::Blocked(_)))
        .collect();
    blocked.sort_by_key(|&i| !lost(i));
    let lost_wakeup = blocked.iter().any(|&i| lost(i)) || blocked.iter().all(|&i| waiting(i));
    let waits = blocked
        .iter()
        .filter_map(|&i| match st.threads[i].status {
            Status::Blocked(on) => Some(describe_wait(st, ThreadId(i as u32), on)),
            _ => None,
        })
        .collect();
    st.failure = Some(FailureCause::Deadlock { waits, lost_wakeup });
    false
}

fn describe_wait(st: &State, id: ThreadId, on: BlockedOn) -> String {
    let who = st.thread_info(id);
    let what = match on {
        BlockedOn::Mutex(o) => {
            let holder = match st.objects[o.index()].state {
                ObjectState::Mutex { owner: Some(h) } => format!(", held by {}", st.thread_info(h)),
                _ => String::new(),
            };
            format!("waits to lock {}{holder}", st.describe_object(o))
        }
        BlockedOn::RwRead(o) => format!("waits to read-lock {}", st.describe_object(o)),
        BlockedOn::RwWrite(o) => format!("waits to write-lock {}", st.describe_object(o)),
        // Not "never notified": a notification before the wait began (a lost wake-up) wakes
        // nobody, and the report must not deny that it happened.
        BlockedOn::Condvar(o) => {
            format!("waits on {} (not notified since it began to wait)", st.describe_object(o))
        }
        BlockedOn::Barrier(o) => format!("waits at {}", st.describe_object(o)),
        BlockedOn::Join(t) => format!("waits to join {}", st.thread_info(t)),
        BlockedOn::Recv(o) => format!("waits to receive on {}", st.describe_object(o)),
        BlockedOn::Send(o) => format!("waits to send on {}", st.describe_object(o)),
        BlockedOn::Once(o) => format!("waits for initialization of {}", st.describe_object(o)),
        BlockedOn::OnceWait { object: o, .. } => {
            let what = st.describe_object(o);
            match st.objects[o.index()].state {
                ObjectState::Once { running: Some(t), .. } => {
                    format!("waits for {what} to be initialized by {} (`wait`)", st.thread_info(t))
                }
                _ => format!(
                    "waits for {what} to be initialized (`wait`), and no thread initializes it"
                ),
            }
        }
        BlockedOn::Park => "is parked and never unparked".to_string(),
        BlockedOn::Waker => return super::task::describe_wait(st, id),
    };
    format!("{who} {what}")
}

/// The message of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "Box<dyn Any> (a panic payload that is not a string)".to_string()
    }
}

#[cfg(test)]
mod lock_failure_tests {
    use super::super::data_lock::LockError;
    use super::{lock_failure, FailureCause};

    /// A wait on another execution is a could-not-test cause with the data lock's advice, not
    /// an internal error that asks to be reported (`report::could_not_test` maps it to
    /// `Error::Unsupported`); a disagreement between the model and the data lock stays
    /// internal.
    #[test]
    fn a_wait_on_another_execution_is_unsupported_not_internal() {
        let what = "Mutex@tests/x.rs:6:25";
        for outside in [false, true] {
            match lock_failure(&LockError::TooLong { outside }, what) {
                FailureCause::Unsupported { message } => assert!(message.contains(what)),
                other => panic!("{other:?}"),
            }
        }
        let cause = lock_failure(&LockError::Disagreement, what);
        assert!(matches!(cause, FailureCause::Internal { .. }), "{cause:?}");
    }
}
