//! loom's exploration switches ([`crate::explore`], [`crate::stop_exploring`],
//! [`crate::skip_branch`] and [`crate::model::Builder::expect_explicit_explore`]): the state
//! loom keeps per execution (exploring or not, skipping or not, with loom's panics on
//! misuse), and how many executions of a model turned exploration off, for the run's
//! summary.
//!
//! Turning exploration off reaches pctvb through its `#[doc(hidden)]`
//! `__internals::execution::set_exploring`: while off, every scheduling point offers the
//! strategy one thread (the running one while it can run), so nothing is preempted and no
//! choice branches, as in loom, where branch points reached while not exploring are never
//! backtracked. As [`crate::leaks`], the state is per OS thread: one OS thread runs one
//! execution at a time, and all of its logical threads.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How many executions of one model run turned exploration off, shared by the run's worker
/// threads.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    /// Executions that called `stop_exploring` (or started without exploring).
    pub(crate) stopped: AtomicU64,
    /// Executions that called `skip_branch`.
    pub(crate) skipped: AtomicU64,
}

#[derive(Default)]
struct State {
    /// Whether a `model` body is running on this OS thread.
    active: bool,
    exploring: bool,
    skipping: bool,
    /// Whether this execution was counted in `counts.stopped` / `counts.skipped` yet.
    stop_counted: bool,
    skip_counted: bool,
    counts: Option<Arc<Counts>>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// Starts an execution: exploring, unless the builder asked for an explicit `explore`.
pub(crate) fn begin(explicit_explore: bool, counts: &Arc<Counts>) {
    STATE.with(|s| {
        *s.borrow_mut() = State {
            active: true,
            exploring: !explicit_explore,
            skipping: false,
            stop_counted: false,
            skip_counted: false,
            counts: Some(Arc::clone(counts)),
        };
    });
    if explicit_explore {
        stop_counted();
        pctvb::__internals::execution::set_exploring(false);
    }
}

/// Stops tracking (the model run is over).
pub(crate) fn end() {
    STATE.with(|s| *s.borrow_mut() = State::default());
}

/// Counts this execution in `stopped`, once.
fn stop_counted() {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if !s.stop_counted {
            s.stop_counted = true;
            if let Some(c) = &s.counts {
                c.stopped.fetch_add(1, Ordering::Relaxed);
            }
        }
    })
}

#[track_caller]
fn check_active(what: &str) {
    if !STATE.with(|s| s.borrow().active) {
        panic!("loom::{what} was called outside loom::model");
    }
}

#[track_caller]
pub(crate) fn explore() {
    check_active("explore");
    let turn_on = STATE.with(|s| {
        let mut s = s.borrow_mut();
        if s.skipping {
            return false;
        }
        // loom's own panic for an `explore` without a `stop_exploring` before it.
        assert!(!s.exploring, "not in critical state");
        s.exploring = true;
        true
    });
    if turn_on {
        pctvb::__internals::execution::set_exploring(true);
    }
}

#[track_caller]
pub(crate) fn stop_exploring() {
    check_active("stop_exploring");
    let turn_off = STATE.with(|s| {
        let mut s = s.borrow_mut();
        if s.skipping {
            return false;
        }
        // loom's own panic for a second `stop_exploring` without `explore` between.
        assert!(s.exploring, "not in exploring state");
        s.exploring = false;
        true
    });
    if turn_off {
        stop_counted();
        pctvb::__internals::execution::set_exploring(false);
    }
}

#[track_caller]
pub(crate) fn skip_branch() {
    check_active("skip_branch");
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.exploring = false;
        s.skipping = true;
        if !s.skip_counted {
            s.skip_counted = true;
            if let Some(c) = &s.counts {
                c.skipped.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    pctvb::__internals::execution::set_exploring(false);
}

/// What a finished run says about exploration it did not do: a count of the executions that
/// turned it off, and, when a guarantee was asked for, that the bound does not cover them.
pub(crate) fn notes(counts: &Counts, confidence: bool) -> Vec<String> {
    let stopped = counts.stopped.load(Ordering::Relaxed);
    let skipped = counts.skipped.load(Ordering::Relaxed);
    let mut notes = Vec::new();
    if stopped == 0 && skipped == 0 {
        return notes;
    }
    if stopped > 0 {
        notes.push(format!(
            "{stopped} execution(s) ran part of their schedule without exploring \
             (loom::stop_exploring, or expect_explicit_explore before loom::explore): no thread \
             was preempted there"
        ));
    }
    if skipped > 0 {
        notes.push(format!(
            "{skipped} execution(s) called loom::skip_branch: no thread was preempted after it"
        ));
    }
    if confidence {
        notes.push(
            "warning: PCTVB_CONFIDENCE's bound assumes any scheduling point may preempt; it \
             is not proved for schedules with exploration off, so it covers at most bugs that \
             need no preemption where exploration was off"
                .to_string(),
        );
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_count_and_warn_only_under_a_confidence() {
        let counts = Counts::default();
        assert!(notes(&counts, true).is_empty());
        counts.stopped.store(3, Ordering::Relaxed);
        counts.skipped.store(2, Ordering::Relaxed);
        let plain = notes(&counts, false);
        assert_eq!(plain.len(), 2);
        assert!(plain[0].starts_with("3 execution(s) ran part"), "{}", plain[0]);
        assert!(plain[1].starts_with("2 execution(s) called loom::skip_branch"), "{}", plain[1]);
        let warned = notes(&counts, true);
        assert_eq!(warned.len(), 3);
        assert!(warned[2].starts_with("warning: PCTVB_CONFIDENCE"), "{}", warned[2]);
        counts.stopped.store(0, Ordering::Relaxed);
        assert_eq!(notes(&counts, false).len(), 1, "no line for a count of 0");
    }
}
