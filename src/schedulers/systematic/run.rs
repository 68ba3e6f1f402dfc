//! The execution in progress: its priorities (strict priority scheduling, extra threads below
//! all others; spinning threads are simply not enabled), the variables it names and their
//! sharing, and its happens-before state, whose fingerprint identifies the state before each
//! decision.

use std::collections::HashMap;

use super::hb::{hash2, Hb, Op};
use super::work::{Harvest, Item, StepRecord};
use super::TrackedVar;
use crate::runtime::{EventKind, ThreadId};
use crate::schedulers::Decision;
use crate::vars::VarId;

/// The state of the execution in progress.
pub(super) struct Run {
    pub(super) item: Item,
    pub(super) prios: Vec<i64>,
    pub(super) floor: i64,
    pub(super) choices: Vec<u32>,
    pub(super) hb: Hb,
    pub(super) objects: Vec<Option<TrackedVar>>,
    pub(super) iterations: HashMap<VarId, u32>,
    /// Per object: first thread that accessed it, and whether another did.
    pub(super) sharing: Vec<(u32, bool)>,
    pub(super) exited: Vec<bool>,
    pub(super) harvest: Harvest,
    /// The free steps, for reuse by other variable subsets.
    pub(super) steps: Vec<StepRecord>,
    /// From the first yield or sleep a thread reached on: a hash of every operation reached
    /// since, in order (see [`Run::key`]).
    ordered: Option<u64>,
}

impl Run {
    pub(super) fn new(item: Item) -> Run {
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
            ordered: None,
        }
    }

    pub(super) fn lower(&mut self) -> i64 {
        self.floor -= 1;
        self.floor
    }

    pub(super) fn priority_of(&mut self, t: ThreadId) -> i64 {
        while self.prios.len() <= t.index() {
            let p = self.lower();
            self.prios.push(p);
        }
        self.prios[t.index()]
    }

    pub(super) fn top(&mut self, enabled: &[ThreadId]) -> ThreadId {
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

    pub(super) fn alive(&self, t: usize) -> bool {
        !self.exited.get(t).copied().unwrap_or(false)
    }

    /// Names the object of the decision's access and records who accessed it.
    pub(super) fn observe(&mut self, d: &Decision<'_>) -> Option<TrackedVar> {
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
    pub(super) fn reach(&mut self, d: &Decision<'_>) {
        let cur = d.current.index();
        if self.exited.len() <= cur {
            self.exited.resize(cur + 1, false);
        }
        let object = d.event.object.map(|o| o.index() as u32);
        let location = d.event.location as *const _ as usize;
        let op = Op { kind: d.event.kind, object, location, resume: false };
        if self.ordered.is_some()
            || matches!(op.kind, EventKind::Yield | EventKind::Sleep | EventKind::SpuriousWakeup)
        {
            let h = hash2(&(self.ordered, cur, op.kind, object, location));
            self.ordered = Some(h.0);
        }
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
    /// The enabled threads are part of it: a spinning thread's wait depends on whether
    /// another thread made progress since its yield, which the happens-before graph does not
    /// order (a yield touches no object). That is not enough: when the spinners are released,
    /// and whether a sleep spins, depend on the order of yields, sleeps and progress, which
    /// neither the graph nor the enabled threads hold, and pruning on them lost a schedule
    /// (`tests/differential.rs`, `pruning_misses_a_schedule_behind_yields`). So from the first
    /// yield or sleep on, the key also holds the order of every operation reached since: two
    /// states are then one only if they ran the same operations in the same order, and
    /// programs that yield are pruned only up to their first yield.
    pub(super) fn key(
        &self,
        cur: ThreadId,
        enabled: &[ThreadId],
        prios: &[i64],
        slots: &[i64],
    ) -> u128 {
        let mut ranked: Vec<(i64, u64)> = prios
            .iter()
            .enumerate()
            .filter(|&(t, _)| self.alive(t))
            .map(|(t, &p)| (p, t as u64))
            .collect();
        ranked.extend(slots.iter().enumerate().map(|(i, &p)| (p, (1 << 32) + i as u64)));
        ranked.sort_unstable_by_key(|&(p, _)| std::cmp::Reverse(p));
        let tags: Vec<u64> = ranked.into_iter().map(|(_, tag)| tag).collect();
        let h = hash2(&(self.hb.sums, cur.0, tags, enabled, self.ordered));
        (u128::from(h.0) << 64) | u128::from(h.1)
    }
}
