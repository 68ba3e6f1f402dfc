//! Write loops run whole: the rule the walks (SURW, and race reversal over it) apply in most
//! executions, keeping a thread running while it repeats the write to memory it just made.
//!
//! # What this module owns, and what it must not touch
//!
//! It owns [`WriteLoops`]: per execution, whether loops run whole, each thread's latest
//! operation when it was a write to memory, and how many repeated writes in a row the current
//! thread has made. It reads only what a [`Decision`] tells it and draws once per execution
//! from the execution's rng; it chooses nothing itself (the strategy that holds it does, and
//! tells the walk beneath of the choice), touches no runtime state and has no guarantee.
//!
//! # Why
//!
//! A bug at a loop's end (a reader that must see the whole loop's work but not what follows
//! it: the corpus's thread-scaling family, a checker that sees all ten increments but not
//! the flag raised after them) needs another thread to run between the last iteration and
//! the thread's next operation. A walk that may stop the thread after any iteration puts the
//! other thread there about once in as many executions as the loop has iterations; with the
//! loop run whole, whenever the other thread comes after the loop at all. A repetition is
//! the same access (call site and kind: an atomic store or read-modify-write, or a cell
//! write) to the same object as the thread's previous operation, which is what a loop's next
//! iteration is; `a = 1; a = 0` is two call sites, so a reader may still see the `1`. Reads
//! are left out (read loops are how threads wait for one another), and so are locks (a
//! thread that retakes a mutex in a loop would keep the others out of it between its
//! critical sections).
//!
//! # Completeness
//!
//! Loops run whole in [`WHOLE_OF`] executions in four, drawn per execution: the others may
//! split them anywhere, so every interleaving keeps a positive probability. A run of
//! repetitions gives way after [`MAX_RUN`] writes, so a loop that writes until another thread
//! changes what it reads (a compare-exchange retried without a yield) cannot keep that thread
//! out until the execution's step limit.
//!
//! # Cost
//!
//! Per scheduling point: a comparison of the current thread's announced operation with its
//! previous one, and a write of one table entry; no allocation once the per-thread table has
//! grown in a run's first executions.

use rand::RngExt;

use super::{access_key, Decision, ScheduleRng};
use crate::runtime::{EventKind, ObjectId, Step, ThreadId};

/// Executions in four that run write loops whole. Measured on the corpus with race reversal
/// during development (issue #18): 3 paid less than 2; 4 (every execution) a little less
/// still, but then no execution splits a loop, and 3 keeps every interleaving possible.
pub(crate) const WHOLE_OF: u32 = 3;

/// Most repeated writes one thread runs in a row as a loop.
pub(crate) const MAX_RUN: u32 = 16;

/// No object: the operation is not a write to memory.
const NONE: (u32, u64) = (u32::MAX, 0);

/// The rule's per-execution state (see the module documentation).
#[derive(Clone, Debug, Default)]
pub(crate) struct WriteLoops {
    /// Whether this execution runs write loops whole.
    whole: bool,
    /// Repetitions the current thread has run in a row by the rule.
    run: u32,
    /// Each thread's latest operation when it was a write to memory (object id and access),
    /// by thread id; [`NONE`] otherwise.
    wrote: Vec<(u32, u64)>,
}

/// The write to memory an operation `kind` on `object` at `site` is (object id and access:
/// call site and kind), or [`NONE`].
#[inline]
fn write_of(
    kind: EventKind,
    object: Option<ObjectId>,
    site: &'static std::panic::Location<'static>,
) -> (u32, u64) {
    match (object, kind) {
        (Some(object), EventKind::AtomicStore | EventKind::AtomicRmw | EventKind::CellWrite) => {
            (object.0, access_key(site, kind))
        }
        _ => NONE,
    }
}

/// The rule at a thread's operation whose write to memory is `write` ([`NONE`]: none), the
/// thread's latest write being `*wrote`: whether it repeats that write with fewer than
/// [`MAX_RUN`] repetitions in a row so far (`run`). Notes `write` as the thread's latest.
#[inline(always)]
fn repeats(wrote: &mut (u32, u64), write: (u32, u64), run: u32) -> bool {
    let repeats = write != NONE && *wrote == write;
    *wrote = write;
    repeats && run < MAX_RUN
}

impl WriteLoops {
    /// Starts an execution: draws whether it runs loops whole.
    pub(crate) fn begin(&mut self, rng: &mut ScheduleRng) {
        self.wrote.clear();
        self.run = 0;
        self.whole = rng.random_range(0..4) < WHOLE_OF;
    }

    /// Whether the current thread keeps running at this scheduling point: the execution runs
    /// loops whole, the thread can run, it is about to repeat its previous operation, a write
    /// to memory, and it has not run [`MAX_RUN`] repetitions in a row. Notes the thread's
    /// announced operation for its next scheduling point, so call it at every one, before the
    /// choice; then [`WriteLoops::chose`].
    #[inline(always)]
    pub(crate) fn continues(&mut self, decision: &Decision<'_>) -> bool {
        let event = decision.event;
        self.continues_at(decision.current, event.kind, event.object, event.location)
            && decision.current_enabled
    }

    /// [`WriteLoops::continues`] but for whether `current` can run: whether it repeats its
    /// previous operation, a write to memory, within [`MAX_RUN`], at an operation `kind` on
    /// `object` at `site` (noted for its next point).
    #[inline(always)]
    fn continues_at(
        &mut self,
        current: ThreadId,
        kind: EventKind,
        object: Option<ObjectId>,
        site: &'static std::panic::Location<'static>,
    ) -> bool {
        // An execution that may split loops keeps no table: it never asks what ran before.
        if !self.whole || kind == EventKind::Block {
            // The blocked operation is the one that runs when the thread is chosen again.
            return false;
        }
        let current = current.index();
        self.slot(current);
        repeats(&mut self.wrote[current], write_of(kind, object, site), self.run)
    }

    /// The points with no choice the engine passed over (`Strategy::skips_forced`), in
    /// order: each thread went on, so the rule notes each one's operation and the choice as
    /// `continues` and `chose` would have at it (no hold keeps a thread back at such a point:
    /// race reversal lets the engine pass over them only in executions that hold none).
    pub(crate) fn skipped(&mut self, steps: &[Step]) {
        if !self.whole {
            // `continues` is false at every point: the run of repetitions is over.
            if !steps.is_empty() {
                self.run = 0;
            }
            return;
        }
        // The steps are the running thread's (a decision switches threads, a point passed
        // over does not): its latest write and the run stay in registers while the thread
        // does, and go back to the table when another's step comes (tests mix threads).
        let Some(first) = steps.first() else { return };
        let mut thread = first.thread.index();
        self.slot(thread);
        let (mut wrote, mut run) = (self.wrote[thread], self.run);
        for step in steps {
            if step.thread.index() != thread {
                self.wrote[thread] = wrote;
                thread = step.thread.index();
                self.slot(thread);
                wrote = self.wrote[thread];
            }
            // As `continues_at` then `chose`: a `Block` (never passed over) leaves the
            // thread's latest write as it was and ends the run.
            let by_rule = step.kind != EventKind::Block
                && repeats(&mut wrote, write_of(step.kind, step.object, step.location), run);
            run = if by_rule { run + 1 } else { 0 };
        }
        self.wrote[thread] = wrote;
        self.run = run;
    }

    /// Makes room in the per-thread table for thread `index`.
    #[inline(always)]
    fn slot(&mut self, index: usize) {
        if self.wrote.len() <= index {
            self.wrote.resize(index + 1, NONE);
        }
    }

    /// Tells whether the choice at this scheduling point was the rule's (`by_rule`): a run
    /// of repetitions ends with any other choice.
    #[inline]
    pub(crate) fn chose(&mut self, by_rule: bool) {
        self.run = if by_rule { self.run + 1 } else { 0 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{Event, Pending};
    use std::panic::Location;

    /// The points passed over leave the rule as noting each one and the choice at it would
    /// (`continues` then `chose`, the running thread going on): the same memory of each
    /// thread's last write and the same run of repetitions, through runs longer than
    /// [`MAX_RUN`], writes to other objects and sites, reads and a thread switch.
    #[test]
    fn points_passed_over_leave_the_rule_as_asking_would() {
        // Two call sites.
        let (site_a, site_b) = (Location::caller(), Location::caller());
        let ops = [
            (0, EventKind::AtomicStore, Some(0), site_a),
            (0, EventKind::AtomicStore, Some(0), site_a),
            (0, EventKind::AtomicLoad, Some(0), site_a),
            (0, EventKind::AtomicStore, Some(1), site_a),
            (0, EventKind::AtomicStore, Some(1), site_b),
            (0, EventKind::Yield, None, site_b),
            (1, EventKind::AtomicRmw, Some(2), site_a),
        ];
        // Runs of 20 repetitions (past MAX_RUN), then the mixed operations, twice.
        let mut steps = Vec::new();
        for _ in 0..2 {
            for _ in 0..20 {
                steps.push(ops[0]);
            }
            steps.extend(ops);
        }
        let steps: Vec<Step> = steps
            .into_iter()
            .map(|(t, kind, object, location)| Step {
                thread: ThreadId(t),
                kind,
                object: object.map(ObjectId),
                location,
                chosen: ThreadId(t),
                value: None,
                waits: false,
                var_access: 0,
            })
            .collect();
        for whole in [true, false] {
            // A run of repetitions before the points passed over, which they go on or end.
            let start = WriteLoops {
                whole,
                run: 3,
                wrote: vec![(0, access_key(site_a, EventKind::AtomicStore))],
            };
            let (mut asked, mut passed) = (start.clone(), start);
            for s in &steps {
                let event =
                    Event { kind: s.kind, object: s.object, var: None, location: s.location };
                let enabled = [s.thread];
                let decision = Decision {
                    enabled: &enabled,
                    engine: crate::runtime::Enabled::none(),
                    current: s.thread,
                    current_enabled: true,
                    event: &event,
                    step: 0,
                    var_access: 0,
                    pending: Pending::NONE,
                };
                let by_rule = asked.continues(&decision);
                asked.chose(by_rule);
            }
            passed.skipped(&steps);
            assert_eq!(asked.run, passed.run, "whole: {whole}");
            assert_eq!(asked.wrote, passed.wrote, "whole: {whole}");
        }
    }
}
