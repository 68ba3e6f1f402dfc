//! Executions for a confidence target, and the confidence a number of executions reaches.

use super::*;

/// The smallest `N` with `1 - (1-p)^N >= confidence`, where `p = exp(ln_p)`.
///
/// `N = ceil(ln(1-confidence) / ln(1-p))`, with both logarithms taken by
/// `ln_1p` so that a tiny `p` (even below `f64::EPSILON`, where `1-p == 1`)
/// keeps its precision; the result is then checked against
/// [`confidence_after`] so that rounding in the quotient can never make it
/// one too large or too small. `p >= 1` gives 1.
///
/// Errors: `confidence` not in `(0, 1)`; `ln_p` NaN; or an `N` above
/// [`MAX_EXECUTIONS`], reported with the `N` needed (without the driving
/// factor: use [`BoundFactors::executions_for_confidence`] for that).
pub fn executions_for_confidence(ln_p: f64, confidence: f64) -> Result<u64, GuaranteeError> {
    require_open_unit("confidence", confidence)?;
    if ln_p.is_nan() {
        return Err(invalid("ln_p", "is NaN"));
    }
    if ln_p >= 0.0 {
        return Ok(1);
    }
    let too_many = |needed: f64| GuaranteeError::TooManyExecutions {
        confidence,
        needed,
        cap: MAX_EXECUTIONS,
        driver: None,
    };
    let needed = real_executions_needed(ln_p, confidence);
    // The slack of 2 leaves room for the integer correction below.
    if needed.is_nan() || needed > MAX_EXECUTIONS as f64 + 2.0 {
        return Err(too_many(needed));
    }
    let mut executions = (needed.ceil() as u64).max(1);
    while executions > 1 && confidence_after(ln_p, executions - 1) >= confidence {
        executions -= 1;
    }
    while confidence_after(ln_p, executions) < confidence {
        executions += 1;
    }
    if executions > MAX_EXECUTIONS {
        return Err(too_many(executions as f64));
    }
    Ok(executions)
}

/// `ln(1-confidence) / ln(1-p)` as a real number (`+inf` when it does not fit).
pub(super) fn real_executions_needed(ln_p: f64, confidence: f64) -> f64 {
    let ln_miss = ln_1p(-confidence); // ln(1 - confidence) < 0
    let ln_survive = ln_1p(-exp(ln_p)); // ln(1 - p)
    if ln_survive < 0.0 {
        ln_miss / ln_survive
    } else {
        // p underflowed to 0; ln(1-p) ~ -p, so N ~ -ln(1-confidence) / p.
        exp(ln(-ln_miss) - ln_p)
    }
}

/// The confidence reached after `executions` executions, `1 - (1-p)^N` with
/// `p = exp(ln_p)`, computed as `-exp_m1(N * ln_1p(-p))` so that it stays
/// accurate when `p` or the result is tiny. 0 executions give 0; `p >= 1`
/// (with at least one execution) gives 1.
pub fn confidence_after(ln_p: f64, executions: u64) -> f64 {
    if executions == 0 {
        return 0.0;
    }
    if ln_p >= 0.0 {
        return 1.0;
    }
    let ln_survive = ln_1p(-exp(ln_p));
    -exp_m1(executions as f64 * ln_survive)
}
