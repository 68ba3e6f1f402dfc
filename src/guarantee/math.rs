//! Combinatorics in log space.

use super::*;

/// `ln C(n, k)`, `-inf` when `k > n`.
pub(super) fn ln_choose(n: u64, k: u64) -> f64 {
    if k > n {
        return f64::NEG_INFINITY;
    }
    let k = k.min(n - k);
    if k <= DIRECT_SUM_TERMS {
        // C(n,k) = prod_{i=1..k} (n-k+i)/i: each term is a modest ratio, so
        // the sum of logarithms keeps full relative precision.
        (1..=k).map(|i| ((n - k + i) as f64 / i as f64).ln()).sum()
    } else {
        ln_binomial(n, k)
    }
}

/// `C(n, k)` exactly, or `None` if it does not fit a `u128`.
pub(super) fn exact_choose(n: u64, k: u64) -> Option<u128> {
    if k > n {
        return Some(0);
    }
    let k = k.min(n - k);
    // After step i the accumulator is C(n-k+i, i), so each division is exact.
    (1..=k).try_fold(1u128, |acc, i| Some(acc.checked_mul(u128::from(n - k + i))? / u128::from(i)))
}

/// `m!` exactly, or `None` if it does not fit a `u128`.
pub(super) fn exact_factorial(m: u64) -> Option<u128> {
    (1..=u128::from(m)).try_fold(1u128, |acc, i| acc.checked_mul(i))
}
