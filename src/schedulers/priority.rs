//! The machinery shared by the priority strategies ([`super::Pct`], [`super::Pctvb`],
//! [`super::ThreadBound`], [`super::Combined`]): strict priority scheduling, the two ways of
//! drawing priorities (PCT's and thread bounding's), the two ways of drawing change points
//! (scheduling steps, or accesses to chosen variables) and extra threads. Spinning threads need
//! nothing here: a thread that yields is not enabled until another thread makes progress (the
//! runtime's rule), so strict priority over the enabled threads never spins forever.
//!
//! A priority strategy is only its [`PriorityRules`]: how it describes itself, which
//! [`PriorityScheme`], which [`ChangeDomain`] and how many change points. [`Prioritized`] runs
//! any rule set as a [`Strategy`], so the trait plumbing exists once.
//!
//! Priorities are `i64`, higher runs first. Every strategy keeps all of them distinct, so the
//! choice is always unique and the strategy deterministic given its random number generator.
//!
//! A choice is the enabled thread with the highest priority: a pass over the enabled threads
//! while they are at most [`SCAN_UP_TO`], else the root of a tournament tree over the thread
//! ids that the engine's changes of the enabled set (`Strategy::enabled_changed`, told as
//! they happen, in executions after one with more threads than that) and the change points
//! keep up to date, O(log n) for each, so a decision among a hundred threads reads one node
//! instead of a hundred priorities. Measured with callgrind
//! (`corpus/examples/strategy_instructions.rs twostage combined 40`, 100 threads contending
//! for two mutexes): 38.6M instructions before the tree, 32.8M with it, the same schedules
//! (`tests/schedule_fingerprints.rs` pins them for 40 threads as the pass chose them).
//!
//! A point with no choice (the running thread alone can run) only gives the running thread
//! its priority and fires the change points there, which change the order of later choices:
//! the engine passes over such points (`Strategy::skips_forced`), and the next decision fires
//! the change points of the steps it passed over (a step keeps its access count,
//! `Step::var_access`, for those at accesses), before its own. The guarantee's class is the
//! same, since every choice and every priority is the same: the schedules are pinned
//! (`tests/schedule_fingerprints.rs`, `owner_alone`).
//!
//! Nor does a point where other threads can run but the running thread keeps the highest
//! priority: after choosing the running thread, the strategy tells the engine that it would
//! choose it again until a thread becomes enabled or a change point may fire
//! ([`PriorityCore::keeps_running`], `Strategy::keeps_running`), and the engine passes over
//! the points before that as over those with no choice. Measured with callgrind
//! (`corpus/examples/strategy_instructions.rs PROGRAM combined 1000`): on the work-stealing
//! deque, whose owner runs its loops while the thief could run, the strategy made 53,609
//! decisions, now 17,418, and the run's instructions fell 9.6% (41.7M to 37.7M; the default
//! with a target's 3.7%); the 100-thread two-stage program's (`twostage combined 20`)
//! 6.7%; the mutex programs, whose every lock and unlock enables a thread or touches the
//! chosen variable, changed by -0.3% to +1.1% (the question after each choice costs about
//! what the points passed over save). The same schedules: `tests/schedule_fingerprints.rs`
//! and the corpus's `first_failures` of every priority strategy and the default are
//! unchanged.

use rand::seq::SliceRandom;
use rand::RngExt;

use super::{Decision, ExecutionStart, KeepRunning, ScheduleRng, Strategy, StrategyError};
use crate::runtime::{EnabledChange, ThreadId};
use crate::vars::VarId;

/// No thread: an empty leaf of [`PriorityCore`]'s tree, or a match without players.
const NONE: u32 = u32::MAX;

/// Up to this many enabled threads, [`PriorityCore`] chooses by a pass over them; beyond, from
/// its tree, built at the first such decision of an execution that is told the changes of the
/// enabled set (one after an execution with more threads than this).
const SCAN_UP_TO: usize = 16;

/// What distinguishes one priority strategy from the others. Implemented by the strategy's
/// parameter type ([`super::Pct`], ...); [`Prioritized`] does the rest.
pub(crate) trait PriorityRules: std::fmt::Debug {
    /// The description with parameters, e.g. `pct(d=3)` (reports, replay tokens).
    fn describe(&self) -> String;
    /// How initial and change-point priorities are drawn.
    fn scheme(&self) -> PriorityScheme;
    /// Where change points fire.
    fn domain(&self) -> ChangeDomain;
    /// `c`, the number of change points (`d - 1`).
    fn change_points(&self) -> u32;
}

/// A priority strategy: its rules, and the per-execution [`PriorityCore`] they configure.
#[derive(Debug)]
pub(crate) struct Prioritized<R> {
    rules: R,
    core: PriorityCore,
}

impl<R: PriorityRules + 'static> Prioritized<R> {
    /// The strategy that schedules by `rules`, boxed for an execution.
    pub(crate) fn boxed(rules: R) -> Box<dyn Strategy> {
        let core = PriorityCore::new(rules.scheme(), rules.domain(), rules.change_points());
        Box::new(Prioritized { rules, core })
    }
}

impl<R: PriorityRules> Strategy for Prioritized<R> {
    fn describe(&self) -> String {
        self.rules.describe()
    }

    fn begin_execution(&mut self, start: &ExecutionStart<'_>, rng: &mut ScheduleRng) {
        self.core.begin(start, rng);
    }

    fn chosen_variables(&self) -> &[VarId] {
        self.core.chosen_vars()
    }

    fn bounds_variables(&self) -> bool {
        matches!(self.core.domain, ChangeDomain::Accesses { .. })
    }

    fn reads_changes(&self) -> bool {
        self.core.wants_changes()
    }

    /// A point with no choice fires its change points and nothing else: read from the trace
    /// at the next decision ([`PriorityCore::fire_skipped`]).
    fn skips_forced(&self) -> bool {
        true
    }

    fn may_keep_running(&self) -> bool {
        true
    }

    /// Having chosen the running thread, the strategy chooses it again until the enabled set
    /// gains a thread or a change point fires: [`PriorityCore::keeps_running`].
    fn keeps_running(&self) -> KeepRunning {
        self.core.keeps_running()
    }

    fn enabled_changed(&mut self, changes: &[EnabledChange]) {
        self.core.enabled_changed(changes);
    }

    #[inline]
    fn choose(
        &mut self,
        decision: &Decision<'_>,
        _rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError> {
        Ok(self.core.choose(decision))
    }
}

/// How initial and change-point priorities are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PriorityScheme {
    /// PCT: threads `0..n` get a random permutation of `d..d+n-1`; the `i`-th change point
    /// (1-based, in draw order) gives the running thread priority `i`, below every initial one.
    Pct,
    /// Thread bounding (paper, section 4): a random permutation `P` of `1..=n+c`; thread `i`
    /// gets `P_i`, the `i`-th change point gives the running thread `P_{n+i}`.
    Permutation,
}

/// Where change points fire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChangeDomain {
    /// PCT: `c` steps drawn uniformly and independently from `[1, k]`.
    Steps,
    /// PCTVB: choose `vars` of the `Q` shared variables uniformly, then draw `c` pairs
    /// `(q, j)` uniformly and independently from `S = {(q, j): q chosen, j in [1, k_q]}`.
    Accesses {
        /// Variables to choose (clamped to `Q`).
        vars: u32,
    },
}

/// One change point: when it fires and the priority it gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ChangePoint {
    /// For [`ChangeDomain::Steps`]: the 1-based step. For accesses: `j`, the 1-based access.
    pub(crate) at: u64,
    /// For accesses: the variable; `None` for steps.
    pub(crate) var: Option<VarId>,
    /// The priority the running thread gets when it fires.
    pub(crate) priority: i64,
}

/// The per-execution state of a priority strategy.
#[derive(Clone, Debug)]
pub(crate) struct PriorityCore {
    scheme: PriorityScheme,
    domain: ChangeDomain,
    /// `c`, the number of change points (`d - 1`).
    changes: u32,
    /// Initial priorities of threads `0..n`.
    initial: Vec<i64>,
    /// Current priority by thread index (grows as threads appear).
    prio: Vec<i64>,
    /// The next priority below everything given so far (extra threads).
    floor: i64,
    /// Change points not fired yet, sorted by `at`.
    points: Vec<ChangePoint>,
    /// Variables chosen for this execution (accesses domain).
    chosen: Vec<VarId>,
    /// What [`PriorityCore::keeps_running`] says, from the change points left.
    keep: KeepRunning,
    /// The enabled threads as a tournament tree by thread index, so that a decision costs
    /// O(log n) per change of the enabled set or of a priority and O(1) to read the winner,
    /// where a pass over the enabled threads cost O(n) (a third of the instructions of the
    /// combined strategy on a 100-thread program): `tree[cap + i]` is `i` while thread `i` is
    /// enabled and [`NONE`] otherwise (`cap`, half the length, a power of two), every inner
    /// node the higher-priority of its children's threads (the lower index on a tie, which
    /// distinct priorities never make), so `tree[1]` is the thread to run. Built at the first
    /// decision of an execution with more than [`SCAN_UP_TO`] enabled threads, from them, and
    /// kept up to date from then on by each change the engine tells
    /// ([`PriorityCore::enabled_changed`]) and each change point that fires: below, a pass
    /// over the few enabled threads costs less than keeping the tree by every change. Its
    /// allocation is kept across executions.
    tree: Vec<u32>,
    /// Whether this execution built `tree` (it is up to date).
    tree_on: bool,
    /// Whether this execution is told how the enabled threads change (the engine told the
    /// main thread's start before the first decision): the tree is built only then, since it
    /// could not be kept up to date otherwise.
    told: bool,
    /// Whether this execution asks to be told: an earlier one had more than [`SCAN_UP_TO`]
    /// threads, so this one may have as many enabled. (Telling costs a call per change; a
    /// small program never needs the tree.)
    wants: bool,
    /// Buffers `begin` draws in, kept across executions so that it does not allocate (a run
    /// of a small program spends a visible share of its time in per-execution allocations).
    scratch: Scratch,
}

/// `PriorityCore::begin`'s working buffers (their contents do not outlive one call).
#[derive(Clone, Debug, Default)]
struct Scratch {
    /// The permutation drawn.
    values: Vec<i64>,
    /// Change-point priorities, in draw order.
    change_prios: Vec<i64>,
    /// The shared variables and their `k_q`.
    shared: Vec<(VarId, u64)>,
    /// Indices into `shared`, partially shuffled.
    order: Vec<usize>,
    /// The chosen variables and their `k_q`.
    picked: Vec<(VarId, u64)>,
}

impl PriorityCore {
    pub(crate) fn new(scheme: PriorityScheme, domain: ChangeDomain, changes: u32) -> PriorityCore {
        PriorityCore {
            scheme,
            domain,
            changes,
            initial: Vec::new(),
            prio: Vec::new(),
            floor: 0,
            points: Vec::new(),
            chosen: Vec::new(),
            keep: KeepRunning::NONE,
            tree: vec![NONE; 2],
            tree_on: false,
            told: false,
            wants: false,
            scratch: Scratch::default(),
        }
    }

    /// The variables chosen for the current execution (empty for the steps domain).
    pub(crate) fn chosen_vars(&self) -> &[VarId] {
        &self.chosen
    }

    /// The change points of the current execution that have not fired yet.
    #[cfg(test)]
    pub(crate) fn pending_points(&self) -> &[ChangePoint] {
        &self.points
    }

    /// Draws this execution's priorities and change points. Draw order (fixed, so that a seed
    /// always means the same schedule): priorities, then variables, then change points.
    pub(crate) fn begin(&mut self, start: &ExecutionStart<'_>, rng: &mut ScheduleRng) {
        let n = start.max_threads.max(1);
        let c = self.changes as usize;
        let Scratch { values, change_prios, shared, order, picked } = &mut self.scratch;
        // Change-point priorities, in draw order.
        change_prios.clear();
        match self.scheme {
            PriorityScheme::Pct => {
                let d = c as i64 + 1;
                self.initial.clear();
                self.initial.extend(d..d + n as i64);
                self.initial.shuffle(rng);
                change_prios.extend(1..=c as i64);
            }
            PriorityScheme::Permutation => {
                values.clear();
                values.extend(1..=(n + c) as i64);
                values.shuffle(rng);
                self.initial.clear();
                self.initial.extend_from_slice(&values[..n]);
                change_prios.extend_from_slice(&values[n..]);
            }
        }
        // Every initial and change priority is >= 1: extra threads go below all of them.
        self.floor = 0;
        self.prio.clear();
        self.points.clear();
        self.chosen.clear();
        self.tree_on = false;
        self.told = false;
        self.wants = n > SCAN_UP_TO;
        match self.domain {
            ChangeDomain::Steps => {
                let k = start.max_steps;
                if k > 0 {
                    for &priority in change_prios.iter() {
                        let at = rng.random_range(1..=k);
                        self.points.push(ChangePoint { at, var: None, priority });
                    }
                }
            }
            ChangeDomain::Accesses { vars } => {
                shared.clear();
                shared.extend(
                    start
                        .profiles
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| p.shared)
                        .map(|(i, p)| (VarId(i as u32), p.max_accesses)),
                );
                let v = (vars as usize).min(shared.len());
                order.clear();
                order.extend(0..shared.len());
                let (drawn, _) = order.partial_shuffle(rng, v);
                picked.clear();
                picked.extend(drawn.iter().map(|&i| shared[i]));
                picked.sort_unstable();
                self.chosen.extend(picked.iter().map(|&(q, _)| q));
                let size: u64 = picked.iter().map(|&(_, kq)| kq).sum();
                if size > 0 {
                    for &priority in change_prios.iter() {
                        let mut r = rng.random_range(0..size);
                        for &(q, kq) in picked.iter() {
                            if r < kq {
                                self.points.push(ChangePoint { at: r + 1, var: Some(q), priority });
                                break;
                            }
                            r -= kq;
                        }
                    }
                }
            }
        }
        // Stable: points at the same place fire in draw order, the last one wins.
        self.points.sort_by_key(|p| p.at);
        self.keep = self.keep_from_points();
    }

    /// The priority of `thread`, assigning one on first sight: threads the profile counted
    /// (`index < n`) get their slot's initial priority, later ones the lowest priority so far.
    fn priority_of(&mut self, thread: ThreadId) -> i64 {
        let i = thread.index();
        while self.prio.len() <= i {
            let next = self.prio.len();
            let p = match self.initial.get(next) {
                Some(&p) => p,
                None => self.lower(),
            };
            self.prio.push(p);
        }
        self.prio[i]
    }

    /// A priority below every priority given so far.
    fn lower(&mut self) -> i64 {
        self.floor -= 1;
        self.floor
    }

    /// Whether this execution asks to be told how the enabled threads change.
    pub(crate) fn wants_changes(&self) -> bool {
        self.wants
    }

    /// Applies changes of the enabled set to the tree, if this execution built it.
    pub(crate) fn enabled_changed(&mut self, changes: &[EnabledChange]) {
        self.told = true;
        if self.tree_on {
            for &change in changes {
                self.set_enabled(change);
            }
        }
    }

    /// After a choice of the running thread, the points at which this strategy would choose it
    /// again (`Strategy::keeps_running`): it has the highest priority among the enabled
    /// threads, and keeps it while no thread joins them (a thread that leaves cannot outrank
    /// it) and no change point lowers it. So the points before the next change point's step
    /// (PCT's steps), or all but the accesses to a variable that has a change point left
    /// (the accesses domain, whose points fire at a count of those accesses). What a choice
    /// there would do besides (give the running thread its priority, fire its change
    /// points) is nothing at these points: its priority is given, and none fires.
    #[inline(always)]
    pub(crate) fn keeps_running(&self) -> KeepRunning {
        self.keep
    }

    /// [`PriorityCore::keeps_running`] from the change points left: kept in [`PriorityCore::keep`]
    /// as they change (a decision asks it far more often than a change point fires).
    fn keep_from_points(&self) -> KeepRunning {
        match self.domain {
            // Sorted by `at`, the 1-based step; a decision's step counts from 0.
            ChangeDomain::Steps => KeepRunning {
                until_step: self.points.first().map_or(u64::MAX, |p| p.at.saturating_sub(1)),
                watch: 0,
            },
            ChangeDomain::Accesses { .. } => KeepRunning {
                until_step: u64::MAX,
                watch: self
                    .points
                    .iter()
                    .filter_map(|p| p.var)
                    .fold(0, |watch, var| watch | KeepRunning::bit(var)),
            },
        }
    }

    /// Fires the change points of this scheduling point and returns the enabled thread with
    /// the highest priority: by a pass over a few enabled threads, else the winner of the
    /// tournament tree (its changes applied by [`PriorityCore::enabled_changed`]).
    pub(crate) fn choose(&mut self, decision: &Decision<'_>) -> ThreadId {
        // With no change point left, the points passed over have nothing to fire (the running
        // thread, theirs, gets its priority just below).
        if !self.points.is_empty() && !decision.skipped().is_empty() {
            self.fire_skipped(decision);
        }
        let cur = decision.current;
        self.priority_of(cur);
        if !self.points.is_empty() && self.fire(decision) && self.tree_on {
            self.rematch(cur.index());
        }
        let enabled = decision.enabled;
        if enabled.len() == 1 {
            // The one thread offered (exploration off, or the only one that can run).
            return enabled[0];
        }
        if enabled.len() > SCAN_UP_TO {
            return self.choose_among_many(enabled);
        }
        // (The tree, if built, would choose the same.)
        self.highest(enabled)
    }

    /// The enabled thread with the highest priority, by a pass over `enabled` (assigning the
    /// priorities of threads seen for the first time).
    #[inline(always)]
    fn highest(&mut self, enabled: &[ThreadId]) -> ThreadId {
        let mut best = enabled[0];
        let mut best_prio = self.priority_of(best);
        for &t in &enabled[1..] {
            let p = self.priority_of(t);
            if p > best_prio {
                best = t;
                best_prio = p;
            }
        }
        best
    }

    /// Builds the tree from `enabled` (the engine's whole set) and returns its winner.
    #[cold]
    fn build_tree(&mut self, enabled: &[ThreadId]) -> ThreadId {
        let best = self.highest(enabled);
        let top = enabled[enabled.len() - 1].index();
        let cap = (top + 1).next_power_of_two().max(self.tree.len() / 2);
        self.tree.clear();
        self.tree.resize(2 * cap, NONE);
        for &t in enabled {
            self.tree[cap + t.index()] = t.0;
        }
        self.rebuild();
        self.tree_on = true;
        debug_assert_eq!(ThreadId(self.tree[1]), best, "the tree and the pass agree");
        best
    }

    /// [`PriorityCore::choose`] among more than [`SCAN_UP_TO`] enabled threads (`enabled`,
    /// the engine's whole set): the tree's winner, the tree built first in an execution told
    /// of the changes, or else a pass over them.
    #[inline(never)]
    fn choose_among_many(&mut self, enabled: &[ThreadId]) -> ThreadId {
        if !self.tree_on {
            return if self.told { self.build_tree(enabled) } else { self.highest(enabled) };
        }
        let best = ThreadId(self.tree[1]);
        debug_assert_eq!(
            Some(best),
            enabled.iter().copied().max_by_key(|t| self.prio[t.index()]),
            "the tree and the enabled threads agree"
        );
        best
    }

    /// Applies one change of the enabled set to the tree (a thread seen for the first time
    /// gets its priority).
    fn set_enabled(&mut self, change: EnabledChange) {
        let i = change.thread.index();
        self.priority_of(change.thread);
        if i >= self.tree.len() / 2 {
            self.grow(i + 1);
        }
        let leaf = self.tree.len() / 2 + i;
        self.tree[leaf] = if change.enabled { i as u32 } else { NONE };
        self.rematch_from(leaf);
    }

    /// Plays thread `i`'s matches again after its priority changed, if it is in the tree.
    fn rematch(&mut self, i: usize) {
        let leaf = self.tree.len() / 2 + i;
        if self.tree.get(leaf).is_some_and(|&t| t != NONE) {
            self.rematch_from(leaf);
        }
    }

    /// Recomputes every node above `node`.
    fn rematch_from(&mut self, mut node: usize) {
        while node > 1 {
            node /= 2;
            self.play(node);
        }
    }

    /// Recomputes every inner node from the leaves.
    fn rebuild(&mut self) {
        for node in (1..self.tree.len() / 2).rev() {
            self.play(node);
        }
    }

    /// Sets inner node `node` to the higher-priority of its children's threads (the left
    /// one's, of the lower indices, on a tie); either may be [`NONE`].
    #[inline]
    fn play(&mut self, node: usize) {
        let (a, b) = (self.tree[2 * node], self.tree[2 * node + 1]);
        let a_wins = b == NONE || (a != NONE && self.prio[a as usize] >= self.prio[b as usize]);
        self.tree[node] = if a_wins { a } else { b };
    }

    /// Makes room in the tree for `threads` threads (a power of two of leaves), rebuilt from
    /// its leaves.
    #[cold]
    fn grow(&mut self, threads: usize) {
        let (old, cap) = (self.tree.len() / 2, threads.next_power_of_two());
        let mut tree = vec![NONE; 2 * cap];
        tree[cap..cap + old].copy_from_slice(&self.tree[old..]);
        self.tree = tree;
        self.rebuild();
    }

    /// Fires the change points of this scheduling point; returns whether one did (the current
    /// thread's priority changed).
    #[inline(always)]
    fn fire(&mut self, decision: &Decision<'_>) -> bool {
        let (cur, event) = (decision.current.index(), decision.event);
        self.fire_at(cur, decision.step, event.var, decision.var_access)
    }

    /// The points the engine passed over since the strategy was last asked
    /// (`Strategy::skips_forced`), at `decision`, in order: each running thread gets its
    /// priority if it had none, and the change points of each point fire, as a choice at it
    /// would have done them (which returns its one thread whatever the priorities). Change
    /// points at accesses read the step's variable and count (`Step::var_access`).
    #[inline(never)]
    fn fire_skipped(&mut self, decision: &Decision<'_>) {
        let skipped = decision.skipped();
        // Every point passed over is the running thread's (see `Strategy::skips_forced`).
        let Some(cur) = skipped.first().map(|s| s.thread) else { return };
        debug_assert!(skipped.iter().all(|s| s.thread == cur));
        self.priority_of(cur);
        let mut fired = false;
        match self.domain {
            ChangeDomain::Steps => {
                // The points that fire at the steps passed over (`at` is 1-based), in order.
                while let Some(p) = self.points.first().filter(|p| p.at <= decision.step) {
                    fired |= self.fire_at(cur.index(), p.at - 1, None, 0);
                }
            }
            ChangeDomain::Accesses { .. } => {
                for s in skipped {
                    if self.points.is_empty() {
                        break;
                    }
                    // No skipped point is a `Block`: the step's object is its access's.
                    let Some(var) = s.object.and_then(|o| decision.var_of(o)) else { continue };
                    // Only a variable with a change point left can fire one (its bit is in
                    // `keep`; `fire_at` matches the variable itself).
                    if self.keep.watch & KeepRunning::bit(var) != 0 {
                        let j = u64::from(s.var_access);
                        fired |= self.fire_at(cur.index(), 0, Some(var), j);
                    }
                }
            }
        }
        if fired && self.tree_on {
            self.rematch(cur.index());
        }
    }

    /// Fires the change points of point `step`, at which thread `cur` runs an access to `var`,
    /// its `j`-th (0: no access).
    #[inline(always)]
    fn fire_at(&mut self, cur: usize, step: u64, var: Option<VarId>, j: u64) -> bool {
        let mut changed = false;
        match self.domain {
            ChangeDomain::Steps => {
                let step = step + 1;
                // Sorted by `at`: fire (and drop) every point at or before this step.
                let mut fired = 0;
                for p in &self.points {
                    if p.at > step {
                        break;
                    }
                    if p.at == step {
                        self.prio[cur] = p.priority;
                        changed = true;
                    }
                    fired += 1;
                }
                if fired > 0 {
                    self.points.drain(..fired);
                    self.keep = self.keep_from_points();
                }
            }
            ChangeDomain::Accesses { .. } => {
                let Some(var) = var else { return false };
                if j == 0 {
                    return false;
                }
                let mut i = 0;
                while i < self.points.len() {
                    let p = self.points[i];
                    if p.var == Some(var) && p.at == j {
                        self.prio[cur] = p.priority;
                        changed = true;
                        self.points.remove(i);
                    } else {
                        i += 1;
                    }
                }
                if changed {
                    self.keep = self.keep_from_points();
                }
            }
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use std::panic::Location;

    use rand::SeedableRng;

    use super::*;
    use crate::runtime::{Event, EventKind};
    use crate::vars::{VarInfo, VarKind, VarProfile};

    fn rng(seed: u64) -> ScheduleRng {
        ScheduleRng::seed_from_u64(seed)
    }

    fn start<'a>(n: usize, k: u64, profiles: &'a [VarProfile]) -> ExecutionStart<'a> {
        ExecutionStart { max_threads: n, max_steps: k, profiles, ..ExecutionStart::FIRST }
    }

    fn profile(max_accesses: u64, shared: bool) -> VarProfile {
        VarProfile { max_accesses, shared }
    }

    fn event(kind: EventKind, var: Option<VarId>) -> Event {
        Event { kind, object: None, var, location: Location::caller() }
    }

    fn decide(
        core: &mut PriorityCore,
        enabled: &[ThreadId],
        current: ThreadId,
        step: u64,
        ev: &Event,
        var_access: u64,
    ) -> ThreadId {
        // What the engine would tell: how `enabled` differs from the set the tree holds.
        let held = |core: &PriorityCore, t: usize| core.tree.get(core.tree.len() / 2 + t).copied();
        let top = enabled.iter().map(|t| t.index() + 1).max().unwrap_or(0);
        let changed: Vec<EnabledChange> = (0..top.max(core.tree.len() / 2))
            .map(|i| (ThreadId(i as u32), enabled.binary_search(&ThreadId(i as u32)).is_ok()))
            .filter(|&(t, on)| held(core, t.index()).is_some_and(|x| x != NONE) != on)
            .map(|(thread, enabled)| EnabledChange { thread, enabled })
            .collect();
        let d = Decision {
            enabled,
            engine: crate::runtime::Enabled::none(),
            current,
            current_enabled: true,
            event: ev,
            step,
            var_access,
            pending: crate::runtime::Pending::NONE,
        };
        if !changed.is_empty() {
            core.enabled_changed(&changed);
        }
        core.choose(&d)
    }

    fn t(i: u32) -> ThreadId {
        ThreadId(i)
    }

    #[test]
    fn pct_draws_a_permutation_of_d_to_d_plus_n_and_change_priorities_below() {
        for seed in 0..50 {
            let mut core = PriorityCore::new(PriorityScheme::Pct, ChangeDomain::Steps, 2);
            core.begin(&start(4, 30, &[]), &mut rng(seed));
            let mut initial = core.initial.clone();
            initial.sort();
            assert_eq!(initial, vec![3, 4, 5, 6]);
            let points = core.pending_points();
            assert_eq!(points.len(), 2);
            assert!(points.windows(2).all(|w| w[0].at <= w[1].at));
            assert!(points.iter().all(|p| (1..=30).contains(&p.at) && p.var.is_none()));
            let mut prios: Vec<i64> = points.iter().map(|p| p.priority).collect();
            prios.sort();
            assert_eq!(prios, vec![1, 2]);
        }
    }

    #[test]
    fn thread_bound_priorities_are_one_permutation_of_n_plus_c() {
        let mut core = PriorityCore::new(PriorityScheme::Permutation, ChangeDomain::Steps, 3);
        core.begin(&start(5, 100, &[]), &mut rng(9));
        let mut all = core.initial.clone();
        all.extend(core.pending_points().iter().map(|p| p.priority));
        all.sort();
        assert_eq!(all, (1..=8).collect::<Vec<i64>>());
    }

    #[test]
    fn the_highest_priority_enabled_thread_runs_and_a_change_point_lowers_the_runner() {
        let mut core = PriorityCore::new(PriorityScheme::Pct, ChangeDomain::Steps, 1);
        core.begin(&start(3, 10, &[]), &mut rng(3));
        let enabled = [t(0), t(1), t(2)];
        let top = (0..3).max_by_key(|&i| core.initial[i]).unwrap() as u32;
        let at = core.pending_points()[0].at;
        let ev = event(EventKind::AtomicLoad, None);
        // Before the change point the top thread keeps running, whoever reached the point.
        for step in 0..at - 1 {
            assert_eq!(decide(&mut core, &enabled, t(top), step, &ev, 0), t(top));
        }
        // At step `at` (1-based) the runner drops to priority 1, below all initial ones.
        let next = decide(&mut core, &enabled, t(top), at - 1, &ev, 0);
        assert_ne!(next, t(top));
        assert_eq!(core.prio[top as usize], 1);
        assert!(core.pending_points().is_empty());
        // Only a disabled rival lets it run again.
        assert_eq!(decide(&mut core, &[t(top)], t(next.0), at, &ev, 0), t(top));
    }

    /// The tree's choice is the pass over the enabled threads, on 300 threads (the tree grows
    /// past its first size, priorities change at change points, threads beyond the profile's
    /// count get priorities below all): enabled sets drawn from fixed seeds, each decision's
    /// changes what the engine would tell, each choice checked against the highest priority
    /// among the enabled threads after the decision's change points fired.
    #[test]
    fn the_tree_chooses_as_a_pass_over_the_enabled_threads() {
        for seed in 0..20 {
            let mut draws = rng(1000 + seed);
            let mut core = PriorityCore::new(PriorityScheme::Permutation, ChangeDomain::Steps, 30);
            core.begin(&start(200, 400, &[]), &mut rng(seed));
            let ev = event(EventKind::AtomicLoad, None);
            let mut enabled = vec![t(0)];
            for step in 0..400 {
                let cur = enabled[draws.random_range(0..enabled.len())];
                let chosen = decide(&mut core, &enabled, cur, step, &ev, 0);
                let best = enabled.iter().copied().max_by_key(|x| core.prio[x.index()]);
                assert_eq!(Some(chosen), best, "seed {seed}, step {step}");
                // The next set: a few threads in or out, up to 300 of them.
                for _ in 0..draws.random_range(0..8) {
                    let x = t(draws.random_range(0..300));
                    match enabled.binary_search(&x) {
                        Ok(i) if enabled.len() > 1 => drop(enabled.remove(i)),
                        Err(i) => enabled.insert(i, x),
                        Ok(_) => {}
                    }
                }
            }
        }
    }

    #[test]
    fn threads_beyond_n_get_the_lowest_priorities_in_spawn_order() {
        let mut core = PriorityCore::new(PriorityScheme::Pct, ChangeDomain::Steps, 0);
        core.begin(&start(2, 10, &[]), &mut rng(1));
        let ev = event(EventKind::Spawn, None);
        // Threads 2 and 3 were not counted by profiling: they lose to 0 and 1, and 2 beats 3.
        assert!(matches!(
            decide(&mut core, &[t(0), t(1), t(2), t(3)], t(0), 0, &ev, 0),
            ThreadId(0) | ThreadId(1)
        ));
        assert_eq!(decide(&mut core, &[t(2), t(3)], t(0), 1, &ev, 0), t(2));
        assert!(core.prio[2] < core.prio[0].min(core.prio[1]));
        assert!(core.prio[3] < core.prio[2]);
    }

    #[test]
    fn variable_change_points_go_to_chosen_shared_variables_and_fire_on_the_jth_access() {
        // Variables 0 and 2 are shared (k_q = 4 and 6); 1 is not.
        let profiles = [profile(4, true), profile(50, false), profile(6, true)];
        for seed in 0..40 {
            let mut core = PriorityCore::new(
                PriorityScheme::Permutation,
                ChangeDomain::Accesses { vars: 1 },
                2,
            );
            core.begin(&start(2, 1000, &profiles), &mut rng(seed));
            let chosen = core.chosen_vars().to_vec();
            assert_eq!(chosen.len(), 1);
            assert!(chosen[0] == VarId(0) || chosen[0] == VarId(2));
            let kq = if chosen[0] == VarId(0) { 4 } else { 6 };
            for p in core.pending_points() {
                assert_eq!(p.var, Some(chosen[0]));
                assert!((1..=kq).contains(&p.at));
            }
            // Accesses to other variables and other access numbers never fire.
            let first = core.pending_points()[0];
            // Points drawn twice at the same access both fire there; the last drawn wins.
            let expected = core
                .pending_points()
                .iter()
                .rfind(|p| p.var == first.var && p.at == first.at)
                .unwrap()
                .priority;
            let other = VarId(if chosen[0] == VarId(0) { 2 } else { 0 });
            let ev_other = event(EventKind::AtomicLoad, Some(other));
            decide(&mut core, &[t(0), t(1)], t(0), 0, &ev_other, first.at);
            assert_eq!(core.pending_points().len(), 2);
            let ev = event(EventKind::AtomicLoad, first.var);
            decide(&mut core, &[t(0), t(1)], t(1), 1, &ev, first.at);
            assert!(core.pending_points().len() < 2);
            assert_eq!(core.prio[1], expected);
        }
    }

    #[test]
    fn all_shared_variables_are_chosen_when_fewer_than_v() {
        let profiles = [profile(3, true), profile(3, false)];
        let mut core =
            PriorityCore::new(PriorityScheme::Pct, ChangeDomain::Accesses { vars: 4 }, 1);
        core.begin(&start(2, 10, &profiles), &mut rng(0));
        assert_eq!(core.chosen_vars(), &[VarId(0)]);
        // No shared variable at all: no change point can be placed.
        let mut core =
            PriorityCore::new(PriorityScheme::Pct, ChangeDomain::Accesses { vars: 1 }, 1);
        core.begin(&start(2, 10, &[profile(3, false)]), &mut rng(0));
        assert!(core.chosen_vars().is_empty() && core.pending_points().is_empty());
    }

    #[test]
    fn draws_are_deterministic_given_the_rng() {
        let profiles = [profile(5, true), profile(7, true), profile(2, true)];
        let draw = |seed| {
            let mut core = PriorityCore::new(
                PriorityScheme::Permutation,
                ChangeDomain::Accesses { vars: 2 },
                2,
            );
            core.begin(&start(4, 10, &profiles), &mut rng(seed));
            (core.initial.clone(), core.chosen_vars().to_vec(), core.pending_points().to_vec())
        };
        assert_eq!(draw(11), draw(11));
        assert!((0..20).any(|s| draw(s) != draw(11)));
        let _ = VarInfo { site: Location::caller(), kind: VarKind::Atomic };
    }
}
