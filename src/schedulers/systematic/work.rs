//! Work items and levels: what one execution of the search starts from (a schedule prefix to
//! replay and the priorities to continue with), what it produces for the next level, the
//! records that let another variable subset reuse it, and the stages the search goes through
//! (profiling, level `v = 0`, then the `(v, c)` levels of every `v`-subset).

use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use super::hb::hash2;
use super::TrackedVar;

/// Where a work item starts: replay `prefix[..len]`, then schedule by `prios`.
#[derive(Clone, Debug)]
pub(super) struct Item {
    pub(super) prefix: Rc<Vec<u32>>,
    pub(super) len: usize,
    /// Step `len` is the priority change itself (the priorities are already changed).
    pub(super) change: bool,
    pub(super) prios: Vec<i64>,
    pub(super) floor: i64,
    pub(super) used: u32,
    pub(super) order: usize,
}

/// A work item generated during an execution, before its prefix is known.
pub(super) struct Child {
    pub(super) var: TrackedVar,
    pub(super) len: usize,
    pub(super) prios: Vec<i64>,
    pub(super) floor: i64,
    pub(super) key: u128,
}

/// The work items an execution (or a reused record) produced for the current subset.
#[derive(Default)]
pub(super) struct Harvest {
    /// Reached an explored state: what follows is explored too.
    pub(super) converged: bool,
    pub(super) children: Vec<Child>,
    /// Children not generated because the execution reached an explored state, by variable.
    pub(super) suppressed: HashMap<TrackedVar, u64>,
    pub(super) pruned: u64,
}

/// What one free step of an execution did, independently of the variable subset.
pub(super) struct StepRecord {
    /// The state's fingerprint (0 without pruning).
    pub(super) key: u128,
    /// The preemptions possible here, if the step is an access where one is.
    pub(super) cand: Option<Cand>,
}

/// The preemptions possible at one access: every new priority order, with its fingerprint.
pub(super) struct Cand {
    pub(super) var: TrackedVar,
    pub(super) step: usize,
    pub(super) floor: i64,
    pub(super) options: Vec<(Vec<i64>, u128)>,
}

/// An execution's free steps, kept so that the same work item in another subset is not run
/// again (executions are deterministic given the item).
pub(super) struct Record {
    pub(super) choices: Rc<Vec<u32>>,
    pub(super) steps: Vec<StepRecord>,
    /// The subset `(v, index)` it ran for.
    pub(super) subset: (u32, usize),
}

/// Step records kept for reuse at most (beyond, items are run again).
pub(super) const MAX_RECORDED_STEPS: usize = 250_000;

/// Work items stored at most (queued, and level 0's preemption points); beyond, the search
/// stops and says so rather than exhaust memory.
pub(super) const MAX_STORED_ITEMS: usize = 500_000;

/// A subset of variables and its part of the search.
pub(super) struct Subset {
    pub(super) vars: Vec<TrackedVar>,
    pub(super) explored: HashMap<u128, u32>,
    pub(super) queue: VecDeque<Item>,
    pub(super) next: Vec<Item>,
    pub(super) seeded: bool,
}

pub(super) enum Stage {
    Profile,
    Level0 { queue: VecDeque<Item> },
    Subsets { v: u32, c: u32, subsets: Vec<Subset>, index: usize },
    Done,
}

/// The identity of a work item: equal identities run the same execution.
pub(super) fn identity(item: &Item) -> u128 {
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

pub(super) fn initial_item(prios: Vec<i64>, order: usize) -> Item {
    Item { prefix: Rc::new(Vec::new()), len: 0, change: false, prios, floor: 0, used: 0, order }
}
