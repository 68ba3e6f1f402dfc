//! Errors: what was wrong with a bound's inputs, and what to change.

use super::*;

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

pub(super) fn invalid(name: &'static str, reason: impl Into<String>) -> GuaranteeError {
    GuaranteeError::InvalidParameter { name, reason: reason.into() }
}

pub(super) fn require(ok: bool, name: &'static str, reason: &str) -> Result<(), GuaranteeError> {
    if ok {
        Ok(())
    } else {
        Err(invalid(name, reason))
    }
}

pub(super) fn require_open_unit(name: &'static str, value: f64) -> Result<(), GuaranteeError> {
    // Written so that NaN fails too.
    if value > 0.0 && value < 1.0 {
        Ok(())
    } else {
        Err(GuaranteeError::OutOfRange { name, value })
    }
}
