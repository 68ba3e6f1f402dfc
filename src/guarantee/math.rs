//! Combinatorics in log space, and the elementary functions the guarantee uses.
//!
//! `ln`, `exp`, `ln_1p` and `exp_m1` are the `libm` crate's (Rust, a port of musl's libm,
//! within an ulp as glibc's are), never `f64`'s methods: those call the system's libm, and a
//! binary that uses one loads `libm.so` at start-up, about 0.2 ms per test binary, which a
//! suite of one-execution loom models pays in full (issue #17's event-listener). The
//! factorials and `erf_inv` are computed here for the same reason (statrs calls `f64`'s
//! methods); the unit tests check them against statrs.

use super::*;

pub(super) fn ln(x: f64) -> f64 {
    libm::log(x)
}

pub(super) fn exp(x: f64) -> f64 {
    libm::exp(x)
}

pub(super) fn ln_1p(x: f64) -> f64 {
    libm::log1p(x)
}

pub(super) fn exp_m1(x: f64) -> f64 {
    libm::expm1(x)
}

/// `ln n!`: the logarithm of the exact product (in `f64`) up to 170!, the largest finite
/// one, and `ln Gamma(n+1)` beyond.
pub(super) fn ln_factorial(n: u64) -> f64 {
    if n <= 170 {
        ln((2..=n).fold(1.0f64, |acc, i| acc * i as f64))
    } else {
        libm::lgamma(n as f64 + 1.0)
    }
}

/// `ln C(n, k)` as a difference of log factorials (`-inf` when `k > n`).
pub(super) fn ln_binomial(n: u64, k: u64) -> f64 {
    if k > n {
        return f64::NEG_INFINITY;
    }
    ln_factorial(n) - ln_factorial(k) - ln_factorial(n - k)
}

/// The inverse of the error function on `(-1, 1)`, by bisection on `erf`: 200 halvings of
/// `[0, 6]` (`erf(6)` is 1 in `f64`) reach the nearest `f64`, and the bisection cannot
/// diverge as a Newton step from a poor start can. Called once per confidence check, never
/// on a hot path.
pub(super) fn erf_inv(y: f64) -> f64 {
    if y.is_nan() || !(-1.0..=1.0).contains(&y) {
        return f64::NAN;
    }
    if y == 1.0 || y == -1.0 {
        return y * f64::INFINITY;
    }
    let target = y.abs();
    let (mut low, mut high) = (0.0f64, 6.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (low + high);
        if mid == low || mid == high {
            break;
        }
        if libm::erf(mid) < target {
            low = mid;
        } else {
            high = mid;
        }
    }
    (0.5 * (low + high)).copysign(y)
}

/// `ln C(n, k)`, `-inf` when `k > n`.
pub(super) fn ln_choose(n: u64, k: u64) -> f64 {
    if k > n {
        return f64::NEG_INFINITY;
    }
    let k = k.min(n - k);
    if k <= DIRECT_SUM_TERMS {
        // C(n,k) = prod_{i=1..k} (n-k+i)/i: each term is a modest ratio, so
        // the sum of logarithms keeps full relative precision.
        (1..=k).map(|i| ln((n - k + i) as f64 / i as f64)).sum()
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
