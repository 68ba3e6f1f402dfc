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
//! come from [`Decision::pending`] (what each thread announced at its latest scheduling point);
//! the current thread's is the decision's event.
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
}

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
}

impl Strategy for Pos {
    fn describe(&self) -> String {
        "pos".to_string()
    }

    fn begin_execution(&mut self, _start: &super::ExecutionStart<'_>, _rng: &mut ScheduleRng) {
        // Keeps the allocation: later executions reuse it.
        self.priorities.clear();
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
            for i in 0..self.priorities.len() {
                let t = ThreadId(i as u32);
                if t == chosen {
                    continue;
                }
                if Self::pending(decision, t).is_some_and(|op| races(ran, op)) {
                    self.priorities[i] = rng.random();
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
}
