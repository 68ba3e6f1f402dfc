//! Probabilistic guarantees for pctvb's randomized priority schedulers.
//!
//! A randomized scheduler that exposes every bug of some class with
//! probability at least `p` in each execution, using fresh randomness in each
//! execution, misses a given bug of that class in all of `N` executions with
//! probability at most `(1-p)^N`. This module computes the per-execution lower
//! bound `p` of each strategy, the number of executions needed for a target
//! confidence, the confidence reached by a number of executions, the number of
//! executions of Lemma 4.1, and the sentence that reports the guarantee.
//!
//! # Per-execution lower bounds
//!
//! `n` threads, `k` scheduling points per execution, `k_q` accesses of shared
//! variable `q` per execution (`Q` shared variables), bug depth `d` (so
//! `c = d-1` change points), at most `v` variables and at most `t` threads
//! involved in the bug, and `K_v` = the sum of the `v` largest `k_q`.
//!
//! | strategy | `p >=` | source |
//! |---|---|---|
//! | PCT | `1/n * 1/k^c` | Burckhardt et al., ASPLOS 2010 (PCT's main theorem) |
//! | PCTVB | `1/C(Q,v) * 1/n * 1/K_v^c` | Bindal et al., Theorem 3.1, worst case over variable sets |
//! | ThreadBound | `1/(t+c)! * 1/k^c` | Bindal et al., section 4 (priority orders as in Lemma 4.1) |
//! | Combined | `1/C(Q,v) * 1/K_v^c * 1/(t+c)!` | derived in [`combined_bound`] |
//! | Random | none | a uniform random walk has no useful bound |
//!
//! When `d = 1` there are no change points, so the variable choice cannot
//! matter and its factor is 1 whatever `v` is.
//!
//! # Assumptions shared by every bound
//!
//! * `n` is at least the number of threads an execution ever has.
//! * `k` (resp. each `k_q`) is at least the number of scheduling points
//!   (resp. accesses of `q`) of any execution. pctvb measures these counts in
//!   profiling executions, so a guarantee covers only the executions that
//!   stayed within the measured counts: the report says how many did not.
//! * What "depth `d`" means depends on the priority scheme. For PCT and PCTVB
//!   it is PCT's definition: a set of `d` ordering constraints between events
//!   of the program that triggers the bug whenever all of them hold, whatever
//!   else happens. For ThreadBound and Combined it is the paper's `c + 1`: the
//!   bug needs `c = d-1` preemptions and one relative order of the `t + c`
//!   thread fragments they create. The two can differ: the paper's Figure 10
//!   needs 2 preemptions but has 4 ordering constraints, and PCT's fixed
//!   change-point priorities (all below the initial ones) need 3 change points
//!   for it where random fragment priorities need 2 (`tests/guarantee_paper.rs`
//!   measures both).
//! * The threads `t` of a bug include every thread whose order matters, the
//!   test body's own thread too when it spawns the bug's threads one after the
//!   other (a thread spawned later cannot run before it exists).
//! * The schedule is the only source of nondeterminism, and each execution
//!   draws its random choices independently of the others.
//!
//! # Log space
//!
//! `C(Q,v)`, `(t+c)!` and `k^c` overflow `f64` long before the parameters get
//! large (`Q` up to 10^6, `k` up to 10^9, `d` and `t` up to 10 and beyond), so
//! every bound is kept as a sum of natural logarithms ([`BoundFactors`]), and
//! the probabilities derived from it use `ln_1p`/`exp_m1`, which stay accurate
//! for `p` far below `f64::EPSILON`.

use std::f64::consts::SQRT_2;
use std::fmt;

use statrs::function::erf::erf_inv;
use statrs::function::factorial::{ln_binomial, ln_factorial};

/// The largest number of executions [`executions_for_confidence`] will ask
/// for; a larger need is reported as [`GuaranteeError::TooManyExecutions`].
pub const MAX_EXECUTIONS: u64 = 10_000_000;

/// Up to this many terms, `ln C(n, k)` is summed term by term instead of as a
/// difference of three huge `ln` factorials, which would cancel catastrophically
/// when `n` is large and `k` small (the usual case: `Q` = 10^6, `v` = 2).
const DIRECT_SUM_TERMS: u64 = 100_000;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// Why a bound or a number of executions could not be computed.
#[derive(Debug, Clone, PartialEq)]
pub enum GuaranteeError {
    /// A probability-like argument (a confidence level, `eps`) was not
    /// strictly between 0 and 1.
    OutOfRange {
        /// The argument's name.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// A parameter of a bound makes no sense, e.g. `n = 0` or `v > Q`.
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// Why it was rejected.
        reason: String,
    },
    /// Reaching the confidence needs more than [`MAX_EXECUTIONS`] executions.
    TooManyExecutions {
        /// The confidence asked for.
        confidence: f64,
        /// The number of executions it needs (may be `f64::INFINITY` when it
        /// does not fit an `f64`).
        needed: f64,
        /// The cap that was exceeded.
        cap: u64,
        /// The factor of the bound that contributes most to the need, when
        /// the caller supplied the bound's factors.
        driver: Option<Factor>,
    },
}

impl fmt::Display for GuaranteeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfRange { name, value } => {
                write!(f, "{name} must be strictly between 0 and 1, got {value}")
            }
            Self::InvalidParameter { name, reason } => write!(f, "invalid {name}: {reason}"),
            Self::TooManyExecutions { confidence, needed, cap, driver } => {
                write!(
                    f,
                    "reaching confidence {} needs {} executions, more than the cap of {}",
                    format_confidence(*confidence),
                    format_count(*needed),
                    group_thousands(u128::from(*cap)),
                )?;
                match driver {
                    Some(factor) => write!(
                        f,
                        "; the largest factor of the bound is {} (ln = {:.2})",
                        factor.name, factor.ln
                    ),
                    None => Ok(()),
                }
            }
        }
    }
}

impl std::error::Error for GuaranteeError {}

fn invalid(name: &'static str, reason: impl Into<String>) -> GuaranteeError {
    GuaranteeError::InvalidParameter { name, reason: reason.into() }
}

fn require(ok: bool, name: &'static str, reason: &str) -> Result<(), GuaranteeError> {
    if ok {
        Ok(())
    } else {
        Err(invalid(name, reason))
    }
}

fn require_open_unit(name: &'static str, value: f64) -> Result<(), GuaranteeError> {
    // Written so that NaN fails too.
    if value > 0.0 && value < 1.0 {
        Ok(())
    } else {
        Err(GuaranteeError::OutOfRange { name, value })
    }
}

// ---------------------------------------------------------------------------
// Bounds as products of named factors
// ---------------------------------------------------------------------------

/// One factor of a per-execution lower bound, kept as its natural logarithm.
#[derive(Debug, Clone, PartialEq)]
pub struct Factor {
    /// What the factor stands for, with its value, e.g.
    /// `"1/C(Q=40, v=2) = 1/780 variable choice"`.
    pub name: String,
    /// The natural logarithm of the factor (`<= 0`, as every factor is a
    /// probability).
    pub ln: f64,
}

/// A per-execution lower bound `p` on the probability of exposing a bug,
/// as the product of its factors, each kept in log space.
///
/// `ln p` is the sum of the factors' logarithms, so it never overflows; the
/// factor with the most negative logarithm is the one that drives the number
/// of executions needed ([`BoundFactors::dominant`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BoundFactors {
    /// The factors whose product is the bound; factors equal to 1 are left out.
    pub factors: Vec<Factor>,
}

impl BoundFactors {
    /// An empty product, i.e. the bound `p >= 1`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Multiplies the bound by a factor given by its natural logarithm.
    /// A factor equal to 1 (`ln == 0`) is dropped, as it explains nothing.
    pub fn push(&mut self, name: impl Into<String>, ln: f64) {
        if ln != 0.0 {
            self.factors.push(Factor { name: name.into(), ln });
        }
    }

    /// `ln p`: the sum of the factors' logarithms (0 for an empty product).
    pub fn ln_p(&self) -> f64 {
        self.factors.iter().map(|factor| factor.ln).sum()
    }

    /// `p` itself; underflows to 0 below about `1e-308`, where only
    /// [`BoundFactors::ln_p`] stays meaningful.
    pub fn p(&self) -> f64 {
        self.ln_p().exp()
    }

    /// The factor with the most negative logarithm: the parameter that makes
    /// the bound small. `None` for an empty product.
    pub fn dominant(&self) -> Option<&Factor> {
        self.factors.iter().reduce(|best, factor| if factor.ln < best.ln { factor } else { best })
    }

    /// [`executions_for_confidence`] for this bound; when the cap is exceeded
    /// the error names the [dominant](BoundFactors::dominant) factor.
    pub fn executions_for_confidence(&self, confidence: f64) -> Result<u64, GuaranteeError> {
        executions_for_confidence(self.ln_p(), confidence).map_err(|error| match error {
            GuaranteeError::TooManyExecutions { confidence, needed, cap, .. } => {
                GuaranteeError::TooManyExecutions {
                    confidence,
                    needed,
                    cap,
                    driver: self.dominant().cloned(),
                }
            }
            other => other,
        })
    }

    /// [`confidence_after`] for this bound.
    pub fn confidence_after(&self, executions: u64) -> f64 {
        confidence_after(self.ln_p(), executions)
    }
}

impl fmt::Display for BoundFactors {
    /// E.g. `p >= 2.1739e-2 (1 in 46) = 1/n = 1/2 initial priority order * 1/(k = 23)^(d-1=1) change points`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "p >= {}", format_probability(self.ln_p()))?;
        for (i, factor) in self.factors.iter().enumerate() {
            let joint = if i == 0 { " =" } else { " *" };
            write!(f, "{joint} {}", factor.name)?;
        }
        Ok(())
    }
}

fn format_probability(ln_p: f64) -> String {
    if ln_p < -700.0 {
        // exp would underflow: only the logarithm is meaningful.
        return format!("exp({ln_p:.1})");
    }
    let p = ln_p.exp();
    let inverse = (-ln_p).exp();
    if inverse < 1e15 {
        format!("{p:.4e} (1 in {})", group_thousands(inverse.round() as u128))
    } else {
        format!("{p:.4e}")
    }
}

/// `1/n`: the probability that the thread whose event must come first gets the
/// highest of the `n` random initial priorities (PCT's proof).
fn initial_priority_factor(bound: &mut BoundFactors, n: u64) {
    bound.push(
        format!("1/n = 1/{} initial priority order", group_thousands(u128::from(n))),
        -(n as f64).ln(),
    );
}

/// `1/size^c`: each of the `c` independently drawn change points lands on the
/// one point the bug needs, out of `size` equally likely ones.
fn change_points_factor(bound: &mut BoundFactors, label: &str, size: u128, c: u32) {
    if c == 0 {
        return; // no change point to place; also avoids 0 * ln(0) = NaN
    }
    bound.push(
        format!("1/({label} = {})^(d-1={c}) change points", group_thousands(size)),
        -f64::from(c) * (size as f64).ln(),
    );
}

/// `1/C(Q,v)`: the `v` chosen variables include the bug's variables.
fn variable_choice_factor(bound: &mut BoundFactors, q: u64, v: u64) {
    let exact = exact_choose(q, v)
        .map(|count| format!(" = 1/{}", group_thousands(count)))
        .unwrap_or_default();
    bound.push(
        format!("1/C(Q={}, v={v}){exact} variable choice", group_thousands(u128::from(q))),
        -ln_choose(q, v),
    );
}

/// `1/(t+c)!`: one given relative order of `t+c` priorities drawn as part of a
/// uniformly random permutation.
fn priority_order_factor(bound: &mut BoundFactors, t: u32, c: u32) {
    let m = u64::from(t) + u64::from(c);
    let exact = exact_factorial(m)
        .map(|value| format!(" = 1/{}", group_thousands(value)))
        .unwrap_or_default();
    bound.push(format!("1/(t+c)! = 1/({t}+{c})!{exact} priority order"), -ln_factorial(m));
}

// ---------------------------------------------------------------------------
// The bounds
// ---------------------------------------------------------------------------

/// PCT's bound: `p >= 1/(n * k^(d-1))`.
///
/// Source: Burckhardt et al., "A Randomized Scheduler with Probabilistic
/// Guarantees of Finding Bugs", ASPLOS 2010. Initial priorities are a random
/// permutation of `d..d+n-1`; `d-1` change points are drawn uniformly from
/// `[1, k]`; at the `i`-th one the running thread's priority becomes `i`. The
/// bug is exposed if the thread of the first event has the highest initial
/// priority (`1/n`) and each change point `i` is drawn exactly at the step the
/// bug needs for it (`1/k` each, independently).
///
/// Assumptions: `n` at least the number of threads, `k` at least the number of
/// scheduling points of any execution, and those of the module.
///
/// Errors: `n = 0`, `d = 0`, or `k = 0` with `d >= 2`.
pub fn pct_bound(n: u64, k: u64, d: u32) -> Result<BoundFactors, GuaranteeError> {
    require(n >= 1, "n", "a program has at least one thread")?;
    let c = change_points(d)?;
    require(c == 0 || k >= 1, "k", "a bug of depth >= 2 needs at least one scheduling point")?;
    let mut bound = BoundFactors::new();
    initial_priority_factor(&mut bound, n);
    change_points_factor(&mut bound, "k", u128::from(k), c);
    Ok(bound)
}

/// PCTVB's bound over every bug involving at most `v` variables:
/// `p >= 1/C(Q,v) * 1/(n * K_v^(d-1))`, with `Q = kq.len()` and `K_v` the sum
/// of the `v` largest counts in `kq`.
///
/// Source: Bindal, Bansal and Lal, "Variable and Thread Bounding for
/// Systematic Testing of Multithreaded Programs", Theorem 3.1. PCTVB chooses
/// `v` of the `Q` shared variables uniformly; its change points are drawn from
/// `S = {(q, j) : q chosen, j in [1, k_q]}`. For a bug whose variables are the
/// chosen ones, Theorem 3.1 gives `1/(n * |S|^(d-1))`.
///
/// * Variable choice, `1/C(Q,v)`: a bug on `u <= v` variables is covered when
///   the chosen set contains them, which happens with probability
///   `C(Q-u, v-u)/C(Q,v) >= 1/C(Q,v)`.
/// * Change points, `1/K_v^(d-1)`: the bug's variables are not known, so the
///   guarantee takes the worst case `|S| <= K_v`.
/// * When `d = 1` there are no change points, the choice of variables has no
///   effect, and both factors are 1.
///
/// `kq[q]` must be at least the accesses of variable `q` in any execution
/// (measured by profiling), and the bug's `d-1` preemptions must happen at
/// accesses of its variables (the paper's notion of a variable-bounded bug).
///
/// Errors: `n = 0`, `d = 0`, `v > Q`, or `d >= 2` with `v = 0` or with the
/// `v` largest counts all 0 (no change point could be placed).
pub fn pctvb_bound(n: u64, kq: &[u64], v: u32, d: u32) -> Result<BoundFactors, GuaranteeError> {
    require(n >= 1, "n", "a program has at least one thread")?;
    let c = change_points(d)?;
    let k_v = variables_for_change_points(kq, v, c)?;
    let mut bound = BoundFactors::new();
    if c > 0 {
        variable_choice_factor(&mut bound, kq.len() as u64, u64::from(v));
    }
    initial_priority_factor(&mut bound, n);
    change_points_factor(&mut bound, "sum k_q", k_v, c);
    Ok(bound)
}

/// The pure thread-bounding strategy: `p >= 1/(t+d-1)! * 1/k^(d-1)`.
///
/// Source: Bindal et al., section 4. Each execution draws a uniformly random
/// permutation `P` of `1..=n+c` (`c = d-1`); thread `i` starts with priority
/// `P_i`; change points are drawn uniformly from `[1, k]` as in PCT, and at the
/// `i`-th one the running thread's priority becomes `P_{n+i}`; scheduling is by
/// strict priority.
///
/// Derivation: fix the permutation; then there is a tuple of change points
/// that puts the `c` preemptions exactly where the bug needs them, drawn with
/// probability `1/k^c` since the draws are independent of `P`. The bug is then
/// exposed when the `t` involved threads' initial priorities and the `c`
/// post-change priorities fall in one particular relative order; these are
/// `t+c` entries of a uniform permutation, so each of their `(t+c)!` relative
/// orders has probability exactly `1/(t+c)!` (Lemma 4.1's premise).
///
/// Remark: because `P_{n+1..n+c}` are exchangeable, the `c!` ways of matching
/// draws to the bug's (distinct) preemption points are all as good, which
/// would allow an extra factor `c!`. The bound here leaves it out, so it stays
/// valid for any labelling of the change points; the two agree for `d <= 2`.
///
/// Assumptions: the bug is triggered by a particular relative order of the
/// fragments of at most `t` threads, whatever the other threads do, and each of
/// its preemptions interrupts one of those threads; `k` is at least the number
/// of scheduling points of any execution.
///
/// Errors: `d = 0`, `t = 0`, or `k = 0` with `d >= 2`.
pub fn thread_bound(k: u64, d: u32, t: u32) -> Result<BoundFactors, GuaranteeError> {
    let c = change_points(d)?;
    require(t >= 1, "t", "a bug involves at least one thread")?;
    require(c == 0 || k >= 1, "k", "a bug of depth >= 2 needs at least one scheduling point")?;
    let mut bound = BoundFactors::new();
    change_points_factor(&mut bound, "k", u128::from(k), c);
    priority_order_factor(&mut bound, t, c);
    Ok(bound)
}

/// The combined strategy (pctvb's default): PCTVB's variable choice and
/// change points with thread bounding's priority orders.
///
/// `p >= 1/C(Q,v) * 1/K_v^(d-1) * 1/(t+d-1)!`, with `Q = kq.len()` and `K_v`
/// the sum of the `v` largest counts in `kq`, for every bug of depth `d`
/// involving at most `v` variables and at most `t` threads.
///
/// Derivation (`c = d-1`; all three choices are independent):
///
/// 1. *Variables.* The `v` chosen variables contain the bug's `u <= v`
///    variables with probability `C(Q-u, v-u)/C(Q,v) >= 1/C(Q,v)`.
/// 2. *Change points.* Given such a choice, the `c` change points are drawn
///    independently and uniformly from `S = {(q, j) : q chosen, j in
///    [1, k_q]}`, labelled in draw order. Fix the permutation `P` below: then
///    one labelled tuple of `S^c` puts every preemption exactly where the bug
///    needs it, and it is drawn with probability `1/|S|^c >= 1/K_v^c`. No
///    extra factor appears: draw `i` must hit required point `i` for the
///    fixed labelling, which is a product of `c` independent `1/|S|` terms.
/// 3. *Priority order.* Priorities are the entries of a uniform permutation
///    `P` of `1..=n+c`: thread `i` starts at `P_i`, and the `i`-th change
///    point gives the running thread `P_{n+i}`. The `t` involved threads'
///    initial priorities and the `c` post-change priorities are `t+c` entries
///    of `P`, so the one relative order the bug needs has probability exactly
///    `1/(t+c)!`, whatever the other `n-t` threads get.
///
/// Multiplying gives the bound. There is no `1/n` factor: the thread-bounding
/// priority order replaces PCT's "first thread has the highest priority".
/// When `d = 1` there are no change points, the variable choice has no effect,
/// and `p >= 1/t!`. As in [`thread_bound`], an extra factor `c!` would also be
/// valid (the post-change priorities are exchangeable) but is left out.
///
/// Assumptions: each `kq[q]` is at least the accesses of `q` in any execution
/// (measured by profiling, so the bound holds only for executions that stayed
/// within the measured counts); the bug's `d-1` preemptions happen at accesses
/// of its variables, each interrupting one of its threads; the bug is
/// triggered by a particular relative order of the fragments of at most `t`
/// threads whatever the other threads do; and those of the module.
///
/// Errors: `d = 0`, `t = 0`, `v > Q`, or `d >= 2` with `v = 0` or with the `v`
/// largest counts all 0.
pub fn combined_bound(kq: &[u64], v: u32, d: u32, t: u32) -> Result<BoundFactors, GuaranteeError> {
    let c = change_points(d)?;
    require(t >= 1, "t", "a bug involves at least one thread")?;
    let k_v = variables_for_change_points(kq, v, c)?;
    let mut bound = BoundFactors::new();
    if c > 0 {
        variable_choice_factor(&mut bound, kq.len() as u64, u64::from(v));
    }
    change_points_factor(&mut bound, "sum k_q", k_v, c);
    priority_order_factor(&mut bound, t, c);
    Ok(bound)
}

/// `c = d - 1`, rejecting `d = 0`.
fn change_points(d: u32) -> Result<u32, GuaranteeError> {
    d.checked_sub(1).ok_or_else(|| invalid("d", "a bug has depth at least 1"))
}

/// Validates `v` against `kq` and returns `K_v`, the sum of the `v` largest
/// counts (the worst-case size of the change-point domain `S`).
fn variables_for_change_points(kq: &[u64], v: u32, c: u32) -> Result<u128, GuaranteeError> {
    let v = v as usize;
    if v > kq.len() {
        return Err(invalid(
            "v",
            format!("cannot choose {v} of only Q={} shared variables", kq.len()),
        ));
    }
    require(
        c == 0 || v >= 1,
        "v",
        "a bug of depth >= 2 needs at least one variable to place change points on",
    )?;
    let k_v = sum_of_largest(kq, v);
    require(
        c == 0 || k_v >= 1,
        "kq",
        "the chosen variables were never accessed, so no change point can be placed",
    )?;
    Ok(k_v)
}

/// Sum of the `v` largest values, in `u128` so that it cannot overflow.
fn sum_of_largest(values: &[u64], v: usize) -> u128 {
    if v == 0 {
        return 0;
    }
    let mut values = values.to_vec();
    // Partitions so that values[..v] are the v largest, in O(Q).
    values.select_nth_unstable_by(v - 1, |a, b| b.cmp(a));
    values[..v].iter().map(|&x| u128::from(x)).sum()
}

/// Which scheduling strategy a bound is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Uniform random walk: no useful bound.
    Random,
    /// PCT (Burckhardt et al.).
    Pct,
    /// PCT with variable bounding (Bindal et al., section 3).
    Pctvb,
    /// Thread bounding (Bindal et al., section 4).
    ThreadBound,
    /// PCTVB's variables and change points with thread-bounding priorities.
    Combined,
}

impl Strategy {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Random => "Random",
            Self::Pct => "PCT",
            Self::Pctvb => "PCTVB",
            Self::ThreadBound => "ThreadBound",
            Self::Combined => "Combined",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything any of the bounds may need; each strategy reads only its own
/// parameters (see [`bound_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoundParams<'a> {
    /// Number of threads (an upper bound).
    pub n: u64,
    /// Scheduling points per execution (an upper bound).
    pub k: u64,
    /// Accesses per execution of each of the `Q` shared variables.
    pub kq: &'a [u64],
    /// Variables the strategy chooses (bugs on at most `v` variables).
    pub v: u32,
    /// Bug depth.
    pub d: u32,
    /// Threads involved in the bug (at most).
    pub t: u32,
}

/// The bound of `strategy`, or `Ok(None)` for [`Strategy::Random`], which has
/// none. PCT reads `n, k, d`; PCTVB `n, kq, v, d`; ThreadBound `k, d, t`;
/// Combined `kq, v, d, t`.
pub fn bound_for(
    strategy: Strategy,
    params: &BoundParams<'_>,
) -> Result<Option<BoundFactors>, GuaranteeError> {
    let BoundParams { n, k, kq, v, d, t } = *params;
    let bound = match strategy {
        Strategy::Random => return Ok(None),
        Strategy::Pct => pct_bound(n, k, d)?,
        Strategy::Pctvb => pctvb_bound(n, kq, v, d)?,
        Strategy::ThreadBound => thread_bound(k, d, t)?,
        Strategy::Combined => combined_bound(kq, v, d, t)?,
    };
    Ok(Some(bound))
}

// ---------------------------------------------------------------------------
// Executions and confidence
// ---------------------------------------------------------------------------

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
fn real_executions_needed(ln_p: f64, confidence: f64) -> f64 {
    let ln_miss = (-confidence).ln_1p(); // ln(1 - confidence) < 0
    let ln_survive = (-ln_p.exp()).ln_1p(); // ln(1 - p)
    if ln_survive < 0.0 {
        ln_miss / ln_survive
    } else {
        // p underflowed to 0; ln(1-p) ~ -p, so N ~ -ln(1-confidence) / p.
        ((-ln_miss).ln() - ln_p).exp()
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
    let ln_survive = (-ln_p.exp()).ln_1p();
    -(executions as f64 * ln_survive).exp_m1()
}

// ---------------------------------------------------------------------------
// Lemma 4.1
// ---------------------------------------------------------------------------

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
    let ln_miss_one = (-(-ln_m_factorial).exp()).ln_1p(); // ln(1 - 1/m!) < 0
    let union_bound_holds = |p: u64| ln_targets + p as f64 * ln_miss_one <= eps.ln();
    let real = (eps.ln() - ln_targets) / ln_miss_one;
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

/// Lemma 4.1's closed form as printed in the paper, for comparison:
/// `P >= (m+1)! * (ln(N*m) + ln(1/eps))` with `N = fragments`, `m = t_plus_c`.
///
/// It follows from the exact condition of [`lemma_4_1_executions`] through
/// `(1-1/m!)^P <= exp(-P/m!)` and `m! * C(N,m) <= N^m`, plus further slack, so
/// it is never smaller than the exact solution. Same edge cases and errors as
/// [`lemma_4_1_executions`] (`m = 0` or `m > N` give 0); saturates at `u64::MAX`.
pub fn lemma_4_1_paper(fragments: u64, t_plus_c: u32, eps: f64) -> Result<u64, GuaranteeError> {
    require_open_unit("eps", eps)?;
    let m = u64::from(t_plus_c);
    if m == 0 || m > fragments {
        return Ok(0);
    }
    let ln_sum = (fragments as f64 * m as f64).ln() - eps.ln();
    let value = (ln_factorial(m + 1) + ln_sum.ln()).exp();
    if value >= u64::MAX as f64 {
        Ok(u64::MAX)
    } else {
        Ok(value.ceil() as u64)
    }
}

// ---------------------------------------------------------------------------
// Checking bounds against measurements
// ---------------------------------------------------------------------------

/// The Wilson score interval `(low, high)` for a success probability after
/// `successes` out of `trials`, with normal quantile `z` (see
/// [`z_for_confidence`]). Unlike the normal approximation it stays inside
/// `[0, 1]` and behaves at 0 or `trials` successes, which is where
/// bug-finding rates usually are. `trials = 0` gives `(0, 1)`.
///
/// # Panics
///
/// If `successes > trials`.
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
pub fn bound_is_plausible(ln_p: f64, hits: u64, trials: u64, z: f64) -> bool {
    let (_, high) = wilson_interval(hits, trials, z);
    ln_p.exp() <= high
}

// ---------------------------------------------------------------------------
// The statement
// ---------------------------------------------------------------------------

/// The facts behind a reported guarantee; its [`Display`](fmt::Display) is the
/// sentence, e.g. `PCTVB: no bug of depth <= 2 involving <= 1 of the Q=7
/// shared variables was missed, with probability >= 0.99 (4,605 executions;
/// n=3, k_q <= 40; counts measured over 10 profiling executions; 0 executions
/// exceeded them)`.
///
/// Each strategy mentions only its own parameters: PCT `d, n, k`; PCTVB `d, v,
/// Q, n, max k_q`; ThreadBound `d, t, n, k`; Combined `d, v, Q, t, n, max k_q`;
/// Random states that there is no guarantee.
#[derive(Debug, Clone, PartialEq)]
pub struct GuaranteeStatement {
    /// The strategy that ran.
    pub strategy: Strategy,
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
    /// Shared variables `Q` (PCTVB, Combined).
    pub shared_variables: u64,
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
        if self.strategy == Strategy::Random {
            return write!(
                f,
                "{}: no guarantee (a uniform random walk has no useful lower bound on \
                 the probability of finding a bug); {executions}",
                self.strategy
            );
        }
        let uses_variables = matches!(self.strategy, Strategy::Pctvb | Strategy::Combined);
        let uses_threads = matches!(self.strategy, Strategy::ThreadBound | Strategy::Combined);
        write!(f, "{}: no bug of depth <= {}", self.strategy, self.depth)?;
        if uses_variables {
            write!(
                f,
                " involving <= {} of the Q={} shared variables",
                self.variables,
                group_thousands(u128::from(self.shared_variables))
            )?;
        }
        if uses_threads {
            let joint = if uses_variables { "and" } else { "involving" };
            let threads = if self.threads == 1 { "thread" } else { "threads" };
            write!(f, " {joint} <= {} {threads}", self.threads)?;
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
        )
    }
}

/// `"1 execution"`, `"4,605 executions"`.
fn counted(count: u64, singular: &str, plural: &str) -> String {
    let noun = if count == 1 { singular } else { plural };
    format!("{} {noun}", group_thousands(u128::from(count)))
}

/// Formats a probability rounded *down* to at most 6 decimals, trailing zeros
/// removed, so that a printed "probability >= x" is never an overstatement
/// (beyond the `f64` representation of the value itself).
fn format_confidence(confidence: f64) -> String {
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
fn format_count(count: f64) -> String {
    if count.is_finite() && count < 1e18 {
        group_thousands(count.ceil().max(0.0) as u128)
    } else if count.is_finite() {
        format!("about {count:.3e}")
    } else {
        "more than 1e308".to_string()
    }
}

/// Writes an integer with a comma every three digits: `4605` -> `"4,605"`.
pub fn group_thousands(value: u128) -> String {
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

// ---------------------------------------------------------------------------
// Combinatorics in log space
// ---------------------------------------------------------------------------

/// `ln C(n, k)`, `-inf` when `k > n`.
fn ln_choose(n: u64, k: u64) -> f64 {
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
fn exact_choose(n: u64, k: u64) -> Option<u128> {
    if k > n {
        return Some(0);
    }
    let k = k.min(n - k);
    // After step i the accumulator is C(n-k+i, i), so each division is exact.
    (1..=k).try_fold(1u128, |acc, i| Some(acc.checked_mul(u128::from(n - k + i))? / u128::from(i)))
}

/// `m!` exactly, or `None` if it does not fit a `u128`.
fn exact_factorial(m: u64) -> Option<u128> {
    (1..=u128::from(m)).try_fold(1u128, |acc, i| acc.checked_mul(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative closeness of two positive numbers.
    fn close(a: f64, b: f64, relative: f64) -> bool {
        (a - b).abs() <= relative * a.abs().max(b.abs())
    }

    // -- Deterministic randomness for the simulations ------------------------

    /// splitmix64: tiny, seedable, and good enough for these simulations.
    struct SplitMix64(u64);

    impl SplitMix64 {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        /// Uniform in `0..bound` (multiply-shift; the bias is negligible here).
        fn below(&mut self, bound: u64) -> u64 {
            ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
        }

        fn shuffle<T>(&mut self, items: &mut [T]) {
            for i in (1..items.len()).rev() {
                let j = self.below(i as u64 + 1) as usize;
                items.swap(i, j);
            }
        }

        /// A uniform permutation of `1..=len`.
        fn permutation(&mut self, len: usize) -> Vec<u64> {
            let mut values: Vec<u64> = (1..=len as u64).collect();
            self.shuffle(&mut values);
            values
        }
    }

    // -- A toy priority scheduler ---------------------------------------------

    /// Where a change point fires: after the `j`-th global step, or after the
    /// `j`-th access of variable `q` (both 1-based).
    #[derive(Clone, Copy)]
    enum Trigger {
        Step(u64),
        Access(usize, u64),
    }

    /// Runs threads whose steps each access one variable under strict
    /// priority scheduling (higher number = higher priority). After each
    /// step, every change point whose trigger matches gives the running
    /// thread its new priority. Returns the trace as (thread, step index).
    fn run(
        program: &[Vec<usize>],
        mut priority: Vec<u64>,
        changes: &[(Trigger, u64)],
    ) -> Vec<(usize, usize)> {
        let mut next = vec![0; program.len()];
        let mut accesses = [0u64; 8];
        let mut trace = Vec::new();
        while let Some(thread) =
            (0..program.len()).filter(|&i| next[i] < program[i].len()).max_by_key(|&i| priority[i])
        {
            let variable = program[thread][next[thread]];
            trace.push((thread, next[thread]));
            next[thread] += 1;
            accesses[variable] += 1;
            let step = trace.len() as u64;
            for &(trigger, new_priority) in changes {
                let fires = match trigger {
                    Trigger::Step(j) => j == step,
                    Trigger::Access(q, j) => q == variable && j == accesses[variable],
                };
                if fires {
                    priority[thread] = new_priority;
                }
            }
        }
        trace
    }

    /// Whether the events appear in the trace in the given order.
    fn in_order(trace: &[(usize, usize)], events: &[(usize, usize)]) -> bool {
        let positions: Vec<usize> = events
            .iter()
            .map(|event| trace.iter().position(|e| e == event).expect("event ran"))
            .collect();
        positions.windows(2).all(|pair| pair[0] < pair[1])
    }

    fn pct_execution(
        rng: &mut SplitMix64,
        program: &[Vec<usize>],
        k: u64,
        d: u32,
    ) -> Vec<(usize, usize)> {
        let n = program.len();
        let priority: Vec<u64> = rng.permutation(n).iter().map(|p| p + u64::from(d) - 1).collect();
        let changes: Vec<(Trigger, u64)> =
            (1..u64::from(d)).map(|i| (Trigger::Step(1 + rng.below(k)), i)).collect();
        run(program, priority, &changes)
    }

    fn thread_bound_execution(
        rng: &mut SplitMix64,
        program: &[Vec<usize>],
        k: u64,
        d: u32,
    ) -> Vec<(usize, usize)> {
        let n = program.len();
        let c = d as usize - 1;
        let p = rng.permutation(n + c);
        let changes: Vec<(Trigger, u64)> =
            (0..c).map(|i| (Trigger::Step(1 + rng.below(k)), p[n + i])).collect();
        run(program, p[..n].to_vec(), &changes)
    }

    /// PCTVB (`thread_bound_priorities = false`) or Combined (`true`) with
    /// `v = 1`: choose one variable, draw change points among its accesses.
    fn variable_execution(
        rng: &mut SplitMix64,
        program: &[Vec<usize>],
        kq: &[u64],
        d: u32,
        thread_bound_priorities: bool,
    ) -> Vec<(usize, usize)> {
        let n = program.len();
        let c = d as usize - 1;
        let q = rng.below(kq.len() as u64) as usize;
        let draw = |rng: &mut SplitMix64| Trigger::Access(q, 1 + rng.below(kq[q]));
        if thread_bound_priorities {
            let p = rng.permutation(n + c);
            let changes: Vec<_> = (0..c).map(|i| (draw(rng), p[n + i])).collect();
            run(program, p[..n].to_vec(), &changes)
        } else {
            let priority: Vec<u64> =
                rng.permutation(n).iter().map(|p| p + u64::from(d) - 1).collect();
            let changes: Vec<_> = (1..u64::from(d)).map(|i| (draw(rng), i)).collect();
            run(program, priority, &changes)
        }
    }

    /// Runs `trials` executions and counts those in which `bug` holds.
    fn hits(
        trials: u64,
        mut execution: impl FnMut() -> Vec<(usize, usize)>,
        bug: &[(usize, usize)],
    ) -> u64 {
        (0..trials).filter(|_| in_order(&execution(), bug)).count() as u64
    }

    fn z999() -> f64 {
        z_for_confidence(0.999).unwrap()
    }

    // -- Known values ---------------------------------------------------------

    #[test]
    fn pct_bound_known_values() {
        let bound = pct_bound(2, 23, 2).unwrap();
        assert!(close(bound.p(), 1.0 / 46.0, 1e-14));
        assert!(close(pct_bound(5, 100, 1).unwrap().p(), 0.2, 1e-14));
        assert!(close(pct_bound(3, 10, 3).unwrap().p(), 1.0 / 300.0, 1e-14));
        assert_eq!(pct_bound(1, 1, 1).unwrap().ln_p(), 0.0);
    }

    #[test]
    fn pctvb_bound_has_variable_choice_and_worst_case_counts() {
        // C(4,2) = 6, n = 3, two largest counts 40 + 30 = 70.
        let bound = pctvb_bound(3, &[10, 40, 20, 30], 2, 2).unwrap();
        assert!(close(bound.p(), 1.0 / (6.0 * 3.0 * 70.0), 1e-14));
        let names: Vec<&str> = bound.factors.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "1/C(Q=4, v=2) = 1/6 variable choice",
                "1/n = 1/3 initial priority order",
                "1/(sum k_q = 70)^(d-1=1) change points",
            ]
        );
        // d = 1: no change points, so the variables do not matter.
        assert!(close(pctvb_bound(3, &[10, 40, 20, 30], 2, 1).unwrap().p(), 1.0 / 3.0, 1e-14));
    }

    #[test]
    fn thread_and_combined_bounds_known_values() {
        assert!(close(thread_bound(6, 2, 2).unwrap().p(), 1.0 / 36.0, 1e-14));
        assert!(close(thread_bound(4, 3, 2).unwrap().p(), 1.0 / (24.0 * 16.0), 1e-14));
        let kq = [5, 40, 7, 1, 2, 3, 4];
        let combined = combined_bound(&kq, 1, 2, 2).unwrap();
        assert!(close(combined.p(), 1.0 / (7.0 * 40.0 * 6.0), 1e-14));
        assert!(combined
            .factors
            .iter()
            .any(|f| f.name == "1/(t+c)! = 1/(2+1)! = 1/6 priority order"));
        // d = 1: only the order of the t threads matters.
        assert!(close(combined_bound(&kq, 3, 1, 3).unwrap().p(), 1.0 / 6.0, 1e-14));
        assert!(close(combined_bound(&kq, 0, 1, 2).unwrap().p(), 0.5, 1e-14));
    }

    #[test]
    fn bound_for_dispatches_and_random_has_none() {
        let kq = [3, 9, 4];
        let params = BoundParams { n: 4, k: 30, kq: &kq, v: 2, d: 3, t: 2 };
        assert_eq!(bound_for(Strategy::Random, &params).unwrap(), None);
        assert_eq!(bound_for(Strategy::Pct, &params).unwrap(), Some(pct_bound(4, 30, 3).unwrap()));
        assert_eq!(
            bound_for(Strategy::Pctvb, &params).unwrap(),
            Some(pctvb_bound(4, &kq, 2, 3).unwrap())
        );
        assert_eq!(
            bound_for(Strategy::ThreadBound, &params).unwrap(),
            Some(thread_bound(30, 3, 2).unwrap())
        );
        assert_eq!(
            bound_for(Strategy::Combined, &params).unwrap(),
            Some(combined_bound(&kq, 2, 3, 2).unwrap())
        );
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        let invalid_name = |result: Result<BoundFactors, GuaranteeError>| match result {
            Err(GuaranteeError::InvalidParameter { name, .. }) => name,
            other => panic!("expected InvalidParameter, got {other:?}"),
        };
        assert_eq!(invalid_name(pct_bound(0, 10, 2)), "n");
        assert_eq!(invalid_name(pct_bound(2, 10, 0)), "d");
        assert_eq!(invalid_name(pct_bound(2, 0, 2)), "k");
        assert_eq!(invalid_name(pctvb_bound(2, &[1, 2], 3, 2)), "v");
        assert_eq!(invalid_name(pctvb_bound(2, &[1, 2], 0, 2)), "v");
        assert_eq!(invalid_name(pctvb_bound(2, &[0, 0, 0], 2, 2)), "kq");
        assert_eq!(invalid_name(thread_bound(10, 2, 0)), "t");
        assert_eq!(invalid_name(combined_bound(&[1, 2], 3, 1, 2)), "v");
        // Depth 1 needs no scheduling points or variables.
        assert!(pct_bound(2, 0, 1).is_ok());
        assert!(pctvb_bound(2, &[], 0, 1).is_ok());
    }

    // -- Executions and confidence --------------------------------------------

    #[test]
    fn executions_for_one_in_46_at_99_percent_is_210() {
        // ln(0.01) / ln(45/46) = 209.5..., so 210.
        let ln_p = -(46f64).ln();
        assert_eq!(executions_for_confidence(ln_p, 0.99).unwrap(), 210);
        assert!((45f64 / 46.0).powi(209) > 0.01);
        assert!((45f64 / 46.0).powi(210) <= 0.01);
        assert_eq!(pct_bound(2, 23, 2).unwrap().executions_for_confidence(0.99).unwrap(), 210);
    }

    #[test]
    fn executions_when_the_quotient_is_an_integer() {
        let half = 0.5f64.ln();
        assert_eq!(executions_for_confidence(half, 0.75).unwrap(), 2);
        assert_eq!(executions_for_confidence(half, 0.875).unwrap(), 3);
        assert_eq!(executions_for_confidence(half, 0.5).unwrap(), 1);
    }

    #[test]
    fn certain_bound_needs_one_execution_and_bad_confidence_is_rejected() {
        assert_eq!(executions_for_confidence(0.0, 0.999_999).unwrap(), 1);
        assert_eq!(BoundFactors::new().executions_for_confidence(0.5).unwrap(), 1);
        for bad in [0.0, 1.0, -0.5, 1.5, f64::NAN] {
            assert!(matches!(
                executions_for_confidence(-1.0, bad),
                Err(GuaranteeError::OutOfRange { name: "confidence", .. })
            ));
        }
        assert!(executions_for_confidence(f64::NAN, 0.9).is_err());
    }

    #[test]
    fn tiny_p_exceeds_the_cap_and_names_the_largest_factor() {
        let mut bound = BoundFactors::new();
        bound.push("1/C(Q=1,414, v=2) = 1/998,991 variable choice", -(1e6f64).ln());
        bound.push("1/(sum k_q = 1,000)^(d-1=1) change points", -(1e3f64).ln());
        assert!(close(bound.p(), 1e-9, 1e-12));
        let error = bound.executions_for_confidence(0.99).unwrap_err();
        let GuaranteeError::TooManyExecutions { needed, cap, driver, .. } = &error else {
            panic!("expected TooManyExecutions, got {error:?}");
        };
        // -ln(0.01) / 1e-9 = 4.605e9.
        assert!(close(*needed, 4.605_170_186e9, 1e-6));
        assert_eq!(*cap, MAX_EXECUTIONS);
        assert!(driver.as_ref().unwrap().name.contains("variable choice"));
        let message = error.to_string();
        assert!(message.contains("4,605,170,18"), "{message}");
        assert!(message.contains("10,000,000"), "{message}");
        assert!(message.contains("variable choice"), "{message}");
        // Without factors the error still says what is needed.
        assert!(matches!(
            executions_for_confidence(bound.ln_p(), 0.99),
            Err(GuaranteeError::TooManyExecutions { driver: None, .. })
        ));
    }

    #[test]
    fn realistic_combined_bound_over_the_cap_blames_the_variable_choice() {
        // C(1000, 2) = 499,500 dominates 1/2000 and 1/3!.
        let kq = vec![1_000; 1_000];
        let error =
            combined_bound(&kq, 2, 2, 2).unwrap().executions_for_confidence(0.9).unwrap_err();
        assert!(
            error.to_string().contains("1/C(Q=1,000, v=2) = 1/499,500 variable choice"),
            "{error}"
        );
    }

    #[test]
    fn confidence_after_is_accurate_and_monotone() {
        let ln_p = -(46f64).ln();
        assert!(confidence_after(ln_p, 210) >= 0.99);
        assert!(confidence_after(ln_p, 209) < 0.99);
        assert_eq!(confidence_after(ln_p, 0), 0.0);
        assert_eq!(confidence_after(0.0, 1), 1.0);
        let mut previous = 0.0;
        for executions in [1, 2, 10, 100, 1_000, 10_000] {
            let confidence = confidence_after(ln_p, executions);
            assert!(confidence > previous);
            previous = confidence;
        }
        // p = 1e-12, N = 1e6: 1-(1-p)^N = 1e-6 - 5e-13 + ..., which naive
        // floating point (1 - 1e-12 rounds) would get wrong in the 4th digit.
        let tiny = confidence_after((1e-12f64).ln(), 1_000_000);
        assert!(close(tiny, 1e-6 - 0.5e-12, 1e-9), "{tiny}");
    }

    #[test]
    fn larger_counts_give_smaller_bounds() {
        assert!(pct_bound(3, 200, 3).unwrap().ln_p() < pct_bound(3, 100, 3).unwrap().ln_p());
        assert!(pct_bound(4, 100, 3).unwrap().ln_p() < pct_bound(3, 100, 3).unwrap().ln_p());
        assert!(thread_bound(200, 3, 2).unwrap().ln_p() < thread_bound(100, 3, 2).unwrap().ln_p());
        assert!(thread_bound(100, 3, 3).unwrap().ln_p() < thread_bound(100, 3, 2).unwrap().ln_p());
        let small = [10, 20, 30];
        let large = [10, 20, 60];
        assert!(
            pctvb_bound(2, &large, 1, 2).unwrap().ln_p()
                < pctvb_bound(2, &small, 1, 2).unwrap().ln_p()
        );
        assert!(
            combined_bound(&large, 2, 3, 2).unwrap().ln_p()
                < combined_bound(&small, 2, 3, 2).unwrap().ln_p()
        );
        // More variables to choose from: a smaller bound.
        let more = [10, 20, 30, 5];
        assert!(
            combined_bound(&more, 1, 2, 2).unwrap().ln_p()
                < combined_bound(&small, 1, 2, 2).unwrap().ln_p()
        );
    }

    #[test]
    fn huge_parameters_do_not_overflow() {
        // Q = 10^6 variables of 10^9 accesses each, v = t = d = 10.
        let kq = vec![1_000_000_000; 1_000_000];
        let bound = combined_bound(&kq, 10, 10, 10).unwrap();
        let expected = -(ln_choose(1_000_000, 10) + 9.0 * (1e10f64).ln() + ln_factorial(19));
        assert!(bound.ln_p().is_finite() && bound.ln_p() < -300.0);
        assert!(close(bound.ln_p(), expected, 1e-12));
        assert!(matches!(
            bound.executions_for_confidence(0.99),
            Err(GuaranteeError::TooManyExecutions { .. })
        ));
        assert!(pctvb_bound(64, &kq, 10, 10).unwrap().ln_p().is_finite());
        assert!(pct_bound(u64::MAX, u64::MAX, 10).unwrap().ln_p().is_finite());
        // Counts near u64::MAX: their sum needs more than 64 bits.
        let bound = pctvb_bound(2, &[u64::MAX; 3], 3, 2).unwrap();
        assert!(close(bound.ln_p(), -(2f64.ln() + (3.0 * u64::MAX as f64).ln()), 1e-12));
        // Even p = exp(-10^4), far below f64's range, gives a finite report.
        let error = executions_for_confidence(-1e4, 0.99).unwrap_err();
        assert!(error.to_string().contains("more than 1e308"), "{error}");
        assert_eq!(confidence_after(-1e4, u64::MAX), 0.0);
    }

    #[test]
    fn ln_choose_is_precise_for_large_q() {
        // C(10^6, 2) = 499,999,500,000.
        assert!(close(ln_choose(1_000_000, 2), (499_999_500_000f64).ln(), 1e-15));
        assert_eq!(exact_choose(1_000_000, 2), Some(499_999_500_000));
        assert_eq!(exact_choose(40, 2), Some(780));
        assert_eq!(exact_choose(10_000, 5_000), None);
        // Symmetric and consistent with statrs where both apply.
        assert!(close(ln_choose(300_000, 299_990), ln_choose(300_000, 10), 1e-15));
        assert!(close(ln_choose(400_000, 200_000), ln_binomial(400_000, 200_000), 1e-12));
        assert_eq!(ln_choose(3, 4), f64::NEG_INFINITY);
    }

    // -- Lemma 4.1 --------------------------------------------------------------

    #[test]
    fn lemma_4_1_exact_known_value_and_edges() {
        // 2! * C(5,2) * (1/2)^P <= 0.1  <=>  P >= log2(200) = 7.64.
        assert_eq!(lemma_4_1_executions(5, 2, 0.1).unwrap(), 8);
        // 3! * C(5,3) * (5/6)^P <= 0.1  <=>  P >= ln(600)/ln(1.2) = 35.09.
        assert_eq!(lemma_4_1_executions(5, 3, 0.1).unwrap(), 36);
        assert_eq!(lemma_4_1_executions(5, 0, 0.1).unwrap(), 0);
        assert_eq!(lemma_4_1_executions(5, 6, 0.1).unwrap(), 0);
        assert_eq!(lemma_4_1_executions(5, 1, 0.1).unwrap(), 1);
        assert!(lemma_4_1_executions(5, 2, 1.0).is_err());
        assert!(lemma_4_1_paper(5, 2, 0.0).is_err());
    }

    #[test]
    fn lemma_4_1_exact_never_exceeds_the_paper() {
        for fragments in [2, 5, 10, 50, 1_000, 1_000_000] {
            for m in 1..=12u32 {
                for eps in [0.5, 0.1, 1e-3, 1e-9] {
                    let exact = lemma_4_1_executions(fragments, m, eps).unwrap();
                    let paper = lemma_4_1_paper(fragments, m, eps).unwrap();
                    assert!(exact <= paper, "N={fragments} m={m} eps={eps}: {exact} > {paper}");
                }
            }
        }
        // The paper's closed form for N=5, m=2, eps=0.1: 3! * (ln 10 + ln 10) = 27.6.
        assert_eq!(lemma_4_1_paper(5, 2, 0.1).unwrap(), 28);
    }

    /// Whether `p` permutations of `1..=fragments` show every relative order
    /// of every `m`-subset (checked on the positions of the subset's items).
    fn all_orders_seen(rng: &mut SplitMix64, fragments: usize, m: usize, p: u64) -> bool {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..p {
            let permutation = rng.permutation(fragments);
            for subset in subsets(fragments, m) {
                let order: Vec<u64> = subset.iter().map(|&i| permutation[i]).collect();
                let mut ranks: Vec<usize> = (0..m).collect();
                ranks.sort_by_key(|&j| order[j]);
                seen.insert((subset, ranks));
            }
        }
        let orders: usize = (1..=m).product();
        seen.len() == subsets(fragments, m).len() * orders
    }

    fn subsets(n: usize, m: usize) -> Vec<Vec<usize>> {
        (0u32..1 << n)
            .filter(|mask| mask.count_ones() as usize == m)
            .map(|mask| (0..n).filter(|i| mask & (1 << i) != 0).collect())
            .collect()
    }

    #[test]
    fn lemma_4_1_exact_count_covers_everything_empirically() {
        let mut rng = SplitMix64(0x5EED_0401);
        let eps = 0.1;
        for m in [2u32, 3] {
            let p = lemma_4_1_executions(5, m, eps).unwrap();
            let trials = 2_000;
            let failures =
                (0..trials).filter(|_| !all_orders_seen(&mut rng, 5, m as usize, p)).count() as u64;
            let (_, high) = wilson_interval(failures, trials, z999());
            assert!(high <= eps, "m={m}: {failures}/{trials} failed to cover (upper {high})");
        }
    }

    // -- Wilson interval ----------------------------------------------------------

    #[test]
    fn z_values_match_the_normal_quantiles() {
        assert!(close(z_for_confidence(0.95).unwrap(), 1.959_963_985, 1e-8));
        assert!(close(z_for_confidence(0.999).unwrap(), 3.290_526_731, 1e-8));
        assert!(z_for_confidence(1.0).is_err());
    }

    #[test]
    fn wilson_interval_contains_the_mean_and_shrinks() {
        let z = z999();
        let mut previous_width = f64::INFINITY;
        for trials in [10u64, 100, 1_000, 10_000, 100_000] {
            let successes = trials / 10;
            let (low, high) = wilson_interval(successes, trials, z);
            assert!(low < 0.1 && 0.1 < high, "{low} {high}");
            assert!(high - low < previous_width);
            previous_width = high - low;
        }
        assert_eq!(wilson_interval(0, 0, z), (0.0, 1.0));
        let (low, high) = wilson_interval(0, 100, z);
        assert_eq!(low, 0.0);
        assert!(high > 0.0 && high < 0.2);
        assert_eq!(wilson_interval(100, 100, z).1, 1.0);
        assert!(bound_is_plausible((0.05f64).ln(), 0, 100, z));
        assert!(!bound_is_plausible((0.5f64).ln(), 0, 100, z));
    }

    // -- The bounds hold on simulated schedulers ----------------------------------

    const TRIALS: u64 = 100_000;

    #[test]
    fn pct_bound_holds_in_simulation() {
        // Thread 0 runs a1, a2; thread 1 runs b1; the bug is a1 < b1 < a2.
        // Exactly 1/6: thread 0 first (1/2), change point after step 1 (1/3).
        let program = [vec![0, 0], vec![0]];
        let bug = [(0, 0), (1, 0), (0, 1)];
        let mut rng = SplitMix64(1);
        let found = hits(TRIALS, || pct_execution(&mut rng, &program, 3, 2), &bug);
        let bound = pct_bound(2, 3, 2).unwrap();
        assert!(bound_is_plausible(bound.ln_p(), found, TRIALS, z999()));
        let (low, _) = wilson_interval(found, TRIALS, z999());
        assert!(low <= bound.p(), "the bound is exact here");
        // A third, unrelated thread.
        let program = [vec![0, 0], vec![0], vec![1, 1]];
        let found = hits(TRIALS, || pct_execution(&mut rng, &program, 5, 2), &bug);
        assert!(bound_is_plausible(pct_bound(3, 5, 2).unwrap().ln_p(), found, TRIALS, z999()));
    }

    #[test]
    fn thread_bound_holds_in_simulation() {
        let mut rng = SplitMix64(2);
        // Depth 2: exactly 1/(3! * 3) = 1/18.
        let program = [vec![0, 0], vec![0]];
        let bug = [(0, 0), (1, 0), (0, 1)];
        let found = hits(TRIALS, || thread_bound_execution(&mut rng, &program, 3, 2), &bug);
        assert!(bound_is_plausible(thread_bound(3, 2, 2).unwrap().ln_p(), found, TRIALS, z999()));
        // Depth 3, a1 < b1 < a2 < b2: the bound 1/(4! * 4^2) = 1/384 holds, and
        // the true 2!/(4! * 4^2) = 1/192 shows the c! slack the docs mention.
        let program = [vec![0, 0], vec![0, 0]];
        let bug = [(0, 0), (1, 0), (0, 1), (1, 1)];
        let found = hits(TRIALS, || thread_bound_execution(&mut rng, &program, 4, 3), &bug);
        let bound = thread_bound(4, 3, 2).unwrap();
        assert!(bound_is_plausible(bound.ln_p(), found, TRIALS, z999()));
        let (low, high) = wilson_interval(found, TRIALS, z999());
        assert!(low > bound.p() && low <= 1.0 / 192.0 && 1.0 / 192.0 <= high, "{low} {high}");
    }

    #[test]
    fn variable_bounds_hold_in_simulation() {
        // x = variable 0 (k_x = 3), y = variable 1 (k_y = 2); thread 2 only
        // touches y. Bug a1 < b1 < a2 on x: depth 2, one variable, two threads.
        let program = [vec![0, 0], vec![0], vec![1, 1]];
        let kq = [3, 2];
        let bug = [(0, 0), (1, 0), (0, 1)];
        let mut rng = SplitMix64(3);
        // PCTVB: 1/C(2,1) * 1/3 * 1/3 = 1/18 (true rate 1/2 * 1/2 * 1/3 = 1/12).
        let found = hits(TRIALS, || variable_execution(&mut rng, &program, &kq, 2, false), &bug);
        let bound = pctvb_bound(3, &kq, 1, 2).unwrap();
        assert!(close(bound.p(), 1.0 / 18.0, 1e-14));
        assert!(bound_is_plausible(bound.ln_p(), found, TRIALS, z999()));
        // Combined: 1/C(2,1) * 1/3 * 1/3! = 1/36, which is exact here.
        let found = hits(TRIALS, || variable_execution(&mut rng, &program, &kq, 2, true), &bug);
        let bound = combined_bound(&kq, 1, 2, 2).unwrap();
        assert!(close(bound.p(), 1.0 / 36.0, 1e-14));
        assert!(bound_is_plausible(bound.ln_p(), found, TRIALS, z999()));
        let (low, _) = wilson_interval(found, TRIALS, z999());
        assert!(low <= bound.p(), "the bound is exact here");
    }

    // -- Reporting ----------------------------------------------------------------

    fn statement(strategy: Strategy) -> GuaranteeStatement {
        GuaranteeStatement {
            strategy,
            depth: 2,
            variables: 1,
            threads: 2,
            confidence: 0.99,
            executions: 4_605,
            n: 3,
            shared_variables: 7,
            max_kq: 40,
            k: 120,
            profiling_runs: 10,
            exceeded_runs: 0,
        }
    }

    #[test]
    fn statements_read_as_specified() {
        assert_eq!(
            statement(Strategy::Combined).to_string(),
            "Combined: no bug of depth <= 2 involving <= 1 of the Q=7 shared variables and \
             <= 2 threads was missed, with probability >= 0.99 (4,605 executions; n=3, \
             k_q <= 40; counts measured over 10 profiling executions; 0 executions exceeded them)"
        );
        assert_eq!(
            statement(Strategy::Pct).to_string(),
            "PCT: no bug of depth <= 2 was missed, with probability >= 0.99 (4,605 executions; \
             n=3, k=120; counts measured over 10 profiling executions; 0 executions exceeded them)"
        );
        assert_eq!(
            statement(Strategy::Pctvb).to_string(),
            "PCTVB: no bug of depth <= 2 involving <= 1 of the Q=7 shared variables was missed, \
             with probability >= 0.99 (4,605 executions; n=3, k_q <= 40; counts measured over \
             10 profiling executions; 0 executions exceeded them)"
        );
        let mut thread = statement(Strategy::ThreadBound);
        thread.threads = 1;
        thread.profiling_runs = 1;
        thread.exceeded_runs = 1;
        thread.executions = 1_234_567;
        assert_eq!(
            thread.to_string(),
            "ThreadBound: no bug of depth <= 2 involving <= 1 thread was missed, with probability \
             >= 0.99 (1,234,567 executions; n=3, k=120; counts measured over 1 profiling \
             execution; 1 execution exceeded them)"
        );
        assert!(statement(Strategy::Random).to_string().starts_with("Random: no guarantee"));
    }

    #[test]
    fn confidence_is_printed_rounded_down() {
        assert_eq!(format_confidence(0.99), "0.99");
        assert_eq!(format_confidence(0.990_012_9), "0.990012");
        assert_eq!(format_confidence(0.999_999_99), "0.999999");
        assert_eq!(format_confidence(1.0), "1");
        assert_eq!(format_confidence(0.5), "0.5");
        let reached = confidence_after(-(46f64).ln(), 210);
        let printed: f64 = format_confidence(reached).parse().unwrap();
        assert!(printed <= reached && printed >= 0.99);
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1_000), "1,000");
        assert_eq!(group_thousands(4_605), "4,605");
        assert_eq!(group_thousands(1_234_567), "1,234,567");
        assert_eq!(group_thousands(u128::from(u64::MAX)), "18,446,744,073,709,551,615");
    }

    #[test]
    fn bound_display_lists_its_factors() {
        let text = pct_bound(2, 23, 2).unwrap().to_string();
        assert_eq!(
            text,
            "p >= 2.1739e-2 (1 in 46) = 1/n = 1/2 initial priority order * 1/(k = 23)^(d-1=1) change points"
        );
    }
}
