//! `PCTVB_*` environment variables, read once per run. A malformed value is an error that
//! names the variable and says what it should look like, never a silent default.

use crate::report::FailureKind;

#[derive(Default)]
pub(super) struct Overrides {
    pub(super) seed: Option<u64>,
    pub(super) iterations: Option<u64>,
    pub(super) replay: Option<String>,
}

pub(super) fn read() -> Result<Overrides, (FailureKind, String)> {
    Ok(Overrides {
        seed: number("PCTVB_SEED")?,
        iterations: number("PCTVB_ITERATIONS")?,
        replay: std::env::var("PCTVB_REPLAY").ok().filter(|s| !s.trim().is_empty()),
    })
}

fn number(name: &str) -> Result<Option<u64>, (FailureKind, String)> {
    let Ok(text) = std::env::var(name) else {
        return Ok(None);
    };
    parse_u64(text.trim()).map(Some).ok_or_else(|| {
        (
            FailureKind::BadConfig,
            format!("{name}={text:?} is not a number: use a decimal or 0x-prefixed hexadecimal u64, or unset it"),
        )
    })
}

/// Parses a decimal or `0x` hexadecimal `u64`, allowing `_` separators.
pub(crate) fn parse_u64(text: &str) -> Option<u64> {
    let clean: String = text.chars().filter(|&c| c != '_').collect();
    match clean.strip_prefix("0x").or_else(|| clean.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => clean.parse().ok(),
    }
}
