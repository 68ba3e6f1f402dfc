//! Minimization: after a failure, search for a schedule with fewer preemptions (then fewer
//! steps) that fails the same way, by replay-based delta debugging over its switches.
//!
//! The failing schedule is rewritten as blocks ("thread T runs n scheduling points, then U
//! runs m, ..."; see `schedulers::Guided`). Each attempt removes one preemption, either by
//! merging a preempted thread's next block into the block it was preempted in (it keeps
//! running) or by moving the preempted block into that next block (it runs later), and
//! replays (a thread with no next block, preempted for good because the failure came first,
//! runs on as long as it can, or after every other block); the result
//! is kept when the execution still fails the same way (same kind, same panic location) with
//! fewer preemptions, or as many and fewer spurious wake-ups, or as many of both and fewer
//! steps. Each attempt may also remove one spurious wake-up: the waiting thread's steps after
//! it run at its next turn instead. The search restarts from every kept schedule
//! and stops when no merge helps or the budget is spent. The original failure is never lost:
//! if nothing is kept, it is reported as found.

use std::panic::Location;
use std::time::Duration;

use super::outcome::Found;
use super::Config;
use crate::report::Failure;
use crate::runtime::{real_now, EventKind, Execution, FailureCause, StackPool};
use crate::schedulers::{Blocks, Guided, Replay};

/// Wall-time cap of one minimization, whatever the replay budget.
const TIME_BUDGET: Duration = Duration::from_secs(5);

impl Config {
    /// The report of `found`, minimized first when the configuration allows it. With
    /// `tracked_all` (an explorer's or a profiling execution over `#[pctvb::instrument]`ed
    /// code, which tracked every variable) its replay token names that session.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn minimized_failure(
        &self,
        exec: &Execution,
        pool: &mut StackPool,
        body: &dyn Fn(),
        at: &'static Location<'static>,
        cause: &FailureCause,
        seed: u64,
        index: u64,
        digest: u64,
        tracked_all: bool,
    ) -> Failure {
        let found = Found::capture(exec, cause.clone(), seed, index, digest);
        self.minimized_found(exec, pool, body, at, found, tracked_all)
    }

    /// [`Config::minimized_failure`] of a failure captured earlier (`found`), whose execution
    /// need no longer be `exec`'s last: minimized first (when allowed) with replays on `exec`.
    pub(super) fn minimized_found(
        &self,
        exec: &Execution,
        pool: &mut StackPool,
        body: &dyn Fn(),
        at: &'static Location<'static>,
        found: Found,
        tracked_all: bool,
    ) -> Failure {
        let (best, minimized) = if self.minimize_runs == 0 || !minimizable(&found.cause) {
            (found, None)
        } else {
            let original = preemptions(&found);
            let (best, runs) = self.minimize(exec, pool, body, at, found);
            (best, Some((original, runs)))
        };
        let mut failure = self.report_found(&best, minimized);
        failure.replay_diverges = self.check_replay(exec, pool, body, at, &best);
        if tracked_all {
            self.tag_session(&mut failure, None, false);
        }
        failure
    }

    /// Replays `found` once as its token would: `None` when the replay follows it, else why
    /// not. A token that diverges even right after its failure was found would diverge for
    /// the user too: the body depends on something pctvb does not control, and offering the
    /// token (or a fresh one) would send them round in circles.
    fn check_replay(
        &self,
        exec: &Execution,
        pool: &mut StackPool,
        body: &dyn Fn(),
        at: &'static Location<'static>,
        found: &Found,
    ) -> Option<String> {
        let choices = found.captured.choices.clone();
        let replay = Replay::new(choices, found.digest, found.strategy.clone());
        exec.replace_strategy(Box::new(replay));
        let outcome = exec.run_one(pool, found.seed, found.index, body, at);
        match outcome.failure {
            Some(FailureCause::Strategy { message }) => Some(message),
            Some(_) => None,
            None => Some(
                "the replay of this schedule passed: the failure depends on something pctvb \
                 does not control"
                    .to_string(),
            ),
        }
    }

    fn minimize(
        &self,
        exec: &Execution,
        pool: &mut StackPool,
        body: &dyn Fn(),
        at: &'static Location<'static>,
        found: Found,
    ) -> (Found, u64) {
        let started = real_now();
        let describe = format!("{}, minimized", found.strategy);
        let mut best = found;
        let mut runs = 0;
        'restart: loop {
            let blocks = Blocks::of(&best.captured.choices, &best.captured.trace);
            for candidate_blocks in blocks.moves(&best.captured.trace) {
                if runs >= self.minimize_runs || real_now().duration_since(started) > TIME_BUDGET {
                    break 'restart;
                }
                runs += 1;
                let guided = Guided::new(candidate_blocks, describe.clone());
                exec.replace_strategy(Box::new(guided));
                let outcome = exec.run_one(pool, best.seed, best.index, body, at);
                let Some(cause) = outcome.failure else { continue };
                if !same_failure(&cause, &best.cause) {
                    continue;
                }
                let candidate = Found::capture(exec, cause, best.seed, best.index, outcome.digest);
                let smaller = size(&candidate) < size(&best);
                if smaller {
                    best = candidate;
                    continue 'restart;
                }
            }
            break;
        }
        (best, runs)
    }
}

fn preemptions(found: &Found) -> usize {
    found.captured.trace.iter().filter(|s| s.is_preemption()).count()
}

/// What minimization makes smaller, in order: preemptions, spurious wake-ups (a report with
/// none that the failure does not need reads as the program's own schedule), steps.
fn size(found: &Found) -> (usize, usize, usize) {
    let trace = &found.captured.trace;
    let spurious = trace.iter().filter(|s| s.kind == EventKind::SpuriousWakeup).count();
    (preemptions(found), spurious, trace.len())
}

/// `text` with every hexadecimal address (`0x` and hex digits) replaced by `0x_`.
fn without_addresses(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("0x") {
        out.push_str(&rest[..at + 2]);
        let after = &rest[at + 2..];
        let digits = after.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(after.len());
        if digits > 0 {
            out.push('_');
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// Failures worth minimizing: those a schedule causes (not limits or usage errors).
fn minimizable(cause: &FailureCause) -> bool {
    matches!(
        cause,
        FailureCause::Panic { .. }
            | FailureCause::Deadlock { .. }
            | FailureCause::RecursiveLock { .. }
            | FailureCause::DataRace { .. }
    )
}

/// Whether `new` is the same bug as `original`: the same kind, and for a panic the same
/// place (values in the message may differ).
fn same_failure(new: &FailureCause, original: &FailureCause) -> bool {
    match (new, original) {
        (
            FailureCause::Panic { location: a, message: m, .. },
            FailureCause::Panic { location: b, message: n, .. },
        ) => match (a, b) {
            (Some(a), Some(b)) => a == b,
            _ => m == n,
        },
        (
            FailureCause::Deadlock { lost_wakeup: a, .. },
            FailureCause::Deadlock { lost_wakeup: b, .. },
        ) => a == b,
        (
            FailureCause::RecursiveLock { what: a, .. },
            FailureCause::RecursiveLock { what: b, .. },
        ) => a == b,
        // The same cell, raced on at the same two sites (in either order). Memory of no
        // variable is named by its address, which a replay may allocate elsewhere: the name
        // is compared without it, or no candidate of a heap race was ever the same failure
        // and its report kept the search's schedule, unminimized.
        (
            FailureCause::DataRace { what: a, first: f, second: s },
            FailureCause::DataRace { what: b, first: g, second: t },
        ) => {
            without_addresses(a) == without_addresses(b)
                && ((f.location == g.location && s.location == t.location)
                    || (f.location == t.location && s.location == g.location))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::without_addresses;

    #[test]
    fn addresses_are_left_out_of_a_race_name() {
        let a = "memory at 0x7f6060001490 reached through `*p.0` (pctvb does not see every free)";
        let b = "memory at 0x55d0a2c1e2b0 reached through `*p.0` (pctvb does not see every free)";
        assert_eq!(without_addresses(a), without_addresses(b));
        assert_eq!(
            without_addresses(a),
            "memory at 0x_ reached through `*p.0` (pctvb does not see every free)"
        );
        // Another access path is another name.
        let c = "memory at 0x7f6060001490 reached through `*q`";
        assert_ne!(without_addresses(a), without_addresses(c));
        // Names without an address, and a bare `0x`, stay as they are.
        assert_eq!(without_addresses("UnsafeCell@src/a.rs:1:2"), "UnsafeCell@src/a.rs:1:2");
        assert_eq!(without_addresses("0x"), "0x");
    }
}
