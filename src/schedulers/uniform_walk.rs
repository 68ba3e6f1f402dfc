//! The uniform random walk: a random scheduler that samples interleavings (nearly) uniformly
//! instead of favouring the threads that happen to be runnable most often.
//!
//! # What this module owns, and what it must not touch
//!
//! It owns [`UniformWalk`] and the per-thread event estimates it learns in the executions of
//! one run. Like every strategy it sees only what a [`Decision`] tells it and the
//! execution's seeded rng; it never touches threads, stacks, variables or synchronization
//! state (the runtime's), and it computes no guarantee (the guarantee module's): like
//! [`Random`](super::Random) it has none.
//!
//! # The algorithm
//!
//! URW of Zhao, Wolff, Mathur and Roychoudhury, "Selectively Uniform Concurrency Testing"
//! (ASPLOS 2025). The naive random walk ([`Random`](super::Random)) picks uniformly among the
//! enabled threads at each scheduling point. That is far from uniform over *interleavings*:
//! with a thread of 1 event and a thread of 99, the naive walk runs the short thread first
//! with probability 1/2, although only 1 of the 100 interleavings does so; to delay the short
//! thread's event past the long thread's 50th, the walk must refuse it 50 times in a row
//! (probability `2^-50`). Bugs that need a short thread to act late (a checker that must run
//! between a worker's last update and its flag, a reader among many busy threads) are then
//! almost never found.
//!
//! Picking each enabled thread with probability proportional to the number of events it has
//! *left* samples every interleaving of the threads' events with the same probability (for
//! fixed event counts: the next event of an interleaving drawn uniformly belongs to thread `i`
//! with probability `remaining_i / sum(remaining)`). A thread's events include those of the
//! threads it has yet to spawn, which cannot happen before its spawn (the paper counts them
//! so). The counts are not known in advance, so the walk estimates them:
//!
//! - A thread is identified across executions by where it comes from, not by its id: the main
//!   thread, or "the `j`-th thread spawned by thread `p`, at this `spawn` call site". Ids are
//!   dense spawn-order indices, which change when two threads spawn concurrently; the parent
//!   relation and the call site do not.
//! - The first execution has no estimates: it is a naive walk, uniform among the enabled
//!   threads. At its end, each thread's scheduling points (those where it was the current
//!   thread, its exit included, its `blocked` points not: see below) and those of
//!   its descendants become the estimates
//!   of its identity. A thread identity the first execution did not have gets the mean of
//!   the known threads' own estimates and no descendants.
//! - Estimates are then kept as they are, not averaged, maximized or extended over later
//!   executions, for three reasons. Every execution after the first then depends only on
//!   the first and on its own random stream, so a run can spread them over OS threads and
//!   still choose exactly what a serial run chooses (each worker runs the first execution to
//!   learn from it). Counts measured under the walk feed back into it: a thread that retries
//!   (a failed compare-and-swap, a spin loop) makes more points the more
//!   finely the walk interleaves it, and a larger estimate makes the walk interleave it more
//!   finely still; with the maximum such an estimate can only grow. And measured on five
//!   programs of pctvb's corpus (thread scaling with 5 and 20 threads, the Treiber stack,
//!   producer/consumer, the paper's figure 10; 100 trials each), first-execution estimates
//!   found each bug in 1.2 to 1.8 times fewer executions than running means.
//! - At a scheduling point, an enabled thread's weight is its estimated own points minus
//!   those it already reached in this execution, at least 1 (a thread that outlives its
//!   estimate still runs, as under the naive walk), plus the estimated points of the threads
//!   it has yet to spawn (its descendants' estimate minus that of the children it already
//!   spawned, which weigh for themselves).
//!
//! Every scheduling point counts as an event but a `blocked` one: a thread that finds what it
//! waits for unavailable makes one, and how many it makes depends on how often the schedule
//! had the lock held, not on the program (the runtime makes a wait cost one such point, never
//! one per retry: a waiter is only enabled when what it waits for is available).
//!
//! Each choice is O(log n) in the number of threads, with no allocation: the weights live in
//! a Fenwick tree by thread id, a draw among all threads is kept if the thread is enabled, and
//! after a few misses (most weight on blocked threads) one exact pass over the enabled threads
//! draws instead; a few enabled threads are drawn by that pass directly. The tree is kept only
//! while the execution has more threads than that pass takes: with fewer, no draw reads it, and
//! updating it at every point was a tenth of a small program's time.
//!
//! The paper's "selective" variant (SURW) is a strategy of its own, `strategy = "surw"`
//! (`surw.rs`): it orders only the accesses to one shared variable drawn per execution, and
//! runs this walk in half its executions. SURW is the default's explorer (the strategy a run
//! without a target runs, `Config::explorer`); this walk was until the corpus measured SURW
//! cheaper over its programs, and stays the better one where a bug is the order of two
//! variables' accesses (the guide's strategy section).
//!
//! The first execution stays a naive walk. Estimating online in it (a thread's weight its
//! points so far plus one, or the mean points of the finished threads spawned by the same
//! parent at the same site) was measured during development on the corpus (20 trials,
//! budget 10^4, geometric mean of the expected cost with restarts over the 52 programs
//! shuttle runs): it made some programs' first execution find the bug (with the siblings'
//! mean: pingpong 2.0 executions to 1.1, manager 2.1 to 1.4, mergesort 2.0 to 1.0), but the
//! first execution then measures other counts, and the later executions paid more on other
//! programs (the thread-scaling family; treiber-aba or bluetooth, by variant): the walk paid
//! more overall (7.70 to 8.29 against 7.58).
//!
//! Determinism: the weights depend only on the run's first execution and on the execution's
//! rng, so a run is reproduced by its seed, on any number of worker threads, and a failing
//! execution by its replay token (which records the choices, not the estimates).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::panic::Location;

use rand::RngExt;

use super::registry::StrategyInfo;
use super::{Decision, ExecutionStart, ScheduleRng, Strategy, StrategyError};
use crate::runtime::{EventKind, ThreadId};

/// `strategy = "uniform"`: no parameters, no bound; it learns its estimates in execution 0,
/// after which executions run in parallel.
pub(crate) const INFO: StrategyInfo = StrategyInfo {
    name: "uniform",
    title: "the uniform random walk",
    params: &[],
    bound: None,
    priority: false,
    learns_from_execution_0: true,
    parallel: true,
    build: |_| Box::new(UniformWalk::new()),
};

/// The identity of the test body's thread.
pub(super) const MAIN_KEY: u64 = 0x6d61_696e_5f74_6872;

/// What the first execution a thread identity appeared in measured of it: the walk's
/// estimates, which later executions do not change.
#[derive(Clone, Copy, Debug, Default)]
struct Record {
    /// The thread's own scheduling points.
    events: u64,
    /// Scheduling points of the threads it spawned and of theirs, recursively.
    descendants: u64,
}

impl Record {
    /// The estimated `(own, descendants)` scheduling points.
    fn estimate(self) -> (u64, u64) {
        (self.events, self.descendants)
    }
}

/// The uniform random walk (URW of Zhao, Wolff, Mathur and Roychoudhury, "Selectively Uniform
/// Concurrency Testing", ASPLOS 2025).
///
/// At every scheduling point it picks an enabled thread with probability proportional to the
/// scheduling points the thread still has to make, those of the threads it has yet to spawn
/// included. With exact counts that samples the interleavings of the threads' events
/// uniformly, where the naive walk ([`super::Random`]) strongly favours running a short thread
/// early: with threads of 1 and 99 events it runs the short one first half the time, though
/// only 1 interleaving in 100 does.
///
/// The counts are estimates: the first execution is a naive walk, and each thread's points
/// (and its descendants') in it become the estimates for its identity (its parent's identity,
/// the `spawn` call site, and its rank among the parent's spawns), kept for the rest of the
/// run. A thread's weight is its estimate minus the points it already made, at least 1, plus
/// the estimates of the threads it has yet to spawn; a thread identity the first execution did
/// not have gets the mean estimate. No guarantee. Later executions depend only on the first,
/// so a run spreads them over worker threads like the naive walk's.
#[derive(Clone, Debug, Default)]
pub struct UniformWalk {
    /// What earlier executions measured, by thread identity.
    records: HashMap<u64, Record, BuildHasherDefault<KeyHasher>>,
    /// The own-points estimate of a thread no execution has seen; `None` before any execution
    /// ended, when the walk is naive.
    default_estimate: Option<u64>,
    /// This execution's threads, by id.
    threads: Vec<ThreadState>,
    /// Every thread's weight (0 once it exited), by id: draws in O(log n) (see `choose`).
    /// Empty while the execution has at most [`LINEAR_UP_TO`] threads (no draw reads it then);
    /// filled when one more appears, and kept up to date from then on.
    weights: Fenwick,
    /// Spawned threads' identities.
    spawn_keys: SpawnKeys,
}

/// The identities of spawned threads: the `ordinal`-th thread (from 0) that the thread
/// `parent` spawned, spawned at `site`. It remembers the last spawn site's file (its address
/// and length) and the hash of its path, so a spawn hashes its site's path once per file
/// instead of byte by byte at every spawn; and the identities it made last, a few slots by
/// ordinal, since every execution of a test spawns the same threads again: a spawn met before
/// costs three comparisons, where its identity is four mixes (callgrind,
/// `strategy_instructions prodcons surw 1000`: about 70 instructions a spawn).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SpawnKeys {
    file: (usize, usize, u64),
    /// Identities made: parent, ordinal, the site's address, and the identity, at slot
    /// `ordinal % MEMO` (an empty slot's site address, 0, is no `Location`'s).
    memo: [(u64, u64, usize, u64); MEMO],
}

/// Slots of [`SpawnKeys`]'s memo.
const MEMO: usize = 8;

impl SpawnKeys {
    /// The identity of the `ordinal`-th thread `parent` spawned at `site`.
    #[inline]
    pub(super) fn key(&mut self, parent: u64, ordinal: u64, site: &Location<'_>) -> u64 {
        let at = site as *const Location<'_> as usize;
        let slot = &self.memo[ordinal as usize % MEMO];
        if (slot.0, slot.1, slot.2) == (parent, ordinal, at) {
            return slot.3;
        }
        let key = self.make(parent, ordinal, site);
        self.memo[ordinal as usize % MEMO] = (parent, ordinal, at, key);
        key
    }

    /// [`SpawnKeys::key`] of a spawn not in the memo.
    #[inline(never)]
    fn make(&mut self, parent: u64, ordinal: u64, site: &Location<'_>) -> u64 {
        let file = site.file();
        let (at, len) = (file.as_ptr() as usize, file.len());
        if (self.file.0, self.file.1) != (at, len) {
            self.file = (at, len, path_hash(file));
        }
        let h = mix(mix(parent, ordinal), self.file.2);
        mix(mix(h, site.line() as u64), site.column() as u64)
    }
}

/// One thread of the current execution, with what its identity's estimate says of it. The
/// events counted are the walk's scheduling points; surw (`surw.rs`) keeps the same state for
/// the accesses to its selected variables.
#[derive(Clone, Copy, Debug)]
pub(super) struct ThreadState {
    /// Its identity across executions.
    pub(super) key: u64,
    /// The id of the thread that spawned it (`None` for the main thread).
    pub(super) parent: Option<u32>,
    /// Estimated own events.
    pub(super) own: u64,
    /// Estimated events of its descendants.
    pub(super) descendants: u64,
    /// Events it made so far (the walk does not count its `Block` points, see `choose`).
    pub(super) done: u64,
    /// Threads it spawned so far.
    pub(super) spawned: u64,
    /// The estimated events (own and descendants) of the threads it spawned so far: they no
    /// longer count in its weight, they have weights of their own.
    pub(super) handed_over: u64,
    /// It reached its exit: it weighs nothing in the walk's tree any more.
    exited: bool,
}

impl ThreadState {
    /// A thread with these estimates that has done nothing yet.
    pub(super) fn new(key: u64, parent: Option<u32>, own: u64, descendants: u64) -> ThreadState {
        ThreadState {
            key,
            parent,
            own,
            descendants,
            done: 0,
            spawned: 0,
            handed_over: 0,
            exited: false,
        }
    }

    /// Its estimated events left: its own (none once it outlived its estimate), plus those of
    /// the threads it has yet to spawn, whose events can only come after its spawns.
    pub(super) fn left(&self) -> u64 {
        self.own.saturating_sub(self.done) + self.descendants.saturating_sub(self.handed_over)
    }

    /// The walk's weight of the thread: [`left`](Self::left), with at least 1 of its own (a
    /// thread that outlived its estimate still runs, as under the naive walk).
    fn remaining(&self) -> u64 {
        self.own.saturating_sub(self.done).max(1)
            + self.descendants.saturating_sub(self.handed_over)
    }
}

impl UniformWalk {
    /// A walk that knows nothing yet: its first execution is a naive random walk.
    pub fn new() -> UniformWalk {
        UniformWalk::default()
    }

    /// The estimated `(own, descendants)` scheduling points of the thread with this identity.
    fn estimate_of(&self, key: u64) -> (u64, u64) {
        match self.records.get(&key) {
            Some(r) => r.estimate(),
            None => (self.default_estimate.unwrap_or(1), 0),
        }
    }

    fn add_thread(&mut self, key: u64, parent: Option<u32>) -> u64 {
        let (own, descendants) = self.estimate_of(key);
        self.threads.push(ThreadState::new(key, parent, own, descendants));
        if self.threads.len() > LINEAR_UP_TO {
            // From here draws may read the tree: enter every thread it does not have yet.
            for i in self.weights.len()..self.threads.len() {
                let w = self.weight(i);
                self.weights.push(w);
            }
        }
        own + descendants
    }

    /// Thread `i`'s weight: what it still has to do, 0 once it exited.
    fn weight(&self, i: usize) -> u64 {
        let t = &self.threads[i];
        if t.exited {
            0
        } else {
            t.remaining()
        }
    }

    /// Sets thread `i`'s weight in the tree to what its state says now (when the tree is kept).
    fn reweigh(&mut self, i: usize) {
        if i < self.weights.len() {
            let w = self.weight(i);
            self.weights.set(i, w);
        }
    }

    /// Draws among `enabled` with probability proportional to their weights, by one pass over
    /// them: for a few enabled threads, or when rejection keeps missing.
    fn draw_linear(&self, enabled: &[ThreadId], rng: &mut ScheduleRng) -> ThreadId {
        let total: u64 = enabled.iter().map(|t| self.threads[t.index()].remaining()).sum();
        let mut draw = rng.random_range(0..total);
        for &t in enabled {
            let w = self.threads[t.index()].remaining();
            if draw < w {
                return t;
            }
            draw -= w;
        }
        unreachable!("the draw is below the total weight")
    }

    /// [`UniformWalk::draw_linear`] for at most [`LINEAR_UP_TO`] enabled threads: the same
    /// draw, each weight computed once (kept on the stack for the second pass).
    #[inline]
    fn draw_few(&self, enabled: &[ThreadId], rng: &mut ScheduleRng) -> ThreadId {
        let mut weights = [0u64; LINEAR_UP_TO];
        let mut total = 0;
        for (w, t) in weights.iter_mut().zip(enabled) {
            *w = self.threads[t.index()].remaining();
            total += *w;
        }
        let mut draw = rng.random_range(0..total);
        for (&w, &t) in weights.iter().zip(enabled) {
            if draw < w {
                return t;
            }
            draw -= w;
        }
        unreachable!("the draw is below the total weight")
    }

    /// The draw among more than [`LINEAR_UP_TO`] enabled threads (a hundred at every step in
    /// some programs): a thread drawn among all by weight in the tree, O(log n), is kept if it
    /// is enabled (a binary search). Conditioned on acceptance that is the draw among the
    /// enabled threads by weight; after a few misses (most of the weight is on blocked
    /// threads), the exact pass instead, so the result has the same distribution either way.
    fn draw_many(&self, enabled: &[ThreadId], rng: &mut ScheduleRng) -> ThreadId {
        let total = self.weights.total();
        if total > 0 {
            for _ in 0..REJECTION_TRIES {
                let t = ThreadId(self.weights.find(rng.random_range(0..total)) as u32);
                if enabled.binary_search(&t).is_ok() {
                    return t;
                }
            }
        }
        self.draw_linear(enabled, rng)
    }

    /// Counts the points the engine passed over since the walk was last asked
    /// (`Strategy::skips_forced`): each an event of `decision`'s current thread, which went on
    /// (none a `Block` or an exit), as `choose` counts one. The thread was registered: a
    /// thread first appears at its parent's spawn, a point with a choice.
    #[inline(never)]
    fn count_skipped(&mut self, decision: &Decision<'_>) {
        let skipped = decision.skipped();
        let n = skipped.len() as u64;
        let cur = decision.current.index();
        debug_assert!(skipped.iter().all(|s| s.thread == decision.current));
        debug_assert!(cur < self.threads.len(), "a thread runs alone before its spawn's point");
        if cur < self.threads.len() {
            self.threads[cur].done += n;
            self.reweigh(cur);
        }
    }

    /// Registers the threads `decision.enabled` names that this execution has not seen: each
    /// was just spawned by the current thread (a spawn is a scheduling point of the parent at
    /// which the child is already enabled).
    #[cold]
    fn register_new_threads(&mut self, decision: &Decision<'_>) {
        let Some(&newest) = decision.enabled.last() else { return };
        let cur = decision.current.index();
        while self.threads.len() <= newest.index() {
            let id = self.threads.len() as u64;
            match self.threads.get(cur).copied() {
                Some(parent) if decision.event.kind == EventKind::Spawn => {
                    let key =
                        self.spawn_keys.key(parent.key, parent.spawned, decision.event.location);
                    let estimate = self.add_thread(key, Some(cur as u32));
                    let parent = &mut self.threads[cur];
                    parent.spawned += 1;
                    parent.handed_over += estimate;
                    self.reweigh(cur);
                }
                // Not expected (threads appear at their parent's spawn); fall back on the id.
                _ => {
                    self.add_thread(mix(MAIN_KEY ^ 0x5eed, id), None);
                }
            }
        }
    }
}

impl Strategy for UniformWalk {
    fn describe(&self) -> String {
        "uniform".to_string()
    }

    fn begin_execution(&mut self, _start: &ExecutionStart<'_>, _rng: &mut ScheduleRng) {
        self.threads.clear();
        self.weights.clear();
        self.add_thread(MAIN_KEY, None);
    }

    /// A point with no choice is one event of the running thread's, counted from the trace at
    /// the next decision ([`UniformWalk::count_skipped`]); but in the first execution, whose
    /// counts at its end are the estimates (the points after the last decision would go
    /// uncounted).
    fn skips_forced(&self) -> bool {
        self.default_estimate.is_some()
    }

    /// Inlined: SURW's walking executions call it at every scheduling point. A new thread's
    /// registration and a draw among many threads are calls of their own.
    #[inline(always)]
    fn choose(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError> {
        if !decision.skipped().is_empty() {
            self.count_skipped(decision);
        }
        if decision.enabled.last().is_some_and(|t| t.index() >= self.threads.len()) {
            self.register_new_threads(decision);
        }
        let cur = decision.current.index();
        // A `Block` point is not an event of the program: the thread found what it waits for
        // unavailable and gives up the processor. How many a thread makes depends on the
        // schedule (how often it found the lock held), so counting them would make the
        // estimates measure the first execution's contention, not the program.
        if decision.event.kind != EventKind::Block && cur < self.threads.len() {
            let t = &mut self.threads[cur];
            t.done += 1;
            t.exited |= decision.event.kind == EventKind::ThreadExit;
            self.reweigh(cur);
        }
        let enabled = decision.enabled;
        if enabled.len() == 1 {
            return Ok(enabled[0]);
        }
        if self.default_estimate.is_none() {
            // No execution ended yet: the naive walk.
            return Ok(enabled[rng.random_range(0..enabled.len())]);
        }
        if enabled.len() <= LINEAR_UP_TO {
            return Ok(self.draw_few(enabled, rng));
        }
        Ok(self.draw_many(enabled, rng))
    }

    fn end_execution(&mut self, _digest: u64, _steps: u64) -> Result<(), StrategyError> {
        if self.default_estimate.is_some() {
            return Ok(()); // learned from the first execution: estimates stay as they are
        }
        // A child's id is above its parent's: children first, each adds its subtree to its
        // parent's descendants.
        let mut descendants = vec![0u64; self.threads.len()];
        for (i, t) in self.threads.iter().enumerate().rev() {
            if let Some(p) = t.parent {
                descendants[p as usize] += t.done + descendants[i];
            }
        }
        for (t, d) in self.threads.iter().zip(descendants) {
            // Estimates are set once (see the module documentation for why they stay).
            self.records.entry(t.key).or_insert(Record { events: t.done, descendants: d });
        }
        let sum: u64 = self.records.values().map(|r| r.estimate().0).sum();
        self.default_estimate = Some(sum.div_ceil(self.records.len() as u64));
        Ok(())
    }
}

/// Up to this many enabled threads, `choose` draws by one pass over them.
const LINEAR_UP_TO: usize = 8;

/// Draws from the tree `choose` tries before the exact pass over the enabled threads.
const REJECTION_TRIES: usize = 4;

/// A Fenwick tree of weights by thread id: set a weight, the total, and the thread a draw
/// below the total falls on, each in O(log n). Grows by `push` (amortized O(log n)); `clear`
/// keeps its allocation, so after a run's first executions `choose` never allocates.
#[derive(Clone, Debug, Default)]
struct Fenwick {
    /// `tree[k - 1]` holds the sum of the weights of ids `k - lowbit(k) .. k` (1-based `k`).
    tree: Vec<u64>,
    /// Each id's weight (the tree only has sums).
    weight: Vec<u64>,
}

impl Fenwick {
    fn clear(&mut self) {
        self.tree.clear();
        self.weight.clear();
    }

    /// Ids in the tree.
    fn len(&self) -> usize {
        self.weight.len()
    }

    /// Sum of the weights of ids `0..n`.
    fn prefix(&self, mut n: usize) -> u64 {
        let mut sum = 0;
        while n > 0 {
            sum += self.tree[n - 1];
            n &= n - 1;
        }
        sum
    }

    fn total(&self) -> u64 {
        self.prefix(self.tree.len())
    }

    /// Appends the next id with weight `w`.
    fn push(&mut self, w: u64) {
        let k = self.tree.len() + 1;
        let low = k & k.wrapping_neg();
        let below = self.prefix(k - 1) - self.prefix(k - low);
        self.tree.push(w + below);
        self.weight.push(w);
    }

    /// Sets id `i`'s weight to `w`.
    fn set(&mut self, i: usize, w: u64) {
        let old = std::mem::replace(&mut self.weight[i], w);
        if old == w {
            return;
        }
        let mut k = i + 1;
        while k <= self.tree.len() {
            self.tree[k - 1] = self.tree[k - 1] - old + w;
            k += k & k.wrapping_neg();
        }
    }

    /// The id whose weight interval holds `draw` (`draw` < `total()`): the smallest `i`
    /// with `prefix(i + 1) > draw`.
    fn find(&self, mut draw: u64) -> usize {
        let n = self.tree.len();
        let mut pos = 0;
        let mut step = if n == 0 { 0 } else { 1 << n.ilog2() };
        while step > 0 {
            let next = pos + step;
            if next <= n && self.tree[next - 1] <= draw {
                draw -= self.tree[next - 1];
                pos = next;
            }
            step >>= 1;
        }
        pos
    }
}

/// A hash of a source path (a fixed function of its bytes).
fn path_hash(path: &str) -> u64 {
    path.bytes().fold(0x7061_7468, |h, b| mix(h, b as u64))
}

/// The hasher of the identity map: identities already are well-mixed hashes, so the map uses
/// them as they are.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix(self.0, b as u64);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
}

/// Mixes `x` into the hash `h` (a fixed function: identities are the same on every run).
pub(super) fn mix(h: u64, x: u64) -> u64 {
    let mut z = (h ^ x.wrapping_mul(0x9e37_79b9_7f4a_7c15)).wrapping_add(0x632b_e59b_d9b4_e019);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Event;
    use crate::schedulers::Random;
    use rand::SeedableRng;

    fn rng(seed: u64) -> ScheduleRng {
        ScheduleRng::seed_from_u64(seed)
    }

    fn event(kind: EventKind) -> Event {
        Event { kind, object: None, var: None, location: Location::caller() }
    }

    fn start() -> ExecutionStart<'static> {
        ExecutionStart::FIRST
    }

    /// A scheduling point of `current` at step 0 with no other pending operations.
    fn point<'a>(
        enabled: &'a [ThreadId],
        current: ThreadId,
        current_enabled: bool,
        event: &'a Event,
    ) -> Decision<'a> {
        Decision {
            enabled,
            engine: crate::runtime::Enabled::none(),
            current,
            current_enabled,
            event,
            step: 0,
            var_access: 0,
            pending: crate::runtime::Pending::NONE,
        }
    }

    /// A fake program: the main thread spawns threads 1 and 2 and joins them; thread 1 makes
    /// `short` scheduling points and thread 2 `long` ones (its exit included). Runs one
    /// execution under `strategy` and returns how many of thread 2's points came before
    /// thread 1's last one: how long the short thread's event was delayed.
    fn execution(strategy: &mut dyn Strategy, rng: &mut ScheduleRng, short: u64, long: u64) -> u64 {
        strategy.begin_execution(&start(), rng);
        let (m, t1, t2) = (ThreadId(0), ThreadId(1), ThreadId(2));
        let mut step = 0;
        let mut decide = |s: &mut dyn Strategy, enabled: &[ThreadId], cur: ThreadId, e: &Event| {
            let d = Decision { step, ..point(enabled, cur, enabled.contains(&cur), e) };
            step += 1;
            s.choose(&d, rng).unwrap()
        };
        let spawn = event(EventKind::Spawn);
        let first = decide(strategy, &[m, t1], m, &spawn);
        assert!(first == m || first == t1);
        // The fake does not let thread 1 run before thread 2 exists: the main thread spawns
        // both before anyone else runs.
        decide(strategy, &[m, t1, t2], m, &spawn);
        // The main thread blocks in `join` until both have exited.
        let mut enabled = vec![t1, t2];
        let mut cur = decide(strategy, &enabled, m, &event(EventKind::Join));
        let mut left = [0, short, long];
        let (mut long_done, mut delay) = (0, 0);
        loop {
            let i = cur.index();
            left[i] -= 1;
            if i == 2 {
                long_done += 1;
            } else if left[1] == 0 {
                delay = long_done;
            }
            let e = if left[i] == 0 {
                enabled.retain(|&t| t != cur);
                event(EventKind::ThreadExit)
            } else {
                event(EventKind::AtomicLoad)
            };
            if enabled.is_empty() {
                // The main thread wakes up; its exit ends the execution without a decision.
                decide(strategy, &[m], cur, &e);
                break;
            }
            cur = decide(strategy, &enabled, cur, &e);
        }
        strategy.end_execution(0, step).unwrap();
        delay
    }

    /// Delays of the short thread's event over `runs` executions after a first one.
    fn delays(strategy: &mut dyn Strategy, seed: u64, runs: usize) -> Vec<u64> {
        let mut r = rng(seed);
        execution(strategy, &mut r, 1, 99); // the walk learns the counts
        (0..runs).map(|_| execution(strategy, &mut r, 1, 99)).collect()
    }

    fn mean(v: &[u64]) -> f64 {
        v.iter().sum::<u64>() as f64 / v.len() as f64
    }

    fn share(v: &[u64], p: impl Fn(u64) -> bool) -> f64 {
        v.iter().filter(|&&d| p(d)).count() as f64 / v.len() as f64
    }

    #[test]
    fn learns_event_counts_by_thread_identity() {
        let mut walk = UniformWalk::new();
        let mut r = rng(1);
        execution(&mut walk, &mut r, 3, 99);
        assert_eq!(walk.records.len(), 3);
        let estimates: Vec<_> = walk.threads.iter().map(|t| (t.own, t.descendants)).collect();
        assert_eq!(estimates, vec![(1, 0); 3], "the first execution knows nothing");
        execution(&mut walk, &mut r, 3, 99);
        // Main: two spawns and the join.
        let done: Vec<u64> = walk.threads.iter().map(|t| t.done).collect();
        assert_eq!(done, vec![3, 3, 99]);
        let estimates: Vec<_> = walk.threads.iter().map(|t| (t.own, t.descendants)).collect();
        assert_eq!(estimates, vec![(3, 102), (3, 0), (99, 0)]);
        // Both children were spawned: their points moved from main's weight to theirs.
        assert_eq!(walk.threads[0].handed_over, 102);
        assert_eq!(walk.threads[0].remaining(), 1);
    }

    #[test]
    fn a_thread_weighs_the_threads_it_has_yet_to_spawn() {
        let mut walk = UniformWalk::new();
        let mut r = rng(5);
        execution(&mut walk, &mut r, 3, 99);
        walk.begin_execution(&start(), &mut r);
        // Before its first spawn, main stands for all 3 + 3 + 99 points of the execution.
        assert_eq!(walk.threads[0].remaining(), 105);
        let spawn = event(EventKind::Spawn);
        let d = Decision {
            enabled: &[ThreadId(0), ThreadId(1)],
            engine: crate::runtime::Enabled::none(),
            current: ThreadId(0),
            current_enabled: true,
            event: &spawn,
            step: 0,
            var_access: 0,
            pending: crate::runtime::Pending::NONE,
        };
        walk.choose(&d, &mut r).unwrap();
        // Main made one point and handed thread 1's 3 over; thread 2's 99 are still its own.
        assert_eq!(walk.threads[0].remaining(), 2 + 99);
        assert_eq!(walk.threads[1].remaining(), 3);
    }

    #[test]
    fn delays_the_short_thread_uniformly() {
        // One event against 99: over all interleavings, as many put it after 0, 1, ..., 99 of
        // the long thread's events. The walk's delay is close to that uniform distribution;
        // the naive walk runs the short thread first half the time.
        let walk = delays(&mut UniformWalk::new(), 7, 4000);
        let m = mean(&walk);
        assert!((44.0..55.0).contains(&m), "mean delay {m}, uniform 49.5");
        let first = share(&walk, |d| d == 0);
        assert!(first < 0.03, "short thread first in {first} of executions, uniform 0.01");
        for (lo, hi) in [(0, 25), (25, 50), (50, 75), (75, 100)] {
            let q = share(&walk, |d| (lo..hi).contains(&d));
            assert!((0.2..0.3).contains(&q), "delays in {lo}..{hi}: {q}, uniform 0.25");
        }

        let naive = delays(&mut Random, 7, 4000);
        let first = share(&naive, |d| d == 0);
        assert!((0.45..0.55).contains(&first), "naive: short thread first in {first}");
        assert!(mean(&naive) < 2.0, "naive mean delay {}", mean(&naive));
        assert!(share(&naive, |d| d >= 25) < 0.001);
    }

    #[test]
    fn same_seed_same_choices() {
        let run = |seed: u64| delays(&mut UniformWalk::new(), seed, 50);
        assert_eq!(run(11), run(11));
        assert_ne!(run(11), run(12));
    }

    #[test]
    fn a_thread_past_its_estimate_keeps_weight_one() {
        let t = ThreadState {
            key: 0,
            parent: None,
            own: 3,
            descendants: 0,
            done: 10,
            spawned: 0,
            handed_over: 0,
            exited: false,
        };
        assert_eq!(t.remaining(), 1);
        assert_eq!(ThreadState { own: 30, ..t }.remaining(), 20);
        assert_eq!(ThreadState { descendants: 7, handed_over: 2, ..t }.remaining(), 6);
    }

    #[test]
    fn the_tree_sums_and_finds_as_a_linear_scan_does() {
        use rand::RngExt;
        let mut r = rng(3);
        let mut tree = Fenwick::default();
        let mut weights: Vec<u64> = Vec::new();
        for round in 0..2000 {
            if weights.len() < 130 && (weights.is_empty() || r.random_range(0..3) == 0) {
                let w = r.random_range(0..50);
                tree.push(w);
                weights.push(w);
            } else {
                let i = r.random_range(0..weights.len());
                let w = if r.random_range(0..4) == 0 { 0 } else { r.random_range(1..1000) };
                tree.set(i, w);
                weights[i] = w;
            }
            let total: u64 = weights.iter().sum();
            assert_eq!(tree.total(), total, "round {round}");
            if total > 0 {
                let draw = r.random_range(0..total);
                let mut acc = 0;
                let expected = weights
                    .iter()
                    .position(|&w| {
                        acc += w;
                        acc > draw
                    })
                    .unwrap();
                assert_eq!(tree.find(draw), expected, "round {round}, draw {draw}");
            }
            if round == 1000 {
                tree.clear();
                weights.clear();
            }
        }
    }

    #[test]
    fn block_points_are_not_counted() {
        let mut walk = UniformWalk::new();
        let mut r = rng(2);
        walk.begin_execution(&start(), &mut r);
        let two = [ThreadId(0), ThreadId(1)];
        let mut decide = |walk: &mut UniformWalk, enabled: &[ThreadId], kind: EventKind| {
            let e = event(kind);
            let d = point(enabled, ThreadId(0), true, &e);
            walk.choose(&d, &mut r).unwrap();
        };
        decide(&mut walk, &two, EventKind::Spawn);
        decide(&mut walk, &two, EventKind::Lock);
        decide(&mut walk, &two[1..], EventKind::Block);
        decide(&mut walk, &two, EventKind::Unlock);
        assert_eq!(walk.threads[0].done, 3, "spawn, lock and unlock; not the block");
    }

    #[test]
    fn many_enabled_threads_are_drawn_by_weight() {
        // 40 threads, 30 enabled: the tree's rejection draw must follow the weights of the
        // enabled ones. Thread i weighs i + 1; with 200,000 draws each enabled thread's share is
        // within 0.01 of its exact share except with probability far below 1e-6 (the standard
        // deviation of a share is at most 0.0012).
        let mut walk = UniformWalk::new();
        walk.default_estimate = Some(1);
        let mut r = rng(9);
        for i in 0..40u64 {
            walk.threads.push(ThreadState {
                key: i,
                parent: None,
                own: i + 1,
                descendants: 0,
                done: 0,
                spawned: 0,
                handed_over: 0,
                exited: false,
            });
            walk.weights.push(i + 1);
        }
        let enabled: Vec<ThreadId> = (10..40).map(ThreadId).collect();
        let total: u64 = (11..=40).sum();
        let mut counts = [0u64; 40];
        let e = event(EventKind::AtomicLoad);
        let runs = 200_000;
        for _ in 0..runs {
            let d = point(&enabled, ThreadId(0), false, &e);
            let t = walk.choose(&d, &mut r).unwrap();
            counts[t.index()] += 1;
            // Keep thread 0 (the current one) from drifting: undo its count.
            walk.threads[0].done = 0;
            walk.reweigh(0);
        }
        for (i, &c) in counts.iter().enumerate() {
            let expected = if i >= 10 { (i + 1) as f64 / total as f64 } else { 0.0 };
            let share = c as f64 / runs as f64;
            assert!((share - expected).abs() < 0.01, "thread {i}: {share}, expected {expected}");
        }
    }

    #[test]
    fn the_tree_is_kept_from_the_first_thread_past_the_linear_pass() {
        // A second execution (estimates learned) where the main thread spawns 11 threads, one
        // point each: the tree stays empty up to LINEAR_UP_TO threads, then holds every
        // thread's weight, and follows the points made after it was filled.
        let mut walk = UniformWalk::new();
        let mut r = rng(3);
        for _ in 0..2 {
            walk.begin_execution(&start(), &mut r);
            let mut enabled = vec![ThreadId(0)];
            let spawn = event(EventKind::Spawn);
            for i in 1..12u32 {
                enabled.push(ThreadId(i));
                let d = point(&enabled, ThreadId(0), true, &spawn);
                walk.choose(&d, &mut r).unwrap();
                let kept = if walk.threads.len() > LINEAR_UP_TO { walk.threads.len() } else { 0 };
                assert_eq!(walk.weights.weight.len(), kept, "after spawning thread {i}");
            }
            let exit = event(EventKind::ThreadExit);
            for i in (1..12u32).rev() {
                enabled.retain(|&t| t != ThreadId(i));
                let d = point(&enabled, ThreadId(i), false, &exit);
                walk.choose(&d, &mut r).unwrap();
            }
            for i in 0..walk.threads.len() {
                assert_eq!(walk.weights.weight[i], walk.weight(i), "thread {i}");
                let prefix = walk.weights.prefix(i + 1) - walk.weights.prefix(i);
                assert_eq!(prefix, walk.weight(i), "the tree's sums, thread {i}");
            }
            assert_eq!(walk.weights.total(), walk.weight(0), "only the main thread is left");
            walk.end_execution(0, 0).unwrap();
        }
    }

    #[test]
    fn identities_follow_the_parent_and_the_spawn_order() {
        let here = Location::caller();
        let mut keys = SpawnKeys::default();
        let a = keys.key(MAIN_KEY, 0, here);
        let b = keys.key(MAIN_KEY, 1, here);
        let c = keys.key(a, 0, here);
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_ne!(b, c);
        assert_eq!(a, SpawnKeys::default().key(MAIN_KEY, 0, here));
        // Met again (the memo), and after other spawns took its slot: the same identities.
        assert_eq!(keys.key(MAIN_KEY, 0, here), a);
        for ordinal in 0..2 * MEMO as u64 {
            keys.key(c, ordinal, here);
        }
        let there = Location::caller();
        assert_ne!(keys.key(MAIN_KEY, 1, there), b, "another site, another identity");
        assert_eq!((keys.key(MAIN_KEY, 1, here), keys.key(a, 0, here)), (b, c));
    }

    #[test]
    fn unknown_threads_get_the_mean_estimate() {
        let mut walk = UniformWalk::new();
        execution(&mut walk, &mut rng(0), 3, 99);
        // Main made 3 points, threads 1 and 2 made 3 and 99: the mean is 35.
        assert_eq!(walk.default_estimate, Some(35));
        assert_eq!(walk.estimate_of(12345), (35, 0));
        let main = walk.threads[0].key;
        assert_eq!(walk.estimate_of(main), (3, 102));
    }
}
