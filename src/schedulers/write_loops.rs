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
use crate::runtime::EventKind;

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

/// The write to memory `decision`'s current thread is about to make (object id and access:
/// call site and kind), or [`NONE`].
#[inline]
fn write_of(decision: &Decision<'_>) -> (u32, u64) {
    let event = decision.event;
    match (event.object, event.kind) {
        (Some(object), EventKind::AtomicStore | EventKind::AtomicRmw | EventKind::CellWrite) => {
            (object.0, access_key(event.location, event.kind))
        }
        _ => NONE,
    }
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
        // An execution that may split loops keeps no table: it never asks what ran before.
        if !self.whole || decision.event.kind == EventKind::Block {
            // The blocked operation is the one that runs when the thread is chosen again.
            return false;
        }
        let write = write_of(decision);
        let current = decision.current.index();
        if self.wrote.len() <= current {
            self.wrote.resize(current + 1, NONE);
        }
        let repeats = write != NONE && self.wrote[current] == write;
        self.wrote[current] = write;
        self.whole && repeats && decision.current_enabled && self.run < MAX_RUN
    }

    /// Tells whether the choice at this scheduling point was the rule's (`by_rule`): a run
    /// of repetitions ends with any other choice.
    #[inline]
    pub(crate) fn chose(&mut self, by_rule: bool) {
        self.run = if by_rule { self.run + 1 } else { 0 };
    }
}
