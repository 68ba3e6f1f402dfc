//! The sentence a passing run proves.

use super::*;

/// The facts behind a reported guarantee; its [`Display`](fmt::Display) is the
/// sentence, e.g. `PCT: no bug of depth <= 2 (failing with 1 priority change
/// at the right point under at least 1 in n initial priority orders of the
/// threads; ordering constraints may count fewer when threads wait) was missed,
/// with probability >= 0.99 (4,605 executions; n=3, k=120; counts measured over
/// 10 profiling executions; 0 executions exceeded them)`.
///
/// Each strategy mentions only its own parameters: PCT `d, n, k`; PCTVB `d, v,
/// Q, n, max k_q`; ThreadBound `d, t, n, k`; Combined `d, v, Q, t, n, max k_q`;
/// Random states that there is no guarantee. PCTVB and Combined at depth 2 or
/// more say "(preempted only at their accesses)": their change points fall only
/// right before accesses of the chosen variables. A thread bound of 2 or more says
/// "(counting a thread that spawns them or that they wait for)": `t` counts a
/// thread that spawns one of the bug's threads while another of them exists, and a
/// thread one of them waits for (see [`crate::guarantee`]). PCT and PCTVB say which depth they
/// mean: "(failing with c priority changes at the right points under at least 1 in n initial
/// priority orders of the threads; ordering constraints may count fewer when threads wait)",
/// the depth their bound's proof needs, which PCT's count of ordering constraints can
/// undercount (see [`crate::guarantee`]). ThreadBound and Combined at depth
/// 2 or more say "(at most c priority changes, which a failure report may show as fewer
/// preemptions)": their depth is 1 + priority changes of strict-priority scheduling, and a
/// schedule can need more of those than the switches a report counts (guide section 4).
#[derive(Debug, Clone, PartialEq)]
pub struct GuaranteeStatement {
    /// The bound the strategy that ran carries.
    pub strategy: BoundKind,
    /// Bug depth `d` covered.
    pub depth: u32,
    /// Variables `v` covered (PCTVB, Combined).
    pub variables: u32,
    /// Threads `t` covered (ThreadBound, Combined).
    pub threads: u32,
    /// The confidence reached; printed rounded down, so the sentence stays true.
    pub confidence: f64,
    /// Executions run.
    pub executions: u64,
    /// Threads `n`.
    pub n: u64,
    /// Variables `Q` (PCTVB, Combined): the shared ones, and `static_only_variables`.
    pub shared_variables: u64,
    /// Of `Q`, the variables `#[pctvb::instrument]`'s static pass found in code the run entered
    /// that no profiling execution accessed (so not known to be shared).
    pub static_only_variables: u64,
    /// The largest `k_q` (PCTVB, Combined).
    pub max_kq: u64,
    /// Scheduling points `k` (PCT, ThreadBound).
    pub k: u64,
    /// Profiling executions the counts were measured over.
    pub profiling_runs: u64,
    /// Executions that exceeded the measured counts (not covered by the bound).
    pub exceeded_runs: u64,
}

impl fmt::Display for GuaranteeStatement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let executions = counted(self.executions, "execution", "executions");
        if self.strategy == BoundKind::Random {
            return write!(
                f,
                "{}: no guarantee (a uniform random walk has no useful lower bound on \
                 the probability of finding a bug); {executions}",
                self.strategy
            );
        }
        let uses_variables = self.strategy.uses_variables();
        let uses_threads = self.strategy.uses_threads();
        write!(f, "{}: no bug of depth <= {}", self.strategy, self.depth)?;
        if !uses_threads {
            // PCT's depth as its bound's proof needs it (module docs): the bug fails with
            // `d - 1` changes at the right points under one in n initial orders. PCT's
            // ordering constraints can count fewer when threads wait (`tests/differential.rs`
            // measured such bugs below the bound), so the sentence says which depth it means.
            // Saturating: the fields are public, and a statement built with depth 0 must print.
            let changes = match self.depth.saturating_sub(1) {
                0 => "with no priority change".to_string(),
                1 => "with 1 priority change at the right point".to_string(),
                c => format!("with {c} priority changes at the right points"),
            };
            write!(
                f,
                " (failing {changes} under at least 1 in n initial priority orders of the \
                 threads; ordering constraints may count fewer when threads wait)"
            )?;
        }
        if uses_threads && self.depth >= 2 {
            // Thread bounding's depth is 1 + its priority changes, and a schedule can need
            // more of those than the switches a failure report counts as preemptions (guide
            // section 4, `tests/differential.rs`): a user reading a report's shape must not
            // take its `c + 1` for a depth this covers.
            let c = self.depth - 1;
            let changes = if c == 1 { "change" } else { "changes" };
            write!(
                f,
                " (at most {c} priority {changes}, which a failure report may show as fewer \
                 preemptions)"
            )?;
        }
        if uses_variables {
            write!(
                f,
                " involving <= {} of the Q={} ",
                self.variables,
                group_thousands(u128::from(self.shared_variables))
            )?;
            match self.static_only_variables {
                0 => write!(f, "shared variables")?,
                s => write!(
                    f,
                    "variables ({} shared, {} found by #[pctvb::instrument] but never accessed)",
                    group_thousands(u128::from(self.shared_variables.saturating_sub(s))),
                    group_thousands(u128::from(s))
                )?,
            }
            if self.depth >= 2 {
                // Change points fall only before accesses of the chosen variables (never at
                // a spawn, join, park, exit or fence): the class says so (module docs).
                write!(f, " (preempted only at their accesses)")?;
            }
        }
        if uses_threads {
            let joint = if uses_variables { "and" } else { "involving" };
            let threads = if self.threads == 1 { "thread" } else { "threads" };
            write!(f, " {joint} <= {} {threads}", self.threads)?;
            if self.threads > 1 {
                // The class counts a thread that spawns the bug's threads, and one they wait
                // for (module docs).
                write!(f, " (counting a thread that spawns them or that they wait for)")?;
            }
        }
        let n = group_thousands(u128::from(self.n));
        let counts = if uses_variables {
            format!("k_q <= {}", group_thousands(u128::from(self.max_kq)))
        } else {
            format!("k={}", group_thousands(u128::from(self.k)))
        };
        write!(
            f,
            " was missed, with probability >= {} ({executions}; n={n}, {counts}; \
             counts measured over {}; {} exceeded them)",
            format_confidence(self.confidence),
            counted(self.profiling_runs, "profiling execution", "profiling executions"),
            counted(self.exceeded_runs, "execution", "executions"),
        )?;
        if uses_threads {
            self.write_order_coverage(f)?;
        }
        Ok(())
    }
}

impl GuaranteeStatement {
    /// Lemma 4.1 for the priority orders a thread-bounding run drew: whether every relative
    /// order of every `t + c` of its `n + c` thread fragments came up.
    fn write_order_coverage(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.depth.saturating_sub(1);
        // In u64: `threads` is the caller's bound, up to u32::MAX, and `t + c` overflowed u32
        // while a passing run's summary was printed. A bound above the threads that ran ends
        // here (`m > fragments`: no such subset to order); the lemma takes `m` as a u32.
        let fragments = self.n.saturating_add(u64::from(c));
        let m = u64::from(self.threads) + u64::from(c);
        if m < 2 || m > fragments {
            return Ok(());
        }
        let Ok(m) = u32::try_from(m) else { return Ok(()) };
        let what = format!(
            "every order of every {m} of the {} thread fragments",
            group_thousands(u128::from(fragments))
        );
        let covered = lemma_4_1_coverage(fragments, m, self.executions);
        if covered > 0.0 {
            write!(
                f,
                "; by Lemma 4.1, {what} was drawn, with probability >= {}",
                // (1 - 10^-300 is not 1.)
                format_confidence(covered.min(0.999_999_9))
            )
        } else {
            match lemma_4_1_executions(fragments, m, 0.01) {
                // Saturated: the count is not u64::MAX, only more than a u64 holds (a depth
                // near the cap gives 10^150 and beyond).
                Ok(u64::MAX) => write!(
                    f,
                    "; Lemma 4.1 needs more than {} executions to draw {what} with probability \
                     0.99",
                    group_thousands(u128::from(u64::MAX))
                ),
                Ok(needed) => write!(
                    f,
                    "; Lemma 4.1 needs {} to draw {what} with probability 0.99",
                    counted(needed, "execution", "executions")
                ),
                Err(_) => Ok(()),
            }
        }
    }
}

/// `"1 execution"`, `"4,605 executions"`.
pub(super) fn counted(count: u64, singular: &str, plural: &str) -> String {
    let noun = if count == 1 { singular } else { plural };
    format!("{} {noun}", group_thousands(u128::from(count)))
}

/// Formats a probability rounded *down* to at most 6 decimals, trailing zeros
/// removed, so that a printed "probability >= x" is never an overstatement
/// (beyond the `f64` representation of the value itself).
pub(super) fn format_confidence(confidence: f64) -> String {
    if confidence.is_nan() {
        return "NaN".to_string();
    }
    if confidence >= 1.0 {
        return "1".to_string();
    }
    if confidence <= 0.0 {
        return "0".to_string();
    }
    let long = format!("{confidence:.12}");
    if long.starts_with('1') {
        // Within 5e-13 of 1: the rounding went up; report the largest
        // 6-decimal value below 1 instead.
        return "0.999999".to_string();
    }
    let truncated = &long[..long.len().min(8)]; // "0." and 6 digits
    let trimmed = truncated.trim_end_matches('0').trim_end_matches('.');
    trimmed.to_string()
}

/// Formats a possibly huge, possibly infinite count of executions.
pub(super) fn format_count(count: f64) -> String {
    if count.is_finite() && count < 1e18 {
        group_thousands(count.ceil().max(0.0) as u128)
    } else if count.is_finite() {
        format!("about {count:.3e}")
    } else {
        "more than 1e308".to_string()
    }
}

/// Writes an integer with a comma every three digits: `4605` -> `"4,605"`.
pub(crate) fn group_thousands(value: u128) -> String {
    let digits = value.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}
