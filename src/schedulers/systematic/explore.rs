//! One execution of the search: following the work item (its prefix replayed, then strict
//! priority), turning every possible preemption at an access to a tracked variable into work
//! for the next level unless its state was explored, and filing that work when the execution
//! ends (or when a recorded execution is reused for another subset).

use std::rc::Rc;

use rand::RngExt;

use super::engine::{Engine, VarEntry};
use super::run::Run;
use super::work::{
    identity, initial_item, Cand, Child, Harvest, Item, Record, Stage, StepRecord,
    MAX_RECORDED_STEPS,
};
use crate::runtime::{EventKind, ThreadId};
use crate::schedulers::{Decision, ExecutionStart, ScheduleRng, StrategyError};

impl Engine {
    pub(super) fn begin(&mut self, start: &ExecutionStart<'_>) {
        if self.var_names.len() < start.vars.len() {
            self.var_names = start.vars.iter().map(|v| v.to_string()).collect();
        }
        if matches!(self.stage, Stage::Profile) {
            self.run = Some(Run::new(initial_item(Vec::new(), 0)));
        }
    }

    pub(super) fn choose(
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

    pub(super) fn choose_in(
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
                return Err(StrategyError::new(format!(
                    "systematic search: replaying a recorded schedule diverged at step {step} \
                     (thread {want} cannot run). The test depends on nondeterminism pctvb does \
                     not control (HashMap iteration order, {}, I/O, real OS threads).",
                    crate::runtime::UNCONTROLLED_TIME
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
        let top = run.top(enabled);
        let used = run.item.used;
        let slots: Vec<i64> = match self.perms.get(run.item.order) {
            Some(perm) if self.random_orders() => {
                perm[(self.n + used as usize).min(perm.len())..].to_vec()
            }
            _ => Vec::new(),
        };
        let key = if self.p.hb_pruning { run.key(cur, enabled, &run.prios, &slots) } else { 0 };
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
    pub(super) fn options(
        &self,
        run: &Run,
        d: &Decision<'_>,
        slots: &[i64],
    ) -> Vec<(Vec<i64>, u128)> {
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
                let key =
                    if self.p.hb_pruning { run.key(cur, enabled, &prios, next_slots) } else { 0 };
                (prios, key)
            })
            .collect()
    }

    /// One free step of an execution (live or reused) with `used` changes: marks or detects
    /// its explored state, and turns its preemptions at the subset's variables into work.
    pub(super) fn visit(&mut self, h: &mut Harvest, used: u32, key: u128, cand: Option<&Cand>) {
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
    pub(super) fn reuse(&mut self, record: &Record, item: &Item) {
        let mut harvest = Harvest::default();
        for step in &record.steps {
            self.visit(&mut harvest, item.used, step.key, step.cand.as_ref());
        }
        self.harvest_done(harvest, record.choices.clone(), item.used, item.order);
    }

    pub(super) fn end(&mut self) {
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
    pub(super) fn harvest_done(
        &mut self,
        h: Harvest,
        prefix: Rc<Vec<u32>>,
        used: u32,
        order: usize,
    ) {
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
