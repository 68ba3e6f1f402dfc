//! The portfolio (`strategy = "portfolio"`,
//! [`StrategyKind::Portfolio`](crate::StrategyKind::Portfolio)): each execution runs one of
//! several strategies (its arms), chosen by a bandit that learns, per program, which arm
//! still finds new behaviour.
//!
//! # What this module owns
//!
//! [`Portfolio`]: the arms (the uniform walk, POS, and PCT at depths 2, 3 and 5), the
//! coverage it measures in each execution, and the bandit that picks the next execution's arm
//! from it. Like every strategy it sees only what a [`Decision`] tells it; it carries no
//! guarantee (its PCT arms' executions are not counted toward any bound: a run with a target
//! counts only its guaranteed strategy's executions, see `runner/search.rs`).
//!
//! # Why a bandit, and over what
//!
//! No single strategy is best on every program: measured on the corpus (`docs/RESULTS.md`),
//! POS finds producer/consumer and two-stage bugs in a fraction of the walk's executions and
//! misses reorder-style bugs the walk finds at once. A fixed mix of two strategies that find
//! a bug with probabilities `p1`, `p2` per execution pays `1/mean(p)` executions, never fewer
//! than the better member alone: mixing only helps when the share moves to the arm that
//! suits the program. Before any bug the only signal is what the executions did, so each
//! execution is scored by whether it added *coverage*: a pair of conflicting accesses never
//! seen in the run (two operations of different threads on one object, one after the other,
//! at least one modifying it, identified by their kinds and call sites: what the next
//! operation read from or overwrote). An arm whose executions keep adding pairs is exploring
//! orders the others do not reach.
//!
//! The bandit is greedy with floors, anchored on the walk. The walk (the first arm) runs every
//! execution but those the floors take: every other arm runs at least [`FLOOR`] of the
//! executions (its turn comes when it is half an execution behind that share), so each is
//! tried and none starves. The greedy share moves to another arm only when that arm's recent
//! rate of executions that added coverage beats the walk's by [`MARGIN`]; rates are
//! discounted by [`DISCOUNT`] per execution, because coverage saturates (every arm's early
//! executions add pairs; what matters is which arm still does). The walk is the anchor, not
//! one arm among equals, because it is the best single strategy on the corpus (the lowest
//! geometric mean cost), and because on most programs no arm adds coverage for long (their
//! pairs are all met within a few executions): a bandit that treats the arms alike (UCB)
//! splits such a program's executions evenly, and pays up to five times the walk's cost
//! where the walk is the arm that finds the bug.
//! The price of the floors is `1 / (1 - 4 FLOOR)`, 1.14x, on programs where the walk is best
//! and nothing moves the share; what they buy is POS's and PCT's bugs at a fraction of the
//! walk's cost when those arms' executions add what the walk's do not.
//!
//! # Determinism and cost
//!
//! The arm of execution `i` depends only on the coverage of executions `0..i`, which depends
//! on the seed: a run is reproduced by its seed, but its executions cannot be spread over
//! worker threads (the description says so), and a failing execution replays from its
//! token as any other. The walk arm runs execution 0, where it learns its estimates.
//!
//! At a scheduling point the portfolio asks its arm, then notes the operation that runs in
//! two tables indexed by thread and object id, and for a conflicting pair pushes one mixed
//! `u64` onto a buffer kept across executions (no allocation once it is large enough, no
//! hashing into a set); the set of pairs seen is updated once per execution.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::panic::Location;

use super::pct::Pct;
use super::pos::Pos;
use super::priority::Prioritized;
use super::registry::StrategyInfo;
use super::uniform_walk::UniformWalk;
use super::{Decision, ExecutionStart, ScheduleRng, Strategy, StrategyError};
use crate::runtime::{EnabledChange, EventKind, ThreadId};

/// `strategy = "portfolio"`: no parameters, no bound; serial (each execution's arm depends on
/// the earlier executions' coverage).
pub(crate) const INFO: StrategyInfo = StrategyInfo {
    name: "portfolio",
    title: "the portfolio",
    params: &[],
    bound: None,
    priority: false,
    learns_from_execution_0: false,
    parallel: false,
    build: |_| Box::new(Portfolio::new()),
};

/// The PCT depths among the arms: one preemption, two, four.
const PCT_DEPTHS: [u32; 3] = [2, 3, 5];

/// The share of executions every arm but the walk gets at least.
pub(crate) const FLOOR: f64 = 0.03;

/// How much an arm's counts keep of their weight per execution: about the last
/// `1 / (1 - DISCOUNT)` executions decide.
pub(crate) const DISCOUNT: f64 = 0.98;

/// How much more often than the greedy arm's another arm's recent executions must have added
/// coverage for it to take the greedy share.
const MARGIN: f64 = 0.1;

/// One arm: a strategy and what the bandit knows of it.
struct Arm {
    strategy: Box<dyn Strategy>,
    /// Executions it ran.
    plays: u64,
    /// Executions of it that added coverage.
    wins: u64,
    /// Discounted plays and wins (see [`DISCOUNT`]).
    recent_plays: f64,
    recent_wins: f64,
}

impl Arm {
    fn new(strategy: Box<dyn Strategy>) -> Arm {
        Arm { strategy, plays: 0, wins: 0, recent_plays: 0.0, recent_wins: 0.0 }
    }
}

/// No access yet: the thread of an empty [`Access`], the object of an empty [`Announced`].
const NOBODY: u32 = u32::MAX;

/// An operation as the coverage sees it: who, what, and from where.
#[derive(Clone, Copy, Debug)]
struct Access {
    thread: u32,
    kind: EventKind,
    /// The call site's address: one `Location` per call site.
    site: usize,
}

impl Access {
    const NONE: Access = Access { thread: NOBODY, kind: EventKind::Block, site: 0 };
}

/// A thread's next operation on an object, as it announced it at its latest scheduling point:
/// it runs when the thread is next chosen.
#[derive(Clone, Copy, Debug)]
struct Announced {
    object: u32,
    kind: EventKind,
    site: usize,
}

impl Announced {
    const NONE: Announced = Announced { object: NOBODY, kind: EventKind::Block, site: 0 };
}

/// Whether an operation leaves its object as it was: two of them on one object commute.
fn only_reads(kind: EventKind) -> bool {
    matches!(kind, EventKind::AtomicLoad | EventKind::CellRead | EventKind::ReadLock)
}

/// A 64-bit mix of an ordered pair of accesses (their sites and kinds), the coverage's unit.
fn pair_key(first: Access, then: Access) -> u64 {
    let mut h = (first.site as u64 ^ (first.kind as u64) << 56).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h = (h.rotate_left(29) ^ then.site as u64 ^ (then.kind as u64) << 48)
        .wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^ h >> 31
}

/// The pairs are already mixed: the set uses them as they are.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// The portfolio: the uniform walk, POS and PCT at depths 2, 3 and 5, one per execution: the
/// walk's, unless another arm's recent executions added pairs of conflicting accesses the run
/// had not seen more often; every other arm runs at least [`FLOOR`] of the executions. No
/// guarantee, no parameters.
pub struct Portfolio {
    arms: Vec<Arm>,
    /// The arm of the execution under way (the last one, between executions).
    current: usize,
    /// Whether an execution began: before, the description is the portfolio's name alone.
    started: bool,
    /// Pairs of conflicting accesses seen in the run.
    seen: HashSet<u64, BuildHasherDefault<KeyHasher>>,
    /// This execution's pairs, in order (duplicates included).
    fresh: Vec<u64>,
    /// Each thread's latest announced operation on an object (kept across a `Block`: the
    /// blocked operation is the one that runs when the thread is chosen again), by thread id.
    announced: Vec<Announced>,
    /// Each object's latest access in this execution, by object id.
    last: Vec<Access>,
}

impl std::fmt::Debug for Portfolio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.summary())
    }
}

impl Default for Portfolio {
    fn default() -> Portfolio {
        Portfolio::new()
    }
}

impl Portfolio {
    /// The portfolio of the walk, POS and PCT at depths 2, 3 and 5; the walk comes first, so
    /// it runs execution 0 and learns its estimates there.
    pub fn new() -> Portfolio {
        let mut arms: Vec<Box<dyn Strategy>> =
            vec![Box::new(UniformWalk::new()), Box::new(Pos::default())];
        arms.extend(PCT_DEPTHS.iter().map(|&d| Prioritized::boxed(Pct::new(d))));
        Portfolio::of(arms)
    }

    /// A portfolio over these arms (the unit tests' stand-ins).
    fn of(arms: Vec<Box<dyn Strategy>>) -> Portfolio {
        Portfolio {
            arms: arms.into_iter().map(Arm::new).collect(),
            current: 0,
            started: false,
            seen: HashSet::default(),
            fresh: Vec::new(),
            announced: Vec::new(),
            last: Vec::new(),
        }
    }

    /// The arm the next execution runs: an arm at least half an execution below its floor
    /// share if any (the one furthest below, ties: the first), else the greedy arm: the
    /// first arm (the walk) unless another's recent rate of executions that added coverage
    /// beats the best so far by [`MARGIN`].
    fn pick(&self) -> usize {
        let total: u64 = self.arms.iter().map(|a| a.plays).sum();
        let mut starved: Option<(usize, f64)> = None;
        for (i, arm) in self.arms.iter().enumerate().skip(1) {
            let deficit = FLOOR * total as f64 - arm.plays as f64;
            if deficit >= 0.5 && starved.is_none_or(|(_, d)| deficit > d) {
                starved = Some((i, deficit));
            }
        }
        if let Some((i, _)) = starved {
            return i;
        }
        // One play with coverage is no evidence yet: the rate counts one play more.
        let rate = |a: &Arm| a.recent_wins / (a.recent_plays + 1.0);
        let mut best = 0;
        for (i, arm) in self.arms.iter().enumerate().skip(1) {
            if arm.plays > 0 && rate(arm) > rate(&self.arms[best]) + MARGIN {
                best = i;
            }
        }
        best
    }

    /// Records the execution that just ended: `added` whether it added coverage.
    fn reward(&mut self, added: bool) {
        for arm in &mut self.arms {
            arm.recent_plays *= DISCOUNT;
            arm.recent_wins *= DISCOUNT;
        }
        let arm = &mut self.arms[self.current];
        arm.plays += 1;
        arm.recent_plays += 1.0;
        if added {
            arm.wins += 1;
            arm.recent_wins += 1.0;
        }
    }

    /// Notes that `chosen` runs its pending operation: a conflicting pair with the object's
    /// previous access by another thread joins this execution's pairs.
    #[inline]
    fn observe(&mut self, decision: &Decision<'_>, chosen: ThreadId) {
        let event = decision.event;
        let current = decision.current.index();
        if event.kind != EventKind::Block {
            if let Some(object) = event.object {
                if self.announced.len() <= current {
                    self.announced.resize(current + 1, Announced::NONE);
                }
                let site = event.location as *const Location<'static> as usize;
                self.announced[current] = Announced { object: object.0, kind: event.kind, site };
            } else if let Some(slot) = self.announced.get_mut(current) {
                *slot = Announced::NONE;
            }
        }
        let Some(&Announced { object, kind, site }) = self.announced.get(chosen.index()) else {
            return;
        };
        if object == NOBODY {
            return;
        }
        let object = object as usize;
        if self.last.len() <= object {
            self.last.resize(object + 1, Access::NONE);
        }
        let access = Access { thread: chosen.0, kind, site };
        let previous = self.last[object];
        if previous.thread != NOBODY
            && previous.thread != chosen.0
            && !(only_reads(previous.kind) && only_reads(kind))
        {
            self.fresh.push(pair_key(previous, access));
        }
        self.last[object] = access;
    }

    /// Executions per arm and how many added coverage, e.g. for a report's note.
    pub(crate) fn summary(&self) -> String {
        let arms: Vec<String> = self
            .arms
            .iter()
            .map(|a| format!("{} {} ({} new)", a.strategy.describe(), a.plays, a.wins))
            .collect();
        format!("portfolio executions per arm: {}", arms.join(", "))
    }

    /// Executions each arm ran, in arm order.
    #[cfg(test)]
    fn plays(&self) -> Vec<u64> {
        self.arms.iter().map(|a| a.plays).collect()
    }
}

impl Strategy for Portfolio {
    fn describe(&self) -> String {
        // Names the arm under way: a failure's report and token say which arm found it. The
        // run's report is headed by a fresh portfolio's: its name.
        match self.started {
            false => INFO.name.to_string(),
            true => format!("{}: {}", INFO.name, self.arms[self.current].strategy.describe()),
        }
    }

    fn begin_execution(&mut self, start: &ExecutionStart<'_>, rng: &mut ScheduleRng) {
        self.current = self.pick();
        self.started = true;
        self.fresh.clear();
        self.announced.clear();
        self.last.clear();
        self.arms[self.current].strategy.begin_execution(start, rng);
    }

    fn reads_changes(&self) -> bool {
        self.arms[self.current].strategy.reads_changes()
    }

    fn enabled_changed(&mut self, changes: &[EnabledChange]) {
        self.arms[self.current].strategy.enabled_changed(changes);
    }

    fn choose(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError> {
        let chosen = self.arms[self.current].strategy.choose(decision, rng)?;
        self.observe(decision, chosen);
        Ok(chosen)
    }

    fn end_execution(&mut self, digest: u64, steps: u64) -> Result<(), StrategyError> {
        let mut added = false;
        for &pair in &self.fresh {
            added |= self.seen.insert(pair);
        }
        self.reward(added);
        self.arms[self.current].strategy.end_execution(digest, steps)
    }

    fn summary(&self) -> Option<String> {
        Some(Portfolio::summary(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An arm that always runs the first enabled thread.
    struct First(&'static str);

    impl Strategy for First {
        fn describe(&self) -> String {
            self.0.to_string()
        }
        fn choose(
            &mut self,
            decision: &Decision<'_>,
            _rng: &mut ScheduleRng,
        ) -> Result<ThreadId, StrategyError> {
            Ok(decision.enabled[0])
        }
    }

    fn portfolio(arms: usize) -> Portfolio {
        let names = ["a", "b", "c", "d", "e"];
        Portfolio::of(
            names[..arms].iter().map(|&n| Box::new(First(n)) as Box<dyn Strategy>).collect(),
        )
    }

    /// Runs `executions` executions of `p`'s bandit alone: the arm picked adds coverage when
    /// `adds(arm, execution)` says so.
    fn play(p: &mut Portfolio, executions: u64, adds: impl Fn(usize, u64) -> bool) {
        for i in 0..executions {
            p.current = p.pick();
            p.reward(adds(p.current, i));
        }
    }

    #[test]
    fn the_walk_runs_alone_until_the_floor_calls_the_others_in_turn() {
        let mut p = portfolio(5);
        let mut order = Vec::new();
        for _ in 0..21 {
            p.current = p.pick();
            order.push(p.current);
            p.reward(true);
        }
        // Half an execution below 3% of 17 executions: the others' first turns, in order.
        assert_eq!(order[..17], [0; 17]);
        assert_eq!(order[17..], [1, 2, 3, 4]);
    }

    #[test]
    fn an_arm_that_keeps_adding_coverage_gets_most_executions() {
        // Arm 2 adds coverage on every execution, the others never after the first 20.
        let mut p = portfolio(5);
        play(&mut p, 1000, |arm, i| arm == 2 || i < 20);
        let plays = p.plays();
        assert_eq!(plays.iter().sum::<u64>(), 1000);
        assert!(plays[2] >= 800, "{plays:?}");
    }

    #[test]
    fn the_share_follows_the_arm_that_still_adds_coverage() {
        // Arm 3 adds coverage for the first 300 executions, then arm 1 takes over.
        let mut p = portfolio(5);
        play(&mut p, 300, |arm, _| arm == 3);
        let early = p.plays();
        play(&mut p, 700, |arm, _| arm == 1);
        let late: Vec<u64> = p.plays().iter().zip(&early).map(|(l, e)| l - e).collect();
        assert!(early[3] > 200, "first 300: {early:?}");
        assert!(late[1] > 550, "last 700: {late:?}");
        assert!(late[3] < 50, "last 700: {late:?}");
    }

    #[test]
    fn the_floor_holds_for_every_arm() {
        // Only arm 0 ever adds coverage: the others still get their floor share, at every
        // point of the run.
        let mut p = portfolio(5);
        for i in 0..2000u64 {
            p.current = p.pick();
            p.reward(p.current == 0);
            let total = i + 1;
            for (arm, &n) in p.plays().iter().enumerate().skip(1) {
                let floor = (FLOOR * total as f64).floor() as u64;
                assert!(n >= floor, "after {total}: arm {arm} ran {n} < {floor}");
            }
        }
        assert!(p.plays()[0] > 1700, "{:?}", p.plays());
    }

    #[test]
    fn without_any_coverage_the_walk_keeps_all_but_the_floors() {
        let mut p = portfolio(4);
        play(&mut p, 1000, |_, _| false);
        let plays = p.plays();
        assert!(plays[0] >= 900, "{plays:?}");
        for &n in &plays[1..] {
            assert!((30..=31).contains(&n), "{plays:?}");
        }
    }

    #[test]
    fn pairs_of_accesses_are_ordered_and_keep_kinds_and_sites() {
        let a = Access { thread: 0, kind: EventKind::AtomicStore, site: 0x1000 };
        let b = Access { thread: 1, kind: EventKind::AtomicLoad, site: 0x2000 };
        let c = Access { thread: 1, kind: EventKind::AtomicRmw, site: 0x2000 };
        assert_ne!(pair_key(a, b), pair_key(b, a));
        assert_ne!(pair_key(a, b), pair_key(a, c));
        assert_eq!(pair_key(a, b), pair_key(Access { thread: 7, ..a }, b));
    }
}
