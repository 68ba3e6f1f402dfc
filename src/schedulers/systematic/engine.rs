//! The search driver: the levels, the variable subsets and their queues of work items, the
//! explored states, and the safety limits. Between executions the runner asks it for the next
//! work item ([`Engine::advance`]); what happens within one execution is in `explore.rs`.

use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::orders::{combinations, factorial, permutations};
use super::run::Run;
use super::work::{identity, initial_item, Item, Record, Stage, Subset, MAX_STORED_ITEMS};
use super::{
    LevelStats, OrderSet, SystematicParams, TrackedVar, MAX_EXHAUSTIVE_ORDERS, MAX_RANDOM_ORDERS,
};
use crate::schedulers::ScheduleRng;

/// A variable met by the search.
#[derive(Clone, Debug)]
pub(super) struct VarEntry {
    pub(super) first_seen: u64,
    pub(super) shared: bool,
}

/// The whole systematic search, shared between the [`Systematic`] strategy and the runner.
pub(crate) struct Engine {
    pub(super) p: SystematicParams,
    pub(super) seed: u64,
    pub(super) stage: Stage,
    pub(super) n: usize,
    pub(super) orders: Option<OrderSet>,
    pub(super) perms: Vec<Rc<Vec<i64>>>,
    pub(super) catalog: HashMap<TrackedVar, VarEntry>,
    pub(super) seen_counter: u64,
    /// The variables subsets are drawn from, in search order (fixed per `v` level).
    pub(super) vars: Vec<TrackedVar>,
    pub(super) var_names: Vec<String>,
    pub(super) level0_keys: HashMap<u128, u32>,
    pub(super) level0_children: Vec<(TrackedVar, u128, Item)>,
    pub(super) level0_suppressed: HashMap<TrackedVar, u64>,
    pub(super) levels: Vec<LevelStats>,
    pub(super) cache: HashMap<u128, Rc<Record>>,
    pub(super) cached_steps: usize,
    pub(super) stored: usize,
    pub(super) stop: Option<String>,
    pub(super) run: Option<Run>,
    /// The level `(v, c)` of the execution in progress.
    pub(super) current: Option<(u32, u32)>,
    pub(super) notes: Vec<String>,
    /// The initial priority orders this search runs: all, or a shard's (see [`Engine::start`]).
    pub(super) own_orders: u64,
}

impl Engine {
    pub(super) fn new(p: SystematicParams) -> Engine {
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
            own_orders: 0,
        }
    }

    /// Ends profiling: `n` threads were measured; builds the priority orders and the level-0
    /// work. `seed` draws the random orders.
    ///
    /// `shard` `(k, m)` (1-based) gives this search only the initial orders whose index is
    /// `k - 1` modulo `m`. Every work item descends from one initial order and keeps its
    /// index, so shard `k` runs exactly the schedules that start from its orders: the `m`
    /// shards' schedules are disjoint, and together they are the whole search (each prunes
    /// only against the states it explored itself, so together they may run more than one
    /// search would). The random orders are all drawn, in order, so a shard's are the ones the
    /// whole search would draw with the same seed.
    pub(crate) fn start(&mut self, n: usize, seed: u64, shard: Option<(u64, u64)>) {
        let owns = |i: usize| shard.is_none_or(|(k, m)| i as u64 % m == k - 1);
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
                if owns(i) {
                    queue.push_back(initial_item(prios, i));
                }
            }
            self.orders = Some(OrderSet::Exhaustive { threads: n, orders: n_factorial });
        } else {
            let count = needed.min(MAX_RANDOM_ORDERS);
            let mut rng = ScheduleRng::seed_from_u64(seed);
            for i in 0..count {
                let mut values: Vec<i64> = (1..=(n + c) as i64).collect();
                values.shuffle(&mut rng);
                if owns(i as usize) {
                    queue.push_back(initial_item(values[..n].to_vec(), i as usize));
                }
                self.perms.push(Rc::new(values));
            }
            self.orders =
                Some(OrderSet::Random { threads: n, orders: count, needed, eps: self.p.eps });
        }
        self.own_orders = queue.len() as u64;
        self.stage = Stage::Level0 { queue };
    }

    /// The initial priority orders this search runs (a shard's share of them, see
    /// [`Engine::start`]).
    pub(crate) fn own_orders(&self) -> u64 {
        self.own_orders
    }

    /// The priority orders enumerated (after [`Engine::start`]).
    pub(crate) fn orders(&self) -> Option<&OrderSet> {
        self.orders.as_ref()
    }

    pub(super) fn random_orders(&self) -> bool {
        matches!(self.orders, Some(OrderSet::Random { .. }))
    }

    pub(super) fn level_mut(&mut self, v: u32, c: u32) -> &mut LevelStats {
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

    pub(super) fn name(&self, tv: TrackedVar) -> String {
        let site = self.var_names.get(tv.var.index()).cloned().unwrap_or_default();
        format!("{site}#{}", tv.iteration)
    }

    /// The shared variables met so far, in search order.
    pub(super) fn shared_vars(&self) -> Vec<TrackedVar> {
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
    ///
    /// Variables that became shared while a level ran join the list first. Those met before
    /// level `v` are searched in its subsets; but when `v` is past the bounds, the level that
    /// just ended is the last, and no subset of it held them: it runs again for its subsets
    /// that hold one (the others were explored), until no more variables join.
    pub(super) fn next_v(&mut self, v: u32) {
        let before = self.vars.len();
        for tv in self.shared_vars() {
            if !self.vars.contains(&tv) {
                self.vars.push(tv);
            }
        }
        let grew = self.vars.len() - before;
        let (noun, them) =
            if grew == 1 { ("variable", "it is") } else { ("variables", "they are") };
        if self.p.preemptions == 0 || self.p.vars == 0 {
            self.stage = Stage::Done;
            return;
        }
        if v > self.p.vars || v as usize > self.vars.len() {
            let last = v - 1;
            if grew == 0 || last == 0 {
                self.stage = Stage::Done;
                return;
            }
            self.notes.push(format!(
                "{grew} {noun} became shared during the v={last} level; its subsets that hold \
                 one were searched after it"
            ));
            let Stage::Subsets { mut subsets, .. } =
                std::mem::replace(&mut self.stage, Stage::Done)
            else {
                unreachable!("a level past level 0 ends in the subsets stage")
            };
            let first = subsets.len();
            subsets.extend(self.subsets(last, before));
            // The explored subsets stay (their queues are empty) so indices, which name a
            // subset in the records reused across subsets, stay unique.
            self.stage = Stage::Subsets { v: last, c: 1, subsets, index: first };
            return;
        }
        if grew > 0 {
            self.notes.push(format!(
                "{grew} {noun} became shared only after the v=0 level; {them} searched from \
                 v={v} on"
            ));
        }
        let subsets = self.subsets(v, 0);
        self.stage = Stage::Subsets { v, c: 1, subsets, index: 0 };
    }

    /// The unexplored subsets of `size` variables that hold one at index `from` or later.
    fn subsets(&self, size: u32, from: usize) -> Vec<Subset> {
        let mut subsets = Vec::new();
        let mut pick = Vec::new();
        combinations(self.vars.len(), size as usize, 0, &mut pick, &mut |idx| {
            if idx.iter().any(|&i| i >= from) {
                subsets.push(Subset {
                    vars: idx.iter().map(|&i| self.vars[i]).collect(),
                    explored: HashMap::new(),
                    queue: VecDeque::new(),
                    next: Vec::new(),
                    seeded: false,
                });
            }
        });
        subsets
    }

    /// Fills a subset's level-1 queue with the level-0 preemption points at its variables.
    pub(super) fn seed_subset(&mut self, i: usize) {
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

    pub(super) fn subset(&self) -> Option<&Subset> {
        match &self.stage {
            Stage::Subsets { subsets, index, .. } => subsets.get(*index),
            _ => None,
        }
    }

    /// Whether `key` was explored with at most `used` changes (in this subset, or at level 0).
    pub(super) fn explored(&self, key: u128, used: u32) -> bool {
        if self.level0_keys.contains_key(&key) {
            return true;
        }
        self.subset().and_then(|s| s.explored.get(&key)).is_some_and(|&u| u <= used)
    }

    pub(super) fn mark_explored(&mut self, key: u128, used: u32) {
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

    pub(super) fn describe(&self) -> String {
        let p = self.p;
        format!(
            "systematic(c={},v={},t={}{})",
            p.preemptions,
            p.vars,
            p.threads,
            if p.hb_pruning { "" } else { ",no-hb-pruning" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The level-0 work items' (initial order, priorities), as queued by `start`.
    fn queued(engine: &Engine) -> Vec<(usize, Vec<i64>)> {
        match &engine.stage {
            Stage::Level0 { queue } => queue.iter().map(|i| (i.order, i.prios.clone())).collect(),
            _ => panic!("start queues level 0"),
        }
    }

    #[test]
    fn shards_partition_the_initial_orders() {
        // 3 threads: all 6 orders; 8 threads with t = 2: random orders (seed 5, fixed).
        for (n, threads) in [(3, 3), (8, 2)] {
            let p =
                SystematicParams { preemptions: 2, vars: 2, threads, hb_pruning: true, eps: 0.01 };
            let mut whole = Engine::new(p);
            whole.start(n, 5, None);
            let all = queued(&whole);
            assert!(all.len() >= 6, "{n} threads: {} orders", all.len());
            assert_eq!(whole.own_orders(), all.len() as u64);
            for m in [1, 2, 3, 7] {
                let mut union = Vec::new();
                for k in 1..=m {
                    let mut shard = Engine::new(p);
                    shard.start(n, 5, Some((k, m)));
                    assert_eq!(shard.orders, whole.orders, "the whole search's order set");
                    assert_eq!(shard.perms, whole.perms, "the same random orders");
                    let mine = queued(&shard);
                    assert!(mine.iter().all(|(o, _)| *o as u64 % m == k - 1), "{k}/{m}");
                    assert_eq!(shard.own_orders(), mine.len() as u64);
                    union.extend(mine);
                }
                union.sort();
                let mut all = all.clone();
                all.sort();
                assert_eq!(union, all, "{n} threads, {m} shards");
            }
        }
    }
}
