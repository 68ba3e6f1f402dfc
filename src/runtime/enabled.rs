//! The enabled threads of an execution: who can run at the next scheduling point.
//!
//! This module owns the sorted list strategies choose from and the same set as bit words (a
//! strategy that chooses on bits reads them, `Decision::enabled_words`; the engine tests a
//! thread's bit where it searched the list), and tells the execution's strategy of every
//! change as it happens (`Strategy::enabled_changed`), for a strategy that keeps its own index
//! of the enabled threads (the priority strategies' tournament tree) instead of reading the
//! whole list at every decision. Only a strategy that asks (`Strategy::reads_changes`) is
//! told: a lock's release and acquisition on a 100-thread program flip every waiter, and
//! telling costs a call per flip. Telling at the change, not at the next scheduling point,
//! keeps the scheduling point free of any test (an atomic operation's point changes nothing
//! here). It decides nothing about who is enabled: `state.rs` and `execution.rs` say so (a
//! wake, a block, a spin, a lock's waiters), through the methods here, which are the only way
//! to change the set and each take the strategy to tell, so no change goes untold.

use std::ops::Deref;

use super::state::{insert_sorted, remove_at};
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

/// The enabled threads in increasing id order (read through `Deref` as a slice), and the same
/// set as bits ([`Enabled::words`]).
#[derive(Debug, Default)]
pub(crate) struct Enabled {
    list: Vec<ThreadId>,
    /// The set `list` holds, a bit per thread (bit `t % 64` of word `t / 64`), kept with it at
    /// every change: a strategy that works on bit words reads them rather than building its
    /// own from the list at every decision (SURW's choice, a pass over up to a hundred enabled
    /// threads), and [`Enabled::update`] applies a release's or an acquisition's changes to
    /// them without first setting a bit per enabled thread. Every thread of the execution has
    /// its word from its spawn on (words past the highest enabled thread may be zero).
    words: Vec<u64>,
    /// The real changes (a thread added was not in the list, a thread removed was) of one
    /// [`Enabled::update`], told at its end; kept for its allocation.
    changes: Vec<EnabledChange>,
    /// Whether this execution's strategy is told of the changes.
    telling: bool,
    /// A count that moves whenever a thread may have become enabled (it may also move when
    /// none did): a strategy's word that it keeps the running thread (`State::kept`) holds
    /// only while the set has gained no thread since it was given.
    grown: u64,
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
            words: Vec::with_capacity(threads.div_ceil(64)),
            changes: Vec::with_capacity(threads),
            telling: false,
            grown: 0,
        }
    }

    /// The enabled threads as bit words (see the field's doc).
    #[inline]
    pub(crate) fn words(&self) -> &[u64] {
        &self.words
    }

    /// No thread: the engine's set of a decision made outside an execution (tests).
    #[cfg(test)]
    pub(crate) fn none() -> &'static Enabled {
        static NONE: Enabled = Enabled {
            list: Vec::new(),
            words: Vec::new(),
            changes: Vec::new(),
            telling: false,
            grown: 0,
        };
        &NONE
    }

    /// The set of `threads` (tests: a decision whose `enabled` is the engine's list).
    #[cfg(test)]
    pub(crate) fn of(threads: &[ThreadId]) -> Enabled {
        let mut e = Enabled::default();
        for &t in threads {
            if e.words.len() <= t.index() / 64 {
                e.grow(t);
            }
            insert_sorted(&mut e.list, t);
            e.put(t, true);
        }
        e
    }

    /// Sets `id`'s bit to `on`. Every thread's word is there from its spawn on
    /// ([`Enabled::push_newest`]), so this grows nothing.
    #[inline(always)]
    fn put(&mut self, id: ThreadId, on: bool) {
        put(&mut self.words, id, on);
    }

    /// A word for `id` (ids are given in order: the newest thread needs at most one more).
    #[cold]
    fn grow(&mut self, id: ThreadId) {
        self.words.resize(id.index() / 64 + 1, 0);
    }

    /// See [`Enabled::grown`]'s field: equal at two moments only if no thread became enabled
    /// in between.
    #[inline(always)]
    pub(super) fn grown(&self) -> u64 {
        self.grown
    }

    /// Whether `id` is enabled: a test of its bit, where a search of the list took a
    /// branch per halving.
    #[inline(always)]
    pub(super) fn has(&self, id: ThreadId) -> bool {
        id.index() / 64 < self.words.len() && bit(&self.words, id)
    }

    /// An execution starts: only the main thread is enabled; nothing is told until
    /// [`Enabled::tell`].
    pub(super) fn start(&mut self) {
        self.list.clear();
        self.words.clear();
        self.telling = false;
        self.list.push(ThreadId::MAIN);
        self.words.push(1 << ThreadId::MAIN.index());
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
    #[inline]
    pub(super) fn push_newest(&mut self, id: ThreadId, strategy: &mut dyn Strategy) {
        debug_assert!(self.list.last().is_none_or(|&t| t < id), "{id} is not the newest thread");
        self.list.push(id);
        if self.words.len() <= id.index() / 64 {
            self.grow(id);
        }
        self.put(id, true);
        self.grown += 1;
        self.note(id, true, strategy);
    }

    /// Enables `id` (nothing if it is).
    #[inline]
    pub(super) fn insert(&mut self, id: ThreadId, strategy: &mut dyn Strategy) {
        if !self.has(id) {
            insert_sorted(&mut self.list, id);
            self.put(id, true);
            self.grown += 1;
            self.note(id, true, strategy);
        }
    }

    /// Disables `id` (nothing if it is not enabled). Always inlined: see `State::disable`.
    #[inline(always)]
    pub(super) fn remove(&mut self, id: ThreadId, strategy: &mut dyn Strategy) {
        if self.has(id) {
            if let Ok(pos) = self.list.binary_search(&id) {
                remove_at(&mut self.list, pos);
            }
            self.put(id, false);
            self.note(id, false, strategy);
        }
    }

    /// Enables (`true`) or disables (`false`) each thread of `changes`, in an execution of
    /// `threads` threads: on the bit words, then the list made again from them, so a release
    /// that enables a hundred waiters, or an acquisition that disables them, costs a pass over
    /// the waiters whose branches predict well and one over the words, where merging two sorted
    /// lists mispredicted at every element (13% of the profile of a 100-thread program). The
    /// strategy is told of the real changes at the end, at once.
    #[inline]
    pub(super) fn update(
        &mut self,
        threads: usize,
        changes: impl Iterator<Item = (ThreadId, bool)>,
        strategy: &mut dyn Strategy,
    ) {
        debug_assert!(self.words.len() >= threads.div_ceil(64), "every thread has its word");
        let words = &mut self.words;
        // Two loops, so that an execution that tells nothing pays no test per change.
        if self.telling {
            self.changes.clear();
            for (t, add) in changes {
                if bit(words, t) != add {
                    self.changes.push(EnabledChange { thread: t, enabled: add });
                }
                put(words, t, add);
                self.grown += u64::from(add);
            }
        } else {
            for (t, add) in changes {
                put(words, t, add);
                self.grown += u64::from(add);
            }
        }
        self.rebuild(threads, strategy);
    }

    /// [`Enabled::update`] of `ids` all enabled (`on`) or all disabled: a mutex's waiters at
    /// its release or its acquisition. Without telling, a set or a clear of one bit per
    /// thread, with no test.
    #[inline]
    pub(super) fn set_all(
        &mut self,
        threads: usize,
        ids: &[ThreadId],
        on: bool,
        strategy: &mut dyn Strategy,
    ) {
        if self.telling {
            self.update(threads, ids.iter().map(|&t| (t, on)), strategy);
            return;
        }
        debug_assert!(self.words.len() >= threads.div_ceil(64), "every thread has its word");
        let words = &mut self.words;
        if on {
            self.grown += 1;
            for t in ids {
                words[t.index() / 64] |= 1 << (t.index() % 64);
            }
        } else {
            for t in ids {
                words[t.index() / 64] &= !(1 << (t.index() % 64));
            }
        }
        self.rebuild(threads, strategy);
    }

    /// The list made again from the words, after a change of many threads, and the strategy
    /// told of the changes (when it is told).
    #[inline(always)]
    fn rebuild(&mut self, threads: usize, strategy: &mut dyn Strategy) {
        let list = &mut self.list;
        list.clear();
        // Room for every thread at once: the pushes below then never grow the list.
        list.reserve(threads);
        for (i, &word) in self.words.iter().enumerate() {
            let mut w = word;
            while w != 0 {
                list.push(ThreadId((i * 64) as u32 + w.trailing_zeros()));
                w &= w - 1;
            }
        }
        if self.telling && !self.changes.is_empty() {
            strategy.enabled_changed(&self.changes);
        }
    }
}

/// Thread `id`'s bit of `words`, which has its word.
#[inline(always)]
fn bit(words: &[u64], id: ThreadId) -> bool {
    words[id.index() / 64] >> (id.index() % 64) & 1 != 0
}

/// Sets thread `id`'s bit of `words` to `on`.
#[inline(always)]
fn put(words: &mut [u64], id: ThreadId, on: bool) {
    let (word, bit) = (id.index() / 64, 1u64 << (id.index() % 64));
    words[word] = (words[word] & !bit) | (bit * u64::from(on));
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

    /// An enabled set of the threads `list`, in an execution of threads 0 to 255 (their
    /// words there, as spawns would have left them), that tells its changes or not.
    fn of(list: &[u32], telling: bool) -> Enabled {
        let mut e = Enabled { telling, ..Enabled::of(&ids(list)) };
        e.words.resize(4, 0);
        e
    }

    /// The words hold exactly the list's threads.
    fn assert_words_agree(e: &Enabled) {
        let from_words: Vec<ThreadId> = (0..e.words.len() * 64)
            .filter(|&i| e.words[i / 64] >> (i % 64) & 1 != 0)
            .map(|i| ThreadId(i as u32))
            .collect();
        assert_eq!(from_words, &*e.list, "the words and the list hold one set");
    }

    #[test]
    fn the_list_stays_sorted_and_the_changes_told_turn_one_set_into_the_next() {
        random_changes(true);
    }

    #[test]
    fn the_list_and_words_follow_every_change_when_nothing_is_told() {
        random_changes(false);
    }

    /// A reproducible sequence of changes over 200 threads (a fixed seed), each made by every
    /// way there is to make one, checked against a set made by the same changes, and, when
    /// the set tells them (`telling`), the changes told against the set's successive states;
    /// after each, [`Enabled::grown`] has moved if the set gained a thread (what a strategy's
    /// word that it keeps the running thread relies on).
    fn random_changes(telling: bool) {
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
        e.tell(telling, &mut told);
        let mut model = std::collections::BTreeSet::from([ThreadId::MAIN]);
        let mut seen: Vec<ThreadId> = Vec::new();
        let mut newest = 0;
        for _ in 0..3000 {
            let (before, grown) = (model.clone(), e.grown());
            let any = |n: u64| ThreadId((n % (newest as u64 + 1)) as u32);
            let apply = |model: &mut std::collections::BTreeSet<ThreadId>, t, on| {
                if on {
                    model.insert(t);
                } else {
                    model.remove(&t);
                }
            };
            match next() % 6 {
                0 if newest < 199 => {
                    newest += 1;
                    e.push_newest(ThreadId(newest), &mut told);
                    apply(&mut model, ThreadId(newest), true);
                }
                1 => {
                    let t = any(next());
                    e.insert(t, &mut told);
                    apply(&mut model, t, true);
                }
                2 => {
                    let t = any(next());
                    e.remove(t, &mut told);
                    apply(&mut model, t, false);
                }
                3 => {
                    let ops: Vec<(ThreadId, bool)> =
                        (0..next() % 40).map(|_| (any(next()), next() % 2 == 0)).collect();
                    e.update(newest as usize + 1, ops.iter().copied(), &mut told);
                    ops.iter().for_each(|&(t, on)| apply(&mut model, t, on));
                }
                4 => {
                    // A mutex's waiters, all enabled at its release or disabled at its
                    // acquisition.
                    let waiters: Vec<ThreadId> = (0..next() % 40).map(|_| any(next())).collect();
                    let on = next() % 2 == 0;
                    e.set_all(newest as usize + 1, &waiters, on, &mut told);
                    waiters.iter().for_each(|&t| apply(&mut model, t, on));
                }
                _ if telling => {
                    assert_eq!(applied(&seen, &told.0), &*e);
                    seen = e.to_vec();
                    told.0.clear();
                }
                _ => assert!(told.0.is_empty(), "nothing told"),
            }
            assert_eq!(&*e, model.iter().copied().collect::<Vec<_>>());
            assert!(e.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
            assert_words_agree(&e);
            if !model.is_subset(&before) {
                assert_ne!(e.grown(), grown, "a thread was enabled: the count moved");
            }
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
            let mut e = of(&list, true);
            let changes = ids(&added)
                .into_iter()
                .map(|t| (t, true))
                .chain(ids(&gone).into_iter().map(|t| (t, false)));
            e.update(200, changes, &mut told);
            assert_eq!(&*e, ids(&expected), "{list:?} + {added:?} - {gone:?}");
            assert_eq!(applied(&ids(&list), &told.0), ids(&expected));
            assert_words_agree(&e);
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
        let mut l = of(&[], true);
        let mut expected: Vec<ThreadId> = Vec::new();
        for id in order(7).chain(order(7)) {
            l.insert(id, &mut told);
            if !expected.contains(&id) {
                expected.push(id);
                expected.sort();
            }
            assert_eq!(&*l, expected, "after inserting {id}");
            assert_words_agree(&l);
        }
        for id in order(11).chain(order(11)) {
            l.remove(id, &mut told);
            expected.retain(|&t| t != id);
            assert_eq!(&*l, expected, "after removing {id}");
            assert_words_agree(&l);
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
        assert_words_agree(&e);
        e.tell(true, &mut told);
        assert_eq!(told.0, &[EnabledChange { thread: ThreadId::MAIN, enabled: true }]);
    }
}
