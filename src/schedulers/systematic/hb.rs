//! Happens-before pruning: the fingerprint of the state before a scheduling decision.
//!
//! Every performed operation is a node identified by its thread, its index in the thread, and
//! its position among the conflicting operations on its object (writes are totally ordered, a
//! read is placed after the writes before it; synchronization operations count as writes). The
//! fingerprint is the sum of the nodes' hashes, so it depends on the happens-before graph, not
//! on the order independent operations were interleaved in. An operation a thread *reached*
//! (the event of its scheduling point) happens only when the thread next runs.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use crate::runtime::EventKind;

/// An operation a thread reached and performs when it next runs.
#[derive(Clone, Copy, Debug)]
pub(super) struct Op {
    pub(super) kind: EventKind,
    pub(super) object: Option<u32>,
    pub(super) location: usize,
    /// Resuming from `Block`: re-acquiring what it waited for.
    pub(super) resume: bool,
}

/// The happens-before fingerprint of the performed operations, kept as two commutative sums
/// of per-operation hashes (order-independent, so equal graphs give equal sums).
#[derive(Default)]
pub(super) struct Hb {
    pub(super) sums: (u64, u64),
    pub(super) count: Vec<u32>,
    pub(super) pending: Vec<Option<Op>>,
    pub(super) writes: Vec<u32>,
    pub(super) global_writes: u32,
}

pub(super) fn hash2<T: Hash>(value: &T) -> (u64, u64) {
    let mut a = DefaultHasher::new();
    (0u8, value).hash(&mut a);
    let mut b = DefaultHasher::new();
    (1u8, value).hash(&mut b);
    (a.finish(), b.finish())
}

impl Hb {
    pub(super) fn ensure(&mut self, thread: usize) {
        if self.count.len() <= thread {
            self.count.resize(thread + 1, 0);
            self.pending.resize(thread + 1, None);
        }
    }

    /// Thread `t` reached `op` (performed when `t` next runs).
    pub(super) fn reach(&mut self, t: usize, op: Op) {
        self.ensure(t);
        self.pending[t] = Some(op);
    }

    /// Thread `t` runs: its pending operation happens now.
    pub(super) fn run(&mut self, t: usize) {
        self.ensure(t);
        if let Some(op) = self.pending[t].take() {
            self.node(t, op);
        }
    }

    /// Records one performed operation.
    pub(super) fn node(&mut self, t: usize, op: Op) {
        self.ensure(t);
        let index = self.count[t];
        self.count[t] += 1;
        let ordinal = match op.object {
            Some(o) => {
                let o = o as usize;
                if self.writes.len() <= o {
                    self.writes.resize(o + 1, 0);
                }
                let read =
                    !op.resume && matches!(op.kind, EventKind::AtomicLoad | EventKind::CellRead);
                if !read {
                    self.writes[o] += 1;
                }
                self.writes[o]
            }
            None if matches!(
                op.kind,
                EventKind::Spawn | EventKind::Park | EventKind::Unpark | EventKind::Poll
            ) =>
            {
                self.global_writes += 1;
                self.global_writes
            }
            None => 0,
        };
        let h = hash2(&(t, index, op.kind, op.object, op.location, op.resume, ordinal));
        self.sums.0 = self.sums.0.wrapping_add(h.0);
        self.sums.1 = self.sums.1.wrapping_add(h.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(kind: EventKind, object: u32) -> Op {
        Op { kind, object: Some(object), location: 0, resume: false }
    }

    /// Runs `(thread, op)` pairs in order and returns the fingerprint.
    fn fingerprint(ops: &[(usize, Op)]) -> (u64, u64) {
        let mut hb = Hb::default();
        for &(t, o) in ops {
            hb.reach(t, o);
            hb.run(t);
        }
        hb.sums
    }

    #[test]
    fn independent_operations_commute_and_conflicting_ones_do_not() {
        let (r, w) = (EventKind::AtomicLoad, EventKind::AtomicStore);
        // Two reads of one object, in either order: the same graph.
        assert_eq!(
            fingerprint(&[(0, op(r, 0)), (1, op(r, 0))]),
            fingerprint(&[(1, op(r, 0)), (0, op(r, 0))])
        );
        // Writes to different objects commute.
        assert_eq!(
            fingerprint(&[(0, op(w, 0)), (1, op(w, 1))]),
            fingerprint(&[(1, op(w, 1)), (0, op(w, 0))])
        );
        // A read and a write of one object do not; nor do two writes.
        assert_ne!(
            fingerprint(&[(0, op(r, 0)), (1, op(w, 0))]),
            fingerprint(&[(1, op(w, 0)), (0, op(r, 0))])
        );
        assert_ne!(
            fingerprint(&[(0, op(w, 0)), (1, op(w, 0))]),
            fingerprint(&[(1, op(w, 0)), (0, op(w, 0))])
        );
        // Synchronization operations count as writes.
        let lock = EventKind::Lock;
        assert_ne!(
            fingerprint(&[(0, op(lock, 2)), (1, op(lock, 2))]),
            fingerprint(&[(1, op(lock, 2)), (0, op(lock, 2))])
        );
        // A longer trace: swapping adjacent independent operations keeps the graph.
        let a = [(0, op(w, 0)), (1, op(r, 1)), (0, op(r, 1)), (1, op(w, 0))];
        let b = [(1, op(r, 1)), (0, op(w, 0)), (0, op(r, 1)), (1, op(w, 0))];
        assert_eq!(fingerprint(&a), fingerprint(&b));
    }

    #[test]
    fn pending_operations_happen_when_their_thread_runs() {
        // Thread 0 reaches a write and is preempted; thread 1 writes first. The graph is that
        // of 1's write before 0's, not the order the scheduling points were reached in.
        let w = EventKind::AtomicStore;
        let mut hb = Hb::default();
        hb.reach(0, op(w, 0));
        hb.reach(1, op(w, 0));
        hb.run(1);
        hb.run(0);
        assert_eq!(hb.sums, fingerprint(&[(1, op(w, 0)), (0, op(w, 0))]));
    }
}
