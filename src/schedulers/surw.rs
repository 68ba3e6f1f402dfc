//! The selectively uniform random walk (`strategy = "surw"`): the walk of
//! [`UniformWalk`](super::uniform_walk::UniformWalk) applied to the accesses of one shared
//! variable selected per execution, with every other event left to a naive random choice;
//! the first execution after learning, and one in eight of the others, run the uniform walk
//! itself. It is the strategy of a run without a target, and the walk beneath race reversal,
//! greybox and revfuzz (the default's explorer with a target, `Config::explorer`).
//!
//! # What this module owns, and what it must not touch
//!
//! It owns [`Surw`]: the per-thread, per-variable access estimates it learns in execution 0,
//! the variables it selects in each later execution, and its choice at each scheduling point.
//! Like every strategy it sees only what a [`Decision`] tells it and the execution's seeded
//! rng; it touches no thread, variable or synchronization state (the runtime's) and computes
//! no guarantee: it has none.
//!
//! # The algorithm
//!
//! SURW of Zhao, Wolff, Mathur and Roychoudhury, "Selectively Uniform Concurrency Testing"
//! (ASPLOS 2025), as far as we know it (the paper's own description and its ports to Fray and
//! PChecker; this is our own code). The uniform walk samples the interleavings of *all* events
//! uniformly, and a bug between two accesses to one variable then competes with every other
//! event of the program for the walk's randomness. SURW picks a set of *interesting* events
//! and samples the interleavings of those uniformly, while the other events run as a naive
//! random walk orders them; every interleaving of all events keeps a positive probability.
//!
//! - Interesting events: the accesses to the variables selected for the execution. A variable
//!   is an allocation site (pctvb's [`VarId`](crate::vars::VarId): every object created at one site); the
//!   candidates are the variables of which one object was accessed by two or more threads in
//!   execution 0 (by object, not by site: objects of one site that each thread keeps to
//!   itself, such as a per-thread counter, do not make the site a candidate). Selective
//!   executions go round the candidates, one per execution, each round in its own random
//!   order ([`Surw::select`]): `k` candidates are each selected once in `k` selective
//!   executions, where independent draws would repeat some and miss others. An access is
//!   interesting whatever its kind (a load, a store, a lock, a retry of a blocked lock).
//! - Estimates: execution 0 is a naive random walk (the uniform walk's own first execution,
//!   which this strategy also feeds, see below); at its end each thread identity (as the walk
//!   identifies threads across executions: its parent's identity, the spawn site and its rank
//!   among the parent's spawns) gets its accesses per variable, and those of its descendants.
//!   A thread's weight in an execution is its estimated accesses to the selected variables
//!   that it has not made yet, plus those of the threads it has yet to spawn.
//! - The choice: one thread at a time is the *intended* next interesting event's owner, drawn
//!   among the enabled threads with probability proportional to their weights when an
//!   interesting event is ready and none is intended. At each scheduling point the thread
//!   that runs is drawn uniformly among the enabled threads whose pending operation is not
//!   interesting, and the intended thread if its pending operation is; when the intended
//!   thread's interesting event runs, the intention is spent. So the sequence of interesting
//!   events follows the uniform walk's weights (uniform over their interleavings with exact
//!   estimates), and the other events do not consume that randomness.
//! - Completeness: an intended thread that is no longer enabled (it blocked) is dropped and a
//!   new one drawn; a thread whose estimate is spent but which is at an interesting event
//!   runs as if it were not (the estimate was short), so no thread waits for an intention it
//!   could never get. An intended thread that spins (a `try_lock` loop, say) stays enabled
//!   without reaching its interesting event, which may wait for a thread held back at one:
//!   after [`PATIENCE`] scheduling points with the intention outstanding and another thread
//!   waiting, the intention is drawn again among the others, so a spin loop cannot livelock
//!   the execution (the uniform walk never holds a thread back, and did not). Any thread with
//!   an interesting event left has a positive weight at every draw, and every other thread is
//!   a candidate at every point: every schedule keeps a positive probability.
//! - A parent stands for the interesting events of the threads it has yet to spawn: when an
//!   intended parent spawns, the intention passes to the new child with the child's share of
//!   the parent's weight.
//! - Executions with no candidate variable (nothing shared in execution 0), the first
//!   execution after execution 0 ([`FIRST_WALKS`]), and one in eight of the others, drawn
//!   ([`WALK_EVERY`]), run the uniform walk itself (SURW with every event interesting is the
//!   walk). The two find different programs' bugs cheaply: the selective walk where a bug is
//!   one variable's accesses among much unrelated work (the corpus's Bluetooth driver,
//!   100-thread two-stage program, Treiber stack), the walk where it is the order of two
//!   variables' accesses, which one selected variable leaves to the naive order (the
//!   thread-scaling family); the guide's strategy section has the measurements.
//! - Our addition, not the paper's: in three executions in four a thread about to repeat the
//!   write to memory it just made (a loop's next iteration) keeps running, for a bounded run
//!   ([`WriteLoops`]), as if the walk had drawn it. A bug at a loop's end (the thread-scaling
//!   family's) then needs the other thread after the loop rather than after its last
//!   iteration: the family's cost fell from 16-26 executions to 6-8 (the guide's strategy
//!   section). The fourth execution may split any loop, so every interleaving keeps its
//!   chance.
//!
//! What an execution runs depends on its ordinal among SURW's executions of the run
//! ([`ExecutionStart::ordinal`]: its index when SURW runs alone), the digest of execution 0 and
//! its own random stream; the estimates come from execution 0 only. So executions after the
//! first depend only on the first, their ordinal and their own random stream, as the walk's
//! do, and runs spread them over worker threads and reproduce them by seed; a failure replays
//! by its token (which records the choices). Variable ids are dense per run in the order a
//! run meets them, so the ids execution 0 met are the same in every worker.
//!
//! Cost per scheduling point: the current thread's announced operation is looked at once
//! (whether it waits for the intention, kept as a bit per thread); the choice then reads the
//! enabled threads as the engine's bit words ([`Decision::enabled_words`], kept as the set
//! changes), looks up the pending operation only of a thread whose latest point was a `Block`
//! (what it waits for may have changed since), and makes a weighted draw over the enabled
//! threads when an intention is drawn. The bits are one word while every enabled thread is
//! below 64, and a word per 64 threads beyond: with a hundred threads a decision is a few word
//! operations per 64 threads, where looking up every enabled thread's pending operation cost
//! about three times a pass over their ids, and that pass (building the words from the list)
//! about a fifth of the whole run's instructions. The list is read only where the engine does
//! not give the words (a hold of race reversal filters it). No allocation once the tables have
//! grown in the run's first executions. A point with no choice (the running thread alone can
//! run) is not asked after execution 0 (`Strategy::skips_forced`): the next decision reads
//! the points passed over from the trace ([`Surw::count_skipped`]), each a count, at most a
//! draw and a mark, with the same draws as asking would have made.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use rand::{RngExt, SeedableRng};

use super::registry::StrategyInfo;
use super::uniform_walk::{mix, KeyHasher, SpawnKeys, ThreadState, UniformWalk, MAIN_KEY};
use super::write_loops::WriteLoops;
use super::{Decision, ExecutionStart, ScheduleRng, Strategy, StrategyError};
use crate::runtime::{EventKind, ObjectId, ThreadId};
use crate::vars::VarId;

/// `strategy = "surw"`: no parameters, no bound; it learns in execution 0, after which
/// executions run in parallel.
pub(crate) const INFO: StrategyInfo = StrategyInfo {
    name: "surw",
    title: "the selectively uniform walk",
    params: &[],
    bound: None,
    priority: false,
    learns_from_execution_0: true,
    parallel: true,
    build: |_| Box::new(Surw::new()),
};

/// One execution in this many, drawn from the execution's rng (executions do not know their
/// index), runs the uniform walk instead of a selection. The selective walk and the walk
/// find different programs' bugs cheaply (the guide's strategy section). Half of each paid
/// least when SURW ran alone; with write loops run whole and race reversal above it, more
/// selective executions pay less. Measured with `cargo run --release -p pctvb-corpus
/// --example first_failures -- default 200 --vs-urw` (the default's cost with restarts against
/// shuttle URW's over 51 programs), seeds 0-199 / 200-399: one in 2 0.509x / 0.508x, one in
/// 5 - / 0.492x, one in 6 0.496x / -, one in 8 0.495x / 0.490x, one in 16 0.498x / 0.490x,
/// never 0.496x / 0.490x; `surw` alone (seeds 0-199) 0.652x with one in 2, 0.627x with one in 8.
/// One in 8 keeps the walk for the bugs it finds best (ws-deque).
const WALK_EVERY: u64 = 8;

/// Executions of a run (by [`ExecutionStart::ordinal`]) that run the uniform walk before any
/// selects: execution 0, which learns, and the first after it. The walk with fresh estimates
/// finds in one execution the bugs it finds best (the corpus's merge sorts: 0.99 of shuttle
/// URW's trials at its first execution after learning) where a selection of the wrong
/// variable would miss them; the selective executions follow. Measured with `first_failures
/// default 200 --vs-urw` (seeds 0-199 / 200-399), with independent selections: 0.4951x /
/// 0.4902x without the first walk, 0.4828x / 0.4817x with it; two walks first 0.4845x /
/// 0.4815x; walk, selection, walk 0.4805x / 0.4870x.
const FIRST_WALKS: u64 = 2;

/// Scheduling points an intention may stay outstanding, its thread not at its interesting
/// event, while another thread waits at one, before it is drawn again among the others (see
/// the module docs' completeness). Far above the free steps that usually separate a thread's
/// accesses to one variable, so the order of interesting events keeps the walk's weights
/// wherever no thread spins; a spin loop wastes at most this many points per wait.
const PATIENCE: u64 = 256;

/// What execution 0 measured of one thread identity.
#[derive(Clone, Debug, Default)]
struct Record {
    /// Its own accesses per variable (sorted by variable).
    own: Vec<(u32, u64)>,
    /// Its descendants' accesses per variable (sorted by variable).
    descendants: Vec<(u32, u64)>,
}

/// The count of variable `var` in `counts` (sorted by variable): 0 if absent, and for
/// [`NO_VAR`] (no selection).
fn count_of(counts: &[(u32, u64)], var: u32) -> u64 {
    counts.binary_search_by_key(&var, |&(x, _)| x).map_or(0, |i| counts[i].1)
}

/// Adds `n` to variable `var`'s count in `counts` (kept sorted).
fn add_count(counts: &mut Vec<(u32, u64)>, var: u32, n: u64) {
    match counts.binary_search_by_key(&var, |&(x, _)| x) {
        Ok(i) => counts[i].1 += n,
        Err(i) => counts.insert(i, (var, n)),
    }
}

/// What an execution runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Execution 0: the naive walk, measuring.
    Learn,
    /// The uniform walk itself.
    Walk,
    /// The selective walk over `selected`.
    Selective,
}

/// The selectively uniform random walk (SURW of Zhao, Wolff, Mathur and Roychoudhury,
/// "Selectively Uniform Concurrency Testing", ASPLOS 2025): per execution, the accesses to
/// one shared variable (the executions go round them in random orders) are interleaved as
/// the uniform walk interleaves events (each thread weighted by its estimated accesses
/// left), and the other events run as a naive random walk orders them; the first execution
/// after learning, and one in eight of the others, drawn, run the uniform walk instead. No
/// guarantee; estimates from execution 0, after which executions run in parallel.
#[derive(Clone, Debug)]
pub struct Surw {
    /// The uniform walk: fed in execution 0 (whose naive choices it makes), run in the
    /// executions that do not select.
    walk: UniformWalk,
    mode: Mode,
    /// Execution 0's measures, by thread identity.
    records: HashMap<u64, Record, BuildHasherDefault<KeyHasher>>,
    /// Variables two or more threads accessed in execution 0 (sorted).
    shared: Vec<u32>,
    /// This execution's selected variable ([`NO_VAR`]: none, in the walk's executions). One
    /// variable, as the corpus measured best (see [`Surw::select`]): a single compare at the
    /// decisions that ask whether an operation is interesting.
    selected: u32,
    /// Mixed into the order of each round of selections: the digest of execution 0, the
    /// same in every worker of a parallel run.
    salt: u64,
    /// One round's order of `shared`, as positions in it: the round [`Surw::round_of`]'s.
    round: Vec<u32>,
    /// The round whose order `round` holds (`u64::MAX`: none yet). Consecutive selective
    /// executions are mostly of one round, which is then drawn once.
    round_of: u64,
    /// The own estimate of a thread identity execution 0 did not have, for the selection.
    default_own: u64,
    /// `default_own` for each variable of `shared` (by position), made once execution 0 is
    /// learnt (a sum over every record).
    defaults: Vec<u64>,
    /// The position of `selected` in `shared` (`usize::MAX`: none selected).
    selected_at: usize,
    /// What `records` gives a thread of a selective execution, by thread id and selected
    /// variable (entry `id * shared.len() + selected_at`), as the latest execution to look
    /// its identity up found it: the identity, its own estimate and its descendants'.
    /// Executions spawn the same threads again, so a thread's estimates are mostly a compare,
    /// where the lookup is a hash probe and two binary searches. Only identities `records`
    /// holds: the estimate of one it does not is `default_own`.
    estimates: Vec<Option<(u64, u64, u64)>>,
    /// This execution's threads, by id; their events are accesses to the selected variables.
    threads: Vec<ThreadState>,
    /// Execution 0: the variable of each object, by object id (`u32::MAX`: none or not seen
    /// yet).
    object_var: Vec<u32>,
    /// Selective executions: whether each object, by object id, is of the selected variable,
    /// as far as the execution's decisions have met it (an object is met at its first
    /// operation's point). Kept instead of every object's variable because a selective
    /// decision only asks that, and marks an object only when the current thread's
    /// operation is interesting: no write at most decisions.
    object_selected: Vec<bool>,
    /// The thread whose interesting event is to run next, if drawn.
    intended: Option<ThreadId>,
    /// The scheduling point at which `intended` was drawn.
    intended_at: u64,
    /// Execution 0 only: each thread's accesses per variable, by thread id.
    learning: Vec<Vec<(u32, u64)>>,
    /// Execution 0 only: each object's first accessing thread and whether another one
    /// accessed it, by object id.
    sharing: Vec<(u32, bool)>,
    /// Spawned threads' identities (the walk's).
    spawn_keys: SpawnKeys,
    /// Scratch for [`Surw::choose_by_words`]: the enabled threads' bits and the waiting ones',
    /// 64 threads to a word (kept between decisions so that a decision does not allocate).
    on_words: Vec<u64>,
    waiting: Vec<u64>,
    /// Selective executions, threads 0 to 63: a bit per thread that waits for the intention
    /// (its estimate lasts and its announced operation accesses a selected variable), as of
    /// its latest scheduling point. Only the current thread's operation changes at a
    /// scheduling point, and a thread's estimate only when it runs or spawns (it is then the
    /// current thread at its next point), so the bit of every other thread still holds (see
    /// [`Surw::announce`]).
    waits: u64,
    /// Selective executions, threads 0 to 63: a bit per thread whose latest scheduling point
    /// was a `Block`. Such a thread's pending operation is what it waits for now, which
    /// changes without a point of its own (a notified condition variable's waiter waits for
    /// its mutex), so it is looked up at every decision, as without the bits.
    blocked: u64,
    /// [`Surw::waits`] and [`Surw::blocked`] for the threads from 64 on, a pair of words per 64
    /// threads (pair `i`: threads `64 (i + 1)` to `64 (i + 2) - 1`), grown as threads announce.
    beyond: Vec<(u64, u64)>,
    /// Tests: every decision takes the general path (the bits' path must choose as it does).
    #[cfg(test)]
    general_only: bool,
    /// Write loops run whole in most executions (`None`: never, for a strategy that runs
    /// this one beneath it and applies the rule itself or not at all).
    loops: Option<WriteLoops>,
}

impl Default for Surw {
    fn default() -> Self {
        Surw::new()
    }
}

const NO_VAR: u32 = u32::MAX;

/// The variable of the operation `thread` is about to perform (`NO_VAR` for none), given each
/// object's variable (`object_var`, by object id).
#[inline]
fn pending_var(object_var: &[u32], decision: &Decision<'_>, thread: ThreadId) -> u32 {
    if thread == decision.current {
        return decision.event.var.map_or(NO_VAR, |v| v.0);
    }
    match decision.pending.of(thread) {
        Some((_, Some(object))) => object_var.get(object.index()).copied().unwrap_or(NO_VAR),
        _ => NO_VAR,
    }
}

/// Whether `var` is the `selected` variable (an execution that selects none, [`NO_VAR`], has
/// no interesting access).
#[inline(always)]
fn is_selected(var: Option<VarId>, selected: u32) -> bool {
    var.is_some_and(|v| v.0 != NO_VAR && v.0 == selected)
}

/// Whether `thread`'s pending operation accesses the `selected` variable, given which objects
/// are of it (`object_selected`, by object id).
#[inline]
fn selected_access(
    object_selected: &[bool],
    selected: u32,
    decision: &Decision<'_>,
    thread: ThreadId,
) -> bool {
    if thread == decision.current {
        return is_selected(decision.event.var, selected);
    }
    match decision.pending.of(thread) {
        Some((_, Some(object))) => object_selected.get(object.index()).copied().unwrap_or(false),
        _ => false,
    }
}

/// Whether `thread` still has an estimated interesting event and its pending operation is
/// interesting (a spent estimate runs as uninteresting: see the module docs). The estimate is
/// checked first: it is a read of the strategy's own table.
#[inline]
fn waits_for_intention(
    threads: &[ThreadState],
    object_selected: &[bool],
    selected: u32,
    decision: &Decision<'_>,
    thread: ThreadId,
) -> bool {
    threads.get(thread.index()).is_some_and(|t| t.left() > 0)
        && selected_access(object_selected, selected, decision, thread)
}

/// The position of the `pick`-th candidate (from 0) among `n` enabled threads: the threads
/// whose bit in `waiting` is clear, and the `intended` position (for the reference choice,
/// [`Surw::choose_general`]). A word of 64 positions at a time; the last word needs no count
/// (the pick is in it), so up to 64 enabled threads count no bits (`count_ones` is no single
/// instruction on baseline x86-64), and one word needs no loop.
#[cfg(test)]
#[inline]
fn nth_candidate(waiting: &[u64], n: usize, intended: Option<usize>, mut pick: usize) -> usize {
    if let [word] = *waiting {
        let valid = if n >= 64 { u64::MAX } else { (1 << n) - 1 };
        let cands = !word & valid | intended.map_or(0, |p| 1 << p);
        return nth_bit(cands, pick).unwrap_or(0);
    }
    let last = waiting.len().saturating_sub(1);
    for (w, &word) in waiting.iter().enumerate() {
        let base = w * 64;
        let valid = if n - base >= 64 { u64::MAX } else { (1 << (n - base)) - 1 };
        let mut cands = !word & valid;
        if let Some(p) = intended.filter(|&p| p / 64 == w) {
            cands |= 1 << (p % 64);
        }
        let count = if w == last { usize::MAX } else { cands.count_ones() as usize };
        if pick < count {
            return nth_bit(cands, pick).map_or(0, |b| base + b);
        }
        pick -= count;
    }
    0
}

/// A uniform draw below `n` (at least 1): what `rng.random_range(0..n)` draws, since rand
/// samples a `usize` range that ends at most at `u32::MAX` as the `u32` one. The `u32` draw
/// is inlined where the `usize` one, which also holds the 64-bit case, was a call (34
/// instructions a draw).
#[inline(always)]
fn draw_below(rng: &mut ScheduleRng, n: usize) -> usize {
    debug_assert!(n <= u32::MAX as usize, "candidates are threads, counted in `u32`");
    rng.random_range(0..n as u32) as usize
}

/// Sets bit `bit` (below 64) of `word` to `on`.
#[inline(always)]
fn put_bit(word: &mut u64, bit: usize, on: bool) {
    *word = *word & !(1u64 << bit) | u64::from(on) << bit;
}

/// The error of a choice given a thread that is not enabled (`Surw::choose_given`).
#[cold]
fn not_enabled(given: ThreadId) -> StrategyError {
    StrategyError::new(format!("surw was given thread {given:?}, which cannot run"))
}

/// The set bits of each byte value: [`count_bits`]'s table.
const BYTE_BITS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).count_ones() as u8;
        b += 1;
    }
    table
};

/// The set bits of `bits`: a table lookup while every set bit is among the first eight (the
/// candidates of a program of up to eight threads, nearly every decision), where `count_ones`
/// is some twenty instructions on baseline x86-64, which has no `popcnt` (callgrind,
/// `strategy_instructions PROGRAM default 1000`: 0.3-0.4% fewer instructions on the deque and
/// producer/consumer, the same schedules).
#[inline(always)]
fn count_bits(bits: u64) -> usize {
    if bits < 256 {
        BYTE_BITS[bits as usize] as usize
    } else {
        bits.count_ones() as usize
    }
}

/// The position of the `pick`-th set bit (from 0) of `bits`, if it has that many.
#[inline]
fn nth_bit(mut bits: u64, pick: usize) -> Option<usize> {
    for _ in 0..pick {
        bits &= bits.wrapping_sub(1);
    }
    (bits != 0).then(|| bits.trailing_zeros() as usize)
}

/// Sets `words` to the bits of the threads of `enabled` (sorted), 64 threads to a word, up to
/// the word of the last one. A word is built in a register while the ids stay in it (they
/// come sorted), not by a read and a write of the table per thread, whose every write the next
/// thread's read of the same word waits for (callgrind counts about as many instructions
/// either way).
fn words_of(enabled: &[ThreadId], words: &mut Vec<u64>) {
    words.clear();
    let mut word = 0u64;
    for &t in enabled {
        let i = t.index();
        while words.len() < i / 64 {
            words.push(std::mem::take(&mut word));
        }
        word |= 1 << (i % 64);
    }
    if !enabled.is_empty() {
        words.push(word);
    }
}

/// Draws the intended thread among `enabled`, but for `except`, by weight (each thread's
/// estimated interesting events left, in `threads`), with its position in `enabled`; `None` if
/// all weigh nothing.
fn draw_intended(
    threads: &[ThreadState],
    enabled: &[ThreadId],
    except: Option<ThreadId>,
    rng: &mut ScheduleRng,
) -> Option<(ThreadId, usize)> {
    let weight = |t: ThreadId| match except == Some(t) {
        true => 0,
        false => threads.get(t.index()).map_or(0, |s| s.left()),
    };
    let total: u64 = enabled.iter().map(|&t| weight(t)).sum();
    if total == 0 {
        return None;
    }
    let mut draw = rng.random_range(0..total);
    for (i, &t) in enabled.iter().enumerate() {
        let w = weight(t);
        if draw < w {
            return Some((t, i));
        }
        draw -= w;
    }
    unreachable!("the draw is below the total weight")
}

impl Surw {
    pub fn new() -> Surw {
        Surw {
            walk: UniformWalk::new(),
            mode: Mode::Learn,
            records: HashMap::default(),
            shared: Vec::new(),
            selected: NO_VAR,
            salt: 0,
            round: Vec::new(),
            round_of: u64::MAX,
            default_own: 0,
            defaults: Vec::new(),
            selected_at: usize::MAX,
            estimates: Vec::new(),
            threads: Vec::new(),
            object_var: Vec::new(),
            object_selected: Vec::new(),
            intended: None,
            intended_at: 0,
            learning: Vec::new(),
            sharing: Vec::new(),
            spawn_keys: SpawnKeys::default(),
            on_words: Vec::new(),
            waiting: Vec::new(),
            waits: 0,
            blocked: 0,
            beyond: Vec::new(),
            #[cfg(test)]
            general_only: false,
            loops: Some(WriteLoops::default()),
        }
    }

    /// SURW without the write-loop rule: the walk beneath race reversal, which applies the
    /// rule itself (after its holds).
    pub(crate) fn without_loops() -> Surw {
        Surw { loops: None, ..Surw::new() }
    }

    fn add_thread(&mut self, key: u64, parent: Option<u32>) -> u64 {
        let at = match self.selected_at {
            usize::MAX => usize::MAX,
            selected => self.threads.len() * self.shared.len() + selected,
        };
        let (own, descendants) = match self.estimates.get(at) {
            Some(&Some((k, own, descendants))) if k == key => (own, descendants),
            _ => self.estimate(at, key),
        };
        self.threads.push(ThreadState::new(key, parent, own, descendants));
        own + descendants
    }

    /// The estimates of identity `key` from `records` (noted in [`Surw::estimates`] at `at`
    /// in a selective execution), or the default.
    #[inline(never)]
    fn estimate(&mut self, at: usize, key: u64) -> (u64, u64) {
        let Some(r) = self.records.get(&key) else {
            return (self.default_own, 0);
        };
        let (own, descendants) =
            (count_of(&r.own, self.selected), count_of(&r.descendants, self.selected));
        if self.selected_at != usize::MAX {
            if self.estimates.len() <= at {
                self.estimates.resize(at + 1, None);
            }
            self.estimates[at] = Some((key, own, descendants));
        }
        (own, descendants)
    }

    /// Registers the threads `decision.enabled` names that this execution has not seen (each
    /// just spawned by the current thread), as the walk does.
    #[inline(always)]
    fn register_new_threads(&mut self, decision: &Decision<'_>, rng: &mut ScheduleRng) {
        if decision.enabled.last().is_some_and(|t| self.threads.len() <= t.index()) {
            self.register_new_threads_now(decision, rng);
        }
    }

    /// [`Surw::register_new_threads`] once a new thread is enabled: out of line (once per
    /// thread and execution).
    #[inline(never)]
    fn register_new_threads_now(&mut self, decision: &Decision<'_>, rng: &mut ScheduleRng) {
        let Some(&newest) = decision.enabled.last() else { return };
        let cur = decision.current.index();
        while self.threads.len() <= newest.index() {
            let id = self.threads.len() as u64;
            match self.threads.get(cur).copied() {
                Some(parent) if decision.event.kind == EventKind::Spawn => {
                    let key =
                        self.spawn_keys.key(parent.key, parent.spawned, decision.event.location);
                    let estimate = self.add_thread(key, Some(cur as u32));
                    // The parent stood for its children's events: if it was intended, the
                    // intended event is the new child's with the child's share of its weight.
                    let before = parent.left();
                    if self.mode == Mode::Selective
                        && self.intended == Some(decision.current)
                        && before > 0
                        && rng.random_range(0..before) < estimate
                    {
                        self.intended = Some(ThreadId(id as u32));
                    }
                    let parent = &mut self.threads[cur];
                    parent.spawned += 1;
                    parent.handed_over += estimate;
                }
                _ => {
                    self.add_thread(mix(MAIN_KEY ^ 0x5eed, id), None);
                }
            }
        }
    }

    /// Execution 0: the walk's naive choice, and the counts of the chosen thread's access.
    /// Out of line (once per run): see [`Surw::choose_learning_or_selective`].
    #[cold]
    #[inline(never)]
    fn learn(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
        given: Option<ThreadId>,
    ) -> Result<ThreadId, StrategyError> {
        let walked = self.walk.choose(decision, rng)?;
        let chosen = given.unwrap_or(walked);
        let var = pending_var(&self.object_var, decision, chosen);
        if var != NO_VAR {
            let t = chosen.index();
            if self.learning.len() <= t {
                self.learning.resize(t + 1, Vec::new());
            }
            add_count(&mut self.learning[t], var, 1);
            // Sharing is per object: the objects of one site that each thread keeps to itself
            // (every thread's own counter) do not make the site shared.
            let object = if chosen == decision.current {
                decision.event.object
            } else {
                decision.pending.of(chosen).and_then(|(_, o)| o)
            };
            if let Some(object) = object {
                let o = object.index();
                if self.sharing.len() <= o {
                    self.sharing.resize(o + 1, (u32::MAX, false));
                }
                let (first, shared) = &mut self.sharing[o];
                if *first == u32::MAX {
                    *first = t as u32;
                } else if *first != t as u32 {
                    *shared = true;
                }
            }
        }
        Ok(chosen)
    }

    /// Execution 0 ended: each thread identity's accesses and its descendants'.
    fn finish_learning(&mut self) {
        let n = self.threads.len();
        self.learning.resize(n, Vec::new());
        let mut descendants: Vec<Vec<(u32, u64)>> = vec![Vec::new(); n];
        // A child's id is above its parent's: children first.
        for i in (0..n).rev() {
            if let Some(p) = self.threads[i].parent {
                let mut sub = std::mem::take(&mut descendants[i]);
                for &(v, c) in &self.learning[i] {
                    add_count(&mut descendants[p as usize], v, c);
                }
                for &(v, c) in &sub {
                    add_count(&mut descendants[p as usize], v, c);
                }
                // Keep the child's own subtree for its record.
                std::mem::swap(&mut descendants[i], &mut sub);
            }
        }
        for (i, t) in self.threads.iter().enumerate() {
            self.records.entry(t.key).or_insert_with(|| Record {
                own: self.learning[i].clone(),
                descendants: descendants[i].clone(),
            });
        }
        let mut shared: Vec<u32> = self
            .sharing
            .iter()
            .enumerate()
            .filter(|(_, &(_, shared))| shared)
            .filter_map(|(o, _)| self.object_var.get(o).copied().filter(|&v| v != NO_VAR))
            .collect();
        shared.sort_unstable();
        shared.dedup();
        self.share(shared);
        self.learning = Vec::new();
        self.sharing = Vec::new();
    }

    /// The choice at one scheduling point, as [`Strategy::choose`] makes it; with `given`, the
    /// choice is that thread (an enabled one), made by a strategy that runs this one beneath
    /// it (greybox following a kept schedule), and this one only accounts for it: its counts
    /// of each thread's selected accesses and its intention stay those of the schedule that
    /// runs. It draws from `rng` as without `given`, but for the pick among candidates.
    ///
    /// Without `given`, a write loop's next iteration runs in the executions that run loops
    /// whole ([`WriteLoops`]), as if the walk had drawn its thread, which keeps the walk's
    /// counts and intention those of the schedule that runs; with it, the rule only notes the
    /// operation.
    #[inline(always)]
    pub(crate) fn choose_given(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
        given: Option<ThreadId>,
    ) -> Result<ThreadId, StrategyError> {
        if !decision.skipped().is_empty() {
            self.count_skipped(decision, rng);
        }
        let Some(loops) = &mut self.loops else {
            return self.choose_drawn(decision, rng, given);
        };
        let whole = loops.continues(decision) && given.is_none();
        let chosen =
            self.choose_drawn(decision, rng, given.or(whole.then_some(decision.current)))?;
        if let Some(loops) = &mut self.loops {
            loops.chose(whole);
        }
        Ok(chosen)
    }

    /// [`Surw::choose_given`] without the write-loop rule. Inlined: the uniform walk's
    /// executions (the first after learning, and one in eight of the others) go straight to
    /// the walk, without the selective choice's frame.
    #[inline(always)]
    fn choose_drawn(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
        given: Option<ThreadId>,
    ) -> Result<ThreadId, StrategyError> {
        if self.mode == Mode::Walk {
            let walked = self.walk.choose(decision, rng)?;
            return Ok(given.unwrap_or(walked));
        }
        self.choose_learning_or_selective(decision, rng, given)
    }

    /// [`Surw::choose_drawn`] in execution 0 and the selective executions.
    #[inline(never)]
    fn choose_learning_or_selective(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
        given: Option<ThreadId>,
    ) -> Result<ThreadId, StrategyError> {
        self.register_new_threads(decision, rng);
        if self.mode == Mode::Learn {
            if let (Some(object), Some(var)) = (decision.event.object, decision.event.var) {
                let i = object.index();
                if self.object_var.len() <= i {
                    self.object_var.resize(i + 1, NO_VAR);
                }
                self.object_var[i] = var.0;
            }
            return self.learn(decision, rng, given);
        }
        // The current thread's estimate is read only when its operation is interesting (at
        // most decisions it is not): whether it waits for the intention needs both.
        let interesting = is_selected(decision.event.var, self.selected);
        if let (true, Some(object)) = (interesting, decision.event.object) {
            self.mark_selected(object);
        }
        self.announce(decision, interesting && self.left_of(decision.current) > 0);
        let enabled = decision.enabled;
        if let ([only], None) = (enabled, given) {
            let known = (*only == decision.current).then_some(interesting);
            return Ok(self.choose_only(decision, *only, known, rng));
        }
        if self.bits_hold(enabled) {
            return self.choose_by_bits(decision, rng, given);
        }
        #[cfg(test)]
        if self.general_only {
            return self.choose_general(decision, rng, given);
        }
        self.choose_by_words(decision, rng, given)
    }

    /// The selective choice as the module docs define it, in one pass over the enabled
    /// threads that looks up each one's pending operation: the reference the choices from the
    /// bits ([`Surw::choose_by_bits`], [`Surw::choose_by_words`]) are held to
    /// (`the_bits_choose_as_the_general_path`, `the_words_choose_as_the_general_path`). A run
    /// never takes it: on twostage_100 (29 enabled threads a decision on average) its lookups
    /// cost about 2,700 instructions a decision, the words about 900.
    #[cfg(test)]
    fn choose_general(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
        given: Option<ThreadId>,
    ) -> Result<ThreadId, StrategyError> {
        let enabled = decision.enabled;
        // Candidates: the threads at an uninteresting operation, and the intended thread.
        // Whether each enabled thread waits for the intention is looked up once per decision,
        // into a bit per enabled position (the pick below then counts bits, not threads); a
        // thread whose estimate is spent never waits, so its pending operation (a read of the
        // thread table and the trace) is not looked up. The same pass finds the intended
        // thread's position, if it is enabled.
        let n = enabled.len();
        // Up to 64 enabled threads (nearly every decision), the bits are one word on the
        // stack; beyond, the scratch table.
        let mut one_word = [0u64; 1];
        let waiting: &mut [u64] = if n <= 64 {
            &mut one_word
        } else {
            self.waiting.clear();
            self.waiting.resize(n.div_ceil(64), 0);
            &mut self.waiting
        };
        let mut waiting_threads = 0;
        let mut intended_pos = None;
        for (i, &t) in enabled.iter().enumerate() {
            if self.intended == Some(t) {
                intended_pos = Some(i);
            }
            if waits_for_intention(&self.threads, &self.object_selected, self.selected, decision, t)
            {
                waiting[i / 64] |= 1 << (i % 64);
                waiting_threads += 1;
            }
        }
        if intended_pos.is_none() {
            // Not enabled (it blocked): dropped.
            self.intended = None;
        }
        let ready = waiting_threads > 0;
        let free = n - waiting_threads;
        let waiting: &[u64] = waiting;
        let waits = |i: usize| waiting[i / 64] & (1 << (i % 64)) != 0;
        if ready && self.intended.is_none() {
            let drawn = draw_intended(&self.threads, enabled, None, rng);
            self.intended = drawn.map(|(t, _)| t);
            intended_pos = drawn.map(|(_, i)| i);
            self.intended_at = decision.step;
        }
        let mut intended_ready = intended_pos.is_some_and(waits);
        // The intended thread is not at its event while others wait at theirs: past the
        // patience, it may be spinning on what they hold; one of them gets the intention.
        if ready && !intended_ready && decision.step.saturating_sub(self.intended_at) >= PATIENCE {
            let drawn = draw_intended(&self.threads, enabled, self.intended, rng);
            self.intended = drawn.map(|(t, _)| t);
            intended_pos = drawn.map(|(_, i)| i);
            self.intended_at = decision.step;
            intended_ready = intended_pos.is_some_and(waits);
        }
        let chosen_at = if let Some(given) = given {
            enabled.binary_search(&given).map_err(|_| not_enabled(given))?
        } else {
            let candidates = free + usize::from(intended_ready);
            debug_assert!(candidates > 0, "the intended thread is enabled, waiting or free");
            let pick = if candidates <= 1 { 0 } else { draw_below(rng, candidates) };
            nth_candidate(waiting, n, intended_pos.filter(|_| intended_ready), pick)
        };
        let chosen = enabled[chosen_at];
        let waited = waits(chosen_at);
        self.ran_chosen(decision, chosen, waited);
        Ok(chosen)
    }

    /// Notes whether the current thread, at the operation it announces, waits for the
    /// intention ([`Surw::waits`]), and whether that operation is a `Block`
    /// ([`Surw::blocked`]); for threads from 64 on, in the words beyond
    /// ([`Surw::announce_beyond`]).
    #[inline]
    fn announce(&mut self, decision: &Decision<'_>, waits: bool) {
        let c = decision.current.index();
        if c >= 64 {
            self.announce_beyond(decision, waits);
            return;
        }
        put_bit(&mut self.waits, c, waits);
        put_bit(&mut self.blocked, c, decision.event.kind == EventKind::Block);
    }

    /// [`Surw::announce`] for a current thread from 64 on: out of line, so that the
    /// announcement of the first 64 threads (every thread of most programs) stays as small.
    #[cold]
    #[inline(never)]
    fn announce_beyond(&mut self, decision: &Decision<'_>, waits: bool) {
        let c = decision.current.index();
        let blocked = decision.event.kind == EventKind::Block;
        let word = c / 64 - 1;
        if self.beyond.len() <= word {
            self.beyond.resize(word + 1, (0, 0));
        }
        let (w, b) = &mut self.beyond[word];
        put_bit(w, c % 64, waits);
        put_bit(b, c % 64, blocked);
    }

    /// `thread`'s estimated interesting events left (0 for a thread not registered).
    #[inline(always)]
    fn left_of(&self, thread: ThreadId) -> u64 {
        self.threads.get(thread.index()).map_or(0, |t| t.left())
    }

    /// Accounts for `chosen`'s operation once a choice among several threads is made (the
    /// bits', the words' and the general one): it is a selected access if the thread waited
    /// for the intention (`waited`); if it did not while its estimate lasts, it is not; past
    /// its estimate it may be one, and is looked up. The current thread's is its event's.
    #[inline(always)]
    fn ran_chosen(&mut self, decision: &Decision<'_>, chosen: ThreadId, waited: bool) {
        let selected = if chosen == decision.current {
            // It waited exactly when its estimate lasts and its operation is interesting
            // (`announce`), so its operation is a selected access exactly when interesting:
            // its estimate need not be read.
            is_selected(decision.event.var, self.selected)
        } else {
            waited
                || (self.left_of(chosen) == 0
                    && selected_access(&self.object_selected, self.selected, decision, chosen))
        };
        self.ran(chosen, selected);
    }

    /// Whether the choice can take [`Surw::choose_by_bits`]: every enabled thread is below 64
    /// (`enabled` is sorted).
    #[inline]
    fn bits_hold(&self, enabled: &[ThreadId]) -> bool {
        #[cfg(test)]
        if self.general_only {
            return false;
        }
        enabled.last().is_some_and(|t| t.index() < 64)
    }

    /// The selective choice among enabled threads all below 64, from the bits
    /// [`Surw::announce`] keeps: the same choice, from the same draws, as the general one
    /// (which looks up every enabled thread's pending operation at every decision), at the
    /// cost of a bit per enabled thread and a lookup per thread at a `Block`. Measured with
    /// callgrind (`corpus/examples/strategy_instructions.rs`, revfuzz 495 executions /
    /// default 1,000): instructions fell 7.5% / 5.2% on counter, 5.7% / 4.4% on prodcons,
    /// 6.3% / 4.2% on the atomic counter and 2.2% / 1.1% on ws_deque (where half the choices
    /// have one thread to choose from, which `choose_only` makes). A path of its own, not a
    /// bit test inside the general path's loop: that version kept less than half of the gain
    /// (revfuzz on counter: 34,974 instructions per execution, against 33,300 here, both with
    /// the engine's choices read from its trace, and 36,188 before either change). It repeats
    /// the general choice's intention rule (drop, draw, the patience's redraw) rather than
    /// sharing a helper with it: one helper for both paths cost 0.3-1.0% more instructions
    /// (revfuzz on counter 33,621, prodcons 36,558, ws_deque 87,749 against 33,300, 36,300
    /// and 87,455). `the_bits_choose_as_the_general_path` holds the two to the same choices.
    #[inline]
    fn choose_by_bits(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
        given: Option<ThreadId>,
    ) -> Result<ThreadId, StrategyError> {
        let enabled = decision.enabled;
        let on = match decision.enabled_words() {
            Some(&[word, ..]) => word,
            _ => enabled.iter().fold(0u64, |on, t| on | 1 << t.index()),
        };
        let is_on = |t: ThreadId| t.index() < 64 && on >> t.index() & 1 != 0;
        let mut waiting = on & self.waits;
        let mut blocked = on & self.blocked;
        while blocked != 0 {
            let t = ThreadId(blocked.trailing_zeros());
            blocked &= blocked - 1;
            if waits_for_intention(&self.threads, &self.object_selected, self.selected, decision, t)
            {
                waiting |= 1 << t.index();
            }
        }
        // The intended thread is enabled (a drawn one is), so below 64.
        let waits = |t: ThreadId| 1u64 << t.index() & waiting != 0;
        let intended_ready = self.intend(decision, rng, waiting != 0, is_on, waits);
        let intended_bit = |s: &Surw| s.intended.map_or(0, |t| 1u64 << t.index());
        let chosen = match given {
            Some(given) if is_on(given) => given,
            Some(given) => return Err(not_enabled(given)),
            None => {
                let candidates =
                    on & !waiting | if intended_ready { intended_bit(self) } else { 0 };
                let count = count_bits(candidates);
                let pick = if count <= 1 { 0 } else { draw_below(rng, count) };
                nth_bit(candidates, pick).map_or(enabled[0], |t| ThreadId(t as u32))
            }
        };
        self.ran_chosen(decision, chosen, waiting >> chosen.index() & 1 != 0);
        Ok(chosen)
    }

    /// [`Surw::choose_by_bits`] when an enabled thread is 64 or above (a hundred threads
    /// contending for a lock): the same rule a word of 64 threads at a time, over the bits
    /// [`Surw::announce`] keeps for the first 64 threads and in the words beyond for the others,
    /// so a decision looks up the pending operation of no thread but those whose latest point
    /// was a `Block`, as for fewer threads. Measured with callgrind
    /// (`corpus/examples/strategy_instructions.rs twostage surw 20`, 100 threads contending
    /// for two mutexes): the choice fell from 1.08M instructions per execution (a lookup per
    /// enabled thread) to 0.37M, the whole run from 48.9M instructions to 35.2M; the same
    /// schedules. Reading the enabled threads as the engine's words rather than building them
    /// from the list brought the run to 28.8M (and the default's, `twostage default 20`, from
    /// 47.1M to 40.3M; its wall time by 9-16%, `scripts/ab-runs.sh`), the same schedules.
    /// `the_words_choose_as_the_general_path` holds it to the reference choice, with and
    /// without the engine's words.
    #[inline(never)]
    fn choose_by_words(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
        given: Option<ThreadId>,
    ) -> Result<ThreadId, StrategyError> {
        let enabled = decision.enabled;
        let mut on = std::mem::take(&mut self.on_words);
        let mut waiting = std::mem::take(&mut self.waiting);
        match decision.enabled_words() {
            Some(words) => {
                on.clear();
                on.extend_from_slice(words);
            }
            None => words_of(enabled, &mut on),
        }
        waiting.clear();
        for (w, &on_w) in on.iter().enumerate() {
            let (waits, blocked) = match w {
                0 => (self.waits, self.blocked),
                _ => self.beyond.get(w - 1).copied().unwrap_or((0, 0)),
            };
            let mut word = on_w & waits;
            let mut blocked = on_w & blocked;
            while blocked != 0 {
                let t = ThreadId((w * 64) as u32 + blocked.trailing_zeros());
                blocked &= blocked - 1;
                if waits_for_intention(
                    &self.threads,
                    &self.object_selected,
                    self.selected,
                    decision,
                    t,
                ) {
                    word |= 1 << (t.index() % 64);
                }
            }
            waiting.push(word);
        }
        let bit = |words: &[u64], t: ThreadId| {
            words.get(t.index() / 64).is_some_and(|w| w >> (t.index() % 64) & 1 != 0)
        };
        let ready = waiting.iter().any(|&w| w != 0);
        let intended_ready =
            self.intend(decision, rng, ready, |t| bit(&on, t), |t| bit(&waiting, t));
        let chosen = match given {
            Some(given) if bit(&on, given) => Ok(given),
            Some(given) => Err(not_enabled(given)),
            None => {
                // The candidates, in `on`: the threads not waiting, and the intended one if it
                // is at its event.
                for (c, &w) in on.iter_mut().zip(&waiting) {
                    *c &= !w;
                }
                if let Some(t) = self.intended.filter(|_| intended_ready) {
                    on[t.index() / 64] |= 1 << (t.index() % 64);
                }
                let count: usize = on.iter().map(|w| w.count_ones() as usize).sum();
                let mut pick = if count <= 1 { 0 } else { draw_below(rng, count) };
                let mut chosen = enabled[0];
                for (w, &word) in on.iter().enumerate() {
                    let n = word.count_ones() as usize;
                    if pick < n {
                        chosen =
                            nth_bit(word, pick).map_or(chosen, |b| ThreadId((w * 64 + b) as u32));
                        break;
                    }
                    pick -= n;
                }
                Ok(chosen)
            }
        };
        let waited = chosen.as_ref().is_ok_and(|&c| bit(&waiting, c));
        (self.on_words, self.waiting) = (on, waiting);
        let chosen = chosen?;
        self.ran_chosen(decision, chosen, waited);
        Ok(chosen)
    }

    /// The intention rule of the choices from bits ([`Surw::choose_by_bits`],
    /// [`Surw::choose_by_words`]), as the general choice applies it: an intended thread that is
    /// not enabled (`is_on`) is dropped; when a thread waits for the intention (`ready`) and
    /// none is intended, one is drawn by weight; past the patience with others waiting, it is
    /// drawn again among them. Returns whether the intended thread is at its interesting event
    /// (`waits`). Always inlined, so each path keeps its own bit tests.
    #[inline(always)]
    fn intend(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
        ready: bool,
        is_on: impl Fn(ThreadId) -> bool,
        waits: impl Fn(ThreadId) -> bool,
    ) -> bool {
        if !self.intended.is_some_and(&is_on) {
            // Not enabled (it blocked): dropped.
            self.intended = None;
        }
        let enabled = decision.enabled;
        if ready && self.intended.is_none() {
            self.intended = draw_intended(&self.threads, enabled, None, rng).map(|(t, _)| t);
            self.intended_at = decision.step;
        }
        let mut intended_ready = self.intended.is_some_and(&waits);
        if ready && !intended_ready && decision.step.saturating_sub(self.intended_at) >= PATIENCE {
            self.intended =
                draw_intended(&self.threads, enabled, self.intended, rng).map(|(t, _)| t);
            self.intended_at = decision.step;
            intended_ready = self.intended.is_some_and(&waits);
        }
        intended_ready
    }

    /// Accounts for `chosen`'s operation once it is chosen: an access to a selected variable
    /// (`selected`) counts among the thread's, and spends the intention if it was the
    /// intended thread's.
    #[inline]
    fn ran(&mut self, chosen: ThreadId, selected: bool) {
        if selected {
            if let Some(t) = self.threads.get_mut(chosen.index()) {
                t.done += 1;
            }
            if self.intended == Some(chosen) {
                self.intended = None;
            }
        }
    }

    /// The selective choice when `only` is the one enabled thread (a mutex's holder while the
    /// others wait for it, the last thread running): what the general choice does with one
    /// candidate, without its bit words and candidate count. It draws from `rng` exactly as
    /// the general choice does (the intention's draw when `only` waits at an interesting
    /// event and is not intended), so a schedule does not depend on which of the two made a
    /// choice (`tests/schedule_fingerprints.rs` pins them, unchanged by this path). Measured
    /// with callgrind (`corpus/examples/strategy_instructions.rs`, 1,000 executions of the
    /// default): instructions fell 3.4% on ws_deque, 0.7-1.1% on counter, prodcons and the
    /// atomic counter.
    ///
    /// `known`: whether `only`'s operation is interesting, when `only` is the current thread
    /// (not looked up twice).
    #[inline]
    fn choose_only(
        &mut self,
        decision: &Decision<'_>,
        only: ThreadId,
        known: Option<bool>,
        rng: &mut ScheduleRng,
    ) -> ThreadId {
        let interesting = known.unwrap_or_else(|| {
            selected_access(&self.object_selected, self.selected, decision, only)
        });
        self.run_alone(only, interesting, decision.step, rng);
        only
    }

    /// [`Surw::choose_only`]'s accounting for `only`, the one thread that can run at point
    /// `step`, at an operation that is `interesting` or not: also what a point the engine
    /// passed over leaves ([`Surw::count_skipped`]).
    #[inline(always)]
    fn run_alone(&mut self, only: ThreadId, interesting: bool, step: u64, rng: &mut ScheduleRng) {
        if self.intended != Some(only) {
            // Not enabled (it blocked): dropped.
            self.intended = None;
            // Its estimate is read only for an interesting operation (most are not).
            let left = if interesting { self.left_of(only) } else { 0 };
            if left > 0 {
                // The general choice draws the intention among the enabled threads by weight:
                // `only`, whatever the draw.
                let _ = rng.random_range(0..left);
                self.intended = Some(only);
                self.intended_at = step;
            }
        }
        // Its operation is an access to a selected variable, whether its estimate lasts (it
        // waited for the intention) or not (it runs as if it were not; see the module docs).
        self.ran(only, interesting);
    }

    /// The points the engine passed over since this strategy was last asked
    /// (`Strategy::skips_forced`), at `decision`: the write-loop rule notes each, and in a
    /// selective execution each is accounted for as [`Surw::choose_only`] accounts for a
    /// choice of the one enabled thread (its counts and the intention, with the same draws,
    /// in the same order); an object first met at one is marked if it is of the selected
    /// variable, as the choice marks the current thread's. The announcement a choice makes is
    /// not needed: the bits of a thread are read only at a decision among several threads, and
    /// the thread announced again at this decision, which is its own. The walk's executions
    /// leave the counting to the walk, which reads the same steps.
    #[inline(never)]
    fn count_skipped(&mut self, decision: &Decision<'_>, rng: &mut ScheduleRng) {
        let steps = decision.skipped();
        let first = decision.step - steps.len() as u64;
        if let Some(loops) = &mut self.loops {
            loops.skipped(steps);
        }
        if self.mode != Mode::Selective {
            return;
        }
        for (i, step) in steps.iter().enumerate() {
            let interesting =
                is_selected(step.object.and_then(|o| decision.var_of(o)), self.selected);
            if let (true, Some(object)) = (interesting, step.object) {
                self.mark_selected(object);
            }
            self.run_alone(step.thread, interesting, first + i as u64, rng);
        }
    }

    /// Notes that `object` is of the selected variable ([`Surw::object_selected`]).
    #[inline(always)]
    fn mark_selected(&mut self, object: ObjectId) {
        let i = object.index();
        if self.object_selected.len() <= i {
            self.object_selected.resize(i + 1, false);
        }
        self.object_selected[i] = true;
    }

    /// Selects the variable of selective execution `slot` (from 0). One variable, as the
    /// corpus measured best: with two, a program with two shared variables selects them all.
    /// The selections go round the shared variables, each round in an order drawn from the
    /// run's `salt` and the round's number, so `k` consecutive slots select every one of `k`
    /// variables once where independent draws would repeat some and miss others. Measured with
    /// `cargo run --release -p pctvb-corpus --example first_failures -- default 200
    /// --vs-urw` (seeds 0-199 / 200-399), with the first walk ([`FIRST_WALKS`]): independent
    /// draws paid 0.4828x / 0.4817x shuttle URW's cost, rounds 0.4782x / 0.4765x (seeds
    /// 400-599: 0.4788x, against 0.4926x with neither change). A function of the slot, so
    /// workers of a parallel run select what a serial run selects.
    fn select(&mut self, slot: u64) {
        let k = self.shared.len() as u64;
        debug_assert!(k > 0, "a selective execution has a shared variable to select");
        // A round's order is its own (the execution's rng draws nothing for it), and one
        // variable has one order.
        let round = if k == 1 { 0 } else { slot / k };
        if self.round_of != round {
            let mut order = ScheduleRng::seed_from_u64(mix(self.salt, round));
            self.round.clear();
            self.round.extend(0..k as u32);
            for i in (1..self.round.len()).rev() {
                self.round.swap(i, order.random_range(0..=i));
            }
            self.round_of = round;
        }
        let at = self.round[(slot % k) as usize] as usize;
        self.selected = self.shared[at];
        self.selected_at = at;
        self.default_own = self.defaults[at];
    }

    /// Takes `shared` (sorted) as the variables to select, with each one's default own
    /// estimate: the mean of the records' own accesses to it, rounded up.
    fn share(&mut self, shared: Vec<u32>) {
        let n = self.records.len().max(1) as u64;
        self.defaults = shared
            .iter()
            .map(|&v| self.records.values().map(|r| count_of(&r.own, v)).sum::<u64>().div_ceil(n))
            .collect();
        self.shared = shared;
        self.round_of = u64::MAX;
        // Its entries are placed by the number of variables and their positions.
        self.estimates.clear();
    }
}

impl Strategy for Surw {
    fn describe(&self) -> String {
        "surw".to_string()
    }

    fn begin_execution(&mut self, start: &ExecutionStart<'_>, rng: &mut ScheduleRng) {
        self.threads.clear();
        self.object_var.clear();
        self.object_selected.clear();
        self.intended = None;
        (self.waits, self.blocked) = (0, 0);
        self.beyond.clear();
        // The first execution after learning walks (see `FIRST_WALKS`); selective
        // executions count from the next.
        let ordinal = start.ordinal.saturating_sub(FIRST_WALKS);
        self.mode = if self.mode == Mode::Learn && self.records.is_empty() {
            Mode::Learn
        } else if self.shared.is_empty()
            || start.ordinal < FIRST_WALKS
            || rng.random_range(0..WALK_EVERY) == 0
        {
            Mode::Walk
        } else {
            Mode::Selective
        };
        match self.mode {
            Mode::Learn | Mode::Walk => {
                self.selected = NO_VAR;
                self.selected_at = usize::MAX;
                self.walk.begin_execution(start, rng);
            }
            Mode::Selective => self.select(ordinal),
        }
        self.add_thread(MAIN_KEY, None);
        if let Some(loops) = &mut self.loops {
            loops.begin(rng);
        }
    }

    /// Execution 0 learns from every point (its counts at the end are the estimates); the
    /// others read the points with no choice from the trace ([`Surw::count_skipped`]).
    fn skips_forced(&self) -> bool {
        self.mode != Mode::Learn
    }

    /// Inlined where a caller names `Surw` (race reversal's walk, in the default's explorer),
    /// so its frame is not one more on every decision: callgrind
    /// (`corpus/examples/strategy_instructions.rs`, the default, 1,000 executions) counted
    /// 1.6% fewer instructions on ws_deque, 1.0-1.2% on producer/consumer and the counters.
    #[inline]
    fn choose(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError> {
        self.choose_given(decision, rng, None)
    }

    fn end_execution(&mut self, digest: u64, steps: u64) -> Result<(), StrategyError> {
        match self.mode {
            Mode::Learn => {
                self.walk.end_execution(digest, steps)?;
                self.finish_learning();
                self.salt = digest;
                // Later executions never learn again, even with nothing shared.
                self.mode = Mode::Walk;
                Ok(())
            }
            Mode::Walk => self.walk.end_execution(digest, steps),
            Mode::Selective => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Event;
    use std::panic::Location;

    fn rng(seed: u64) -> ScheduleRng {
        ScheduleRng::seed_from_u64(seed)
    }

    /// The start of SURW's execution `ordinal` of a run.
    fn start(ordinal: u64) -> ExecutionStart<'static> {
        ExecutionStart { ordinal, ..ExecutionStart::FIRST }
    }

    /// An event of `kind`, on object `object` of variable `var` if given.
    fn event(kind: EventKind, on: Option<(u32, u32)>) -> Event {
        Event {
            kind,
            object: on.map(|(o, _)| ObjectId(o)),
            var: on.map(|(_, v)| VarId(v)),
            location: Location::caller(),
        }
    }

    /// Makes one decision of `current` at `e` with `enabled`, returning the choice.
    fn decide(
        s: &mut Surw,
        r: &mut ScheduleRng,
        enabled: &[u32],
        current: u32,
        e: &Event,
    ) -> ThreadId {
        let enabled: Vec<ThreadId> = enabled.iter().map(|&t| ThreadId(t)).collect();
        let d = Decision {
            enabled: &enabled,
            engine: crate::runtime::Enabled::none(),
            current: ThreadId(current),
            current_enabled: enabled.contains(&ThreadId(current)),
            event: e,
            step: 0,
            var_access: 0,
            pending: crate::runtime::Pending::NONE,
        };
        s.choose(&d, r).unwrap()
    }

    /// A fake program, driven in a fixed order: main spawns threads 1 and 2; thread 1 accesses
    /// `x` (object 0 of variable 0) twice and its own counter (object 1 of variable 1) three
    /// times; thread 2 accesses `x` once and its own counter (object 2, also variable 1: the
    /// same allocation site) twice. Every access is decided with its thread alone enabled,
    /// so the strategy's choice is the fake's.
    fn execution(s: &mut Surw, r: &mut ScheduleRng, ordinal: u64) {
        s.begin_execution(&start(ordinal), r);
        let spawn = event(EventKind::Spawn, None);
        decide(s, r, &[0, 1], 0, &spawn);
        decide(s, r, &[0, 1, 2], 0, &spawn);
        let load = |o, v| event(EventKind::AtomicLoad, Some((o, v)));
        for e in [load(0, 0), load(0, 0), load(1, 1), load(1, 1), load(1, 1)] {
            decide(s, r, &[1], 1, &e);
        }
        for e in [load(0, 0), load(2, 1), load(2, 1)] {
            decide(s, r, &[2], 2, &e);
        }
        decide(s, r, &[0], 0, &event(EventKind::Join, None));
        s.end_execution(0, 12).unwrap();
    }

    #[test]
    fn learns_accesses_per_variable_and_thread_identity_in_execution_0() {
        let mut s = Surw::new();
        let mut r = rng(1);
        execution(&mut s, &mut r, 0);
        // Variable 1's objects are each one thread's: not shared.
        assert_eq!(s.shared, vec![0]);
        let record = |t: usize| s.records[&s.threads[t].key].clone();
        assert_eq!(record(1).own, vec![(0, 2), (1, 3)]);
        assert_eq!(record(2).own, vec![(0, 1), (1, 2)]);
        assert!(record(1).descendants.is_empty());
        assert!(record(0).own.is_empty());
        assert_eq!(record(0).descendants, vec![(0, 3), (1, 5)]);
    }

    #[test]
    fn weighs_each_thread_by_its_selected_accesses_left() {
        let mut s = Surw::new();
        let mut r = rng(2);
        execution(&mut s, &mut r, 0);
        // The first execution after learning walks.
        execution(&mut s, &mut r, 1);
        assert_eq!(s.mode, Mode::Walk);
        // One execution in eight after it, drawn, is the walk's: run until one selects (20
        // executions all walking would be a 1e-18 chance; the seed is fixed anyway).
        let mut ordinal = 2;
        loop {
            execution(&mut s, &mut r, ordinal);
            if s.mode == Mode::Selective {
                break;
            }
            ordinal += 1;
            assert!(ordinal < 22, "no selective execution");
        }
        assert_eq!(s.selected, 0, "the one shared variable");
        // Main stood for its children's 3 accesses to x and handed them over at the spawns.
        let states: Vec<_> = s.threads.iter().map(|t| (t.own, t.descendants, t.done)).collect();
        assert_eq!(states, vec![(0, 3, 0), (2, 0, 2), (1, 0, 1)]);
        assert_eq!(s.threads[0].handed_over, 3);
        assert!(s.threads.iter().all(|t| t.left() == 0), "every access made");
    }

    #[test]
    fn selects_each_shared_variable_once_a_round_and_the_walk_without_any() {
        let mut s = Surw::new();
        let mut r = rng(3);
        s.salt = 77;
        s.records.insert(MAIN_KEY, Record::default());
        s.share(vec![2, 5, 9]);
        let mut orders = std::collections::HashSet::new();
        for round in 0..40 {
            let mut order = Vec::new();
            for slot in round * 3..round * 3 + 3 {
                s.select(slot);
                assert_ne!(s.selected, NO_VAR);
                order.push(s.selected);
            }
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, [2, 5, 9], "round {round} selects every shared variable once");
            orders.insert(order);
        }
        // Rounds draw their own orders: 40 rounds meet all 6 (each is missed by all 40 with
        // probability (5/6)^40 < 1e-3; the salt is fixed, so this outcome is too).
        assert_eq!(orders.len(), 6);
        // The selection is a function of the slot and the salt alone (a parallel run's
        // workers agree with a serial run).
        s.select(7);
        let again = s.selected;
        s.select(0);
        s.select(7);
        assert_eq!(s.selected, again);

        // A program with nothing shared in execution 0 runs the uniform walk.
        let mut lone = Surw::new();
        lone.begin_execution(&start(0), &mut r);
        let e = event(EventKind::AtomicLoad, Some((0, 0)));
        decide(&mut lone, &mut r, &[0], 0, &e);
        lone.end_execution(0, 1).unwrap();
        assert!(lone.shared.is_empty());
        for ordinal in 1..20 {
            lone.begin_execution(&start(ordinal), &mut r);
            assert_eq!(lone.mode, Mode::Walk);
        }
    }

    #[test]
    fn counts_are_sorted_sums() {
        let mut c = Vec::new();
        for (v, n) in [(4, 1), (1, 2), (4, 3), (0, 1)] {
            add_count(&mut c, v, n);
        }
        assert_eq!(c, vec![(0, 1), (1, 2), (4, 4)]);
        assert_eq!(count_of(&c, 4), 4);
        assert_eq!(count_of(&c, 1), 2);
        assert_eq!(count_of(&c, 2), 0, "a variable the thread never accessed");
        assert_eq!(count_of(&c, NO_VAR), 0, "no selection");
    }

    /// The pick counts candidates over more than one word of positions: with 100 enabled
    /// threads, every free one is chosen, beyond position 64 too, and the thread at a selected
    /// access runs only while it holds the intention. Fixed seed; 20,000 decisions leave a free
    /// thread unchosen with probability under 100 * (1 - 1/100)^10,000 anyway.
    #[test]
    fn picks_among_candidates_past_64_enabled_threads() {
        let mut s = Surw::new();
        let mut r = rng(7);
        s.mode = Mode::Selective;
        s.selected = 0;
        // Threads 3 and 70 have selected accesses left; only 70 is at one (the current
        // thread's event), so 70 waits for the intention and 3 runs freely.
        for t in 0..100u64 {
            let own = if t == 3 || t == 70 { 1_000_000 } else { 0 };
            s.threads.push(ThreadState::new(t, None, own, 0));
        }
        let access = event(EventKind::AtomicLoad, Some((0, 0)));
        let all: Vec<u32> = (0..100).collect();
        let mut chosen = [0u32; 100];
        let (mut held_by_3, mut held_by_70) = (0, 0);
        for _ in 0..20_000 {
            let t = decide(&mut s, &mut r, &all, 70, &access).index();
            chosen[t] += 1;
            match s.intended {
                // The intention stayed with thread 3 through the decision: 70 could not run.
                Some(ThreadId(3)) => {
                    assert_ne!(t, 70, "the waiting thread ran while thread 3 held the intention");
                    held_by_3 += 1;
                }
                Some(ThreadId(70)) => held_by_70 += 1,
                _ => {}
            }
        }
        assert!(chosen.iter().all(|&n| n > 0), "a thread was never chosen: {chosen:?}");
        assert!(held_by_3 > 0 && held_by_70 > 0, "both threads held the intention");
    }

    /// A strategy that runs SURW beneath it (greybox following a kept schedule) gives the
    /// choice; SURW returns it and counts it: the given thread's selected access is made, and
    /// an intention it held is spent. Fixed seed.
    #[test]
    fn a_given_choice_is_returned_and_counted() {
        let mut s = Surw::new();
        let mut r = rng(11);
        s.mode = Mode::Selective;
        s.selected = 0;
        for t in 0..3u64 {
            s.threads.push(ThreadState::new(t, None, 5, 0));
        }
        let access = event(EventKind::AtomicLoad, Some((0, 0)));
        let enabled = [ThreadId(0), ThreadId(1), ThreadId(2)];
        let d = Decision {
            enabled: &enabled,
            engine: crate::runtime::Enabled::none(),
            current: ThreadId(2),
            current_enabled: true,
            event: &access,
            step: 0,
            var_access: 0,
            pending: crate::runtime::Pending::NONE,
        };
        for round in 1..=5 {
            assert_eq!(s.choose_given(&d, &mut r, Some(ThreadId(2))).unwrap(), ThreadId(2));
            assert_eq!(s.threads[2].done, round, "the given access is counted");
            assert_ne!(s.intended, Some(ThreadId(2)), "its intention, if any, is spent");
        }
        assert_eq!((s.threads[0].done, s.threads[1].done), (0, 0));
        // A thread that cannot run is refused, not returned.
        assert!(s.choose_given(&d, &mut r, Some(ThreadId(7))).is_err());
    }

    /// The choice from [`Surw::announce`]'s bits is the general choice: two instances, one
    /// held to the general path, make the same choices and draws over random decisions of six
    /// threads at accesses to the selected variable or another, at `Block`s then waiting for a
    /// mutex of the selected variable (a notified condition variable's waiter), with given
    /// choices among them; other threads' pending operations are what they announced, as in a
    /// run ([`FakePending`]). Fixed seeds.
    #[test]
    fn the_bits_choose_as_the_general_path() {
        bits_choose_as_the_general_path([0, 1, 2, 3, 4, 5]);
    }

    /// [`Surw::choose_by_words`] is the general choice too: the same script, its six threads
    /// spread over four words of 64 (ids 1, 63, 64, 127, 130 and 200: one decision's enabled
    /// threads may all be beyond the first word, or span several).
    #[test]
    fn the_words_choose_as_the_general_path() {
        bits_choose_as_the_general_path([1, 63, 64, 127, 130, 200]);
    }

    /// The test of [`Surw::choose_by_bits`] and [`Surw::choose_by_words`] against
    /// [`Surw::choose_general`], with the script's six threads at thread ids `ids`
    /// (increasing).
    fn bits_choose_as_the_general_path(ids: [u32; 6]) {
        use crate::runtime::FakePending;
        let mut fast = Surw::new();
        fast.mode = Mode::Selective;
        fast.selected = 0;
        // Object 0 (and the mutex 2) are of the selected variable 0, object 1 of variable 1.
        fast.object_selected = vec![true, false, true];
        // The fifth and sixth threads outlive their estimates early (then their accesses run as
        // if uninteresting); the others keep waiting at theirs. Ids the script does not use
        // are threads that never run.
        for t in 0..=ids[5] {
            let estimate = if ids[..4].contains(&t) { 5000 } else { 20 };
            fast.threads.push(ThreadState::new(t as u64, None, estimate, 0));
        }
        let mut general = fast.clone();
        general.general_only = true;
        let (mut r1, mut r2, mut script) = (rng(21), rng(21), rng(22));
        let events = [
            event(EventKind::AtomicLoad, Some((0, 0))),
            event(EventKind::AtomicStore, Some((1, 1))),
            event(EventKind::Block, Some((1, 1))),
            event(EventKind::Yield, None),
        ];
        let mut fake = FakePending::default();
        let (mut current, mut waits_seen, mut blocked_waiting) = (ids[0], 0, 0);
        for step in 0..5000u64 {
            let e = &events[script.random_range(0..events.len())];
            let mut enabled: Vec<ThreadId> = ids
                .iter()
                .filter(|_| script.random_range(0..3) != 0)
                .map(|&t| ThreadId(t))
                .collect();
            if enabled.is_empty() {
                enabled.push(ThreadId(current));
            }
            let given = (script.random_range(0..4) == 0)
                .then(|| enabled[script.random_range(0..enabled.len())]);
            // Every other decision's `enabled` is the engine's list, whose words the choice
            // reads (`Decision::enabled_words`), the others' a copy: both ways of reading the
            // threads choose as the general path.
            let set = crate::runtime::Enabled::of(&enabled);
            let d = Decision {
                enabled: if step % 2 == 0 { &set } else { &enabled },
                engine: &set,
                current: ThreadId(current),
                current_enabled: enabled.contains(&ThreadId(current)),
                event: e,
                step,
                var_access: 0,
                pending: fake.pending(),
            };
            let a = fast.choose_given(&d, &mut r1, given).unwrap();
            let b = general.choose_given(&d, &mut r2, given).unwrap();
            assert_eq!(a, b, "step {step}");
            assert_eq!(fast.intended, general.intended, "step {step}");
            let waiting = fast.waits != 0 || fast.beyond.iter().any(|&(w, _)| w != 0);
            waits_seen += usize::from(waiting);
            fake.announce(ThreadId(current), e.kind, e.object);
            if e.kind == EventKind::Block && script.random_range(0..2) == 0 {
                // Notified: it now waits for the mutex 2, of the selected variable.
                fake.waits_for(ThreadId(current), ObjectId(2));
                blocked_waiting += 1;
            }
            current = a.0;
        }
        assert_eq!(r1.random_range(0..u64::MAX), r2.random_range(0..u64::MAX), "same draws");
        // The script met what it is for.
        assert!(waits_seen > 1000 && blocked_waiting > 200, "{waits_seen} {blocked_waiting}");
        // A thread the general choice refuses, the bits (or the words) refuse too.
        let last = ThreadId(ids[5]);
        let d = Decision {
            enabled: &[ThreadId(ids[0]), last],
            engine: crate::runtime::Enabled::none(),
            current: last,
            current_enabled: true,
            event: &events[0],
            step: 5000,
            var_access: 0,
            pending: fake.pending(),
        };
        let absent = Some(ThreadId(ids[5] + 1));
        assert!(fast.choose_given(&d, &mut r1, absent).is_err());
        assert!(general.choose_given(&d, &mut r2, absent).is_err());
    }

    /// The table counts as `count_ones` does, below 256 and past it (where it hands over).
    #[test]
    fn counting_bits_by_the_table_is_count_ones() {
        for bits in (0..1024u64).chain([u64::MAX, 1 << 63, 0xff << 8, (1 << 40) | 0b1011]) {
            assert_eq!(count_bits(bits), bits.count_ones() as usize, "{bits:#x}");
        }
    }

    #[test]
    fn same_seed_same_choices() {
        let run = |seed: u64| {
            let mut s = Surw::new();
            let mut r = rng(seed);
            execution(&mut s, &mut r, 0);
            (1..21)
                .map(|ordinal| {
                    s.begin_execution(&start(ordinal), &mut r);
                    let spawn = event(EventKind::Spawn, None);
                    decide(&mut s, &mut r, &[0, 1], 0, &spawn).0
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(5), run(5));
    }
}
