//! A confidence target's class enumerated instead of sampled ([`Config::enumerate`]).
//!
//! # What this module owns, and what it must not touch
//!
//! It owns the decision, made once after a combined-strategy run profiled and planned its
//! executions, whether the systematic search can cover the guarantee's class within a share of
//! that plan, and the report of a run it decided: the search's statement, the explorer's
//! executions after it, the notes that say what ran. It runs the search through
//! [`Config::systematic_search`] and the explorer through [`Config::search`]; it touches no
//! strategy, engine or count of its own, and leaves the sampled search (`search.rs`) as it was
//! when the enumeration does not finish.
//!
//! # Why the enumeration covers the class
//!
//! The combined strategy's bound is for a bug of depth `<= d` whose `c = d-1` preemptions
//! happen at accesses of `<= v` shared variables, triggered by one relative order of the
//! fragments of `<= t` threads. Its variables are allocation sites; the systematic search's
//! are objects (`site#i`, the `i`-th object of a site met in an execution). `c` preemptions
//! fall at the accesses of at most `c` objects, whatever sites they belong to, so the search
//! `(c, c, t)` covers the class for any `v`: for every subset of at most `c` objects it runs
//! every schedule with at most `c` preemptions at their accesses, under every priority order
//! of the threads (or, with more than `t` threads, under drawn orders that contain every
//! relative order of every `t + c` fragments with probability at least `1 - eps`, Lemma 4.1),
//! pruning only schedules that reach an explored happens-before state. Every bug of the class
//! is therefore found by the search when it explores every level (with probability `1 - eps`
//! when orders are drawn), which is at least the target when `eps = 1 - confidence`. The
//! sampled bound needs `ln(1/(1-confidence))/p` executions; the schedules the search runs are
//! about `1/p` of the same factors before pruning (for depth 2 exactly the class's: one
//! object, one preemption), and far fewer after it.
//!
//! # Why the explorer runs between the search's executions
//!
//! A program with a bug is what the run is for, and the search's order (level by level,
//! subset by subset) can reach an in-class bug late, and never one outside the class. So the
//! explorer runs one execution after every `explore_every - 1` of the search's, as it does
//! beside the sampled strategy, with a seed of its own ([`interleave_seed`]); the search stops
//! at the first failure of either, and at one in its own profiling. After a class that
//! passed, the explorer runs the rest of its share.

use std::panic::Location;

use super::config::{Budget, DEFAULT_ITERATIONS};
use super::systematic::Interleaved;
use super::{Config, StrategyKind};
use crate::report::Report;

/// The share of the sampled plan the enumeration may spend: a quarter, so a class too large
/// to enumerate costs the run at most a quarter more than sampling alone.
const ENUMERATION_SHARE: u64 = 4;

impl Config {
    /// After profiling a combined-strategy run with a confidence target (`sampled` holds the
    /// planned executions and the bound): enumerates the class with at most a quarter of the
    /// plan. Returns the run's report when the enumeration decided it (every level explored,
    /// a bug found, or the program could not be tested); `None`, with a note in `sampled`,
    /// when the run is to sample as planned.
    pub(super) fn enumerate_class(
        &self,
        kind: &StrategyKind,
        seed: u64,
        budget: Budget,
        sampled: &mut Report,
        body: &(dyn Fn() + Sync),
        at: &'static Location<'static>,
    ) -> Option<Report> {
        let Budget::Confidence(confidence) = budget else { return None };
        let StrategyKind::Combined { depth, threads, .. } = *kind else { return None };
        // A counting run measures the sampled strategy's hit rate; a shard runs a share of
        // the sampled plan; a time budget states what the sampled executions that ran prove.
        if !self.enumerate
            || !self.stop_at_first_failure
            || self.shard.is_some()
            || self.time_budget.is_some()
            || sampled.bound.is_none()
        {
            return None;
        }
        let cap = sampled.planned / ENUMERATION_SHARE;
        if cap == 0 {
            return None;
        }
        // `c` preemptions at the accesses of `c` objects (module docs: why not `vars`).
        let c = depth.saturating_sub(1);
        let class = StrategyKind::systematic(c, c, threads);
        let described = kind.build().describe();
        // The explorer runs between the search's executions, as it runs between the sampled
        // strategy's: a bug outside the class, or one the explorer meets before the search's
        // order reaches it, is found as soon as without the enumeration (in executions of the
        // explorer).
        let every = self.explore_period();
        let explorer = self.explorer_kind();
        let mut interleaved =
            (every > 0).then(|| Interleaved::new(&explorer, every, interleave_seed(seed)));
        let mut report = self.systematic_search(
            class,
            seed,
            1.0 - confidence,
            cap,
            interleaved.as_mut(),
            body,
            at,
        );
        let search = report.systematic.as_ref().expect("a systematic search reports its levels");
        let enumerated = search.executions();
        let (explored_between, explorer_found) =
            interleaved.as_ref().map_or((0, None), |il| (il.ran, il.failed_at));
        let between = match explored_between {
            0 => String::new(),
            n => format!(", with {n} executions of {} between them", explorer.name()),
        };
        // An execution with more threads than the search's profiling saw ran the extra ones
        // below the ordered ones: their orders were not all explored, so the class was not.
        let more_threads = report.stats.max_threads > search.threads;
        if report.is_ok() && (!search.complete || more_threads) {
            let why = match &search.stopped_by {
                Some(reason) => reason.clone(),
                None if more_threads => format!(
                    "an execution had {} threads, more than the {} its profiling saw",
                    report.stats.max_threads, search.threads
                ),
                None => "it stopped".into(),
            };
            sampled.notes.push(format!(
                "the class of {described} was not enumerated within {cap} executions (a \
                 quarter of the {} the confidence target needs when sampled; {why}): it was \
                 sampled instead, after those {enumerated} executions{between}",
                sampled.planned
            ));
            return None;
        }
        report.planned = enumerated;
        report.strategy = format!("{described} enumerated");
        report.executions = enumerated + explored_between;
        if let Some(il) = &interleaved {
            report.stats.max_threads = report.stats.max_threads.max(il.max_threads);
            report.stats.max_steps = report.stats.max_steps.max(il.max_steps);
        }
        if let Some(j) = explorer_found {
            report.strategy =
                format!("{described} being enumerated + {} 1 in {every}", explorer.name());
            report.notes.insert(
                0,
                format!(
                    "confidence {confidence}: the class of {described} was being enumerated by \
                     the systematic search (sampling needs {} executions for it; {enumerated} \
                     had run) when {}, which runs between its executions, failed at its \
                     execution {j}",
                    sampled.planned,
                    explorer.name()
                ),
            );
            return Some(report);
        }
        if !report.is_ok() {
            report.notes.insert(
                0,
                format!(
                    "confidence {confidence}: the class of {described} was being enumerated by \
                     the systematic search (sampling needs {} executions for it) when the run \
                     ended{between}",
                    sampled.planned
                ),
            );
            return Some(report);
        }
        report.notes.insert(
            0,
            format!(
                "confidence {confidence}: the class of {described} was enumerated by the \
                 systematic search in {enumerated} executions, where sampling needs {} for \
                 the same class",
                sampled.planned
            ),
        );
        if every == 0 {
            return Some(report);
        }
        // The executions the explorer would have had beside the sampled search are gone with
        // it: it has as many as the enumeration took (run between them), and at least what a
        // run without a target runs, so a target never explores less than no target.
        let explorations = enumerated.max(DEFAULT_ITERATIONS);
        let name = explorer.name();
        let after = explorations.saturating_sub(explored_between);
        if after == 0 {
            report.notes.push(format!(
                "{name} ran {explored_between} executions between the search's, for bugs \
                 outside the class: none failed"
            ));
            report.strategy = format!("{described} enumerated + {name}");
            report.planned = enumerated + explored_between;
            return Some(report);
        }
        let mut explored = self.search(explorer, seed, Budget::Iterations(after), body, at);
        let total = enumerated + explored_between + explored.executions;
        if !explored.is_ok() {
            explored.notes.insert(
                0,
                format!(
                    "the class of {described} was enumerated first ({enumerated} executions, \
                     none failed: {}){between}; {name} ran after it, for bugs outside the \
                     class, and stopped at its execution {}",
                    report.systematic.as_ref().map_or(String::new(), |s| s.statement()),
                    explored.executions
                ),
            );
            explored.strategy = format!("{} after {described} enumerated", explored.strategy);
            explored.executions = total;
            return Some(explored);
        }
        report.notes.push(format!(
            "{name} ran {explored_between} executions between the search's and {} after it, \
             for bugs outside the class: none failed",
            explored.executions
        ));
        report.strategy = format!("{described} enumerated + {name}");
        report.planned = enumerated + explored_between + after;
        report.executions = total;
        report.stats.max_threads = report.stats.max_threads.max(explored.stats.max_threads);
        report.stats.max_steps = report.stats.max_steps.max(explored.stats.max_steps);
        // The two searches may have met the same schedule: the larger count is a floor.
        report.stats.distinct_schedules =
            report.stats.distinct_schedules.max(explored.stats.distinct_schedules);
        report.stats.distinct_schedules_capped = true;
        Some(report)
    }
}

/// The seed of the explorer's executions between the search's: apart from the run seed, which
/// the explorer's executions after the search use, so the two never run the same schedule
/// (a strategy's execution is a function of its seed and index).
fn interleave_seed(seed: u64) -> u64 {
    seed ^ 0x9e37_79b9_7f4a_7c15
}
