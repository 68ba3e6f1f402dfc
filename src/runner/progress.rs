//! A progress line on stderr for long runs: shown only when stderr is a terminal and the run
//! has taken more than two seconds, so CI logs stay clean; `PCTVB_PROGRESS=0` turns it off,
//! `PCTVB_PROGRESS=1` on even when stderr is not a terminal (the runner validates the value).
//! It writes to the stderr handle directly, so `cargo test` shows it while a test runs.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use crate::runtime::real_now;

/// How long a run goes before the line shows (and before a run of an unoptimized pctvb gets
/// its hint, `speed_hint.rs`).
pub(super) const QUIET_START: Duration = Duration::from_secs(2);
const EVERY: Duration = Duration::from_millis(250);

pub(super) struct Progress {
    /// `None`: not asked yet whether stderr is a terminal. Asked when the line would first
    /// show, not at the start: most runs end sooner, and a run of a loom suite's one-execution
    /// model costs less than the `isatty` call (issue #17).
    enabled: Option<bool>,
    started: Instant,
    last: Option<Instant>,
    name: String,
}

impl Progress {
    /// `forced`: `PCTVB_PROGRESS` as the run read it (`None`: unset, or the environment is
    /// ignored).
    pub(super) fn new(name: Option<&str>, forced: Option<bool>) -> Progress {
        Progress {
            enabled: forced,
            started: real_now(),
            last: None,
            name: name.unwrap_or("run").to_string(),
        }
    }

    /// Called after each execution; cheap when disabled or too early.
    #[inline]
    pub(super) fn tick(&mut self, done: u64, planned: u64, failures: u64) {
        if self.enabled != Some(false) && done.is_multiple_of(64) {
            self.show(done, planned, failures);
        }
    }

    /// Shows the line if it is due (a parallel run's worker 0 calls it every 64 of its own
    /// executions, counting every worker's in `done`).
    #[cold]
    pub(super) fn show(&mut self, done: u64, planned: u64, failures: u64) {
        let now = real_now();
        let elapsed = now - self.started;
        if elapsed < QUIET_START || self.last.is_some_and(|l| now - l < EVERY) {
            return;
        }
        if !*self.enabled.get_or_insert_with(|| std::io::stderr().is_terminal()) {
            return;
        }
        if self.last.is_none() {
            // A run long enough for the line: the one moment a user waits on pctvb's speed.
            super::speed_hint::beside_progress();
        }
        self.last = Some(now);
        let rate = done as f64 / elapsed.as_secs_f64();
        let left = if planned > done && rate > 0.0 {
            format!(", ~{:.0}s left", (planned - done) as f64 / rate)
        } else {
            String::new()
        };
        let line = format!(
            "\r\x1b[2Kpctvb: {} {done}/{planned} executions, {failures} failures, {rate:.0}/s{left}",
            self.name
        );
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if self.last.is_some() {
            let _ = std::io::stderr().write_all(b"\r\x1b[2K");
        }
    }
}
