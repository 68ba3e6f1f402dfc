//! The enabled threads of an execution: who can run at the next scheduling point.
//!
//! This module owns the sorted list strategies choose from, and tells the execution's strategy
//! of every change to it as it happens (`Strategy::enabled_changed`), for a strategy that
//! keeps its own index of the enabled threads (the priority strategies' tournament tree)
//! instead of reading the whole list at every decision. Only a strategy that asks
//! (`Strategy::reads_changes`) is told: a lock's release and acquisition on a 100-thread
//! program flip every waiter, and telling costs a call per flip. Telling at the change, not at the next scheduling point, keeps the scheduling
//! point free of any test (an atomic operation's point changes nothing here). It decides
//! nothing about who is enabled: `state.rs` and `execution.rs` say so (a wake, a block, a
//! spin, a lock's waiters), through the methods here, which are the only way to change the
//! list and each take the strategy to tell, so no change goes untold.

use std::ops::Deref;

use super::state::insert_sorted;
use super::ThreadId;
use crate::schedulers::Strategy;

/// One change of the enabled set: `thread` became enabled (`enabled`) or stopped being.
/// Applied in the order told, the changes turn the set the previous decision saw into the
/// set of the next one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EnabledChange {
    pub(crate) thread: ThreadId,
    pub(crate) enabled: bool,
}

/// The enabled threads in increasing id order (read through `Deref` as a slice).
#[derive(Debug, Default)]
pub(super) struct Enabled {
    list: Vec<ThreadId>,
    /// The real changes (a thread added was not in the list, a thread removed was) of one
    /// [`Enabled::update`], told at its end; kept for its allocation.
    changes: Vec<EnabledChange>,
    /// Whether this execution's strategy is told of the changes.
    telling: bool,
    /// Scratch bit set of [`Enabled::update`], kept for its allocation.
    bits: Vec<u64>,
}

impl Deref for Enabled {
    type Target = [ThreadId];

    #[inline]
    fn deref(&self) -> &[ThreadId] {
        &self.list
    }
}

impl Enabled {
    pub(super) fn with_capacity(threads: usize) -> Enabled {
        Enabled {
            list: Vec::with_capacity(threads),
            changes: Vec::with_capacity(threads),
            telling: false,
            bits: Vec::new(),
        }
    }

    /// An execution starts: only the main thread is enabled; nothing is told until
    /// [`Enabled::tell`].
    pub(super) fn start(&mut self) {
        self.list.clear();
        self.telling = false;
        self.list.push(ThreadId::MAIN);
    }

    /// Whether the execution that starts tells `strategy` of the changes (it reads them); if
    /// it does, it is told of the main thread now.
    pub(super) fn tell(&mut self, on: bool, strategy: &mut dyn Strategy) {
        debug_assert_eq!(self.list, [ThreadId::MAIN], "told as the execution starts");
        self.telling = on;
        self.note(ThreadId::MAIN, true, strategy);
    }

    #[inline]
    fn note(&mut self, thread: ThreadId, enabled: bool, strategy: &mut dyn Strategy) {
        if self.telling {
            strategy.enabled_changed(&[EnabledChange { thread, enabled }]);
        }
    }

    /// Enables `id`, a thread with a higher id than every other (just spawned).
    pub(super) fn push_newest(&mut self, id: ThreadId, strategy: &mut dyn Strategy) {
        debug_assert!(self.list.last().is_none_or(|&t| t < id), "{id} is not the newest thread");
        self.list.push(id);
        self.note(id, true, strategy);
    }

    /// Enables `id` (nothing if it is).
    #[inline]
    pub(super) fn insert(&mut self, id: ThreadId, strategy: &mut dyn Strategy) {
        if insert_sorted(&mut self.list, id) {
            self.note(id, true, strategy);
        }
    }

    /// Disables `id` (nothing if it is not enabled).
    #[inline]
    pub(super) fn remove(&mut self, id: ThreadId, strategy: &mut dyn Strategy) {
        if let Ok(pos) = self.list.binary_search(&id) {
            self.list.remove(pos);
            self.note(id, false, strategy);
        }
    }

    /// Enables (`true`) or disables (`false`) each thread of `changes`, in an execution of
    /// `threads` threads: through a bit set, so a release that enables a hundred waiters, or
    /// an acquisition that disables them, costs a pass over the list and one over the waiters
    /// whose branches predict well, where merging two sorted lists mispredicted at every
    /// element (13% of the profile of a 100-thread program). The strategy is told of the
    /// real changes at the end, at once.
    #[inline]
    pub(super) fn update(
        &mut self,
        threads: usize,
        changes: impl Iterator<Item = (ThreadId, bool)>,
        strategy: &mut dyn Strategy,
    ) {
        let bits = &mut self.bits;
        bits.clear();
        bits.resize(threads.div_ceil(64), 0);
        for t in self.list.iter() {
            bits[t.index() / 64] |= 1 << (t.index() % 64);
        }
        // Two loops, so that an execution that tells nothing pays no test per change.
        if self.telling {
            self.changes.clear();
            for (t, add) in changes {
                let (word, bit) = (t.index() / 64, 1u64 << (t.index() % 64));
                if (bits[word] & bit != 0) != add {
                    self.changes.push(EnabledChange { thread: t, enabled: add });
                }
                bits[word] = (bits[word] & !bit) | (bit * add as u64);
            }
        } else {
            for (t, add) in changes {
                let (word, bit) = (t.index() / 64, 1u64 << (t.index() % 64));
                bits[word] = (bits[word] & !bit) | (bit * add as u64);
            }
        }
        self.list.clear();
        for (i, &word) in bits.iter().enumerate() {
            let mut w = word;
            while w != 0 {
                self.list.push(ThreadId((i * 64) as u32 + w.trailing_zeros()));
                w &= w - 1;
            }
        }
        if self.telling && !self.changes.is_empty() {
            strategy.enabled_changed(&self.changes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedulers::{Decision, ScheduleRng, StrategyError};

    /// A strategy that only records what it is told.
    #[derive(Default)]
    struct Told(Vec<EnabledChange>);

    impl Strategy for Told {
        fn describe(&self) -> String {
            "told".to_string()
        }

        fn enabled_changed(&mut self, changes: &[EnabledChange]) {
            self.0.extend_from_slice(changes);
        }

        fn choose(
            &mut self,
            _: &Decision<'_>,
            _: &mut ScheduleRng,
        ) -> Result<ThreadId, StrategyError> {
            unreachable!("these tests make no decision")
        }
    }

    /// The set the changes describe, applied in order to `before`.
    fn applied(before: &[ThreadId], changes: &[EnabledChange]) -> Vec<ThreadId> {
        let mut set: std::collections::BTreeSet<ThreadId> = before.iter().copied().collect();
        for c in changes {
            // Each change told is a real one.
            assert_eq!(set.contains(&c.thread), !c.enabled, "{c:?} changes nothing");
            if c.enabled {
                set.insert(c.thread);
            } else {
                set.remove(&c.thread);
            }
        }
        set.into_iter().collect()
    }

    fn ids(v: &[u32]) -> Vec<ThreadId> {
        v.iter().map(|&i| ThreadId(i)).collect()
    }

    #[test]
    fn the_list_stays_sorted_and_the_changes_told_turn_one_set_into_the_next() {
        // Fixed seed: a reproducible sequence of operations over 200 threads.
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut told = Told::default();
        let mut e = Enabled::with_capacity(4);
        e.start();
        e.tell(true, &mut told);
        let mut seen: Vec<ThreadId> = Vec::new();
        let mut newest = 0;
        for _ in 0..2000 {
            let any = |n: u64| ThreadId((n % (newest as u64 + 1)) as u32);
            match next() % 5 {
                0 if newest < 199 => {
                    newest += 1;
                    e.push_newest(ThreadId(newest), &mut told);
                }
                1 => e.insert(any(next()), &mut told),
                2 => e.remove(any(next()), &mut told),
                3 => {
                    let ops: Vec<(ThreadId, bool)> =
                        (0..next() % 40).map(|_| (any(next()), next() % 2 == 0)).collect();
                    e.update(newest as usize + 1, ops.into_iter(), &mut told);
                }
                _ => {
                    assert_eq!(applied(&seen, &told.0), &*e);
                    seen = e.to_vec();
                    told.0.clear();
                }
            }
            assert!(e.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
        }
    }

    #[test]
    fn updating_keeps_the_list_sorted() {
        for (list, added, gone, expected) in [
            (vec![], vec![1, 2], vec![], vec![1, 2]),
            (vec![3], vec![], vec![], vec![3]),
            (vec![0, 4, 9], vec![1, 2, 10], vec![], vec![0, 1, 2, 4, 9, 10]),
            (vec![5, 6], vec![0, 1], vec![], vec![0, 1, 5, 6]),
            (vec![1, 3, 5], vec![0, 2, 4, 6], vec![], vec![0, 1, 2, 3, 4, 5, 6]),
            (vec![0, 1, 2, 3], vec![], vec![1, 3], vec![0, 2]),
            (vec![4, 5], vec![], vec![4, 5], vec![]),
            (vec![0, 70, 130], vec![64, 63, 199], vec![70], vec![0, 63, 64, 130, 199]),
        ] {
            let mut told = Told::default();
            let mut e = Enabled { list: ids(&list), telling: true, ..Enabled::default() };
            let changes = ids(&added)
                .into_iter()
                .map(|t| (t, true))
                .chain(ids(&gone).into_iter().map(|t| (t, false)));
            e.update(200, changes, &mut told);
            assert_eq!(&*e, ids(&expected), "{list:?} + {added:?} - {gone:?}");
            assert_eq!(applied(&ids(&list), &told.0), ids(&expected));
        }
    }

    /// Inserting and removing keep the list sorted and without repeats: every id of `0..40`
    /// added twice in a scrambled order, then every one removed twice in another, checked
    /// after each change against a sorted copy.
    #[test]
    fn inserting_and_removing_keep_the_list_sorted_and_tell_only_real_changes() {
        let n = 40u32;
        // Multiplying by a number prime to `n` visits every id once, in a scrambled order.
        let order = |k: u32| (0..n).map(move |i| ThreadId(i * k % n));
        let mut told = Told::default();
        let mut l = Enabled { telling: true, ..Enabled::default() };
        let mut expected: Vec<ThreadId> = Vec::new();
        for id in order(7).chain(order(7)) {
            l.insert(id, &mut told);
            if !expected.contains(&id) {
                expected.push(id);
                expected.sort();
            }
            assert_eq!(&*l, expected, "after inserting {id}");
        }
        for id in order(11).chain(order(11)) {
            l.remove(id, &mut told);
            expected.retain(|&t| t != id);
            assert_eq!(&*l, expected, "after removing {id}");
        }
        assert!(l.is_empty());
        // Each id of `0..40` went in and out once: the rest changed nothing.
        assert_eq!(told.0.len(), 2 * n as usize);
        assert_eq!(applied(&[], &told.0), &[]);
    }

    #[test]
    fn an_execution_starts_with_the_main_thread_and_tells_it_only_to_a_strategy_that_asks() {
        let mut told = Told::default();
        let mut e = Enabled::with_capacity(2);
        e.start();
        e.tell(false, &mut told);
        e.push_newest(ThreadId(1), &mut told);
        e.push_newest(ThreadId(2), &mut told);
        e.remove(ThreadId(0), &mut told);
        e.update(3, [(ThreadId(0), true), (ThreadId(2), false)].into_iter(), &mut told);
        assert_eq!(&*e, ids(&[0, 1]));
        assert_eq!(told.0, &[], "not asked: told nothing");
        e.start();
        assert_eq!(&*e, &[ThreadId::MAIN]);
        e.tell(true, &mut told);
        assert_eq!(told.0, &[EnabledChange { thread: ThreadId::MAIN, enabled: true }]);
    }
}
