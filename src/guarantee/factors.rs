//! Bounds as products of named factors, kept in log space.

use super::*;

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
        exp(self.ln_p())
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

pub(super) fn format_probability(ln_p: f64) -> String {
    if ln_p < -700.0 {
        // exp would underflow: only the logarithm is meaningful.
        return format!("exp({ln_p:.1})");
    }
    let p = exp(ln_p);
    let inverse = exp(-ln_p);
    if inverse < 1e15 {
        format!("{p:.4e} (1 in {})", group_thousands(inverse.round() as u128))
    } else {
        format!("{p:.4e}")
    }
}

/// `1/n`: the probability that the thread whose event must come first gets the
/// highest of the `n` random initial priorities (PCT's proof).
pub(super) fn initial_priority_factor(bound: &mut BoundFactors, n: u64) {
    bound.push(
        format!("1/n = 1/{} initial priority order", group_thousands(u128::from(n))),
        -ln(n as f64),
    );
}

/// `1/size^c`: each of the `c` independently drawn change points lands on the
/// one point the bug needs, out of `size` equally likely ones.
pub(super) fn change_points_factor(bound: &mut BoundFactors, label: &str, size: u128, c: u32) {
    if c == 0 {
        return; // no change point to place; also avoids 0 * ln(0) = NaN
    }
    bound.push(
        format!("1/({label} = {})^(d-1={c}) change points", group_thousands(size)),
        -f64::from(c) * ln(size as f64),
    );
}

/// `1/C(Q,v)`: the `v` chosen variables include the bug's variables.
pub(super) fn variable_choice_factor(bound: &mut BoundFactors, q: u64, v: u64) {
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
pub(super) fn priority_order_factor(bound: &mut BoundFactors, t: u32, c: u32) {
    let m = u64::from(t) + u64::from(c);
    let exact = exact_factorial(m)
        .map(|value| format!(" = 1/{}", group_thousands(value)))
        .unwrap_or_default();
    bound.push(format!("1/(t+c)! = 1/({t}+{c})!{exact} priority order"), -ln_factorial(m));
}
