//! The mutable state of one execution: threads, objects, the schedule so far, and how it ended.
//!
//! Private to the runtime: the object files (`mutex.rs`, ...) read and change it through
//! `Execution::with_state`; nothing outside `src/runtime/` sees it (the runner and
//! `#[pctvb::instrument]` use `Execution`'s named accessors).

use std::panic::Location;

use corosensei::Yielder;

use super::coroutine::Running;
use super::enabled::Enabled;
use super::object::{
    AddressIndex, ErasedValue, Object, ObjectState, OPEN_DONE, OPEN_EXCLUSIVE, OPEN_POISONED,
    OPEN_RECV, OPEN_SHARED,
};
use super::{BlockedOn, EventKind, ObjectId, ThreadId};
use crate::schedulers::{KeepRunning, ScheduleRng, Strategy};
use crate::vars::{VarId, VarKind, VarTable};

/// Whether a thread can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Status {
    Runnable,
    /// Waits for what the `BlockedOn` names. Not enabled, except a waiter of a lock or a
    /// `Once` while what it waits for is available (`State::refresh_waiters` keeps such
    /// waiters in the enabled threads then): which of them takes it is the strategy's choice,
    /// the one chosen becomes `Runnable` (`State::run_ready`) and its retried operation
    /// succeeds, and when another thread takes the object first, the others leave the enabled
    /// threads again without a step.
    Blocked(BlockedOn),
    /// Yielded while another thread could run: waits until another thread makes progress
    /// (see `State::progress`), or until every thread that can run is spinning.
    Spinning,
    Finished,
}

/// One logical thread.
pub(super) struct Thread {
    pub(super) name: Option<String>,
    pub(super) status: Status,
    pub(super) yielder: *const Yielder<(), ()>,
    /// `State::steps` at this thread's latest yield (0: never yielded), and where it was.
    pub(super) last_yield: u64,
    pub(super) yield_location: Option<&'static Location<'static>>,
    pub(super) park_token: bool,
    /// Blocked in an operation with a timeout: may be woken by "time passing" when nothing
    /// else can run.
    pub(super) timeout_able: bool,
    pub(super) timed_out: bool,
    pub(super) joiners: Vec<ThreadId>,
    /// Thread-local values, keyed by the address of their `LocalKey`.
    pub(super) locals: Vec<(usize, ErasedValue)>,
    pub(super) spawned_at: &'static Location<'static>,
    /// Index in the trace of this thread's latest scheduling point.
    pub(super) last_step: usize,
    /// The thread as an async task: its wake token and what it waits for (`task.rs`).
    pub(super) task: super::task::TaskState,
    /// While it waits on a condition variable: the mutex it re-acquires when notified (a
    /// notification moves it to that mutex's waiters, `State::notified`).
    pub(super) reacquire: Option<ObjectId>,
    /// Blocked in a rendezvous send that waits for the receiver to take its message (not for
    /// room): a receipt wakes it, and it is not among the senders a freed slot enables.
    pub(super) awaits_receipt: bool,
    /// `State::steps` when the thread last woke spuriously from a condition variable's wait,
    /// a park or a task's wait for a wake-up (`NEVER`: not in this execution): it may again
    /// only after another thread's progress (`State::may_wake_spuriously`). A wait that finds
    /// it changed when it returns woke spuriously (`Execution::block_or_wake_spuriously`).
    pub(super) spurious_at: u64,
    /// The value the thread's closure returned, until its `JoinHandle` takes it (`join.rs`).
    pub(super) result: Option<ErasedValue>,
    /// Its `JoinHandle` was dropped unjoined: the thread drops its value when it returns it.
    pub(super) detached: bool,
}

impl Thread {
    pub(super) fn new(name: Option<String>, spawned_at: &'static Location<'static>) -> Thread {
        Thread {
            name,
            status: Status::Runnable,
            yielder: std::ptr::null(),
            last_yield: 0,
            yield_location: None,
            park_token: false,
            timeout_able: false,
            timed_out: false,
            joiners: Vec::new(),
            locals: Vec::new(),
            spawned_at,
            last_step: 0,
            task: super::task::TaskState::default(),
            reacquire: None,
            awaits_receipt: false,
            spurious_at: NEVER,
            result: None,
            detached: false,
        }
    }
}

/// A wait on a particular thread that the trace does not show ([`State::waits_on`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WaitOn {
    /// The thread that waits (the joiner, the unparked or woken one).
    pub(crate) waiter: ThreadId,
    /// The thread whose exit, unpark or wake it waits for.
    pub(crate) on: ThreadId,
    /// The trace's length when it was recorded: the wait ends at or after the step there.
    pub(crate) at: usize,
}

/// One scheduling point of the trace: who ran what, where.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// The thread that reached the point.
    pub thread: ThreadId,
    /// What it was about to do.
    pub kind: EventKind,
    /// The object involved, if any.
    pub object: Option<ObjectId>,
    /// The user-code location of the operation.
    pub location: &'static Location<'static>,
    /// The thread chosen to run next.
    pub chosen: ThreadId,
    /// For atomic operations: the value loaded, stored, or (read-modify-write) found before
    /// the update.
    pub value: Option<Value>,
    /// Whether the thread could not go on at this point: its operation waits for an object
    /// another thread holds (a lock, a join of a running thread), or it blocked or exited.
    /// Such a step hands the processor to another thread without preempting anyone.
    pub waits: bool,
    /// For an access to a variable: the decision's `var_access`, how many accesses the
    /// execution had made to that variable, this one included, in 32 bits (exact where it is
    /// read: see `record` in `execution.rs`); 0 otherwise. What a strategy that lets the
    /// engine pass over the points with no choice (`Strategy::skips_forced`) reads of those
    /// points for variable bounding's change points.
    pub var_access: u32,
}

impl Step {
    /// Whether the step switched away from a thread that could have continued: the one place
    /// that decides what counts as a preemption, for the report, the bug's shape and
    /// minimization. A switch where the thread waits (`waits`), blocks or exits is not one,
    /// and neither is a
    /// switch at a `join`: joining waits for another thread, so a thread at its join gives up
    /// the processor whenever the joined thread has not finished (and a join changes nothing
    /// another thread can see, so a switch there is one right after it), nor a switch at a
    /// yield or a sleep: the thread gave up the processor itself (a yield spins until another
    /// thread makes progress; a sleep lets the others run, or not).
    pub(crate) fn is_preemption(&self) -> bool {
        self.chosen != self.thread
            && !self.waits
            && !matches!(
                self.kind,
                EventKind::Block
                    | EventKind::ThreadExit
                    | EventKind::Join
                    | EventKind::Yield
                    | EventKind::Sleep
            )
    }
}

/// A value an atomic operation read or wrote, kept small: the trace is written at every
/// scheduling point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// An unsigned integer, `bool` (0 or 1) or pointer address.
    Unsigned(u64),
    /// A signed integer.
    Signed(i64),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Unsigned(v) => write!(f, "{v}"),
            Value::Signed(v) => write!(f, "{v}"),
        }
    }
}

/// Name and id of a thread, for reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Its id in the execution.
    pub id: ThreadId,
    /// Its name, if it was given one with `thread::Builder::name`.
    pub name: Option<String>,
}

impl std::fmt::Display for ThreadInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.name, self.id) {
            (Some(name), id) => write!(f, "thread {id} '{name}'"),
            (None, ThreadId::MAIN) => write!(f, "thread 0 (main)"),
            (None, id) => write!(f, "thread {id}"),
        }
    }
}

/// Why an execution failed, as the runtime saw it.
#[derive(Clone, Debug)]
pub(crate) enum FailureCause {
    /// A thread panicked and did not catch it.
    Panic { thread: ThreadInfo, message: String, location: Option<String> },
    /// No thread could run while some were unfinished; one line per blocked thread.
    /// `lost_wakeup`: some of them are tasks waiting for a wake-up no one can give.
    Deadlock { waits: Vec<String>, lost_wakeup: bool },
    /// Every thread that could run only yielded, with no thread making progress in the last
    /// `window` scheduling points, until the execution ran out of its `limit` of steps: one
    /// line per spinning thread (with where it yields), then one per blocked thread.
    /// `body_returned`: the test body's thread had finished (the spinning threads were left
    /// running by it).
    Livelock {
        spins: Vec<String>,
        waits: Vec<String>,
        limit: u64,
        window: u64,
        body_returned: bool,
    },
    /// A thread locked a mutex it already held.
    /// `behind`: a read lock the thread already holds for reading, asked again while that
    /// thread waits to write it (std's lock may queue the new reader behind the writer).
    RecursiveLock { thread: ThreadInfo, what: String, behind: Option<ThreadInfo> },
    /// More scheduling points than `max_steps`. `left_running`: when the test body's thread
    /// had finished, the threads it left running (described, with where they were spawned).
    MaxSteps {
        limit: u64,
        thread: ThreadInfo,
        location: &'static Location<'static>,
        left_running: Vec<String>,
    },
    /// More threads than `max_threads`.
    TooManyThreads { limit: usize, location: &'static Location<'static> },
    /// The strategy could not continue (e.g. a replay that diverged).
    Strategy { message: String },
    /// The runtime could not continue (e.g. a strategy chose a thread that cannot run).
    Internal { message: String },
    /// A setting of the run (`what`, e.g. `stack_size`) could not be honoured during an
    /// execution: a stack of the configured size could not be mapped. The run could not test,
    /// and the message names the setting, its value and what to do.
    Setting { what: &'static str, message: String },
    /// The program used pctvb in a way it cannot test, found during an execution (objects
    /// shared between executions that run at once and hold them across each other): the run
    /// could not test, and the message says what to do.
    Unsupported { message: String },
    /// Two accesses of a checked cell, at least one a write, with no happens-before between
    /// them (`race.rs`): `first` is the earlier one.
    DataRace { what: String, first: super::race::RaceAccess, second: super::race::RaceAccess },
}

impl FailureCause {
    /// One line quoting this cause inside another message (a replay that diverged and whose
    /// execution also failed); the report gives the full explanation of a cause it reports.
    pub(crate) fn summary(&self) -> String {
        match self {
            FailureCause::Panic { thread, message, .. } => format!("{thread} panicked: {message}"),
            FailureCause::Deadlock { lost_wakeup: true, .. } => {
                "a lost wake-up: a task waits for a wake-up no one will give".to_string()
            }
            FailureCause::Deadlock { .. } => "a deadlock: no thread could run".to_string(),
            FailureCause::Livelock { .. } => {
                "a livelock: every runnable thread spun without progress".to_string()
            }
            FailureCause::RecursiveLock { thread, what, .. } => {
                format!("a deadlock: {thread} locked {what}, which it already held")
            }
            FailureCause::MaxSteps { limit, .. } => {
                format!("more than max_steps = {limit} scheduling points")
            }
            FailureCause::TooManyThreads { limit, .. } => {
                format!("more than max_threads = {limit} threads")
            }
            FailureCause::Strategy { message } => message.clone(),
            FailureCause::Internal { message } => format!("pctvb internal error: {message}"),
            FailureCause::Setting { message, .. } => message.clone(),
            FailureCause::Unsupported { message } => message.clone(),
            FailureCause::DataRace { what, .. } => format!("a data race on {what}"),
        }
    }
}

/// Capacities a run's state starts with.
const INITIAL_THREADS: usize = 16;
const INITIAL_OBJECTS: usize = 16;
const INITIAL_STEPS: usize = 256;

/// No thread: `State::last_progress_by` before any progress.
const NO_THREAD: u32 = u32::MAX;

/// No step: `Thread::spurious_at` of a thread that never woke spuriously.
const NEVER: u64 = u64::MAX;

/// All mutable state of an execution, behind the execution's `RefCell`.
pub(super) struct State {
    pub(super) gen: u64,
    pub(super) current: ThreadId,
    pub(super) threads: Vec<Thread>,
    /// Runnable threads in increasing id order: what strategies choose from (`enabled.rs`,
    /// which tells a strategy that asks of each change).
    pub(super) enabled: Enabled,
    /// Emptied thread lists of the last execution's objects (waiters) and threads (joiners),
    /// kept for their allocations: `reset` fills it, `register` and `spawn` take from it.
    spare_lists: Vec<Vec<ThreadId>>,
    pub(super) objects: Vec<Object>,
    /// This execution's objects by handle address, for handles another execution re-keyed
    /// (statics): see [`AddressIndex`].
    pub(super) by_address: AddressIndex,
    /// Coroutines of threads spawned but not started yet, by thread id: each holds its
    /// thread's closure on its own stack (no allocation per spawn).
    pub(super) pending: Vec<Option<Running>>,
    pub(super) steps: u64,
    /// `steps` when a thread last made progress (changed shared state: see `progress`).
    pub(super) last_progress: u64,
    /// The thread that made that progress (`NO_THREAD` before any), its id's number.
    last_progress_by: u32,
    /// `steps` when a thread other than `last_progress_by` last made progress: with the two,
    /// the latest progress by threads other than any one thread is known
    /// ([`State::progress_by_others`]).
    other_progress: u64,
    /// Threads whose status is `Spinning`, in the order they started to spin.
    pub(super) spinners: Vec<ThreadId>,
    /// `steps` at the latest yield that made a thread spin.
    pub(super) spin_epoch: u64,
    pub(super) digest: u64,
    /// Every scheduling point of the execution; its choices are those of the steps that
    /// asked for one ([`State::choices`]).
    pub(super) trace: Vec<Step>,
    /// Waits on a particular thread that the trace does not show, in order: a join (of a
    /// running thread or not: it orders the target's exit before the joiner's next steps),
    /// an unpark, a task's wake by another thread. Each is `(waiter, the
    /// thread it waits for, the trace's length then)`. The bug shape counts such a thread
    /// among a bug's threads (see `report/shape.rs`); waits on objects it reads off the trace.
    /// Pushed only at these operations, never at a scheduling point.
    pub(super) waits_on: Vec<WaitOn>,
    pub(super) failure: Option<FailureCause>,
    /// Set when the execution ended normally.
    pub(super) over: bool,
    /// The strategy and its generator (persist across executions of a run).
    pub(super) strategy: Box<dyn Strategy>,
    pub(super) rng: ScheduleRng,
    /// Variables of the run and their per-execution counters.
    pub(super) vars: VarTable,
    pub(super) max_steps: u64,
    pub(super) max_threads: usize,
    /// The data-race detector's clocks and cell accesses.
    pub(super) races: super::race::Races,
    /// Whether scheduling points offer the strategy every enabled thread (true unless
    /// pctvb-loom's `stop_exploring` turned it off: see `Execution::set_exploring`).
    pub(super) exploring: bool,
    /// Whether unlocking a mutex or rwlock is a scheduling point (true unless pctvb-loom
    /// turned it off, as loom's unlock is none: see `Execution::set_unlock_points`).
    pub(super) unlock_points: bool,
    /// Whether a scheduling point of this execution had two or more threads to choose from
    /// (the runner stops a body with one schedule after one execution).
    pub(super) had_choice: bool,
    /// Whether this execution's strategy lets the engine pass over the points with no choice
    /// (`Strategy::skips_forced`), asked as the execution starts.
    pub(super) skips_forced: bool,
    /// Whether this execution's strategy may say how long it keeps the running thread
    /// (`Strategy::may_keep_running`), asked as the execution starts.
    pub(super) keeps: bool,
    /// What a decision offers the strategy, from `exploring`, `skips_forced` and `keeps`
    /// ([`State::set_offer`]): one test at every decision for all three.
    pub(super) offer: Offer,
    /// The points at which the running thread goes on without asking, as the strategy said
    /// at the latest decision (`Strategy::keeps_running`); [`Kept::NONE`] after a decision
    /// that switched threads or asked nothing of it.
    pub(super) kept: Kept,
    /// The step after the latest one the strategy was asked at: the steps from it up to the
    /// next decision are the points the engine passed over (`Decision::skipped`).
    pub(super) asked_until: usize,
    /// The running thread's wait at its lock point on a free mutex no one waits for, put off
    /// until the decision (`State::defer_wait`): `None` outside a decision.
    pub(super) deferred_wait: Option<BlockedOn>,
}

impl State {
    pub(super) fn new(
        strategy: Box<dyn Strategy>,
        max_steps: u64,
        max_threads: usize,
        races: bool,
    ) -> State {
        use rand::SeedableRng;
        State {
            races: super::race::Races::new(races),
            strategy,
            rng: ScheduleRng::seed_from_u64(0),
            vars: VarTable::default(),
            max_steps,
            max_threads,
            gen: 0,
            current: ThreadId::MAIN,
            // Room for a small test, so that its first execution does not grow them step by
            // step (later executions of the run reuse them).
            threads: Vec::with_capacity(INITIAL_THREADS),
            enabled: Enabled::with_capacity(INITIAL_THREADS),
            spare_lists: Vec::new(),
            objects: Vec::with_capacity(INITIAL_OBJECTS),
            by_address: AddressIndex::default(),
            pending: Vec::with_capacity(INITIAL_THREADS),
            steps: 0,
            last_progress: 0,
            last_progress_by: NO_THREAD,
            other_progress: 0,
            spinners: Vec::with_capacity(INITIAL_THREADS),
            spin_epoch: 0,
            digest: 0,
            trace: Vec::with_capacity(INITIAL_STEPS),
            waits_on: Vec::new(),
            failure: None,
            over: false,
            exploring: true,
            unlock_points: true,
            had_choice: false,
            skips_forced: false,
            keeps: false,
            offer: Offer::Enabled,
            kept: Kept::NONE,
            asked_until: 0,
            deferred_wait: None,
        }
    }

    /// An empty thread list, with the allocation of an earlier one if there is one.
    #[inline]
    pub(super) fn spare_list(&mut self) -> Vec<ThreadId> {
        self.spare_lists.pop().unwrap_or_default()
    }

    /// Gives `object` a reused waiters list if it never had one (its first waiter).
    #[inline]
    fn reserve_waiters(&mut self, object: ObjectId) {
        if self.objects[object.index()].waiters.capacity() == 0 {
            self.objects[object.index()].waiters = self.spare_list();
        }
    }

    /// Adds a thread that has not started to the thread table and returns its id. Written in
    /// place: a push built the thread (about 200 bytes) on the stack and copied it in with a
    /// call to `memcpy`, a few percent of a small program's run (every execution pushes its
    /// main thread and one thread per spawn).
    #[inline]
    pub(super) fn push_thread(
        &mut self,
        name: Option<String>,
        spawned_at: &'static Location<'static>,
    ) -> ThreadId {
        let len = self.threads.len();
        self.threads.reserve(1);
        // SAFETY: `reserve` made room for one more thread at index `len`, which is written
        // before the length covers it.
        unsafe {
            self.threads.as_mut_ptr().add(len).write(Thread::new(name, spawned_at));
            self.threads.set_len(len + 1);
        }
        ThreadId(len as u32)
    }

    /// Sets [`State::offer`] from `exploring`, `skips_forced` and `keeps`, after any changed;
    /// it ends what the strategy said it keeps running (decisions while exploration is off
    /// say nothing of it).
    pub(super) fn set_offer(&mut self) {
        self.offer = match (self.exploring, self.skips_forced, self.keeps) {
            (false, _, _) => Offer::Running,
            (true, false, _) => Offer::Enabled,
            (true, true, false) => Offer::EnabledOrNone,
            (true, true, true) => Offer::EnabledOrKept,
        };
        self.kept = Kept::NONE;
    }

    /// Empties the thread table and the object table for a new execution, keeping their
    /// threads' and objects' lists for reuse (`spare_list`).
    pub(super) fn clear_tables(&mut self) {
        // Taken in place, not moved out with their threads and objects.
        let joiners = self.threads.iter_mut().map(|t| &mut t.joiners);
        for list in joiners.chain(self.objects.iter_mut().map(|o| &mut o.waiters)) {
            if list.capacity() > 0 {
                let mut list = std::mem::take(list);
                list.clear();
                self.spare_lists.push(list);
            }
        }
        self.threads.clear();
        self.objects.clear();
    }

    pub(super) fn thread_info(&self, id: ThreadId) -> ThreadInfo {
        ThreadInfo { id, name: self.threads[id.index()].name.clone() }
    }

    /// `step`, thread `t`'s `last_step` when it made an access, for a report: itself if it
    /// is `t`'s, else [`super::race::NO_STEP`] (`t` had no scheduling point yet, and
    /// `last_step` was still 0, another thread's step). Checked only when a race is reported,
    /// so that an access stores its thread's `last_step` as it is.
    pub(super) fn own_step(&self, t: ThreadId, step: u64) -> u64 {
        match own_step(&self.trace, t, step as usize) {
            Some(_) => step,
            None => super::race::NO_STEP,
        }
    }

    /// Records that `waiter` waits for `on` (see [`State::waits_on`]). Cold: joins, unparks
    /// and task wakes only.
    pub(super) fn note_wait_on(&mut self, waiter: ThreadId, on: ThreadId) {
        if waiter != on {
            self.waits_on.push(WaitOn { waiter, on, at: self.trace.len() });
        }
    }

    /// Adds `id` to the enabled threads (nothing if it is one), telling the strategy if it
    /// asks (`enabled.rs`).
    #[inline]
    pub(super) fn enable(&mut self, id: ThreadId) {
        self.enabled.insert(id, &mut *self.strategy);
    }

    /// Takes `id` out of the enabled threads (nothing if it is not one), telling the strategy
    /// if it asks. Always inlined, as `Enabled::remove`: every block and exit disables the
    /// thread, and with `remove_at`'s loop the compiler made both calls of their own, which
    /// cost more than the loop saved.
    #[inline(always)]
    pub(super) fn disable(&mut self, id: ThreadId) {
        self.enabled.remove(id, &mut *self.strategy);
    }

    /// Enables `id`, the thread just spawned (the highest id), telling the strategy if it asks.
    #[inline]
    pub(super) fn enable_newest(&mut self, id: ThreadId) {
        self.enabled.push_newest(id, &mut *self.strategy);
    }

    /// Marks `id` runnable again.
    pub(super) fn wake(&mut self, id: ThreadId) {
        let thread = &mut self.threads[id.index()];
        if let Status::Blocked(_) = thread.status {
            thread.status = Status::Runnable;
            thread.timeout_able = false;
            self.enable(id);
        }
    }

    /// The execution's choices so far: the thread chosen at each step of the trace that asked
    /// the strategy for one (all but a last step at which no thread could run). Derived from
    /// the trace rather than kept beside it: a second push at every scheduling point cost more
    /// than this pass, made once per execution (the run counts distinct schedules) and for
    /// reports and replay tokens.
    pub(super) fn choices(&self) -> impl Iterator<Item = u32> + '_ {
        crate::schedulers::asked(&self.trace).iter().map(|s| s.chosen.0)
    }

    /// Records that the running thread changed shared state (an atomic write that changed the
    /// value, a lock or unlock, a send or receive, a notify, an unpark, a spawn, an exit, a
    /// cell or instrumented write, ...): threads spinning since before now may run again. A
    /// store, and two more when another thread than the last one made progress (so the latest
    /// progress by others than any one thread is known, `progress_by_others`); the spinners
    /// are released at the next scheduling point (`decide`).
    #[inline]
    pub(super) fn progress(&mut self) {
        let by = self.current.0;
        if by != self.last_progress_by {
            self.other_progress = self.last_progress;
            self.last_progress_by = by;
        }
        self.last_progress = self.steps;
    }

    /// `steps` when a thread other than `t` last made progress (0: none did). A thread's own
    /// changes (the lock and unlock around its check of a flag) are no news to it: a thread
    /// that polls waits for the others' progress, not its own.
    #[inline]
    pub(super) fn progress_by_others(&self, t: ThreadId) -> u64 {
        if t.0 == self.last_progress_by {
            self.other_progress
        } else {
            self.last_progress
        }
    }

    /// Starts an execution's progress record: no progress yet.
    pub(super) fn reset_progress(&mut self) {
        self.last_progress = 0;
        self.last_progress_by = NO_THREAD;
        self.other_progress = 0;
    }

    /// Makes the running thread spin: it leaves the enabled threads until another thread makes
    /// progress (or every thread that can run spins).
    pub(super) fn spin_current(&mut self) {
        let id = self.current;
        self.threads[id.index()].status = Status::Spinning;
        self.disable(id);
        self.spinners.push(id);
        self.spin_epoch = self.steps;
    }

    /// Ends every spinning thread's wait: they can run again.
    pub(super) fn release_spinners(&mut self) {
        for i in 0..self.spinners.len() {
            let id = self.spinners[i];
            self.threads[id.index()].status = Status::Runnable;
            self.enable(id);
        }
        self.spinners.clear();
    }

    /// After `object` (a lock, a `Once` or a channel) changed: its waiters are in the enabled
    /// threads exactly while what they wait for is available (a mutex is free, a read lock has no
    /// writer, a write lock no holder, a `Once` no initializer running for a claim and a completion
    /// for a `wait`, a bounded channel room for a sender that waits for room, a channel a message
    /// or no sender left for its receiver), so a release (a receive, a send) enables them all, the
    /// one the strategy picks takes the object, and that acquisition disables the others again,
    /// without a step of theirs, and a chosen waiter's retried operation succeeds. Waiters'
    /// statuses stay `Blocked`: only the enabled list changes (the object's `open` says which of
    /// its waiters are in it), through a bit set of the enabled threads (`Enabled::update`, and
    /// `Enabled::set_all` for a mutex's waiters, who all flip together), with no allocation once
    /// the bit set has grown.
    #[inline]
    pub(super) fn refresh_waiters(&mut self, object: ObjectId) {
        // Only the check for waiters inlined: most changes of an object find none, and a call
        // that only returned cost its register saves.
        let obj = &mut self.objects[object.index()];
        if obj.waiters.is_empty() {
            obj.open = 0;
        } else {
            self.refresh_some_waiters(object);
        }
    }

    /// [`State::refresh_waiters`] for an object with waiters.
    #[inline(never)]
    fn refresh_some_waiters(&mut self, object: ObjectId) {
        let obj = &mut self.objects[object.index()];
        let Some(want) = available(&obj.state) else { return };
        let open = obj.open;
        if want == open {
            return;
        }
        obj.open = want;
        // A mutex's waiters all wait for it (one class, `OPEN_EXCLUSIVE`, the only bit its
        // availability has): a release enables them all and an acquisition disables them all,
        // a set or a clear of one bit each. Classing each waiter and filtering the changes, as
        // below, took 4.2% of the default's instructions on the 100-thread two-stage program
        // and 6.5% of the uniform walk's (`strategy_instructions twostage default 20`, `...
        // walk 20`).
        if let ObjectState::Mutex { .. } = obj.state {
            let on = want & OPEN_EXCLUSIVE != 0;
            self.enabled.set_all(self.threads.len(), &obj.waiters, on, &mut *self.strategy);
            return;
        }
        // A rwlock's, a `Once`'s and a channel's waiters are of several kinds (readers and
        // writers; claims of the initialization and waits for its completion; senders waiting
        // for room, rendezvous senders waiting for a receipt, the receiver).
        let threads = &self.threads;
        // Each waiter's classes (`OPEN_*` bits: enabled while any of them is open), or 0 for
        // one that no availability enables.
        let class = |id: &ThreadId| -> u8 {
            let t = &threads[id.index()];
            match t.status {
                Status::Blocked(BlockedOn::RwRead(_)) => OPEN_SHARED,
                Status::Blocked(BlockedOn::RwWrite(_) | BlockedOn::Once(_)) => OPEN_EXCLUSIVE,
                Status::Blocked(BlockedOn::OnceWait { ends_on_poison, .. }) => {
                    once_wait_class(ends_on_poison)
                }
                Status::Blocked(BlockedOn::Send(_)) if !t.awaits_receipt => OPEN_EXCLUSIVE,
                Status::Blocked(BlockedOn::Recv(_)) => OPEN_RECV,
                _ => 0,
            }
        };
        let changes = self.objects[object.index()].waiters.iter().filter_map(|id| {
            let c = class(id);
            let (was, is) = (c & open != 0, c & want != 0);
            (was != is).then_some((*id, is))
        });
        self.enabled.update(threads.len(), changes, &mut *self.strategy);
    }

    /// The strategy chose `id`, a ready waiter: it leaves the object's waiters and runs; its
    /// retried operation succeeds (nothing runs between the choice and its resumption). A
    /// thread waiting on a condition variable or in a park is ready only to wake spuriously
    /// (`State::may_wake_spuriously`): it does, without re-acquiring its mutex first.
    #[cold]
    pub(super) fn run_ready(&mut self, id: ThreadId, on: BlockedOn) {
        let steps = self.steps;
        let thread = &mut self.threads[id.index()];
        thread.status = Status::Runnable;
        thread.timeout_able = false;
        if on.wakes_spuriously() {
            // (A waiting task is polled again: a spurious poll.)
            thread.reacquire = None;
            thread.spurious_at = steps;
            // It wakes ahead of every other thread that could run (the notifier among them):
            // a bug it leads to needs that order, and its shape counts them.
            for i in 0..self.enabled.len() {
                let other = self.enabled[i];
                if other != id {
                    self.note_wait_on(id, other);
                }
            }
        }
        if let Some(object) = on.object() {
            let waiters = &mut self.objects[object.index()].waiters;
            if let Some(pos) = waiters.iter().position(|&w| w == id) {
                remove_at(waiters, pos);
            }
        }
    }

    /// A notification of the condition variable `id` waits on: it now waits to re-acquire its
    /// mutex (ready at once if the mutex is free), without a step of its own to find out. The
    /// caller refreshes the mutex's waiters (`refresh_waiters`) after its notifications.
    /// Returns that mutex, or `None` if `id` was woken as any blocked thread.
    pub(super) fn notified(&mut self, id: ThreadId) -> Option<ObjectId> {
        let thread = &mut self.threads[id.index()];
        match (thread.status, thread.reacquire.take()) {
            (Status::Blocked(BlockedOn::Condvar(_)), Some(mutex)) => {
                thread.status = Status::Blocked(BlockedOn::Mutex(mutex));
                thread.timeout_able = false;
                // Enabled to wake spuriously until now: from here it is enabled exactly while
                // the mutex is free, as the mutex's other waiters.
                self.disable(id);
                self.reserve_waiters(mutex);
                let m = &mut self.objects[mutex.index()];
                insert_sorted(&mut m.waiters, id);
                if m.open & OPEN_EXCLUSIVE != 0 {
                    // Notified without holding the mutex, which is free: ready at once, as
                    // the mutex's other waiters.
                    self.enable(id);
                }
                Some(mutex)
            }
            _ => {
                self.wake(id);
                None
            }
        }
    }

    /// Notifies every waiter of the condition variable `object` (`notified`), in the order
    /// they started waiting, then refreshes the waiters of the mutexes they wait for now.
    pub(super) fn notify_all(&mut self, object: ObjectId) {
        let mut waiters = std::mem::take(&mut self.objects[object.index()].waiters);
        let mut last = None;
        for &t in &waiters {
            let mutex = self.notified(t);
            if mutex.is_some() && mutex != last {
                if let Some(m) = last {
                    self.refresh_waiters(m);
                }
                last = mutex;
            }
        }
        if let Some(m) = last {
            self.refresh_waiters(m);
        }
        // Keep the allocation for the next time someone waits.
        waiters.clear();
        self.objects[object.index()].waiters = waiters;
    }

    /// Wakes the threads blocked on `object` that `wake` picks; they retry their operation
    /// (channels: a send wakes the receiver, a receive the senders waiting for a receipt).
    pub(super) fn wake_waiters_where(&mut self, object: ObjectId, wake: impl Fn(&Thread) -> bool) {
        let mut waiters = std::mem::take(&mut self.objects[object.index()].waiters);
        waiters.retain(|&t| {
            let thread = &self.threads[t.index()];
            if matches!(thread.status, Status::Blocked(_)) && wake(thread) {
                self.wake(t);
                false
            } else {
                true
            }
        });
        self.objects[object.index()].waiters = waiters;
    }

    /// Records whether the channel `object` has room and whether a receive would return now,
    /// and enables its senders waiting for room and its receivers exactly while they can go
    /// on (`refresh_waiters`). `None` leaves that part as it was.
    pub(super) fn set_channel(
        &mut self,
        object: ObjectId,
        room: Option<bool>,
        ready: Option<bool>,
    ) {
        if let ObjectState::Channel { room: r, ready: d } = &mut self.objects[object.index()].state
        {
            *r = room.unwrap_or(*r);
            *d = ready.unwrap_or(*d);
        }
        self.refresh_waiters(object);
    }

    /// A waiter of `object` blocked on `on` (a receiver in `recv`, a writer at a write lock),
    /// from its operation's scheduling point (or its `blocked` point) until it runs again.
    pub(super) fn waiter_blocked_on(&self, object: ObjectId, on: BlockedOn) -> Option<ThreadId> {
        let waits = Status::Blocked(on);
        self.objects[object.index()]
            .waiters
            .iter()
            .find(|t| self.threads[t.index()].status == waits)
            .copied()
    }

    /// Wakes every thread blocked on `object`; they retry their operation.
    pub(super) fn wake_waiters(&mut self, object: ObjectId) {
        let waiters = std::mem::take(&mut self.objects[object.index()].waiters);
        for &t in &waiters {
            self.wake(t);
        }
        // Keep the allocation for the next time someone waits.
        let mut waiters = waiters;
        waiters.clear();
        self.objects[object.index()].waiters = waiters;
    }

    /// Whether the running thread, about to wait on a condition variable or in a park, may
    /// wake spuriously (std allows either to return with no notification or unpark): unless it
    /// did already since another thread's last progress. Its own changes do not count (the
    /// unlock and lock around a `while !ready { wait }` loop's check), so the loop wakes at
    /// most once per change another thread makes and never livelocks. Whether it may is a
    /// function of the execution so far, as a yield's spin is, so the bounds hold as proved.
    pub(super) fn may_wake_spuriously(&self) -> bool {
        let at = self.threads[self.current.index()].spurious_at;
        at == NEVER || at < self.progress_by_others(self.current)
    }

    /// Marks the current thread blocked on `on`.
    pub(super) fn block_current(&mut self, on: BlockedOn, timeout_able: bool) {
        let id = self.current;
        let thread = &mut self.threads[id.index()];
        thread.status = Status::Blocked(on);
        thread.timeout_able = timeout_able;
        thread.timed_out = false;
        self.disable(id);
        match on {
            BlockedOn::Join(target) => {
                if self.threads[target.index()].joiners.capacity() == 0 {
                    self.threads[target.index()].joiners = self.spare_list();
                }
                self.threads[target.index()].joiners.push(id)
            }
            BlockedOn::Park | BlockedOn::Waker => {}
            // Waiters of a lock, a `Once` or a channel in id order (the order in which
            // `refresh_waiters` tells a strategy that is told of their changes: the list itself
            // is made again from the bit words); a condition variable's in the order they
            // started waiting (notification order), as the others' (any order).
            BlockedOn::Mutex(obj)
            | BlockedOn::RwRead(obj)
            | BlockedOn::RwWrite(obj)
            | BlockedOn::Once(obj)
            | BlockedOn::OnceWait { object: obj, .. }
            | BlockedOn::Send(obj)
            | BlockedOn::Recv(obj) => {
                self.reserve_waiters(obj);
                insert_sorted(&mut self.objects[obj.index()].waiters, id)
            }
            other => {
                if let Some(obj) = other.object() {
                    self.reserve_waiters(obj);
                    self.objects[obj.index()].waiters.push(id);
                }
            }
        }
    }

    /// Makes the running thread, at the scheduling point of an operation that may wait (`on`: a
    /// mutex, a read or write lock, a `Once` another thread is initializing or, for a `wait`, that
    /// is not complete, a channel's receive or a send waiting for room), one of the object's
    /// waiters before the strategy chooses: it is enabled exactly while the object can serve it
    /// (`refresh_waiters`), now and while it stays suspended. So a thread whose lock is held is not
    /// a choice, a thread preempted at a free lock that another thread takes meanwhile stops being
    /// one, and once chosen its operation succeeds without another scheduling point (nothing runs
    /// between the choice and its resumption). `timeout_able`: the wait also ends when no thread
    /// can run (a receive with a timeout; the thread then finds `timed_out`). Not for a thread that
    /// holds the lock already (a recursive lock is the caller's failure to report).
    pub(super) fn wait_at_point(&mut self, on: BlockedOn, timeout_able: bool) {
        let id = self.current;
        let (object, class) = match on {
            BlockedOn::RwRead(o) => (o, OPEN_SHARED),
            BlockedOn::Mutex(o)
            | BlockedOn::RwWrite(o)
            | BlockedOn::Once(o)
            | BlockedOn::Send(o) => (o, OPEN_EXCLUSIVE),
            BlockedOn::Recv(o) => (o, OPEN_RECV),
            BlockedOn::OnceWait { object, ends_on_poison } => {
                (object, once_wait_class(ends_on_poison))
            }
            _ => unreachable!("wait_at_point is for locks, a Once and channels, not {on:?}"),
        };
        self.block_current(on, timeout_able);
        let obj = &mut self.objects[object.index()];
        if obj.waiters.len() == 1 {
            // The only waiter: no other's enabling changes, so no pass over the waiters.
            obj.open = available(&obj.state).unwrap_or(0);
        } else {
            self.refresh_waiters(object);
        }
        if self.objects[object.index()].open & class != 0 {
            self.enable(id);
        }
    }

    /// [`State::wait_at_point`] for a lock of a free mutex that no thread waits for (the
    /// uncontended lock, most of them), put off: the thread stays `Runnable` (it is enabled
    /// either way, and the strategy reads neither its status nor the mutex's waiters), and
    /// the decision makes it a waiter (`State::undefer_wait`) only if it stops there, so a
    /// thread that goes on takes the mutex without entering and leaving the waiters and the
    /// enabled list. What a decision that goes on leaves is what the wait and `run_ready`
    /// left: the thread `Runnable` with no timeout, the mutex open to a waiter. Returns false
    /// (nothing done) for any other wait.
    pub(super) fn defer_wait(&mut self, on: BlockedOn) -> bool {
        let BlockedOn::Mutex(object) = on else { return false };
        let obj = &mut self.objects[object.index()];
        if !obj.waiters.is_empty() || !matches!(obj.state, ObjectState::Mutex { owner: None }) {
            return false;
        }
        obj.open = OPEN_EXCLUSIVE;
        // The running thread is enabled (the eager wait would have put it back).
        debug_assert!(self.enabled.has(self.current));
        let thread = &mut self.threads[self.current.index()];
        thread.timed_out = false;
        thread.timeout_able = false;
        self.deferred_wait = Some(on);
        true
    }

    /// The deferred wait of [`State::defer_wait`], made now: the decision does not let the
    /// thread go on past its lock point.
    #[inline]
    pub(super) fn undefer_wait(&mut self) {
        if let Some(on) = self.deferred_wait.take() {
            self.wait_at_point(on, false);
        }
    }

    /// Describes the object `id` for messages: `Mutex@src/lib.rs:10:5`.
    pub(super) fn describe_object(&self, id: ObjectId) -> String {
        let o = &self.objects[id.index()];
        describe_object(o.kind, o.site)
    }
}

/// Inserts `id` into the sorted `list` (if absent).
#[inline]
pub(super) fn insert_sorted(list: &mut Vec<ThreadId>, id: ThreadId) {
    if let Err(pos) = list.binary_search(&id) {
        if list.len() - pos > SHORT_TAIL {
            return list.insert(pos, id);
        }
        // Each id of the tail moves up one, the last one pushed.
        let mut carry = id;
        for slot in &mut list[pos..] {
            carry = std::mem::replace(slot, carry);
        }
        list.push(carry);
    }
}

/// Removes `list[pos]` (`pos` in bounds), keeping the others' order.
#[inline]
pub(super) fn remove_at(list: &mut Vec<ThreadId>, pos: usize) {
    if list.len() - pos > SHORT_TAIL {
        list.remove(pos);
        return;
    }
    // Each id after `pos` moves down one, from the last (popped) on.
    if let Some(mut carry) = list.pop() {
        for slot in list[pos..].iter_mut().rev() {
            carry = std::mem::replace(slot, carry);
        }
    }
}

/// The longest tail of a thread list (the enabled threads, an object's waiters) that
/// [`insert_sorted`] and [`remove_at`] shift by hand: `Vec::insert`'s and `Vec::remove`'s call
/// of `memmove`, with the caller's spills around it, cost ~25 instructions, more than moving a
/// few ids (the lists of most programs are a few threads long). Longer tails are `memmove`'s.
/// The carried id keeps the loop from being made a `memmove` call again.
const SHORT_TAIL: usize = 4;

/// Which classes of waiters (`OPEN_*` bits) what `state` models can serve now: a free mutex
/// any waiter, a read lock without a writer its readers, ...; `None` for objects whose waiters
/// are woken explicitly (condition variables, barriers).
fn available(state: &ObjectState) -> Option<u8> {
    Some(match state {
        ObjectState::Mutex { owner } => open_if(owner.is_none(), OPEN_EXCLUSIVE),
        ObjectState::RwLock { writer, readers } => {
            open_if(writer.is_none() && readers.is_empty(), OPEN_EXCLUSIVE)
                | open_if(writer.is_none(), OPEN_SHARED)
        }
        ObjectState::Once { running, done, poisoned, .. } => {
            open_if(running.is_none(), OPEN_EXCLUSIVE)
                | open_if(*done, OPEN_DONE)
                | open_if(*poisoned && running.is_none(), OPEN_POISONED)
        }
        ObjectState::Channel { room, ready } => {
            open_if(*room, OPEN_EXCLUSIVE) | open_if(*ready, OPEN_RECV)
        }
        _ => return None,
    })
}

/// The classes (`OPEN_*` bits) of a waiter for a `Once`'s completion: the completion, and
/// with `ends_on_poison` a poisoned `Once` no initializer runs (std's `Once::wait` panics
/// then).
fn once_wait_class(ends_on_poison: bool) -> u8 {
    OPEN_DONE | open_if(ends_on_poison, OPEN_POISONED)
}

/// `bit` if `available`.
fn open_if(available: bool, bit: u8) -> u8 {
    if available {
        bit
    } else {
        0
    }
}

/// Describes an object of kind `kind` created at `site`: `Mutex@src/lib.rs:10:5`.
pub(crate) fn describe_object(kind: VarKind, site: &Location<'_>) -> String {
    format!("{}@{}", kind.name(), site)
}

/// The points at which the running thread goes on without asking the strategy, as it said
/// after choosing that thread (`Strategy::keeps_running`): those before step `until_step`,
/// but for an access to a variable whose bit is in `watch`, while the enabled set has not
/// grown since (`grown`, the count [`Enabled::grown`] had then).
#[derive(Clone, Copy, Debug)]
pub(super) struct Kept {
    until_step: u64,
    watch: u64,
    grown: u64,
}

impl Kept {
    /// No point.
    pub(super) const NONE: Kept = Kept { until_step: 0, watch: 0, grown: 0 };

    /// What the strategy said, with the enabled set's count now.
    #[inline(always)]
    pub(super) fn new(said: KeepRunning, enabled: &Enabled) -> Kept {
        Kept { until_step: said.until_step, watch: said.watch, grown: enabled.grown() }
    }

    /// Whether the point at `step`, an access to `var` (if any) by the running thread, which
    /// goes on there, is one the strategy said it keeps that thread at.
    #[inline(always)]
    pub(super) fn covers(&self, step: u64, var: Option<VarId>, enabled: &Enabled) -> bool {
        step < self.until_step
            && enabled.grown() == self.grown
            && var.is_none_or(|v| self.watch & KeepRunning::bit(v) == 0)
    }
}

/// What a decision offers the strategy ([`State::offer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Offer {
    /// The enabled threads, at every point.
    Enabled,
    /// The enabled threads, at every point with a choice: the points where the running thread
    /// alone can run are passed over (`Strategy::skips_forced`).
    EnabledOrNone,
    /// As `EnabledOrNone`, and the points the strategy said it keeps the running thread
    /// ([`State::kept`]) are passed over too.
    EnabledOrKept,
    /// Exploration off: the running thread while it can run, else the first enabled one.
    Running,
}

/// Each thread's pending operation, for strategies that look at more than the current thread's
/// event (POS re-draws the priorities of threads whose pending operations race with the one
/// that runs): what each thread announced at its latest scheduling point, read from the trace
/// the runtime keeps anyway, so a decision builds it from two slices without allocating.
///
/// A suspended thread resumes by performing the operation it announced, so that is its pending
/// operation: a waiting thread's is `Block` on the object it waits for now (chosen, it takes
/// it: a lock it waited for since its lock's point, a mutex a notified condvar waiter waits
/// for; woken, it retries the operation on it), a spinning thread's is its `Yield`. The current thread's pending operation
/// is the decision's event, which is not in the trace yet: ask the decision, not this. It also
/// reads the trace's latest steps and each object's variable, for the points a strategy let
/// the engine pass over (`Strategy::skips_forced`).
#[derive(Clone, Copy)]
pub(crate) struct Pending<'a> {
    threads: &'a [Thread],
    trace: &'a [Step],
    objects: &'a [Object],
    /// Where the steps the engine passed over since the strategy was last asked start.
    skipped_from: usize,
}

impl<'a> Pending<'a> {
    /// No thread has announced anything (for strategies' unit tests).
    #[cfg(test)]
    pub(crate) const NONE: Pending<'static> =
        Pending { threads: &[], trace: &[], objects: &[], skipped_from: 0 };

    /// Each thread's pending operation from the execution's `threads`, `trace` and `objects`,
    /// the strategy having last been asked before step `skipped_from`.
    pub(super) fn new(
        threads: &'a [Thread],
        trace: &'a [Step],
        objects: &'a [Object],
        skipped_from: usize,
    ) -> Pending<'a> {
        Pending { threads, trace, objects, skipped_from }
    }

    /// The steps the engine passed over since the strategy was last asked (empty for a
    /// strategy asked at every point): see `Decision::skipped`.
    #[inline]
    pub(crate) fn skipped(&self) -> &'a [Step] {
        self.trace.get(self.skipped_from..).unwrap_or(&[])
    }

    /// The variable of `object`, if the execution has it.
    #[inline]
    pub(crate) fn var_of(&self, object: ObjectId) -> Option<VarId> {
        self.objects.get(object.index()).map(|o| o.var)
    }

    /// The threads blocked on `object` now (a lock's, a `Once`'s or a channel's waiters, a
    /// condition variable's, and a notified condition variable waiter at its mutex): every
    /// thread whose pending operation is a `Block` on `object` ([`Pending::of`]) is among them.
    #[inline]
    pub(crate) fn waiters(&self, object: ObjectId) -> &'a [ThreadId] {
        self.objects.get(object.index()).map_or(&[], |o| &o.waiters)
    }

    /// How many threads the execution has created so far (ids `0..count`).
    pub(crate) fn count(&self) -> usize {
        self.threads.len()
    }

    /// What `thread` announced at its latest scheduling point (its kind and object), or `None`
    /// for a thread that has not reached one yet (it has not started) or is unknown. Stale for
    /// the current thread (see the type's documentation).
    #[inline]
    pub(crate) fn of(&self, thread: ThreadId) -> Option<(EventKind, Option<ObjectId>)> {
        let t = self.threads.get(thread.index())?;
        // A waiter's is what it waits for now: a notified condvar waiter waits for its mutex.
        if let Status::Blocked(on) = t.status {
            if let Some(object) = on.object() {
                return Some((EventKind::Block, Some(object)));
            }
        }
        let step = own_step(self.trace, thread, t.last_step)?;
        Some((step.kind, step.object))
    }
}

/// Strategies' unit tests: the threads and trace behind a [`Pending`], filled as the engine
/// fills them, so that a strategy sees other threads' pending operations as in a run.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct FakePending {
    threads: Vec<Thread>,
    trace: Vec<Step>,
}

#[cfg(test)]
impl FakePending {
    /// `thread` reached a scheduling point at `kind` on `object` (recorded after the decision,
    /// as the engine records it): its pending operation from the next decision on; it runs.
    pub(crate) fn announce(&mut self, thread: ThreadId, kind: EventKind, object: Option<ObjectId>) {
        let site = Location::caller();
        while self.threads.len() <= thread.index() {
            self.threads.push(Thread::new(None, site));
        }
        let t = &mut self.threads[thread.index()];
        t.status = Status::Runnable;
        t.last_step = self.trace.len();
        self.trace.push(Step {
            thread,
            kind,
            object,
            location: site,
            chosen: thread,
            value: None,
            waits: false,
            var_access: 0,
        });
    }

    /// `thread` now waits for the mutex `object` without a point of its own (a notified
    /// condition variable's waiter): what it waits for is its pending operation.
    pub(crate) fn waits_for(&mut self, thread: ThreadId, object: ObjectId) {
        if let Some(t) = self.threads.get_mut(thread.index()) {
            t.status = Status::Blocked(BlockedOn::Mutex(object));
        }
    }

    pub(crate) fn pending(&self) -> Pending<'_> {
        Pending::new(&self.threads, &self.trace, &[], self.trace.len())
    }
}

impl std::fmt::Debug for Pending<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending").field("threads", &self.threads.len()).finish_non_exhaustive()
    }
}

/// `trace[step]` if it is thread `t`'s: a thread that never reached a scheduling point still
/// has `last_step` 0, the first step of the trace, which is another thread's (or absent).
fn own_step(trace: &[Step], t: ThreadId, step: usize) -> Option<&Step> {
    trace.get(step).filter(|s| s.thread == t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u32]) -> Vec<ThreadId> {
        v.iter().map(|&i| ThreadId(i)).collect()
    }

    #[test]
    fn inserting_an_id_twice_keeps_one() {
        let mut l = ids(&[2, 7]);
        insert_sorted(&mut l, ThreadId(5));
        insert_sorted(&mut l, ThreadId(5));
        insert_sorted(&mut l, ThreadId(0));
        assert_eq!(l, ids(&[0, 2, 5, 7]));
    }

    #[test]
    fn short_and_long_tails_shift_as_vec_does() {
        // Every position of lists shorter and longer than `SHORT_TAIL`, against `Vec`'s own.
        for len in 0..2 * SHORT_TAIL as u32 + 2 {
            let list: Vec<ThreadId> = (0..len).map(|i| ThreadId(2 * i + 1)).collect();
            for pos in 0..len as usize {
                let (mut mine, mut std) = (list.clone(), list.clone());
                remove_at(&mut mine, pos);
                std.remove(pos);
                assert_eq!(mine, std, "removing at {pos} of {len}");
            }
            for id in 0..=2 * len {
                let (mut mine, mut std) = (list.clone(), list.clone());
                insert_sorted(&mut mine, ThreadId(id));
                if let Err(pos) = std.binary_search(&ThreadId(id)) {
                    std.insert(pos, ThreadId(id));
                }
                assert_eq!(mine, std, "inserting {id} into {len}");
            }
        }
    }
}
