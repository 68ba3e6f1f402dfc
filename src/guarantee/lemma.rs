//! Lemma 4.1: executions after which every order of every few thread fragments was drawn.

use super::*;

/// Lemma 4.1 of Bindal et al., solved exactly: the number `P` of random
/// permutations of `fragments` elements after which every one of the `m!`
/// relative orders of every `m`-element subset (`m = t_plus_c`) has been seen,
/// with probability at least `1 - eps`.
///
/// A fixed order of a fixed subset appears in one uniform permutation with
/// probability exactly `1/m!`, so it is missed by all `P` permutations with
/// probability `(1-1/m!)^P`; by the union bound over the `m! * C(N, m)` pairs
/// (order, subset), everything is seen with probability at least `1 - eps`
/// once `m! * C(N,m) * (1-1/m!)^P <= eps`. This returns the smallest such `P`,
/// solved in log space: `ln m! + ln C(N,m) + P ln(1-1/m!) <= ln eps`. For
/// thread bounding, `fragments = n + c` and `t_plus_c = t + c` ("all `(t+c)!`
/// orders of all `(t+c)`-subsets of the `n+c` fragments").
///
/// Edge cases: `m = 0` or `m > fragments` give 0 (nothing to observe); `m = 1`
/// gives 1 (a singleton's only order is seen in any permutation). Saturates at
/// `u64::MAX`. Errors: `eps` not in `(0, 1)`.
pub fn lemma_4_1_executions(
    fragments: u64,
    t_plus_c: u32,
    eps: f64,
) -> Result<u64, GuaranteeError> {
    require_open_unit("eps", eps)?;
    let m = u64::from(t_plus_c);
    if m == 0 || m > fragments {
        return Ok(0);
    }
    if m == 1 {
        return Ok(1);
    }
    let ln_m_factorial = ln_factorial(m);
    let ln_targets = ln_m_factorial + ln_choose(fragments, m);
    let ln_miss_one = ln_1p(-exp(-ln_m_factorial)); // ln(1 - 1/m!) < 0
    let union_bound_holds = |p: u64| ln_targets + p as f64 * ln_miss_one <= ln(eps);
    let real = (ln(eps) - ln_targets) / ln_miss_one;
    if real >= u64::MAX as f64 {
        return Ok(u64::MAX);
    }
    let mut p = real.ceil().max(0.0) as u64;
    // Correct for rounding in the quotient, as in executions_for_confidence.
    while p > 0 && union_bound_holds(p - 1) {
        p -= 1;
    }
    while !union_bound_holds(p) && p < u64::MAX {
        p += 1;
    }
    Ok(p)
}

/// The other direction of [`lemma_4_1_executions`]: a lower bound on the probability that
/// `executions` uniform random permutations of `fragments` elements drew every relative order
/// of every `t_plus_c`-element subset, `1 - m! * C(N, m) * (1 - 1/m!)^P` by the same union
/// bound (0 when that is negative). `m = 0` or `m > fragments` give 1 (nothing to draw);
/// `m = 1` gives 1 once there is an execution.
pub fn lemma_4_1_coverage(fragments: u64, t_plus_c: u32, executions: u64) -> f64 {
    let m = u64::from(t_plus_c);
    if m == 0 || m > fragments {
        return 1.0;
    }
    if m == 1 {
        return if executions > 0 { 1.0 } else { 0.0 };
    }
    let ln_m_factorial = ln_factorial(m);
    let ln_targets = ln_m_factorial + ln_choose(fragments, m);
    let ln_miss_one = ln_1p(-exp(-ln_m_factorial));
    let ln_missed = ln_targets + executions as f64 * ln_miss_one;
    if ln_missed >= 0.0 {
        0.0
    } else {
        -exp_m1(ln_missed)
    }
}

/// Lemma 4.1's closed form as printed in the paper, for comparison:
/// `P >= (m+1)! * (ln(N*m) + ln(1/eps))` with `N = fragments`, `m = t_plus_c`.
///
/// It follows from the exact condition of [`lemma_4_1_executions`] through
/// `(1-1/m!)^P <= exp(-P/m!)` and `m! * C(N,m) <= N^m`, plus further slack, so
/// it is never smaller than the exact solution. Same edge cases and errors as
/// [`lemma_4_1_executions`] (`m = 0` or `m > N` give 0); saturates at `u64::MAX`.
#[cfg(test)]
pub fn lemma_4_1_paper(fragments: u64, t_plus_c: u32, eps: f64) -> Result<u64, GuaranteeError> {
    require_open_unit("eps", eps)?;
    let m = u64::from(t_plus_c);
    if m == 0 || m > fragments {
        return Ok(0);
    }
    let ln_sum = ln(fragments as f64 * m as f64) - ln(eps);
    let value = exp(ln_factorial(m + 1) + ln(ln_sum));
    if value >= u64::MAX as f64 {
        Ok(u64::MAX)
    } else {
        Ok(value.ceil() as u64)
    }
}
