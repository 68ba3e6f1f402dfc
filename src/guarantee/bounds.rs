//! The per-execution lower bounds of each strategy, with their derivations.

use super::*;

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
/// and `p >= 1/t!`. As in [`thread_bound()`], an extra factor `c!` would also be
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
pub(super) fn change_points(d: u32) -> Result<u32, GuaranteeError> {
    d.checked_sub(1).ok_or_else(|| invalid("d", "a bug has depth at least 1"))
}

/// Validates `v` against `kq` and returns `K_v`, the sum of the `v` largest
/// counts (the worst-case size of the change-point domain `S`).
pub(super) fn variables_for_change_points(
    kq: &[u64],
    v: u32,
    c: u32,
) -> Result<u128, GuaranteeError> {
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
pub(super) fn sum_of_largest(values: &[u64], v: usize) -> u128 {
    if v == 0 {
        return 0;
    }
    let mut values = values.to_vec();
    // Partitions so that values[..v] are the v largest, in O(Q).
    values.select_nth_unstable_by(v - 1, |a, b| b.cmp(a));
    values[..v].iter().map(|&x| u128::from(x)).sum()
}

/// Which per-execution lower bound (which formula of the table in [`crate::guarantee`]) a
/// strategy's executions carry, and so which parameters and counts the bound, its statement
/// and its validation use. Each strategy's description (in the crate's strategy registry) names its
/// bound kind; several strategies may share one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BoundKind {
    /// No useful bound (the random strategies): the bound is `None`, and the statement
    /// says there is no guarantee.
    Random,
    /// PCT (Burckhardt et al.): [`pct_bound`].
    Pct,
    /// PCT with variable bounding (Bindal et al., section 3): [`pctvb_bound`].
    Pctvb,
    /// Thread bounding (Bindal et al., section 4): [`thread_bound`].
    ThreadBound,
    /// PCTVB's variables and change points with thread-bounding priorities:
    /// [`combined_bound`].
    Combined,
}

impl BoundKind {
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

    /// Whether the bound ranges over variables: change points sit on accesses to `v` chosen
    /// shared variables, so the bound reads `Q`, `v` and the `k_q` (not `k`), and a depth of 2
    /// or more needs `v >= 1`.
    pub fn uses_variables(self) -> bool {
        matches!(self, Self::Pctvb | Self::Combined)
    }

    /// Whether the bound ranges over the threads `t` of a bug (thread-bounding priority
    /// orders), which must then be at least 1.
    pub fn uses_threads(self) -> bool {
        matches!(self, Self::ThreadBound | Self::Combined)
    }

    /// The bound for `params`, or `Ok(None)` for [`BoundKind::Random`], which has none. PCT
    /// reads `n, k, d`; PCTVB `n, kq, v, d`; ThreadBound `k, d, t`; Combined `kq, v, d, t`.
    pub(crate) fn bound(
        self,
        params: &BoundParams<'_>,
    ) -> Result<Option<BoundFactors>, GuaranteeError> {
        let BoundParams { n, k, kq, v, d, t } = *params;
        let bound = match self {
            Self::Random => return Ok(None),
            Self::Pct => pct_bound(n, k, d)?,
            Self::Pctvb => pctvb_bound(n, kq, v, d)?,
            Self::ThreadBound => thread_bound(k, d, t)?,
            Self::Combined => combined_bound(kq, v, d, t)?,
        };
        Ok(Some(bound))
    }
}

impl fmt::Display for BoundKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything any of the bounds may need; each strategy reads only its own
/// parameters (see [`bound_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BoundParams<'a> {
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

/// The bound of `kind` ([`BoundKind::bound`]), or `Ok(None)` for [`BoundKind::Random`], which
/// has none.
pub(crate) fn bound_for(
    kind: BoundKind,
    params: &BoundParams<'_>,
) -> Result<Option<BoundFactors>, GuaranteeError> {
    kind.bound(params)
}
