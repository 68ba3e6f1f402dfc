//! Checking a bound against measured hit rates (Wilson intervals).

use super::*;

/// The Wilson score interval `(low, high)` for a success probability after
/// `successes` out of `trials`, with normal quantile `z` (see
/// [`z_for_confidence`]). Unlike the normal approximation it stays inside
/// `[0, 1]` and behaves at 0 or `trials` successes, which is where
/// bug-finding rates usually are. `trials = 0` gives `(0, 1)`.
///
/// # Panics
///
/// If `successes > trials`.
#[doc(hidden)]
pub fn wilson_interval(successes: u64, trials: u64, z: f64) -> (f64, f64) {
    assert!(
        successes <= trials,
        "wilson_interval: {successes} successes out of only {trials} trials"
    );
    if trials == 0 {
        return (0.0, 1.0);
    }
    let n = trials as f64;
    let rate = successes as f64 / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let center = (rate + z2 / (2.0 * n)) / denominator;
    let half_width = z / denominator * (rate * (1.0 - rate) / n + z2 / (4.0 * n * n)).sqrt();
    // At the extremes the exact endpoint is 0 or 1; don't let rounding move it.
    let low = if successes == 0 { 0.0 } else { (center - half_width).max(0.0) };
    let high = if successes == trials { 1.0 } else { (center + half_width).min(1.0) };
    (low, high)
}

/// The `z` of a two-sided confidence level: `z = sqrt(2) * erf_inv(level)`,
/// i.e. the `(1+level)/2` quantile of the standard normal (1.959964 for 0.95,
/// 3.2905267 for 0.999). Errors: `level` not in `(0, 1)`.
#[doc(hidden)]
pub fn z_for_confidence(level: f64) -> Result<f64, GuaranteeError> {
    require_open_unit("level", level)?;
    Ok(SQRT_2 * erf_inv(level))
}

/// Whether a claimed per-execution bound is consistent with a measured hit
/// rate: `p` must not exceed the upper end of the Wilson interval of `hits`
/// out of `trials` at quantile `z`. A `false` means the bound is, with high
/// confidence, not true for this program.
///
/// # Panics
///
/// If `hits > trials`.
#[doc(hidden)]
pub fn bound_is_plausible(ln_p: f64, hits: u64, trials: u64, z: f64) -> bool {
    let (_, high) = wilson_interval(hits, trials, z);
    exp(ln_p) <= high
}
