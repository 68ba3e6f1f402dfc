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
    pub(super) time: Option<std::time::Duration>,
    /// `PCTVB_PROGRESS`: `Some(false)` off, `Some(true)` on even when stderr is not a
    /// terminal.
    pub(super) progress: Option<bool>,
    /// `PCTVB_SHOW_PANICS`: panics inside executions printed as they happen (`1`) or not.
    pub(super) show_panics: Option<bool>,
    /// `PCTVB_TRACE`: long failing schedules written to files (`1`) or not (`0`).
    pub(super) trace_files: Option<bool>,
    /// `PCTVB_WATCHDOG`, in seconds (0: off).
    pub(super) watchdog: Option<u64>,
    /// `PCTVB_RACES`: the data-race detector off (`0`) or on (`1`).
    pub(super) races: Option<bool>,
    /// `PCTVB_WEAK_CAS`: weak compare-exchanges may fail spuriously (`1`) or not (`0`).
    pub(super) weak_cas_failures: Option<bool>,
    /// `PCTVB_STRATEGY=<name>`: the strategy, as `strategy = "<name>"` names it.
    pub(super) strategy: Option<super::StrategyKind>,
    /// `PCTVB_CONFIDENCE=<p>`: a confidence target, strictly between 0 and 1.
    pub(super) confidence: Option<f64>,
    /// `PCTVB_EXPLORER=<name>`: the explorer, as `explorer = "<name>"` names it.
    pub(super) explorer: Option<super::StrategyKind>,
    /// `PCTVB_ENUMERATE`: a confidence target's class enumerated first (`1`) or only sampled
    /// (`0`), see `Config::enumerate`.
    pub(super) enumerate: Option<bool>,
}

pub(super) fn read() -> Result<Overrides, Error> {
    let overrides = Overrides {
        seed: number("PCTVB_SEED")?,
        iterations: iterations()?,
        replay: std::env::var("PCTVB_REPLAY").ok().filter(|s| !s.trim().is_empty()),
        workers: workers()?,
        shard: shard()?,
        time: time()?,
        progress: switch("PCTVB_PROGRESS")?,
        show_panics: switch("PCTVB_SHOW_PANICS")?,
        trace_files: switch("PCTVB_TRACE")?,
        watchdog: number("PCTVB_WATCHDOG")?,
        races: switch("PCTVB_RACES")?,
        weak_cas_failures: switch("PCTVB_WEAK_CAS")?,
        strategy: strategy_named("PCTVB_STRATEGY")?,
        confidence: confidence()?,
        explorer: strategy_named("PCTVB_EXPLORER")?,
        enumerate: switch("PCTVB_ENUMERATE")?,
    };
    // Two budgets, as `iterations` and `confidence` in one attribute (a compile error): one
    // would be dropped without a word.
    if let (Some(n), Some(p)) = (overrides.iterations, overrides.confidence) {
        return Err(Error::config(
            "PCTVB_ITERATIONS and PCTVB_CONFIDENCE",
            format!(
                "PCTVB_ITERATIONS={n} and PCTVB_CONFIDENCE={p} are both set: give either \
                 the iterations (the report says which confidence they reach) or the \
                 confidence (pctvb computes the iterations), not both; unset one"
            ),
        ));
    }
    Ok(overrides)
}

/// A 0/1 switch such as `PCTVB_PROGRESS` (also `off`/`on`, `false`/`true`).
fn switch(name: &str) -> Result<Option<bool>, Error> {
    let Ok(text) = std::env::var(name) else {
        return Ok(None);
    };
    match text.trim().to_ascii_lowercase().as_str() {
        "0" | "off" | "false" | "no" => Ok(Some(false)),
        "1" | "on" | "true" | "yes" => Ok(Some(true)),
        _ => Err(Error::config(
            name,
            format!("{name}={text:?} is not a switch: use 0 (off) or 1 (on), or unset it"),
        )),
    }
}

/// `PCTVB_STRATEGY=<name>` or `PCTVB_EXPLORER=<name>` (`var`), a name
/// `#[pctvb::test(strategy = ...)]` takes. Whether the strategy may explore is checked with
/// the rest of the configuration (`Config::resolved_strategy`).
fn strategy_named(var: &str) -> Result<Option<super::StrategyKind>, Error> {
    let Ok(text) = std::env::var(var) else {
        return Ok(None);
    };
    match super::StrategyKind::from_name(text.trim()) {
        Some(kind) => Ok(Some(kind)),
        None => {
            let names = match var {
                "PCTVB_EXPLORER" => super::kind::explorer_names(),
                _ => super::kind::STRATEGIES.iter().map(|s| s.name).collect(),
            };
            Err(Error::config(
                var,
                format!(
                    "{var}={text:?} names no strategy: use one of {}, or unset it",
                    names.join(", ")
                ),
            ))
        }
    }
}

/// `PCTVB_CONFIDENCE=<p>`, strictly between 0 and 1.
fn confidence() -> Result<Option<f64>, Error> {
    let Ok(text) = std::env::var("PCTVB_CONFIDENCE") else {
        return Ok(None);
    };
    match text.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p < 1.0 => Ok(Some(p)),
        _ => Err(Error::config(
            "PCTVB_CONFIDENCE",
            format!(
                "PCTVB_CONFIDENCE={text:?} is not a probability strictly between 0 and 1: use \
                 e.g. 0.99, or unset it"
            ),
        )),
    }
}

/// `PCTVB_ITERATIONS=N`, at least 1: zero executions would test nothing and pass.
fn iterations() -> Result<Option<u64>, Error> {
    match number("PCTVB_ITERATIONS")? {
        Some(0) => Err(Error::config(
            "PCTVB_ITERATIONS",
            "PCTVB_ITERATIONS=0 would run no execution, so every test would pass without \
             testing anything; use 1 or more, or unset it",
        )),
        other => Ok(other),
    }
}

/// `PCTVB_WORKERS=N`, at least 1: no worker would run nothing (it was taken as 1 without a
/// word). More than `usize::MAX` is the most there can be.
fn workers() -> Result<Option<usize>, Error> {
    match number("PCTVB_WORKERS")? {
        Some(0) => Err(Error::config(
            "PCTVB_WORKERS",
            "PCTVB_WORKERS=0 would give the run no worker to run executions on; use 1 (one OS \
             thread, a serial run) or more, or unset it for the available parallelism",
        )),
        other => Ok(other.map(|w| usize::try_from(w).unwrap_or(usize::MAX))),
    }
}

/// `PCTVB_TIME=30s` (also `500ms`, `2m`, `1h`, or plain seconds): the run's time budget.
fn time() -> Result<Option<std::time::Duration>, Error> {
    let Ok(text) = std::env::var("PCTVB_TIME") else {
        return Ok(None);
    };
    match parse_duration(&text) {
        Ok(d) => Ok(Some(d)),
        Err(why) => Err(Error::config(
            "PCTVB_TIME",
            format!("PCTVB_TIME={text:?} {why}: use e.g. 30s, 500ms, 2m or 1h, or unset it"),
        )),
    }
}

/// A duration as `#[pctvb::test(time = ...)]` and `PCTVB_TIME` take it: a positive number
/// with a unit `ms`, `s`, `m` or `h` (no unit: seconds). The error says what is wrong.
pub(crate) fn parse_duration(text: &str) -> Result<std::time::Duration, &'static str> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().map_err(|_| "is not a duration")?;
    let seconds = match unit.trim() {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err("has an unknown unit"),
    };
    if !(seconds > 0.0 && seconds.is_finite() && seconds < 1e9) {
        return Err("must be a positive duration");
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
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
