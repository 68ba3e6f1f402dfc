//! Partial order sampling (`strategy = "pos"`, [`StrategyKind::Pos`](crate::StrategyKind::Pos)):
//! Yuan, Yang and Gu, "Partial Order Aware Concurrency Sampling", CAV 2018; the default
//! strategy of Fray.
//!
//! Every thread holds a random priority; at each scheduling point the enabled thread with the
//! highest priority runs its pending operation. Then that thread's priority is drawn again
//! (its next operation is a new event), and so is the priority of every thread whose pending
//! operation races with the one that ran: same object and at least one of the two modifies it.
//! Re-drawing the racing threads is what makes the sampling aware of the partial order: two
//! schedules that differ only in the order of independent operations are one partial order,
//! and POS spreads its probability over partial orders rather than over interleavings, which
//! the naive random walk favours by their number.
//!
//! The re-draw is done when the thread is chosen, before its operation runs: the operation
//! runs before the next scheduling point whatever else happens, so the next decision sees the
//! same priorities as it would had they been drawn after it. Other threads' pending operations
//! come from [`Decision::pending`] (what each thread announced at its latest scheduling point,
//! or the object a blocked thread waits on); the current thread's is the decision's event.
//!
//! # Cost
//!
//! The racing threads are found without a pass over every thread: each thread is filed under
//! the object of the operation it announced at its latest scheduling point (POS is asked at
//! every point, so that is its pending operation unless it blocked since), or on the shelf of
//! operations aimed at a thread (join, exit, park...) when it has no object, and a thread
//! blocked on an object is among the object's waiters, which the engine keeps
//! (`Pending::waiters`). So the candidates are the threads filed under the object the chosen
//! thread's operation touches and that object's waiters; each one's pending operation is
//! looked up as before, and the racing ones draw in increasing id order (a bit per thread),
//! the order of the pass they replace, so the priorities and the schedules are the same:
//! `tests/schedule_fingerprints.rs` pins them at the values of the pass, on forty threads
//! waiting on a condition variable and on twenty that block in every way, and debug builds
//! check each decision's racing threads against the pass. A decision then costs a pass over
//! the enabled threads for the highest priority, and a look at each thread filed under or
//! waiting on the object that ran: a hundred threads contending for one mutex still re-draw
//! each other's priorities at every lock, which is the algorithm's own work.
//!
//! Measured with callgrind (`corpus/examples/strategy_instructions.rs PROGRAM pos N`): 100
//! threads contending for two mutexes (`twostage`, 20 executions) 85.9M instructions with the
//! pass, 50.0M filed; the work-stealing deque (1,000) 62.6M -> 58.7M, whose threads are at
//! different atomics most of the time; producer/consumer 24.0M -> 23.9M; the counter, whose
//! every thread is at the one mutex, pays for the filing: 20.2M -> 20.4M.
//!
//! No guarantee; executions are independent given the seed and the index, so they run in
//! parallel.

use rand::RngExt;

use super::registry::StrategyInfo;
use super::{Decision, ScheduleRng, Strategy, StrategyError};
use crate::runtime::{EventKind, ObjectId, ThreadId};

/// Partial order sampling: strict random priorities, re-drawn for the thread that runs and
/// for every thread whose pending operation races with the one it runs.
#[derive(Clone, Debug, Default)]
pub struct Pos {
    /// Priority of each thread seen in this execution, by thread id.
    priorities: Vec<u64>,
    /// Where each thread is filed, by thread id: its shelf and its place on it, or [`NOWHERE`]
    /// (it has announced nothing yet, or an operation that races with nothing).
    filed: Vec<(u32, u32)>,
    /// The threads filed, per shelf: shelf 0 holds the threads whose latest announced
    /// operation has no object and is aimed at a thread, shelf `o + 1` those whose latest
    /// announced operation is on object `o`. Kept across executions for their allocations.
    shelves: Vec<Vec<u32>>,
    /// The racing threads of one decision, a bit per thread id (all clear between decisions).
    racing: Vec<u64>,
}

/// Not filed: see [`Pos::filed`].
const NOWHERE: (u32, u32) = (u32::MAX, u32::MAX);

/// A pending operation as POS compares them: its kind and its object.
type Op = (EventKind, Option<ObjectId>);

/// Whether an operation only reads its object: two reads of one object commute.
fn only_reads(kind: EventKind) -> bool {
    matches!(kind, EventKind::AtomicLoad | EventKind::CellRead | EventKind::ReadLock)
}

/// Whether an operation without an object touches nothing another thread sees through an
/// object or a thread: spawning (the new thread draws its own priority), yielding, a fence
/// (sequentially consistent model).
fn local(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::Spawn
            | EventKind::Yield
            | EventKind::Sleep
            | EventKind::Fence
            | EventKind::SpuriousWakeup
    )
}

/// Whether two pending operations race. On one object: at least one modifies it (a blocked
/// thread's `Block` retries an operation on its object, counted as modifying, as is anything
/// but a load, a cell read or a read lock). Without an object: the operations aimed at a
/// thread (join, exit, park, unpark, blocking on a join or a park) may race with each other,
/// and which thread they aim at is not known here, so they are taken to race; the local ones
/// race with nothing.
fn races(a: Op, b: Op) -> bool {
    match (a.1, b.1) {
        (Some(x), Some(y)) => x == y && !(only_reads(a.0) && only_reads(b.0)),
        (None, None) => !local(a.0) && !local(b.0),
        _ => false,
    }
}

/// The shelf of an operation (see [`Pos::shelves`]): `None` for one that races with nothing.
fn shelf_of(op: Op) -> Option<usize> {
    match op {
        (_, Some(object)) => Some(object.index() + 1),
        (kind, None) if !local(kind) => Some(0),
        _ => None,
    }
}

impl Pos {
    /// The thread's pending operation: the decision's event for the current thread, what it
    /// announced last for the others (`None`: it has not started, so it races with nothing).
    fn pending(decision: &Decision<'_>, thread: ThreadId) -> Option<Op> {
        if thread == decision.current {
            Some((decision.event.kind, decision.event.object))
        } else {
            decision.pending.of(thread)
        }
    }

    /// Files `thread` under the shelf of `op`, the operation it announced, taking it off the
    /// one it was on.
    fn file(&mut self, thread: ThreadId, op: Op) {
        let t = thread.index();
        if self.filed.len() <= t {
            self.filed.resize(t + 1, NOWHERE);
        }
        let to = shelf_of(op).map_or(u32::MAX, |s| s as u32);
        let (from, at) = self.filed[t];
        if from == to {
            return;
        }
        if from != u32::MAX {
            let shelf = &mut self.shelves[from as usize];
            shelf.swap_remove(at as usize);
            if let Some(&moved) = shelf.get(at as usize) {
                self.filed[moved as usize].1 = at;
            }
        }
        self.filed[t] = NOWHERE;
        if to != u32::MAX {
            let to_i = to as usize;
            if self.shelves.len() <= to_i {
                self.shelves.resize_with(to_i + 1, Vec::new);
            }
            let shelf = &mut self.shelves[to_i];
            self.filed[t] = (to, shelf.len() as u32);
            shelf.push(thread.0);
        }
    }

    /// Into `racing`, a bit per thread: the threads but `chosen` whose pending operation
    /// races with `ran`, `chosen`'s, found among those filed under its shelf and the waiters
    /// of its object (a waiter may be both: one bit). Returns the words past the last one set.
    fn find_racing(&mut self, decision: &Decision<'_>, chosen: ThreadId, ran: Op) -> usize {
        let Some(shelf) = shelf_of(ran) else { return 0 };
        let waiters = ran.1.map_or(&[][..], |o| decision.pending.waiters(o));
        let filed = self.shelves.get(shelf).map_or(&[][..], |s| s.as_slice());
        let words = self.priorities.len().div_ceil(64);
        if self.racing.len() < words {
            self.racing.resize(words, 0);
        }
        let mut end = 0;
        // A waiter filed under the object it waits on (a thread blocked at its lock's point)
        // was looked at with the others filed there.
        let on_shelf = |t: u32| self.filed.get(t as usize).is_some_and(|f| f.0 as usize == shelf);
        let waiters = waiters.iter().map(|t| t.0).filter(|&t| !on_shelf(t));
        for t in filed.iter().copied().chain(waiters) {
            let thread = ThreadId(t);
            // Every filed thread and waiter has its priority: it reached a point, or exists.
            if thread != chosen && Self::pending(decision, thread).is_some_and(|op| races(ran, op))
            {
                let w = t as usize / 64;
                self.racing[w] |= 1 << (t % 64);
                end = end.max(w + 1);
            }
        }
        if cfg!(debug_assertions) {
            // The pass the shelves replace (without allocating: debug builds run it at every
            // decision).
            for t in 0..self.priorities.len() as u32 {
                let found = self.racing[t as usize / 64] >> (t % 64) & 1 != 0;
                let thread = ThreadId(t);
                let passed = thread != chosen
                    && Self::pending(decision, thread).is_some_and(|op| races(ran, op));
                assert_eq!(
                    found, passed,
                    "{thread} races with {ran:?} by the pass, not by the shelves"
                );
            }
        }
        end
    }
}

impl Strategy for Pos {
    fn describe(&self) -> String {
        "pos".to_string()
    }

    fn begin_execution(&mut self, _start: &super::ExecutionStart<'_>, _rng: &mut ScheduleRng) {
        // Keeps the allocations: later executions reuse them.
        self.priorities.clear();
        self.filed.clear();
        self.shelves.iter_mut().for_each(Vec::clear);
    }

    fn choose(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError> {
        // Threads seen for the first time draw their priority, in id order.
        let last = decision.enabled.last().map_or(0, |t| t.index() + 1);
        let known = decision.pending.count().max(last).max(decision.current.index() + 1);
        while self.priorities.len() < known {
            self.priorities.push(rng.random());
        }
        // What the current thread announces is its pending operation from now on.
        self.file(decision.current, (decision.event.kind, decision.event.object));

        let mut chosen = decision.enabled[0];
        for &t in &decision.enabled[1..] {
            if self.priorities[t.index()] > self.priorities[chosen.index()] {
                chosen = t;
            }
        }

        // The chosen thread's operation runs: it has a new pending operation, and every
        // thread whose pending operation races with the one that ran draws again.
        let ran = Self::pending(decision, chosen);
        self.priorities[chosen.index()] = rng.random();
        if let Some(ran) = ran {
            // In increasing id order, as a pass over every thread drew them; the bits are
            // cleared for the next decision as they are read.
            let end = self.find_racing(decision, chosen, ran);
            for w in 0..end {
                let mut bits = std::mem::take(&mut self.racing[w]);
                while bits != 0 {
                    self.priorities[w * 64 + bits.trailing_zeros() as usize] = rng.random();
                    bits &= bits - 1;
                }
            }
        }
        Ok(chosen)
    }
}

/// `strategy = "pos"`: no parameters, no bound, executions in parallel.
pub(crate) const INFO: StrategyInfo = StrategyInfo {
    name: "pos",
    title: "partial order sampling",
    params: &[],
    bound: None,
    priority: false,
    learns_from_execution_0: false,
    parallel: true,
    build: |_| Box::new(Pos::default()),
};

#[cfg(test)]
mod tests {
    use super::*;

    const X: Option<ObjectId> = Some(ObjectId(0));
    const Y: Option<ObjectId> = Some(ObjectId(1));

    #[test]
    fn operations_race_on_one_object_when_one_of_them_modifies_it() {
        use EventKind::*;
        assert!(races((AtomicStore, X), (AtomicLoad, X)));
        assert!(races((AtomicRmw, X), (AtomicRmw, X)));
        assert!(races((Lock, X), (Block, X)));
        assert!(!races((AtomicLoad, X), (AtomicLoad, X)));
        assert!(!races((ReadLock, X), (CellRead, X)));
        assert!(!races((AtomicStore, X), (AtomicStore, Y)));
        assert!(races((Join, None), (ThreadExit, None)));
        assert!(races((Park, None), (Unpark, None)));
        assert!(!races((Yield, None), (ThreadExit, None)));
        assert!(!races((Join, None), (AtomicStore, X)));
    }

    /// Filing moves a thread between shelves and keeps every place right after the
    /// swap-removals, over random moves of twelve threads among three objects, operations
    /// aimed at threads and local ones (fixed seed: the same moves in every run).
    #[test]
    fn filing_keeps_each_thread_on_its_latest_operations_shelf() {
        use rand::SeedableRng;
        let ops = [
            (EventKind::AtomicLoad, X),
            (EventKind::Lock, Y),
            (EventKind::Block, Some(ObjectId(2))),
            (EventKind::Join, None),
            (EventKind::Yield, None),
        ];
        let mut pos = Pos::default();
        let mut rng = ScheduleRng::seed_from_u64(7);
        let mut latest: Vec<Option<Op>> = vec![None; 12];
        for _ in 0..2_000 {
            let t = rng.random_range(0..12);
            let op = ops[rng.random_range(0..ops.len())];
            pos.file(ThreadId(t as u32), op);
            latest[t] = Some(op);
            for (shelf, threads) in pos.shelves.iter().enumerate() {
                for (at, &t) in threads.iter().enumerate() {
                    assert_eq!(pos.filed[t as usize], (shelf as u32, at as u32));
                }
            }
            for (t, op) in latest.iter().enumerate() {
                let want = op.and_then(shelf_of);
                let filed = pos.filed.get(t).copied().unwrap_or(NOWHERE);
                assert_eq!(filed.0, want.map_or(u32::MAX, |s| s as u32), "thread {t}");
            }
        }
    }
}
