//! Systematic search: the exhaustive algorithm of Bindal, Bansal and Lal (sections 2 and 5,
//! Algorithm 1): iterative context bounding over variable subsets and thread-bounding priority
//! orders, with happens-before pruning. The search is stateless: a state is identified by the
//! partial schedule that reaches it and is reconstructed by replaying that schedule.
//!
//! One [`Systematic`] strategy keeps the whole search across executions (work queues, explored
//! states, per-level counts); the runner (`Config::run` with
//! [`crate::StrategyKind::Systematic`]) asks it for the next execution until it is exhausted or
//! a budget runs out.
//!
//! # Limits
//!
//! - The thread-bound `t` selects the priority orders; it is not iterated as a level.
//! - Levels with `c < v` only hold schedules of smaller subsets; their work items are reused
//!   rather than run (while the record cache has room) but are still walked to produce the
//!   next level's work.
//! - Work items and recorded steps are capped in memory; past the cap the search stops and
//!   says so (see the report's `stopped_by`).
//!
//! # The search
//!
//! - **Variables.** A variable is an allocation site plus its *loop-iteration number*: the
//!   `i`-th object of a site met in an execution is `site#i` (the paper's heap naming; pctvb
//!   registers an object when it is first used, so `i` counts first accesses, not
//!   allocations). Only shared variables (accessed by two or more threads in the profiling
//!   executions or the search) are tracked: a preemption at an access to a variable only one
//!   thread touches reaches the same states as one at that thread's next scheduling point.
//!   They are ordered by iteration number, lowest first, then by first appearance. Variables
//!   first seen shared after the `v = 0` level join the list for the next `v`.
//! - **Levels.** `v = 0` runs every priority order once without preemption (`c = 0`). Then for
//!   `v = 1, 2, ..` up to the bound, for `c = 1, 2, ..` up to the bound, for every `v`-subset
//!   of the variables: the subset's work items with `c` priority changes run, and every access
//!   to a tracked variable where the running thread could be preempted becomes a work item
//!   with `c + 1` changes (Algorithm 1's `nextWorkQueue`).
//! - **Preemptions.** Scheduling is strict priority. A preemption is a priority change of the
//!   running thread at an access to a tracked variable that makes another enabled thread run;
//!   only these count towards `c` (switches that strict priority makes by itself, e.g. to a
//!   higher-priority thread that was just spawned or woken, are free: the paper's definition).
//! - **Priority orders.** When the thread-bounding set would need at least as many orders as
//!   there are, every order is enumerated: all `n!` initial orders of the `n` threads, and at
//!   each preemption every placement of the preempted thread below the thread that takes over
//!   (equivalent to all `(n+c)!` permutations of thread fragments, without the duplicates).
//!   Otherwise the orders are [`crate::guarantee::lemma_4_1_executions`]`(n+c, t+c, eps)`
//!   random permutations `P` of `1..=n+c` (thread `i` starts at `P_i`, the `j`-th preempted
//!   thread gets `P_{n+j}`), which cover every relative order of every `t+c` fragments with
//!   probability at least `1 - eps` (Lemma 4.1).
//! - **Happens-before pruning.** The state before each scheduling decision is fingerprinted by
//!   its happens-before graph (every performed operation with its thread, its index in the
//!   thread, and its position among the conflicting operations on its object: writes are
//!   totally ordered, a read is placed after the writes before it; synchronization operations
//!   count as writes) together with the running thread and the priority order still in effect.
//!   Equal fingerprints reach the same state and schedule the same future, so a work item
//!   whose fingerprint was explored (with at most as many changes) is dropped, and an
//!   execution that reaches an explored fingerprint generates no further work. Explored sets
//!   are per variable subset; pruning never crosses subsets.
//! - **Reuse across subsets.** An execution is determined by its work item, so a work item
//!   that already ran for another subset (e.g. every item of level `(v=2, c=1)`, which are
//!   those of the `v=1` subsets) is not run again: its recorded states and preemption points
//!   are replayed against the current subset's explored states, which still decide what is
//!   pruned (counted as `reused` in [`LevelStats`]).
//! - **Spin loops.** A thread that yields more than [`super::YIELD_DEMOTION_THRESHOLD`] times
//!   in a row drops below every other thread, as in the randomized strategies, so strict
//!   priority never spins forever.

use std::cell::RefCell;
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};

use super::registry::{Param, ParamSpec, StrategyInfo};
use super::{
    Decision, ExecutionStart, ScheduleRng, Strategy, StrategyError, YIELD_DEMOTION_THRESHOLD,
};
use crate::runner::DEFAULT_THREADS;
use crate::runtime::{EventKind, ThreadId};
use crate::vars::VarId;

/// Default `eps` of the randomized thread-bounding orders (probability 0.99 of covering every
/// order of every `t + c` fragments).
pub const DEFAULT_ORDER_EPS: f64 = 0.01;

/// Most random priority orders drawn.
pub const MAX_RANDOM_ORDERS: u64 = 100_000;

/// Most initial orders enumerated exhaustively (`n! <= 5040`, i.e. `n <= 7`); beyond, the
/// randomized thread-bounding set is used even when it is larger.
pub const MAX_EXHAUSTIVE_ORDERS: u64 = 5040;

/// The bounds of a systematic search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SystematicParams {
    /// Most preemptions (`c`) per schedule.
    pub preemptions: u32,
    /// Most variables (`v`) whose accesses are preemption points.
    pub vars: u32,
    /// Threads (`t`) whose relative orders the priority orders must cover.
    pub threads: u32,
    /// Happens-before pruning on (the default) or off (for measuring it).
    pub hb_pruning: bool,
    /// Probability that the randomized thread-bounding orders miss an order (Lemma 4.1).
    pub eps: f64,
}

/// A variable as the systematic search tracks it: an allocation site and the loop-iteration
/// number of the object (its rank among the site's objects in the execution, from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TrackedVar {
    /// The allocation site.
    pub var: VarId,
    /// The object's rank among the objects of that site, in order of first access.
    pub iteration: u32,
}

/// Which priority orders the search enumerates.
#[derive(Clone, Debug, PartialEq)]
pub enum OrderSet {
    /// Every initial order of the `threads` threads and every placement of each preempted
    /// thread: no probability caveat.
    Exhaustive {
        /// Threads ordered (`n`, measured by profiling).
        threads: usize,
        /// Initial orders (`n!`).
        orders: u64,
    },
    /// Random permutations of `1..=n+c` (Lemma 4.1).
    Random {
        /// Threads ordered (`n`).
        threads: usize,
        /// Permutations drawn.
        orders: u64,
        /// Permutations Lemma 4.1 needs; when more than `orders` (capped at
        /// [`MAX_RANDOM_ORDERS`]), there is no probability guarantee.
        needed: u64,
        /// Probability that some order of some `t + c` fragments is missed.
        eps: f64,
    },
}

/// A level `(v, t, c)` of the search and what happened in it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LevelStats {
    /// Variables tracked per subset.
    pub v: u32,
    /// Thread bound of the priority orders.
    pub t: u32,
    /// Priority changes (preemptions) of the level's schedules.
    pub c: u32,
    /// Variable subsets searched at this level (so far, while it runs).
    pub subsets: u64,
    /// Executions run.
    pub executions: u64,
    /// Work items not run again because the same schedule already ran for another variable
    /// subset: its recorded states and preemption points were replayed against this subset's
    /// explored states instead.
    pub reused: u64,
    /// Schedules of this level not run because their happens-before state had been explored.
    pub pruned: u64,
    /// Whether every schedule of the level was run or pruned.
    pub exhausted: bool,
}

/// Where a work item starts: replay `prefix[..len]`, then schedule by `prios`.
#[derive(Clone, Debug)]
struct Item {
    prefix: Rc<Vec<u32>>,
    len: usize,
    /// Step `len` is the priority change itself (the priorities are already changed).
    change: bool,
    prios: Vec<i64>,
    floor: i64,
    used: u32,
    order: usize,
}

/// A work item generated during an execution, before its prefix is known.
struct Child {
    var: TrackedVar,
    len: usize,
    prios: Vec<i64>,
    floor: i64,
    key: u128,
}

/// An operation a thread reached and performs when it next runs.
#[derive(Clone, Copy, Debug)]
struct Op {
    kind: EventKind,
    object: Option<u32>,
    location: usize,
    /// Resuming from `Block`: re-acquiring what it waited for.
    resume: bool,
}

/// The happens-before fingerprint of the performed operations, kept as two commutative sums
/// of per-operation hashes (order-independent, so equal graphs give equal sums).
#[derive(Default)]
struct Hb {
    sums: (u64, u64),
    count: Vec<u32>,
    pending: Vec<Option<Op>>,
    writes: Vec<u32>,
    global_writes: u32,
}

fn hash2<T: Hash>(value: &T) -> (u64, u64) {
    let mut a = DefaultHasher::new();
    (0u8, value).hash(&mut a);
    let mut b = DefaultHasher::new();
    (1u8, value).hash(&mut b);
    (a.finish(), b.finish())
}

impl Hb {
    fn ensure(&mut self, thread: usize) {
        if self.count.len() <= thread {
            self.count.resize(thread + 1, 0);
            self.pending.resize(thread + 1, None);
        }
    }

    /// Thread `t` reached `op` (performed when `t` next runs).
    fn reach(&mut self, t: usize, op: Op) {
        self.ensure(t);
        self.pending[t] = Some(op);
    }

    /// Thread `t` runs: its pending operation happens now.
    fn run(&mut self, t: usize) {
        self.ensure(t);
        if let Some(op) = self.pending[t].take() {
            self.node(t, op);
        }
    }

    /// Records one performed operation.
    fn node(&mut self, t: usize, op: Op) {
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
            None if matches!(op.kind, EventKind::Spawn | EventKind::Park | EventKind::Unpark) => {
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

/// The state of the execution in progress.
struct Run {
    item: Item,
    prios: Vec<i64>,
    floor: i64,
    choices: Vec<u32>,
    hb: Hb,
    objects: Vec<Option<TrackedVar>>,
    iterations: HashMap<VarId, u32>,
    /// Per object: first thread that accessed it, and whether another did.
    sharing: Vec<(u32, bool)>,
    exited: Vec<bool>,
    harvest: Harvest,
    /// The free steps, for reuse by other variable subsets.
    steps: Vec<StepRecord>,
}

/// The work items an execution (or a reused record) produced for the current subset.
#[derive(Default)]
struct Harvest {
    /// Reached an explored state: what follows is explored too.
    converged: bool,
    children: Vec<Child>,
    /// Children not generated because the execution reached an explored state, by variable.
    suppressed: HashMap<TrackedVar, u64>,
    pruned: u64,
}

/// What one free step of an execution did, independently of the variable subset.
struct StepRecord {
    /// The state's fingerprint (0 without pruning).
    key: u128,
    /// The preemptions possible here, if the step is an access where one is.
    cand: Option<Cand>,
}

/// The preemptions possible at one access: every new priority order, with its fingerprint.
struct Cand {
    var: TrackedVar,
    step: usize,
    floor: i64,
    options: Vec<(Vec<i64>, u128)>,
}

/// An execution's free steps, kept so that the same work item in another subset is not run
/// again (executions are deterministic given the item).
struct Record {
    choices: Rc<Vec<u32>>,
    steps: Vec<StepRecord>,
    /// The subset `(v, index)` it ran for.
    subset: (u32, usize),
}

/// Step records kept for reuse at most (beyond, items are run again).
const MAX_RECORDED_STEPS: usize = 250_000;

/// Work items stored at most (queued, and level 0's preemption points); beyond, the search
/// stops and says so rather than exhaust memory.
const MAX_STORED_ITEMS: usize = 500_000;

impl Run {
    fn new(item: Item) -> Run {
        Run {
            prios: item.prios.clone(),
            floor: item.floor,
            item,
            choices: Vec::new(),
            hb: Hb::default(),
            objects: Vec::new(),
            iterations: HashMap::new(),
            sharing: Vec::new(),
            exited: Vec::new(),
            harvest: Harvest::default(),
            steps: Vec::new(),
        }
    }

    fn lower(&mut self) -> i64 {
        self.floor -= 1;
        self.floor
    }

    fn priority_of(&mut self, t: ThreadId) -> i64 {
        while self.prios.len() <= t.index() {
            let p = self.lower();
            self.prios.push(p);
        }
        self.prios[t.index()]
    }

    fn top(&mut self, enabled: &[ThreadId]) -> ThreadId {
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

    fn alive(&self, t: usize) -> bool {
        !self.exited.get(t).copied().unwrap_or(false)
    }

    /// Names the object of the decision's access and records who accessed it.
    fn observe(&mut self, d: &Decision<'_>) -> Option<TrackedVar> {
        let (Some(object), Some(var)) = (d.event.object, d.event.var) else { return None };
        let o = object.index();
        if self.objects.len() <= o {
            self.objects.resize(o + 1, None);
            self.sharing.resize(o + 1, (u32::MAX, false));
        }
        let tracked = match self.objects[o] {
            Some(tv) => tv,
            None => {
                let iteration = self.iterations.entry(var).or_insert(0);
                let tv = TrackedVar { var, iteration: *iteration };
                *iteration += 1;
                self.objects[o] = Some(tv);
                tv
            }
        };
        let cur = d.current.0;
        let entry = &mut self.sharing[o];
        if entry.0 == u32::MAX {
            entry.0 = cur;
        } else if entry.0 != cur {
            entry.1 = true;
        }
        Some(tracked)
    }

    /// Updates the happens-before state with what the current thread reached.
    fn reach(&mut self, d: &Decision<'_>) {
        let cur = d.current.index();
        if self.exited.len() <= cur {
            self.exited.resize(cur + 1, false);
        }
        let object = d.event.object.map(|o| o.index() as u32);
        let location = d.event.location as *const _ as usize;
        let op = Op { kind: d.event.kind, object, location, resume: false };
        match d.event.kind {
            EventKind::ThreadExit => {
                self.hb.node(cur, op);
                self.exited[cur] = true;
            }
            EventKind::Block => {
                self.hb.node(cur, op);
                self.hb.reach(cur, Op { resume: true, ..op });
            }
            _ => self.hb.reach(cur, op),
        }
    }

    /// The fingerprint of the state before this decision under priorities `prios`, with the
    /// remaining change priorities `slots` (random orders).
    fn key(&self, cur: ThreadId, prios: &[i64], slots: &[i64]) -> u128 {
        let mut ranked: Vec<(i64, u64)> = prios
            .iter()
            .enumerate()
            .filter(|&(t, _)| self.alive(t))
            .map(|(t, &p)| (p, t as u64))
            .collect();
        ranked.extend(slots.iter().enumerate().map(|(i, &p)| (p, (1 << 32) + i as u64)));
        ranked.sort_unstable_by_key(|&(p, _)| std::cmp::Reverse(p));
        let tags: Vec<u64> = ranked.into_iter().map(|(_, tag)| tag).collect();
        let h = hash2(&(self.hb.sums, cur.0, tags));
        (u128::from(h.0) << 64) | u128::from(h.1)
    }
}

/// A subset of variables and its part of the search.
struct Subset {
    vars: Vec<TrackedVar>,
    explored: HashMap<u128, u32>,
    queue: VecDeque<Item>,
    next: Vec<Item>,
    seeded: bool,
}

enum Stage {
    Profile,
    Level0 { queue: VecDeque<Item> },
    Subsets { v: u32, c: u32, subsets: Vec<Subset>, index: usize },
    Done,
}

/// A variable met by the search.
#[derive(Clone, Debug)]
struct VarEntry {
    first_seen: u64,
    shared: bool,
}

/// The whole systematic search, shared between the [`Systematic`] strategy and the runner.
pub(crate) struct Engine {
    p: SystematicParams,
    seed: u64,
    stage: Stage,
    n: usize,
    orders: Option<OrderSet>,
    perms: Vec<Rc<Vec<i64>>>,
    catalog: HashMap<TrackedVar, VarEntry>,
    seen_counter: u64,
    /// The variables subsets are drawn from, in search order (fixed per `v` level).
    vars: Vec<TrackedVar>,
    var_names: Vec<String>,
    level0_keys: HashMap<u128, u32>,
    level0_children: Vec<(TrackedVar, u128, Item)>,
    level0_suppressed: HashMap<TrackedVar, u64>,
    levels: Vec<LevelStats>,
    cache: HashMap<u128, Rc<Record>>,
    cached_steps: usize,
    stored: usize,
    stop: Option<String>,
    run: Option<Run>,
    /// The level `(v, c)` of the execution in progress.
    current: Option<(u32, u32)>,
    notes: Vec<String>,
}

impl Engine {
    fn new(p: SystematicParams) -> Engine {
        Engine {
            p,
            seed: 0,
            stage: Stage::Profile,
            n: 1,
            orders: None,
            perms: Vec::new(),
            catalog: HashMap::new(),
            seen_counter: 0,
            vars: Vec::new(),
            var_names: Vec::new(),
            level0_keys: HashMap::new(),
            level0_children: Vec::new(),
            level0_suppressed: HashMap::new(),
            levels: Vec::new(),
            cache: HashMap::new(),
            cached_steps: 0,
            stored: 0,
            stop: None,
            run: None,
            current: None,
            notes: Vec::new(),
        }
    }

    /// Ends profiling: `n` threads were measured; builds the priority orders and the level-0
    /// work. `seed` draws the random orders.
    pub(crate) fn start(&mut self, n: usize, seed: u64) {
        self.n = n.max(1);
        self.seed = seed;
        let n = self.n;
        let c = self.p.preemptions as usize;
        // A bug orders at least two threads (paper, section 4).
        let t = (self.p.threads as usize).max(2);
        let n_factorial = factorial(n as u64);
        let all_fragments = factorial((n + c) as u64);
        let needed = crate::guarantee::lemma_4_1_executions(
            (n + c) as u64,
            (t.min(n) + c) as u32,
            self.p.eps,
        )
        .unwrap_or(u64::MAX);
        let exhaustive =
            n_factorial <= MAX_EXHAUSTIVE_ORDERS && (t >= n || needed >= all_fragments);
        let mut queue = VecDeque::new();
        if exhaustive {
            let mut order: Vec<usize> = (0..n).collect();
            let mut orders = Vec::new();
            permutations(&mut order, 0, &mut orders);
            for (i, perm) in orders.iter().enumerate() {
                // perm[r] = the thread with rank r (highest first).
                let mut prios = vec![0; n];
                for (rank, &thread) in perm.iter().enumerate() {
                    prios[thread] = (n - rank) as i64;
                }
                queue.push_back(initial_item(prios, i));
            }
            self.orders = Some(OrderSet::Exhaustive { threads: n, orders: n_factorial });
        } else {
            let count = needed.min(MAX_RANDOM_ORDERS);
            let mut rng = ScheduleRng::seed_from_u64(seed);
            for i in 0..count {
                let mut values: Vec<i64> = (1..=(n + c) as i64).collect();
                values.shuffle(&mut rng);
                queue.push_back(initial_item(values[..n].to_vec(), i as usize));
                self.perms.push(Rc::new(values));
            }
            self.orders =
                Some(OrderSet::Random { threads: n, orders: count, needed, eps: self.p.eps });
        }
        self.stage = Stage::Level0 { queue };
    }

    /// The priority orders enumerated (after [`Engine::start`]).
    pub(crate) fn orders(&self) -> Option<&OrderSet> {
        self.orders.as_ref()
    }

    fn random_orders(&self) -> bool {
        matches!(self.orders, Some(OrderSet::Random { .. }))
    }

    fn level_mut(&mut self, v: u32, c: u32) -> &mut LevelStats {
        let t = self.p.threads;
        match self.levels.iter().position(|l| l.v == v && l.c == c) {
            Some(i) => &mut self.levels[i],
            None => {
                self.levels.push(LevelStats { v, t, c, ..LevelStats::default() });
                self.levels.last_mut().expect("just pushed")
            }
        }
    }

    /// Per-level counts so far.
    pub(crate) fn levels(&self) -> &[LevelStats] {
        &self.levels
    }

    /// The level `(v, c)` of the execution that ran last.
    pub(crate) fn current_level(&self) -> Option<(u32, u32)> {
        self.current
    }

    /// The shared variables, in search order, with their names.
    pub(crate) fn variables(&self) -> Vec<String> {
        self.vars.iter().map(|tv| self.name(*tv)).collect()
    }

    /// Drops the execution [`Engine::advance`] prepared: a budget stops the search first.
    pub(crate) fn cancel(&mut self) {
        if self.run.take().is_some() {
            if let Some((v, c)) = self.current {
                let level = self.level_mut(v, c);
                level.executions = level.executions.saturating_sub(1);
            }
        }
    }

    /// Why the search stopped before exhausting its levels, if a safety limit did.
    pub(crate) fn stop_reason(&self) -> Option<&str> {
        self.stop.as_deref()
    }

    /// Notes about the search (e.g. variables that became shared late).
    pub(crate) fn notes(&self) -> &[String] {
        &self.notes
    }

    fn name(&self, tv: TrackedVar) -> String {
        let site = self.var_names.get(tv.var.index()).cloned().unwrap_or_default();
        format!("{site}#{}", tv.iteration)
    }

    /// The shared variables met so far, in search order.
    fn shared_vars(&self) -> Vec<TrackedVar> {
        let mut vars: Vec<(u32, u64, TrackedVar)> = self
            .catalog
            .iter()
            .filter(|(_, e)| e.shared)
            .map(|(tv, e)| (tv.iteration, e.first_seen, *tv))
            .collect();
        vars.sort();
        vars.into_iter().map(|(_, _, tv)| tv).collect()
    }

    /// Prepares the next execution; `false` when the search is exhausted.
    pub(crate) fn advance(&mut self) -> bool {
        loop {
            if self.stored > MAX_STORED_ITEMS {
                self.stop = Some(format!(
                    "more than {MAX_STORED_ITEMS} work items were pending (too many preemption \
                     points for these bounds; lower the preemption or variable bound, or shrink \
                     the test)"
                ));
                return false;
            }
            match &mut self.stage {
                Stage::Profile | Stage::Done => return false,
                Stage::Level0 { queue } => {
                    if let Some(item) = queue.pop_front() {
                        self.current = Some((0, 0));
                        let level = self.level_mut(0, 0);
                        level.executions += 1;
                        level.subsets = 1;
                        self.run = Some(Run::new(item));
                        return true;
                    }
                    let level = self.level_mut(0, 0);
                    level.exhausted = true;
                    level.subsets = 1;
                    self.vars = self.shared_vars();
                    self.next_v(1);
                }
                Stage::Subsets { v, c, subsets, index } => {
                    let (v, c) = (*v, *c);
                    if *index < subsets.len() {
                        let i = *index;
                        if !subsets[i].seeded {
                            self.seed_subset(i);
                            continue;
                        }
                        let Stage::Subsets { subsets, index, .. } = &mut self.stage else {
                            unreachable!()
                        };
                        let subset = &mut subsets[i];
                        if let Some(item) = subset.queue.pop_front() {
                            self.stored = self.stored.saturating_sub(1);
                            let record = self.cache.get(&identity(&item)).cloned();
                            if let Some(record) = record.filter(|r| r.subset != (v, i)) {
                                let level = self.level_mut(v, c);
                                level.reused += 1;
                                level.subsets = level.subsets.max(i as u64 + 1);
                                self.reuse(&record, &item);
                                continue;
                            }
                            self.current = Some((v, c));
                            let level = self.level_mut(v, c);
                            level.executions += 1;
                            level.subsets = level.subsets.max(i as u64 + 1);
                            self.run = Some(Run::new(item));
                            return true;
                        }
                        subset.queue = std::mem::take(&mut subset.next).into();
                        *index += 1;
                        continue;
                    }
                    let count = subsets.len() as u64;
                    let level = self.level_mut(v, c);
                    level.exhausted = true;
                    level.subsets = count;
                    if c < self.p.preemptions {
                        if let Stage::Subsets { c, index, .. } = &mut self.stage {
                            *c += 1;
                            *index = 0;
                        }
                    } else {
                        self.next_v(v + 1);
                    }
                }
            }
        }
    }

    /// Moves to level `v` (its first `c = 1`), or ends the search.
    fn next_v(&mut self, v: u32) {
        let grown = self.shared_vars();
        if grown.len() > self.vars.len() {
            let before = self.vars.len();
            for tv in grown {
                if !self.vars.contains(&tv) {
                    self.vars.push(tv);
                }
            }
            self.notes.push(format!(
                "{} variables became shared only after the v=0 level; they are searched from \
                 v={v} on",
                self.vars.len() - before
            ));
        }
        if v > self.p.vars || self.p.preemptions == 0 || v as usize > self.vars.len() {
            self.stage = Stage::Done;
            return;
        }
        let mut subsets = Vec::new();
        let mut pick = Vec::new();
        combinations(self.vars.len(), v as usize, 0, &mut pick, &mut |idx| {
            subsets.push(Subset {
                vars: idx.iter().map(|&i| self.vars[i]).collect(),
                explored: HashMap::new(),
                queue: VecDeque::new(),
                next: Vec::new(),
                seeded: false,
            })
        });
        self.stage = Stage::Subsets { v, c: 1, subsets, index: 0 };
    }

    /// Fills a subset's level-1 queue with the level-0 preemption points at its variables.
    fn seed_subset(&mut self, i: usize) {
        let Stage::Subsets { v, subsets, .. } = &mut self.stage else { return };
        let v = *v;
        let subset = &mut subsets[i];
        subset.seeded = true;
        let mut pruned = 0;
        for (tv, key, item) in &self.level0_children {
            if !subset.vars.contains(tv) {
                continue;
            }
            if self.p.hb_pruning {
                if subset.explored.contains_key(key) || self.level0_keys.contains_key(key) {
                    pruned += 1;
                    continue;
                }
                subset.explored.insert(*key, 1);
            }
            subset.queue.push_back(item.clone());
            self.stored += 1;
        }
        for tv in &subset.vars {
            pruned += self.level0_suppressed.get(tv).copied().unwrap_or(0);
        }
        self.level_mut(v, 1).pruned += pruned;
    }

    fn subset(&self) -> Option<&Subset> {
        match &self.stage {
            Stage::Subsets { subsets, index, .. } => subsets.get(*index),
            _ => None,
        }
    }

    /// Whether `key` was explored with at most `used` changes (in this subset, or at level 0).
    fn explored(&self, key: u128, used: u32) -> bool {
        if self.level0_keys.contains_key(&key) {
            return true;
        }
        self.subset().and_then(|s| s.explored.get(&key)).is_some_and(|&u| u <= used)
    }

    fn mark_explored(&mut self, key: u128, used: u32) {
        match &mut self.stage {
            Stage::Subsets { subsets, index, .. } => {
                if let Some(s) = subsets.get_mut(*index) {
                    let e = s.explored.entry(key).or_insert(used);
                    *e = (*e).min(used);
                }
            }
            _ => {
                self.level0_keys.entry(key).or_insert(used);
            }
        }
    }

    fn describe(&self) -> String {
        let p = self.p;
        format!(
            "systematic(c={},v={},t={}{})",
            p.preemptions,
            p.vars,
            p.threads,
            if p.hb_pruning { "" } else { ",no-hb-pruning" }
        )
    }

    fn begin(&mut self, start: &ExecutionStart<'_>) {
        if self.var_names.len() < start.vars.len() {
            self.var_names = start.vars.iter().map(|v| v.to_string()).collect();
        }
        if matches!(self.stage, Stage::Profile) {
            self.run = Some(Run::new(initial_item(Vec::new(), 0)));
        }
    }

    fn choose(
        &mut self,
        d: &Decision<'_>,
        rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError> {
        let profiling = matches!(self.stage, Stage::Profile);
        let Some(mut run) = self.run.take() else {
            return Err(StrategyError(
                "systematic search: an execution started without a work item".into(),
            ));
        };
        let result = self.choose_in(&mut run, d, rng, profiling);
        if let Ok(t) = result {
            run.hb.run(t.index());
            run.choices.push(t.0);
        }
        self.run = Some(run);
        result
    }

    fn choose_in(
        &mut self,
        run: &mut Run,
        d: &Decision<'_>,
        rng: &mut ScheduleRng,
        profiling: bool,
    ) -> Result<ThreadId, StrategyError> {
        let tracked = run.observe(d);
        run.reach(d);
        let enabled = d.enabled;
        if profiling {
            return Ok(enabled[rng.random_range(0..enabled.len())]);
        }
        let step = d.step as usize;
        if step < run.item.len {
            let want = ThreadId(run.item.prefix[step]);
            if !enabled.contains(&want) {
                return Err(StrategyError(format!(
                    "systematic search: replaying a recorded schedule diverged at step {step} \
                     (thread {want} cannot run). The test depends on nondeterminism pctvb does \
                     not control (HashMap iteration order, time, I/O, real OS threads)."
                )));
            }
            return Ok(want);
        }
        if step == run.item.len && run.item.change {
            return Ok(run.top(enabled));
        }
        // Free step: strict priority scheduling.
        let cur = d.current;
        for &t in enabled {
            run.priority_of(t);
        }
        run.priority_of(cur);
        if d.yield_streak > YIELD_DEMOTION_THRESHOLD {
            let low = run.lower();
            run.prios[cur.index()] = low;
        }
        let top = run.top(enabled);
        let used = run.item.used;
        let slots: Vec<i64> = match self.perms.get(run.item.order) {
            Some(perm) if self.random_orders() => {
                perm[(self.n + used as usize).min(perm.len())..].to_vec()
            }
            _ => Vec::new(),
        };
        let key = if self.p.hb_pruning { run.key(cur, &run.prios, &slots) } else { 0 };
        let cand = match tracked {
            Some(tv)
                if top == cur
                    && enabled.len() > 1
                    && d.current_enabled
                    && !matches!(d.event.kind, EventKind::Block | EventKind::ThreadExit)
                    && used < self.p.preemptions
                    && self.p.vars > 0 =>
            {
                let options = self.options(run, d, &slots);
                Some(Cand { var: tv, step, floor: run.floor, options })
            }
            _ => None,
        };
        let mut harvest = std::mem::take(&mut run.harvest);
        self.visit(&mut harvest, used, key, cand.as_ref());
        run.harvest = harvest;
        if matches!(self.stage, Stage::Subsets { .. }) {
            run.steps.push(StepRecord { key, cand });
        }
        Ok(top)
    }

    /// The priority orders that preempt the current thread here, with their fingerprints.
    fn options(&self, run: &Run, d: &Decision<'_>, slots: &[i64]) -> Vec<(Vec<i64>, u128)> {
        let cur = d.current;
        let enabled = d.enabled;
        let mut options: Vec<Vec<i64>> = Vec::new();
        if self.random_orders() {
            let Some(&value) = slots.first() else { return Vec::new() };
            let best_other = enabled
                .iter()
                .filter(|&&t| t != cur)
                .map(|t| run.prios[t.index()])
                .max()
                .expect("another thread is enabled");
            if value < best_other {
                let mut prios = run.prios.clone();
                prios[cur.index()] = value;
                options.push(prios);
            }
        } else {
            // Every placement of `cur` below the highest enabled other thread.
            let mut others: Vec<usize> =
                (0..run.prios.len()).filter(|&t| t != cur.index() && run.alive(t)).collect();
            others.sort_by_key(|&t| std::cmp::Reverse(run.prios[t]));
            let Some(first) = others.iter().position(|&t| enabled.contains(&ThreadId(t as u32)))
            else {
                return Vec::new();
            };
            for j in first..others.len() {
                let mut order = others.clone();
                order.insert(j + 1, cur.index());
                let mut prios = run.prios.clone();
                let len = order.len() as i64;
                for (rank, &t) in order.iter().enumerate() {
                    prios[t] = run.floor + len - rank as i64;
                }
                options.push(prios);
            }
        }
        let next_slots = slots.get(1..).unwrap_or(&[]);
        options
            .into_iter()
            .map(|prios| {
                let key = if self.p.hb_pruning { run.key(cur, &prios, next_slots) } else { 0 };
                (prios, key)
            })
            .collect()
    }

    /// One free step of an execution (live or reused) with `used` changes: marks or detects
    /// its explored state, and turns its preemptions at the subset's variables into work.
    fn visit(&mut self, h: &mut Harvest, used: u32, key: u128, cand: Option<&Cand>) {
        let pruning = self.p.hb_pruning;
        if pruning && !h.converged {
            if self.explored(key, used) {
                h.converged = true;
            } else {
                self.mark_explored(key, used);
            }
        }
        let Some(cand) = cand else { return };
        let level0 = matches!(self.stage, Stage::Level0 { .. });
        if !level0 && !self.subset().is_some_and(|s| s.vars.contains(&cand.var)) {
            return;
        }
        for (prios, ckey) in &cand.options {
            if pruning && h.converged {
                if level0 {
                    *h.suppressed.entry(cand.var).or_insert(0) += 1;
                } else {
                    h.pruned += 1;
                }
                continue;
            }
            if pruning && !level0 {
                if self.explored(*ckey, used + 1) {
                    h.pruned += 1;
                    continue;
                }
                self.mark_explored(*ckey, used + 1);
            }
            h.children.push(Child {
                var: cand.var,
                len: cand.step,
                prios: prios.clone(),
                floor: cand.floor,
                key: *ckey,
            });
        }
    }

    /// Replays a recorded execution of `item` against the current subset.
    fn reuse(&mut self, record: &Record, item: &Item) {
        let mut harvest = Harvest::default();
        for step in &record.steps {
            self.visit(&mut harvest, item.used, step.key, step.cand.as_ref());
        }
        self.harvest_done(harvest, record.choices.clone(), item.used, item.order);
    }

    fn end(&mut self) {
        let Some(run) = self.run.take() else { return };
        for (o, &(_, shared)) in run.sharing.iter().enumerate() {
            let Some(tv) = run.objects.get(o).copied().flatten() else { continue };
            let counter = &mut self.seen_counter;
            let entry = self.catalog.entry(tv).or_insert_with(|| {
                *counter += 1;
                VarEntry { first_seen: *counter, shared: false }
            });
            entry.shared |= shared;
        }
        if matches!(self.stage, Stage::Profile) {
            return;
        }
        let prefix = Rc::new(run.choices);
        if let Stage::Subsets { v, index, .. } = &self.stage {
            if self.cached_steps + run.steps.len() <= MAX_RECORDED_STEPS {
                self.cached_steps += run.steps.len();
                let record =
                    Record { choices: prefix.clone(), steps: run.steps, subset: (*v, *index) };
                self.cache.insert(identity(&run.item), Rc::new(record));
            }
        }
        self.harvest_done(run.harvest, prefix, run.item.used, run.item.order);
    }

    /// Files the work items of an execution whose schedule was `prefix`.
    fn harvest_done(&mut self, h: Harvest, prefix: Rc<Vec<u32>>, used: u32, order: usize) {
        let used = used + 1;
        self.stored += h.children.len();
        let items = h.children.into_iter().map(|c| {
            let item = Item {
                prefix: prefix.clone(),
                len: c.len,
                change: true,
                prios: c.prios,
                floor: c.floor,
                used,
                order,
            };
            (c.var, c.key, item)
        });
        match &mut self.stage {
            Stage::Level0 { .. } => {
                self.level0_children.extend(items);
                for (tv, count) in h.suppressed {
                    *self.level0_suppressed.entry(tv).or_insert(0) += count;
                }
            }
            Stage::Subsets { subsets, index, v, c } => {
                let (v, c) = (*v, *c);
                if let Some(s) = subsets.get_mut(*index) {
                    s.next.extend(items.map(|(_, _, item)| item));
                }
                if h.pruned > 0 {
                    self.level_mut(v, c + 1).pruned += h.pruned;
                }
            }
            _ => {}
        }
    }
}

/// The identity of a work item: equal identities run the same execution.
fn identity(item: &Item) -> u128 {
    let h = hash2(&(
        &item.prefix[..item.len],
        item.change,
        &item.prios,
        item.floor,
        item.used,
        item.order,
    ));
    (u128::from(h.0) << 64) | u128::from(h.1)
}

fn initial_item(prios: Vec<i64>, order: usize) -> Item {
    Item { prefix: Rc::new(Vec::new()), len: 0, change: false, prios, floor: 0, used: 0, order }
}

fn factorial(n: u64) -> u64 {
    (1..=n).try_fold(1u64, |acc, x| acc.checked_mul(x)).unwrap_or(u64::MAX)
}

/// All permutations of `items[k..]` (with `items[..k]` fixed), in lexicographic-ish order.
fn permutations(items: &mut Vec<usize>, k: usize, out: &mut Vec<Vec<usize>>) {
    if k == items.len() {
        out.push(items.clone());
        return;
    }
    for i in k..items.len() {
        items.swap(k, i);
        permutations(items, k + 1, out);
        items.swap(k, i);
    }
}

/// Calls `f` with every `k`-subset of `0..n` as increasing indices, in lexicographic order.
fn combinations(
    n: usize,
    k: usize,
    from: usize,
    pick: &mut Vec<usize>,
    f: &mut dyn FnMut(&[usize]),
) {
    if pick.len() == k {
        f(pick);
        return;
    }
    for i in from..n {
        pick.push(i);
        combinations(n, k, i + 1, pick, f);
        pick.pop();
    }
}

/// The systematic search as a strategy (see the module docs). The runner drives it; as a
/// plain strategy it only profiles (random choices).
pub struct Systematic {
    engine: Rc<RefCell<Engine>>,
}

impl Systematic {
    /// A systematic search with these bounds.
    pub fn new(params: SystematicParams) -> Systematic {
        Systematic { engine: Rc::new(RefCell::new(Engine::new(params))) }
    }

    /// The search state, shared with the runner.
    pub(crate) fn engine(&self) -> Rc<RefCell<Engine>> {
        self.engine.clone()
    }
}

impl std::fmt::Debug for Systematic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Strategy for Systematic {
    fn describe(&self) -> String {
        self.engine.borrow().describe()
    }

    fn begin_execution(&mut self, start: &ExecutionStart<'_>, _rng: &mut ScheduleRng) {
        self.engine.borrow_mut().begin(start);
    }

    fn choose(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError> {
        self.engine.borrow_mut().choose(decision, rng)
    }

    fn end_execution(&mut self, _digest: u64, _steps: u64) -> Result<(), StrategyError> {
        self.engine.borrow_mut().end();
        Ok(())
    }
}

/// `strategy = "systematic"`: at most 2 preemptions at accesses to at most 2 variables, orders
/// of [`DEFAULT_THREADS`] threads, happens-before pruning. It profiles first (so a confidence
/// target, which sets `1 - eps`, is allowed) but has no per-execution bound: the runner drives
/// it with its own loop (`runner/systematic.rs`) and the report states its coverage.
pub(crate) const INFO: StrategyInfo = StrategyInfo {
    name: "systematic",
    params: &[
        ParamSpec { param: Param::Preemptions, default: 2 },
        ParamSpec { param: Param::Vars, default: 2 },
        ParamSpec { param: Param::Threads, default: DEFAULT_THREADS },
    ],
    bound: None,
    priority: true,
    learns_from_execution_0: false,
    parallel: false,
    build: |p| {
        Box::new(Systematic::new(SystematicParams {
            preemptions: p.preemptions,
            vars: p.vars,
            threads: p.threads,
            hb_pruning: p.hb_pruning,
            eps: DEFAULT_ORDER_EPS,
        }))
    },
};

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

    #[test]
    fn orders_subsets_and_counts() {
        let mut out = Vec::new();
        permutations(&mut (0..4).collect(), 0, &mut out);
        out.sort();
        out.dedup();
        assert_eq!(out.len(), 24);
        let mut subsets = Vec::new();
        combinations(5, 2, 0, &mut Vec::new(), &mut |s| subsets.push(s.to_vec()));
        assert_eq!(subsets.len(), 10);
        assert_eq!(subsets[0], vec![0, 1]);
        assert_eq!(factorial(5), 120);
        assert_eq!(factorial(30), u64::MAX);
    }
}
