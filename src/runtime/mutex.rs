//! The model of a mutex: who holds it, who waits, recursive locking reported as the deadlock it
//! is; and the data lock that keeps two OS threads out of its data.
//!
//! `sync::Mutex` embeds a [`RawMutex`] and makes one call per operation: [`RawMutex::lock`]
//! runs the scheduling point, acquires in the model (blocking the logical thread while another
//! holds it), then takes the data lock (see `data_lock.rs`), and returns the [`MutexHold`] the
//! guard keeps; [`RawMutex::unlock`] undoes both and runs the unlock's scheduling point.
//! Outside any execution the same calls lock the data lock for the OS thread, as std's mutex.
//!
//! This file owns the `ObjectState::Mutex` model and the mutex's data lock; it does not touch
//! the data, the poisoned flag or the guards (the facade's), nor other objects' state.
//! `condvar.rs` uses [`RawMutex::release_for_wait`] and [`RawMutex::acquire`].

use std::panic::Location;

use super::context::with_current;
use super::data_lock::{DataLock, Owner};
use super::state::{describe_object, State};
use super::{BlockedOn, EventKind, Execution, FailureCause, Handle, ObjectId, ObjectState};
use crate::vars::VarKind;

/// The engine's part of a `sync::Mutex`: its identity and its data lock.
#[derive(Debug)]
pub(crate) struct RawMutex {
    handle: Handle,
    data: DataLock,
}

/// What a guard keeps of its lock: who holds the data lock, and the mutex's object in the
/// holding execution (unused outside executions).
#[derive(Clone, Copy, Debug)]
pub(crate) struct MutexHold {
    owner: Owner,
    object: ObjectId,
}

impl MutexHold {
    fn outside(owner: Owner) -> MutexHold {
        MutexHold { owner, object: ObjectId(u32::MAX) }
    }
}

enum Acquire {
    /// Acquired in the model, by the execution of this generation.
    Acquired(u64),
    Busy,
    Recursive,
}

impl RawMutex {
    /// A mutex created at the caller's location.
    #[track_caller]
    pub(crate) const fn new() -> RawMutex {
        RawMutex { handle: Handle::new(), data: DataLock::new() }
    }

    /// Where the mutex was created.
    pub(crate) fn site(&self) -> &'static Location<'static> {
        self.handle.site()
    }

    /// Locks the mutex, blocking until it is free.
    pub(crate) fn lock(&self, location: &'static Location<'static>) -> MutexHold {
        with_current(|ex| match ex {
            Some(ex) => {
                // The thread waits for the mutex at the lock's point: never a choice while
                // another thread holds it, and once chosen it takes it.
                let waits = |st: &State, object: ObjectId| match st.objects[object.index()].state {
                    ObjectState::Mutex { owner: Some(o) } if o == st.current => None,
                    _ => Some(BlockedOn::Mutex(object)),
                };
                let object =
                    ex.lock_point(&self.handle, VarKind::Mutex, EventKind::Lock, location, waits);
                self.acquire(ex, object, location)
            }
            None => self.lock_outside(),
        })
    }

    /// Locks the mutex if it is free.
    pub(crate) fn try_lock(&self, location: &'static Location<'static>) -> Option<MutexHold> {
        with_current(|ex| match ex {
            Some(ex) => {
                let object = ex.point(&self.handle, VarKind::Mutex, EventKind::Lock, location);
                match try_acquire(ex, object) {
                    Acquire::Acquired(gen) => Some(self.take_data(ex, gen, object)),
                    Acquire::Busy | Acquire::Recursive => None,
                }
            }
            None => {
                let owner = Owner::outside();
                self.data.try_lock_exclusive(owner).then(|| MutexHold::outside(owner))
            }
        })
    }

    /// Unlocks the mutex `hold` locked; inside its execution, a scheduling point.
    pub(crate) fn unlock(&self, hold: MutexHold, location: &'static Location<'static>) {
        if hold.owner.is_execution() {
            with_current(|ex| match ex {
                Some(ex) if hold.taken_by(ex) => {
                    if self.release_model(ex, hold, true) {
                        // Inlined with its kind a constant: every unlock of the mutex programs
                        // makes this point (1.7% of the counter's instructions, for ~4 KB of
                        // code).
                        ex.schedule_inlined(EventKind::Unlock, Some(hold.object), location);
                    }
                }
                // A guard that outlived its execution (dropped with the execution's leftovers,
                // or leaked and dropped later): only the data lock is left to release, if no
                // other execution has taken it over since.
                _ => {
                    self.data.unlock_exclusive(hold.owner);
                }
            })
        } else {
            self.data.unlock_exclusive(hold.owner);
        }
    }

    /// Acquires `object` (this mutex in `ex`) for the calling thread, blocking while another
    /// holds it, then takes the data lock. After a lock's point (or a condition variable's
    /// wait) that waited for the mutex the acquisition succeeds at once; the `block` is for a
    /// lock whose point was gated off (`Tracking::gate_primitives`), which did not wait.
    #[inline(always)]
    pub(super) fn acquire(
        &self,
        ex: &Execution,
        object: ObjectId,
        location: &'static Location<'static>,
    ) -> MutexHold {
        loop {
            match try_acquire(ex, object) {
                Acquire::Acquired(gen) => return self.take_data(ex, gen, object),
                Acquire::Busy => {
                    ex.block(BlockedOn::Mutex(object), None, location);
                }
                Acquire::Recursive => {
                    let cause = ex.with_state(|st| FailureCause::RecursiveLock {
                        thread: st.thread_info(st.current),
                        what: st.describe_object(object),
                        behind: None,
                    });
                    ex.fail(cause)
                }
            }
        }
    }

    /// Releases the mutex in the model and its data lock, without a scheduling point (the
    /// caller makes one: the condition variable's block).
    #[inline(always)]
    pub(super) fn release_for_wait(&self, ex: &Execution, hold: MutexHold) {
        self.release_model(ex, hold, false);
    }

    /// Releases the mutex in the model and its data lock; for an `unlock`, whether the unlock
    /// makes its scheduling point (`State::unlock_points`; without one, the release is noted
    /// for the race detector at the thread's current point, `Races::release_unlock`).
    #[inline(always)]
    fn release_model(&self, ex: &Execution, hold: MutexHold, unlock: bool) -> bool {
        let point = ex.with_state(|st| {
            let point = st.unlock_points;
            if let Some(ObjectState::Mutex { owner }) =
                st.objects.get_mut(hold.object.index()).map(|o| &mut o.state)
            {
                *owner = None;
                st.progress();
                st.refresh_waiters(hold.object);
                let me = st.current;
                if unlock && !point {
                    let step = st.threads[me.index()].last_step as u64;
                    st.races.release_unlock(me, hold.object, false, step);
                } else {
                    st.races.release(me, hold.object);
                }
            }
            point
        });
        // The running execution holds it (it is alive, so nobody stole it).
        self.data.unlock_exclusive_live(hold.owner);
        point
    }

    fn take_data(&self, ex: &Execution, gen: u64, object: ObjectId) -> MutexHold {
        let owner = Owner::execution(gen);
        if let Err(e) = self.data.lock_exclusive(owner) {
            ex.fail_lock(e, VarKind::Mutex, self.site());
        }
        MutexHold { owner, object }
    }

    /// Locks for the calling OS thread, outside any execution.
    pub(super) fn lock_outside(&self) -> MutexHold {
        let owner = Owner::outside();
        if let Err(e) = self.data.lock_exclusive(owner) {
            panic!("{}", e.message(&describe_object(VarKind::Mutex, self.site())));
        }
        MutexHold::outside(owner)
    }

    /// Releases an outside hold of the calling OS thread (for `Condvar::wait` outside
    /// executions).
    pub(super) fn unlock_outside(&self, hold: MutexHold) {
        self.data.unlock_exclusive_live(hold.owner);
    }
}

impl MutexHold {
    /// Whether this hold was taken inside an execution.
    pub(super) fn inside(&self) -> bool {
        self.owner.is_execution()
    }

    /// Whether this hold was taken by the execution `ex` (running now).
    pub(super) fn taken_by(&self, ex: &Execution) -> bool {
        self.owner.is_execution() && self.owner.generation() == ex.generation()
    }

    /// The mutex's object in the holding execution.
    pub(super) fn object(&self) -> ObjectId {
        self.object
    }
}

/// Inlined, as are `RawMutex::acquire` and `RawMutex::release_for_wait`: every lock and
/// unlock runs them, and their calls cost 0.8-1.8% of the default's instructions on the mutex
/// programs (`strategy_instructions`).
#[inline(always)]
fn try_acquire(ex: &Execution, object: ObjectId) -> Acquire {
    ex.with_state(|st| {
        let me = st.current;
        match &mut st.objects[object.index()].state {
            ObjectState::Mutex { owner: owner @ None } => {
                *owner = Some(me);
                st.races.acquire(me, object);
                st.progress();
                // Its other waiters, ready while it was free, wait again.
                st.refresh_waiters(object);
                Acquire::Acquired(st.gen)
            }
            ObjectState::Mutex { owner: Some(o) } if *o == me => Acquire::Recursive,
            _ => Acquire::Busy,
        }
    })
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    use std::sync::Arc;

    use rand::{RngExt, SeedableRng};

    use super::RawMutex;
    use crate::runtime::crash::RunInfo;
    use crate::runtime::{with_current, EventKind, Execution, Limits, StackPool, ThreadId};
    use crate::schedulers::{Decision, ScheduleRng, Strategy, StrategyError};

    thread_local! {
        /// The logical thread that holds the test's mutex, kept by the program itself (set
        /// right after each lock, cleared right before each unlock, with no scheduling point
        /// in between): the truth the strategy checks the engine's enabled threads against.
        /// Executions run on the test's OS thread, so the strategy sees it too.
        static HOLDER: Cell<Option<ThreadId>> = const { Cell::new(None) };
    }

    #[derive(Default)]
    struct Seen {
        /// Decisions that offered a thread whose lock operation cannot proceed.
        violations: Vec<String>,
        /// Decisions at which some thread waited for the held mutex (it was left out).
        waits: usize,
    }

    /// A random choice among the enabled threads that checks first that none of them is a
    /// thread about to lock the mutex another thread holds.
    struct Checking {
        seen: Rc<RefCell<Seen>>,
        mutex: Option<crate::runtime::ObjectId>,
    }

    impl Strategy for Checking {
        fn describe(&self) -> String {
            "checking".into()
        }

        fn choose(
            &mut self,
            d: &Decision<'_>,
            rng: &mut ScheduleRng,
        ) -> Result<ThreadId, StrategyError> {
            // The first mutex an execution locks is the outer one (every thread takes it
            // before the inner one); ids are per execution, in registration order.
            if d.event.kind == EventKind::Lock && self.mutex.is_none() {
                self.mutex = d.event.object;
            }
            let mut seen = self.seen.borrow_mut();
            let locking = |t: ThreadId| {
                let (kind, object) = if t == d.current {
                    (d.event.kind, d.event.object)
                } else {
                    match d.pending.of(t) {
                        Some(op) => op,
                        None => return false,
                    }
                };
                matches!(kind, EventKind::Lock | EventKind::Block)
                    && object.is_some()
                    && object == self.mutex
            };
            if let Some(holder) = HOLDER.get() {
                for &t in d.enabled {
                    if t != holder && locking(t) {
                        seen.violations.push(format!(
                            "step {}: thread {t} offered while thread {holder} holds the mutex",
                            d.step
                        ));
                    }
                }
                let mut all = (0..d.pending.count() as u32).map(ThreadId);
                if all.any(|t| t != holder && locking(t)) {
                    seen.waits += 1;
                }
            }
            Ok(d.enabled[rng.random_range(0..d.enabled.len())])
        }
    }

    fn me() -> ThreadId {
        with_current(|ex| ex.expect("inside the execution").current_thread())
    }

    /// Four threads that each lock the mutex twice, with scheduling points inside (the lock
    /// and unlock of an inner mutex no other thread contends for: it is only taken under the
    /// outer one), so that threads reach their lock while another holds it. Written with the
    /// engine's primitives: the runtime does not use the std facade.
    fn contention() {
        let here = std::panic::Location::caller();
        let outer = Rc::new(RawMutex::new());
        let inner = Rc::new(RawMutex::new());
        let threads: Vec<ThreadId> = (0..4)
            .map(|_| {
                let (outer, inner) = (outer.clone(), inner.clone());
                let body = move || {
                    for _ in 0..2 {
                        let hold = outer.lock(here);
                        HOLDER.set(Some(me()));
                        let i = inner.lock(here);
                        inner.unlock(i, here);
                        HOLDER.set(None);
                        outer.unlock(hold, here);
                    }
                };
                crate::runtime::spawn(body, None, here).0
            })
            .collect();
        crate::runtime::join_all(&std::cell::RefCell::new(threads), here);
    }

    /// The enabled threads of every decision of 200 random executions (fixed seeds) exclude
    /// every thread whose next operation locks the mutex while another thread holds it, the
    /// thread at the decision included; and such threads exist (the check is not vacuous).
    #[test]
    fn a_thread_at_a_held_mutex_is_never_a_choice() {
        let seen = Rc::new(RefCell::new(Seen::default()));
        let strategy = Checking { seen: seen.clone(), mutex: None };
        let limits = Limits {
            max_steps: 10_000,
            max_threads: 16,
            races: true,
            weak_cas_failures: false,
            show_panics: false,
            run: Arc::new(RunInfo::anonymous(1 << 20)),
        };
        let ex = Execution::new(Box::new(strategy), limits);
        let mut pool = StackPool::new(1 << 20);
        let mut rng = ScheduleRng::seed_from_u64(7);
        for index in 0..200 {
            HOLDER.set(None);
            let seed = rng.random_range(0..u64::MAX);
            let out =
                ex.run_one(&mut pool, seed, index, &contention, std::panic::Location::caller());
            assert!(out.failure.is_none(), "execution {index}: {:?}", out.failure);
        }
        let seen = seen.borrow();
        assert!(
            seen.violations.is_empty(),
            "{:?}",
            &seen.violations[..seen.violations.len().min(5)]
        );
        assert!(seen.waits > 100, "only {} decisions with a waiting thread", seen.waits);
    }

    /// Stays with the running thread while it can run, but at thread 1's first lock point
    /// switches to thread 2.
    struct SwitchAtFirstLock {
        switched: bool,
    }

    impl Strategy for SwitchAtFirstLock {
        fn describe(&self) -> String {
            "switch at thread 1's first lock".into()
        }

        fn choose(
            &mut self,
            d: &Decision<'_>,
            _rng: &mut ScheduleRng,
        ) -> Result<ThreadId, StrategyError> {
            let two = ThreadId(2);
            if !self.switched
                && d.event.kind == EventKind::Lock
                && d.current == ThreadId(1)
                && d.enabled.contains(&two)
            {
                self.switched = true;
                return Ok(two);
            }
            Ok(if d.current_enabled { d.current } else { d.enabled[0] })
        }
    }

    /// The state of thread `id` and of the mutex `m`'s waiters, read inside the execution:
    /// its status, whether it is enabled, the waiters, and the wait put off at a lock point.
    fn state_of(m: &RawMutex, id: ThreadId) -> String {
        with_current(|ex| {
            let ex = ex.expect("inside the execution");
            let object = ex.object(&m.handle, crate::vars::VarKind::Mutex);
            ex.with_state(|st| {
                let t = &st.threads[id.index()];
                format!(
                    "{:?} timeout_able={} enabled={} waiters={:?} deferred={:?}",
                    t.status,
                    t.timeout_able,
                    st.enabled.contains(&id),
                    st.objects[object.index()].waiters,
                    st.deferred_wait,
                )
            })
        })
    }

    /// A lock of a free mutex no thread waits for puts the thread's wait off
    /// (`State::defer_wait`): when the thread goes on it holds the mutex as after a wait and
    /// its choice (runnable, no waiter left); when the decision switches away, the thread waits
    /// for the mutex (a waiter, enabled while the mutex is free, as an eager wait makes it),
    /// and another thread's lock then finds it among the waiters.
    #[test]
    fn a_lock_point_on_a_free_mutex_waits_only_when_the_thread_stops_there() {
        let limits = Limits {
            max_steps: 1_000,
            max_threads: 4,
            races: true,
            weak_cas_failures: false,
            show_panics: false,
            run: Arc::new(RunInfo::anonymous(1 << 20)),
        };
        let ex = Execution::new(Box::new(SwitchAtFirstLock { switched: false }), limits);
        let mut pool = StackPool::new(1 << 20);
        let seen = Rc::new(RefCell::new(Vec::<String>::new()));
        let log = seen.clone();
        let body = move || {
            let here = std::panic::Location::caller();
            let m = Rc::new(RawMutex::new());
            let (m1, m2) = (m.clone(), m.clone());
            let (log1, log2) = (log.clone(), log.clone());
            let one = move || {
                for _ in 0..2 {
                    let hold = m1.lock(here);
                    log1.borrow_mut().push(format!("1 holds: {}", state_of(&m1, ThreadId(1))));
                    m1.unlock(hold, here);
                }
            };
            let two = move || {
                log2.borrow_mut().push(format!("2 starts: {}", state_of(&m2, ThreadId(1))));
                let hold = m2.lock(here);
                log2.borrow_mut().push(format!("2 holds: {}", state_of(&m2, ThreadId(2))));
                m2.unlock(hold, here);
            };
            let (t1, _) = crate::runtime::spawn(one, None, here);
            let (t2, _) = crate::runtime::spawn(two, None, here);
            crate::runtime::join_all(&std::cell::RefCell::new(vec![t1, t2]), here);
        };
        let out = ex.run_one(&mut pool, 1, 0, &body, std::panic::Location::caller());
        assert!(out.failure.is_none(), "{:?}", out.failure);
        let runnable = "Runnable timeout_able=false enabled=true waiters=[] deferred=None";
        assert_eq!(
            *seen.borrow(),
            [
                // Switched away at its lock point: thread 1 waits for the free mutex.
                "2 starts: Blocked(Mutex(ObjectId(0))) timeout_able=false enabled=true \
                 waiters=[ThreadId(1)] deferred=None"
                    .to_string(),
                // Thread 2 locked with thread 1 waiting (no deferral): its wait and choice.
                format!("2 holds: {runnable}").replace("waiters=[]", "waiters=[ThreadId(1)]"),
                // Thread 1 chosen after thread 2's unlock, then a lock it goes on from.
                format!("1 holds: {runnable}"),
                format!("1 holds: {runnable}"),
            ]
        );
    }
}
