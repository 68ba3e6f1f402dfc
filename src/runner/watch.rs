//! What the runner watches across executions to stop early and stay small (whether an
//! execution had any choice to make is the engine's `Execution::had_choice`): the distinct
//! schedules seen (counted in bounded memory), and when a long run must say what
//! it plans.

use std::collections::HashSet;
use std::time::Duration;

/// Distinct schedules counted exactly up to [`DistinctSchedules::CAP`], then "at least": a
/// set of every schedule's hash grew by tens of bytes per execution (38 MB at a million).
///
/// The set hashes with the vars table's multiply-fold hasher, not SipHash: one insert per
/// execution, and SipHash with its growth was ~1.5% of a 24-step program's run (#18). The
/// schedule hash's low bits depend only on the choices' low bits, so it is mixed, not used
/// as it is.
#[derive(Default)]
pub(super) struct DistinctSchedules {
    seen: HashSet<u64, crate::vars::BuildAddressHasher>,
    capped: bool,
}

impl DistinctSchedules {
    /// Hashes kept at most (about 1 MiB).
    pub(super) const CAP: usize = 1 << 16;

    pub(super) fn insert(&mut self, hash: u64) {
        if self.seen.len() < Self::CAP {
            self.seen.insert(hash);
        } else if !self.seen.contains(&hash) {
            self.capped = true;
        }
    }

    /// Adds every schedule `other` counted.
    pub(super) fn merge(&mut self, other: DistinctSchedules) {
        self.capped |= other.capped;
        for hash in other.seen {
            self.insert(hash);
        }
    }

    /// Writes the count into `stats`.
    pub(super) fn report(&self, stats: &mut crate::report::Stats) {
        stats.distinct_schedules = self.seen.len() as u64;
        stats.distinct_schedules_capped = self.capped;
    }
}

/// A run whose planned executions would take longer than this says so up front, on every
/// output (not only on a terminal).
pub(super) const LONG_RUN: Duration = Duration::from_secs(10);

/// What a run that plans `total` executions, `per` each, takes, when that is longer than
/// [`LONG_RUN`]: `(executions/s, duration text)`.
pub(super) fn long_estimate(per: Duration, total: u64) -> Option<(f64, String)> {
    let seconds = per.as_secs_f64() * total as f64;
    if seconds < LONG_RUN.as_secs_f64() {
        return None;
    }
    let text = match seconds {
        s if s > 3.0e7 => "more than a year".to_string(),
        s => format!("about {}", duration_text(Duration::from_secs_f64(s))),
    };
    Some((1.0 / per.as_secs_f64().max(1e-9), text))
}

/// The note a run that plans `total` executions, `per` each, prints up front when it will be
/// long (see [`long_estimate`]): `driver` says what drives the executions and how to lower
/// it; `budget` is the run's time budget.
pub(super) fn long_plan(
    name: &str,
    total: u64,
    per: Duration,
    driver: &str,
    budget: Option<Duration>,
) -> Option<String> {
    let (rate, took) = long_estimate(per, total)?;
    let budget = match budget {
        Some(t) => format!(" The time budget of {} stops it earlier.", duration_text(t)),
        None => " Or set a time budget: time = \"30s\" in the attribute, PCTVB_TIME=30s, or \
                  Config::time_budget; the report then says what the executions that ran prove."
            .to_string(),
    };
    Some(format!(
        "{name} plans {} executions, {took} at {rate:.0} executions/s: {driver}.{budget}",
        count_text(total)
    ))
}

/// `"4 min 30 s"`, `"12 s"`, `"1 h 5 min"`.
pub(super) fn duration_text(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0 => format!("{} ms", d.as_millis()),
        1..60 => format!("{:.0} s", d.as_secs_f64()),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// Thousands separated by commas.
pub(super) fn count_text(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_schedules_stop_growing_at_the_cap() {
        let mut d = DistinctSchedules::default();
        for i in 0..(DistinctSchedules::CAP as u64 + 10) {
            d.insert(i);
            d.insert(i);
        }
        let mut stats = crate::report::Stats::default();
        d.report(&mut stats);
        assert_eq!(stats.distinct_schedules, DistinctSchedules::CAP as u64);
        assert!(stats.distinct_schedules_capped);
    }

    #[test]
    fn texts() {
        assert_eq!(count_text(4_500_000), "4,500,000");
        assert_eq!(count_text(999), "999");
        assert_eq!(duration_text(Duration::from_secs(905)), "15 min 5 s");
        assert_eq!(duration_text(Duration::from_millis(400)), "400 ms");
    }
}
