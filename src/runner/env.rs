//! `PCTVB_*` environment variables, read once per run. A malformed value is an error that
//! names the variable and says what it should look like, never a silent default.

use crate::error::Error;

#[derive(Default)]
pub(super) struct Overrides {
    pub(super) seed: Option<u64>,
    pub(super) iterations: Option<u64>,
    pub(super) replay: Option<String>,
    pub(super) workers: Option<usize>,
    pub(super) shard: Option<(u64, u64)>,
}

pub(super) fn read() -> Result<Overrides, Error> {
    Ok(Overrides {
        seed: number("PCTVB_SEED")?,
        iterations: number("PCTVB_ITERATIONS")?,
        replay: std::env::var("PCTVB_REPLAY").ok().filter(|s| !s.trim().is_empty()),
        workers: number("PCTVB_WORKERS")?.map(|w| w.max(1) as usize),
        shard: shard()?,
    })
}

/// `PCTVB_RACES=0` (off) or `1` (on); anything else, or unset, leaves the configuration's
/// choice (`limits` reads it per execution engine, where no error can be returned).
pub(super) fn races() -> Option<bool> {
    match std::env::var("PCTVB_RACES").ok()?.trim() {
        "0" | "false" | "off" | "no" => Some(false),
        "1" | "true" | "on" | "yes" => Some(true),
        _ => None,
    }
}

/// `PCTVB_SHARD=k/m`.
fn shard() -> Result<Option<(u64, u64)>, Error> {
    let Ok(text) = std::env::var("PCTVB_SHARD") else {
        return Ok(None);
    };
    let parsed = text.trim().split_once('/').and_then(|(k, m)| {
        let (k, m) = (parse_u64(k.trim())?, parse_u64(m.trim())?);
        (m >= 1 && (1..=m).contains(&k)).then_some((k, m))
    });
    parsed.map(Some).ok_or_else(|| {
        Error::config(
            "PCTVB_SHARD",
            format!("PCTVB_SHARD={text:?} is not k/m with 1 <= k <= m (e.g. 2/8), or unset it"),
        )
    })
}

fn number(name: &str) -> Result<Option<u64>, Error> {
    let Ok(text) = std::env::var(name) else {
        return Ok(None);
    };
    parse_u64(text.trim()).map(Some).ok_or_else(|| {
        Error::config(
            name,
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
