//! Race reversal over the selectively uniform walk (`strategy = "reversal"`): executions that
//! depend on the ones before, so that a pair of conflicting accesses seen in one order is
//! tried in the other.
//!
//! # What this module owns, and what it must not touch
//!
//! It owns [`Reversal`]: the set of ordered pairs of conflicting accesses the run has seen
//! (a fixed-size bit table), the pairs still waiting for their reversal (a bounded list), and
//! the filter it puts in front of [`Surw`] in the executions that try one. Like every
//! strategy it sees only what a [`Decision`] tells it; it touches no thread or object state
//! and has no guarantee.
//!
//! # The algorithm
//!
//! Independent executions of a walk repeat the behaviours a program has few of: a bug the
//! walk finds in ten executions is often one order of two accesses that the walk puts the
//! other way most of the time. Race reversal remembers which orders it saw and steers
//! towards one it did not (the idea behind DPOR's backtracking and Sen's RaceFuzzer, made
//! randomized and cheap):
//!
//! - An *access* is identified by its call site and kind (a load, a store, a lock...). At
//!   every step, the access that runs is paired with the previous access to the same object
//!   by another thread when they conflict (at least one of them modifies the object): the
//!   ordered pair `(a, b)`, "`a` then `b`", joins the run's seen pairs (a read is paired
//!   with the write it read from, a write with the latest access and the latest write); a
//!   pair seen for the first time whose reverse `(b, a)` has not been seen becomes a
//!   *target*.
//! - Every execution after the first tries the newest target `(a, b)` (the pair met last, as
//!   a depth-first search backtracks at the latest race first): it holds back every thread
//!   whose next operation is the access `a`, leaving it out of the enabled threads the walk
//!   draws from, until a thread runs access `b`. Then the held threads at `a` on the object
//!   `b` touched are the only candidates while any of them is enabled, so `a` follows `b` on
//!   that object. The walk draws among the threads the filter leaves, with its own weights.
//! - Completeness: a thread is never held when every enabled thread would be (the hold is
//!   given up), nor after [`PATIENCE`] held scheduling points (the access `b` may come only
//!   after `a`, through a lock or a join, and then the reversal is impossible). A target is
//!   dropped when its reverse is seen, or after [`TRIES`] executions tried it. Executions
//!   with no target left are the selective walk's ([`Surw`], which also runs execution 0), and
//!   so are the choices of every execution outside a hold: the selective walk's executions
//!   (selective ones, and the uniform walk in the first after execution 0 and in one in eight
//!   of the others), its estimates from execution 0.
//!
//! - Write loops run whole in most executions ([`WriteLoops`]: a thread about to repeat the
//!   write to memory it just made keeps running, for a bounded run), as in SURW; here the rule
//!   comes before the walk's choice but after a hold (a write a hold keeps back stays held:
//!   the reversal comes first), and the walk beneath, which does not apply it again, is told
//!   of each such choice as its own ([`Surw::choose_given`]). Measured on the corpus (the
//!   guide's strategy section): the thread-scaling family's cost fell from 8-16 executions
//!   to about 3, and the corpus geomean from 5.2 to 4.6.
//!
//! # State and cost
//!
//! The state kept across executions is bounded: the seen pairs fill at most three quarters
//! of a table of [`SEEN_SLOTS`] 64-bit slots (64 KiB), after which every pair counts as
//! seen, and the targets are at most [`MAX_TARGETS`]. Per scheduling point, only while this
//! execution's target is being tried (a hold or its follow-up): one write of the current
//! thread's announced access, one read per enabled thread while a hold is on (whether its
//! announced access is the held one), and a look at the access that runs (whether it ends
//! the phase). The pairs are found when the execution ends, from its trace
//! ([`Strategy::observe_trace`]), in the order the accesses ran: per access, a read of the
//! object's previous accesses and, for a conflicting pair, a mix and a probe of the table
//! (one slot, mostly). So an execution with no target left adds only the write-loop rule's
//! check to the selective walk's scheduling points, and lets the engine pass over the points
//! with no choice (`Strategy::skips_forced`), which the rule and the walk read from the trace
//! at the next decision. No allocation once the per-thread and per-object tables have grown
//! in the run's first executions.
//!
//! # Workers
//!
//! Each execution depends on the pairs the executions before it saw, so the strategy runs its
//! executions serially (a run with several workers runs it on one), and a run is reproduced by
//! its seed. Were it to run on several workers, each worker's instance would keep its own
//! history: each stream avoids its own repeats, not the others'.

use std::panic::Location;

use super::registry::StrategyInfo;
use super::surw::Surw;
use super::uniform_walk::mix;
use super::write_loops::WriteLoops;
use super::{access_key, asked, Decision, ExecutionStart, ScheduleRng, Strategy, StrategyError};
use crate::runtime::{Event, EventKind, ObjectId, Step, ThreadId};

/// `strategy = "reversal"`: no parameters, no bound; it learns in execution 0 (its walk's
/// estimates) and from every execution after (the pairs it saw), so its executions are serial.
pub(crate) const INFO: StrategyInfo = StrategyInfo {
    name: "reversal",
    title: "race reversal",
    params: &[],
    bound: None,
    priority: false,
    learns_from_execution_0: true,
    parallel: false,
    build: |_| Box::new(Reversal::new()),
};

/// Executions that try one target before it is dropped: its reversal may need a rarer
/// interleaving than one hold gives (the held access may come again only later in the
/// execution). Measured on the corpus (see the guide's strategy section): 5 paid a little less
/// than 2 or 3 and the same as 10.
const TRIES: u8 = 5;

/// Held scheduling points before a hold is given up: `then` may come only after `first`
/// (through a lock or a join, or a spin loop of the held thread's partner), and then the
/// reversal is impossible in this execution; a hold that never ends would starve the held
/// threads.
const PATIENCE: u32 = 64;

/// Slots of the seen-pairs table (a power of two); it takes pairs until three quarters are
/// full, then counts every pair as seen (no new targets: the selective walk alone).
const SEEN_SLOTS: usize = 1 << 13;

/// Most targets kept; a new pair finds no room while the list is full.
const MAX_TARGETS: usize = 256;

/// No thread, no object, no access.
const NONE: u32 = u32::MAX;

/// Whether an operation leaves its object as it was: two of them on one object commute.
fn only_reads(kind: EventKind) -> bool {
    matches!(kind, EventKind::AtomicLoad | EventKind::CellRead | EventKind::ReadLock)
}

/// A thread's next operation on an object, as it announced it at its latest scheduling point.
#[derive(Clone, Copy, Debug)]
struct Announced {
    object: u32,
    key: u64,
    reads: bool,
}

impl Announced {
    const NONE: Announced = Announced { object: NONE, key: 0, reads: false };
}

/// An access of this execution: its thread and key.
#[derive(Clone, Copy, Debug)]
struct Last {
    thread: u32,
    key: u64,
}

/// An object's latest access and latest write in this execution.
#[derive(Clone, Copy, Debug)]
struct Accesses {
    last: Last,
    write: Last,
}

impl Accesses {
    const NONE: Accesses =
        Accesses { last: Last { thread: NONE, key: 0 }, write: Last { thread: NONE, key: 0 } };
}

/// A pair `(first, then)` seen in that order only: an execution tries `then` before `first`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Target {
    first: u64,
    then: u64,
    tries: u8,
}

/// Where an execution that tries a target stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No target this execution, or the hold is over.
    Off,
    /// Threads at `first` are held until a thread runs `then`; `held` points so far.
    Holding { held: u32 },
    /// `then` ran on `object`: threads at `first` on it are the only candidates while enabled.
    Following { object: u32 },
}

/// Race reversal: the selectively uniform walk, and in each execution the newest pair of
/// conflicting accesses seen in one order only held back to run in the other. No guarantee;
/// serial.
#[derive(Clone, Debug)]
pub struct Reversal {
    base: Surw,
    /// The seen ordered pairs, mixed, in an open-addressing table (0: an empty slot).
    seen: Box<[u64]>,
    /// Pairs in `seen`.
    seen_count: usize,
    targets: Vec<Target>,
    /// This execution's target (its accesses) and phase.
    target: Option<(u64, u64)>,
    phase: Phase,
    /// Each thread's announced operation on an object, by thread id (while the target is
    /// tried, and as the trace is read); [`Announced::NONE`] for a thread that announced none
    /// in this execution (the table keeps its length across executions, as `last` does).
    announced: Vec<Announced>,
    /// Each object's latest access and latest write, by object id, as the trace is read;
    /// [`Accesses::NONE`] for an object the pass has not met yet.
    last: Vec<Accesses>,
    /// Pairs first seen in this execution, for the targets at its end (bounded).
    fresh: Vec<(u64, u64)>,
    /// Scratch: the enabled threads the filter leaves.
    filtered: Vec<ThreadId>,
    /// Executions that tried a target, and those whose target's reverse was then seen.
    tried: u64,
    reversed: u64,
    /// Write loops run whole, in most executions.
    loops: WriteLoops,
}

impl Default for Reversal {
    fn default() -> Self {
        Reversal::new()
    }
}

/// An ordered pair, mixed, as the seen table holds it (never 0, the empty slot). The exact
/// 64-bit mix is compared, not a few bits of it: two pairs of a run share one with
/// probability about `pairs^2 / 2^65`, so the run does not depend on where the program's
/// call sites are in memory (which moves between processes), only on its seed.
fn pair_key(first: u64, then: u64) -> u64 {
    mix(first, then).max(1)
}

impl Reversal {
    pub fn new() -> Reversal {
        Reversal {
            base: Surw::without_loops(),
            seen: vec![0; SEEN_SLOTS].into_boxed_slice(),
            seen_count: 0,
            targets: Vec::new(),
            target: None,
            phase: Phase::Off,
            announced: Vec::new(),
            last: Vec::new(),
            fresh: Vec::new(),
            filtered: Vec::new(),
            tried: 0,
            reversed: 0,
            loops: WriteLoops::default(),
        }
    }

    /// The slot of `key` in the seen table, or of the empty slot where it would go (linear
    /// probing; the table is never full, see [`SEEN_SLOTS`]).
    fn slot(&self, key: u64) -> usize {
        let mut i = key as usize & (SEEN_SLOTS - 1);
        while self.seen[i] != 0 && self.seen[i] != key {
            i = (i + 1) & (SEEN_SLOTS - 1);
        }
        i
    }

    /// Whether the table is as full as it may get: every pair then counts as seen.
    fn saturated(&self) -> bool {
        self.seen_count >= SEEN_SLOTS / 4 * 3
    }

    fn is_seen(&self, first: u64, then: u64) -> bool {
        let key = pair_key(first, then);
        self.saturated() || self.seen[self.slot(key)] == key
    }

    /// Marks the pair seen; true if it was not.
    fn mark_seen(&mut self, first: u64, then: u64) -> bool {
        if self.saturated() {
            return false;
        }
        let key = pair_key(first, then);
        let i = self.slot(key);
        let new = self.seen[i] == 0;
        if new {
            self.seen[i] = key;
            self.seen_count += 1;
        }
        new
    }

    /// Notes `current`'s announced operation `event` (kept across a `Block`: the blocked
    /// operation is the one that runs when the thread is chosen again).
    #[inline]
    fn announce(&mut self, current: ThreadId, event: &Event) {
        self.announce_op(current, event.kind, event.object, event.location);
    }

    /// [`Reversal::announce`] of the operation `kind` on `object` at `site`; returns what
    /// `thread` announced, or `None` at a `Block`, which leaves its announcement standing.
    #[inline(always)]
    fn announce_op(
        &mut self,
        thread: ThreadId,
        kind: EventKind,
        object: Option<ObjectId>,
        site: &'static Location<'static>,
    ) -> Option<Announced> {
        if kind == EventKind::Block {
            return None;
        }
        let announced = match object {
            Some(object) => {
                Announced { object: object.0, key: access_key(site, kind), reads: only_reads(kind) }
            }
            None => Announced::NONE,
        };
        let t = thread.index();
        match self.announced.get_mut(t) {
            Some(slot) => *slot = announced,
            None => *self.grow_announced(t) = announced,
        }
        Some(announced)
    }

    /// The entry of a thread past the table: the table grows to it (kept across executions).
    #[cold]
    #[inline(never)]
    fn grow_announced(&mut self, t: usize) -> &mut Announced {
        self.announced.resize(t + 1, Announced::NONE);
        &mut self.announced[t]
    }

    /// The entry of an object past the table: the table grows to it (kept across executions).
    #[cold]
    #[inline(never)]
    fn grow_last(&mut self, o: usize) -> &mut Accesses {
        self.last.resize(o + 1, Accesses::NONE);
        &mut self.last[o]
    }

    /// Whether `thread`'s announced operation is the access `key` (on `object`, if given).
    #[inline]
    fn at(&self, thread: ThreadId, key: u64, object: Option<u32>) -> bool {
        self.announced.get(thread.index()).is_some_and(|a| {
            a.object != NONE && a.key == key && object.is_none_or(|o| o == a.object)
        })
    }

    /// Whether `thread` is at the access a hold keeps back: the reversal comes before a write
    /// loop runs whole.
    #[inline]
    fn held(&self, thread: ThreadId) -> bool {
        matches!((self.phase, self.target),
            (Phase::Holding { .. }, Some((first, _))) if self.at(thread, first, None))
    }

    /// The enabled threads this execution's phase leaves to the walk into `filtered`, or
    /// false when it leaves them all.
    fn filter(&mut self, enabled: &[ThreadId]) -> bool {
        let Some((first, _)) = self.target else { return false };
        let mut filtered = std::mem::take(&mut self.filtered);
        filtered.clear();
        let kept = match self.phase {
            Phase::Off => false,
            Phase::Holding { held } => {
                filtered.extend(enabled.iter().copied().filter(|&t| !self.at(t, first, None)));
                if filtered.len() == enabled.len() {
                    false
                } else if filtered.is_empty() || held >= PATIENCE {
                    // Only held threads can run, or `then` has not come: the hold is over.
                    self.phase = Phase::Off;
                    false
                } else {
                    self.phase = Phase::Holding { held: held + 1 };
                    true
                }
            }
            Phase::Following { object } => {
                filtered
                    .extend(enabled.iter().copied().filter(|&t| self.at(t, first, Some(object))));
                !filtered.is_empty() && filtered.len() < enabled.len()
            }
        };
        self.filtered = filtered;
        kept
    }

    /// Records the conflicting pair `(first, then)`: seen, and fresh if it was not.
    #[inline]
    fn pair(&mut self, first: u64, then: u64) {
        if self.mark_seen(first, then) && self.fresh.len() < MAX_TARGETS {
            self.fresh.push((first, then));
        }
    }

    /// Notes that `chosen` runs its announced operation: whether it moves this execution's
    /// phase on (the access `then` starts the follow-up, `first` ends it).
    #[inline]
    fn advance(&mut self, chosen: ThreadId) {
        let Some(&Announced { object, key, .. }) = self.announced.get(chosen.index()) else {
            return;
        };
        if object == NONE {
            return;
        }
        if let Some((first, then)) = self.target {
            match self.phase {
                Phase::Holding { .. } if key == then => self.phase = Phase::Following { object },
                Phase::Following { .. } if key == first => self.phase = Phase::Off,
                _ => {}
            }
        }
    }

    /// Notes that `chosen` runs `runs`, the operation it announced, as the trace is read: the
    /// pairs it makes with the object's previous accesses.
    #[inline(always)]
    fn pairs_of(&mut self, chosen: ThreadId, runs: Announced) {
        let Announced { object, key, reads } = runs;
        if object == NONE {
            return;
        }
        let o = object as usize;
        let entry = match self.last.get_mut(o) {
            Some(entry) => entry,
            None => self.grow_last(o),
        };
        let access = Last { thread: chosen.0, key };
        // A read pairs with the write it reads from, which need not be the latest access
        // (other threads' reads in between do not conflict with it); a write pairs with the
        // latest access and with the latest write. The entry is updated before the pairs are
        // recorded, which need `self`: one look-up of it.
        if reads {
            let write = entry.write;
            entry.last = access;
            if write.thread != NONE && write.thread != chosen.0 {
                self.pair(write.key, key);
            }
        } else {
            let Accesses { last, write } = *entry;
            *entry = Accesses { last: access, write: access };
            if write.thread != NONE && write.thread != chosen.0 {
                self.pair(write.key, key);
            }
            // An object with no access has no write either, and both keys are `NONE`'s: the
            // keys' test also tells that `last` is an access.
            if last.thread != chosen.0 && last.key != write.key {
                self.pair(last.key, key);
            }
        }
    }

    /// Starts reading an ended execution's trace ([`Reversal::observe_step`] then takes its
    /// steps that asked for a choice, in order). Split from `observe_trace` so that revfuzz
    /// reads the trace once for its coverage and for these pairs (`greybox.rs`).
    pub(super) fn observe_begin(&mut self) {
        // Reset, not emptied: tables that keep their length are seldom grown in the pass,
        // whose look-ups then take the common path (an entry that is there).
        self.announced.fill(Announced::NONE);
        self.last.fill(Accesses::NONE);
    }

    /// One scheduling point that asked for a choice: its thread announces its operation
    /// (but at a `Block`, whose thread's announcement stands), then the chosen thread runs the
    /// one it announced. When the thread goes on (most steps), what runs is what it just
    /// announced, not read back from the table.
    #[inline(always)]
    pub(super) fn observe_step(&mut self, step: &Step) {
        let own = self.announce_op(step.thread, step.kind, step.object, step.location);
        let runs = match own {
            Some(own) if step.chosen == step.thread => Some(own),
            _ => self.announced.get(step.chosen.index()).copied(),
        };
        if let Some(runs) = runs {
            self.pairs_of(step.chosen, runs);
        }
    }
}

impl Strategy for Reversal {
    fn describe(&self) -> String {
        INFO.name.to_string()
    }

    fn begin_execution(&mut self, start: &ExecutionStart<'_>, rng: &mut ScheduleRng) {
        self.announced.fill(Announced::NONE);
        self.fresh.clear();
        self.loops.begin(rng);
        self.target = None;
        self.phase = Phase::Off;
        // The newest target: the pair met last, the reversal a depth-first search would try
        // next (measured: newest first paid less than a random or the least tried target).
        if let Some(t) = self.targets.last_mut() {
            t.tries += 1;
            self.target = Some((t.first, t.then));
            self.phase = Phase::Holding { held: 0 };
            self.tried += 1;
        }
        self.base.begin_execution(start, rng);
    }

    /// An execution that tries a target holds threads back and watches what each announces,
    /// at every point; one that tries none lets the engine pass over the points with no
    /// choice, as the walk beneath does, and the write-loop rule reads them from the trace.
    fn skips_forced(&self) -> bool {
        self.target.is_none() && self.base.skips_forced()
    }

    /// Always inlined: revfuzz's fresh executions call it at every scheduling point.
    #[inline(always)]
    fn choose(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError> {
        let skipped = decision.skipped();
        if !skipped.is_empty() {
            // Points with no choice, passed over in an execution that tries no target: the
            // write-loop rule notes them (the walk beneath reads them itself).
            self.loops.skipped(skipped);
        }
        // Outside a target's phases no choice depends on what threads announced: the pairs are
        // found from the trace at the end.
        let trying = self.phase != Phase::Off;
        if trying {
            self.announce(decision.current, decision.event);
        }
        let continues = self.loops.continues(decision) && !self.held(decision.current);
        let chosen = if continues {
            // The walk accounts for the choice as its own (its intention, its counts).
            self.base.choose_given(decision, rng, Some(decision.current))?
        } else if trying && self.filter(decision.enabled) {
            // The filter keeps `enabled`'s increasing order.
            let current_enabled = self.filtered.binary_search(&decision.current).is_ok();
            let filtered = Decision { enabled: &self.filtered, current_enabled, ..*decision };
            self.base.choose(&filtered, rng)?
        } else {
            self.base.choose(decision, rng)?
        };
        self.loops.chose(continues);
        if trying {
            self.advance(chosen);
        }
        Ok(chosen)
    }

    fn observe_trace(&mut self, trace: &[Step]) {
        self.observe_begin();
        for step in asked(trace) {
            self.observe_step(step);
        }
    }

    fn end_execution(&mut self, digest: u64, steps: u64) -> Result<(), StrategyError> {
        if let Some((first, then)) = self.target {
            if self.is_seen(then, first) {
                self.reversed += 1;
            }
        }
        for i in 0..self.fresh.len() {
            let (first, then) = self.fresh[i];
            if first != then && !self.is_seen(then, first) && self.targets.len() < MAX_TARGETS {
                self.targets.push(Target { first, then, tries: 0 });
            }
        }
        let mut targets = std::mem::take(&mut self.targets);
        targets.retain(|t| t.tries < TRIES && !self.is_seen(t.then, t.first));
        self.targets = targets;
        self.base.end_execution(digest, steps)
    }

    fn summary(&self) -> Option<String> {
        Some(format!(
            "race reversal: {} executions tried a pair's reverse order, {} saw it; {} pairs left \
             to try",
            self.tried,
            self.reversed,
            self.targets.len()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{Event, ObjectId, Pending};
    use crate::vars::VarId;
    use rand::SeedableRng;
    use std::panic::Location;

    /// Two call sites: `a` and `b`.
    fn site_a() -> &'static Location<'static> {
        Location::caller()
    }
    fn site_b() -> &'static Location<'static> {
        Location::caller()
    }

    fn access(kind: EventKind, site: &'static Location<'static>) -> Event {
        Event { kind, object: Some(ObjectId(0)), var: Some(VarId(0)), location: site }
    }

    fn start() -> ExecutionStart<'static> {
        ExecutionStart::FIRST
    }

    /// The steps of the current execution, as the engine's trace holds them.
    type Trace = Vec<Step>;

    /// One decision: `current` announces `event`, with `enabled` runnable; the choice, noted
    /// in `trace`.
    fn decide(
        s: &mut Reversal,
        r: &mut ScheduleRng,
        trace: &mut Trace,
        enabled: &[u32],
        current: u32,
        event: &Event,
    ) -> u32 {
        let enabled: Vec<ThreadId> = enabled.iter().map(|&t| ThreadId(t)).collect();
        let d = Decision {
            enabled: &enabled,
            engine: crate::runtime::Enabled::none(),
            current: ThreadId(current),
            current_enabled: enabled.contains(&ThreadId(current)),
            event,
            step: 0,
            var_access: 0,
            pending: Pending::NONE,
        };
        let chosen = s.choose(&d, r).unwrap();
        trace.push(Step {
            thread: ThreadId(current),
            kind: event.kind,
            object: event.object,
            location: event.location,
            chosen,
            value: None,
            waits: false,
            var_access: 0,
        });
        chosen.0
    }

    /// Thread `t` alone runs `event`.
    fn run(s: &mut Reversal, r: &mut ScheduleRng, trace: &mut Trace, t: u32, event: &Event) {
        assert_eq!(decide(s, r, trace, &[t], t, event), t);
    }

    /// Ends the execution whose steps are `trace`.
    fn end(s: &mut Reversal, trace: &mut Trace) {
        s.observe_trace(trace);
        s.end_execution(0, trace.len() as u64).unwrap();
        trace.clear();
    }

    #[test]
    fn a_read_pairs_with_the_write_it_reads_and_a_write_with_the_latest_accesses() {
        let mut s = Reversal::new();
        let mut r = ScheduleRng::seed_from_u64(1);
        let mut tr = Trace::new();
        s.begin_execution(&start(), &mut r);
        let store = access(EventKind::AtomicStore, site_a());
        let load = access(EventKind::AtomicLoad, site_b());
        let (w, l) = (
            access_key(site_a(), EventKind::AtomicStore),
            access_key(site_b(), EventKind::AtomicLoad),
        );
        run(&mut s, &mut r, &mut tr, 1, &store);
        // The writer's own read: no pair. The pairs are found from the trace (read again from
        // its start: a pair found before is seen, not fresh again).
        run(&mut s, &mut r, &mut tr, 1, &load);
        s.observe_trace(&tr);
        assert!(s.fresh.is_empty());
        run(&mut s, &mut r, &mut tr, 2, &load); // reads thread 1's store past its read
        s.observe_trace(&tr);
        assert_eq!(s.fresh, vec![(w, l)]);
        run(&mut s, &mut r, &mut tr, 3, &load); // a second reader of the same store: an old pair
        s.observe_trace(&tr);
        assert_eq!(s.fresh, vec![(w, l)]);
        run(&mut s, &mut r, &mut tr, 1, &store); // overwrites what thread 3 read
        s.observe_trace(&tr);
        assert_eq!(s.fresh, vec![(w, l), (l, w)]);
        assert!(s.is_seen(w, l) && s.is_seen(l, w) && !s.is_seen(w, w));
        end(&mut s, &mut tr);
        // Both orders seen: nothing to reverse.
        assert!(s.targets.is_empty());
    }

    #[test]
    fn holds_the_first_access_until_the_second_runs_then_lets_it_follow() {
        let mut s = Reversal::new();
        let mut r = ScheduleRng::seed_from_u64(2);
        let mut tr = Trace::new();
        let store = access(EventKind::AtomicStore, site_a());
        let load = access(EventKind::AtomicLoad, site_b());
        let spawn = Event { kind: EventKind::Spawn, object: None, var: None, location: site_a() };
        // Execution 0: thread 1 stores, then thread 2 loads the store.
        s.begin_execution(&start(), &mut r);
        run(&mut s, &mut r, &mut tr, 1, &store);
        run(&mut s, &mut r, &mut tr, 2, &load);
        end(&mut s, &mut tr);
        let (w, l) = (
            access_key(site_a(), EventKind::AtomicStore),
            access_key(site_b(), EventKind::AtomicLoad),
        );
        assert_eq!(s.targets, vec![Target { first: w, then: l, tries: 0 }]);
        // Execution 1 tries it: thread 1, at the store, is held while thread 2 does other
        // work, whatever the walk draws.
        s.begin_execution(&start(), &mut r);
        assert_eq!(s.phase, Phase::Holding { held: 0 });
        assert_eq!(decide(&mut s, &mut r, &mut tr, &[1, 2], 1, &store), 2);
        for _ in 0..20 {
            assert_eq!(decide(&mut s, &mut r, &mut tr, &[1, 2], 2, &spawn), 2);
        }
        assert_eq!(s.phase, Phase::Holding { held: 21 });
        // Thread 2 loads: now thread 1's store follows, before thread 3's work.
        assert_eq!(decide(&mut s, &mut r, &mut tr, &[1, 2], 2, &load), 2);
        assert_eq!(s.phase, Phase::Following { object: 0 });
        assert_eq!(decide(&mut s, &mut r, &mut tr, &[1, 2, 3], 2, &spawn), 1);
        assert_eq!(s.phase, Phase::Off);
        end(&mut s, &mut tr);
        assert!(s.is_seen(l, w));
        assert!(s.targets.is_empty(), "reversed: dropped");
        let summary = s.summary().unwrap();
        assert!(summary.starts_with("race reversal: 1 executions tried"), "{summary}");
        assert!(summary.ends_with("1 saw it; 0 pairs left to try"), "{summary}");
    }

    #[test]
    fn gives_up_a_hold_after_its_patience_and_a_target_after_its_tries() {
        let mut s = Reversal::new();
        let mut r = ScheduleRng::seed_from_u64(3);
        let mut tr = Trace::new();
        let store = access(EventKind::AtomicStore, site_a());
        let load = access(EventKind::AtomicLoad, site_b());
        let other = Event { kind: EventKind::Yield, object: None, var: None, location: site_b() };
        s.begin_execution(&start(), &mut r);
        run(&mut s, &mut r, &mut tr, 1, &store);
        run(&mut s, &mut r, &mut tr, 2, &load);
        end(&mut s, &mut tr);
        for attempt in 1..=TRIES {
            s.begin_execution(&start(), &mut r);
            assert_eq!(decide(&mut s, &mut r, &mut tr, &[1, 2], 1, &store), 2, "held");
            // Thread 2 never loads: thread 1 is held PATIENCE points (the store's and the
            // loop's), then released.
            let mut ran_1 = None;
            for point in 0..PATIENCE + 200 {
                if decide(&mut s, &mut r, &mut tr, &[1, 2], 2, &other) == 1 {
                    ran_1 = Some(point);
                    break;
                }
            }
            assert!(ran_1.is_some_and(|p| p + 1 >= PATIENCE), "attempt {attempt}: {ran_1:?}");
            assert_eq!(s.phase, Phase::Off);
            end(&mut s, &mut tr);
            assert_eq!(s.targets.len(), usize::from(attempt < TRIES), "attempt {attempt}");
        }
        // Nothing left: the selective walk alone.
        s.begin_execution(&start(), &mut r);
        assert_eq!((s.target, s.phase), (None, Phase::Off));

        // A hold of every enabled thread is given up at once.
        s.targets.push(Target {
            first: access_key(site_a(), EventKind::AtomicStore),
            then: 0,
            tries: 0,
        });
        s.begin_execution(&start(), &mut r);
        assert_eq!(decide(&mut s, &mut r, &mut tr, &[1], 1, &store), 1);
        assert_eq!(s.phase, Phase::Off);
    }
}
