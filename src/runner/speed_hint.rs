//! The hint a long run gives when pctvb is compiled without optimizations: `cargo test` builds
//! with the dev profile, where every crate is at `opt-level = 0` unless the workspace's
//! Cargo.toml raises one, and one entry for pctvb alone makes a run several times faster
//! while the tests stay unoptimized (docs/RESULTS-debug-build.md measures it; `build.rs`
//! tells this build's level).
//!
//! It owns the hint's text and when it shows: in the report of a run that took at least the
//! progress line's quiet start (`progress::QUIET_START`), and once per process beside the
//! progress line (which shows only on a terminal, after that time). It must not print anything else, nor anything in an optimized
//! build: a short test, or one whose pctvb is optimized, stays as quiet as before.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::progress::QUIET_START;

/// Whether this build compiles pctvb without optimizations (`build.rs`).
const UNOPTIMIZED: bool = cfg!(pctvb_unoptimized);

/// The hint for the report of a run that took `elapsed`, if it gets one.
pub(super) fn note(elapsed: Duration) -> Option<String> {
    note_for(UNOPTIMIZED, elapsed)
}

/// Shorter runs get no note: below the progress line's quiet start, the time a raised level
/// saves is not worth a line.
fn note_for(unoptimized: bool, elapsed: Duration) -> Option<String> {
    (unoptimized && elapsed >= QUIET_START).then(|| {
        format!(
            "note: this run took {:.1}s with pctvb compiled without optimizations (the dev \
             profile, which `cargo test` uses). {} (docs/RESULTS-debug-build.md: 6-7x on the \
             corpus's bug-free programs)",
            elapsed.as_secs_f64(),
            ADVICE
        )
    })
}

/// What to do, in a sentence.
const ADVICE: &str = "`[profile.dev.package.pctvb]` with `opt-level = 3` in the workspace's \
                      Cargo.toml optimizes pctvb alone, the tests staying unoptimized, and \
                      runs several times as many executions per second";

/// Set once the hint went beside a progress line in this process.
static SHOWN: AtomicBool = AtomicBool::new(false);

/// Writes the hint to stderr on a line of its own, once per process, if pctvb is unoptimized;
/// the progress line calls it when it first shows (it clears its own line first).
pub(super) fn beside_progress() {
    if UNOPTIMIZED && !SHOWN.swap(true, Ordering::Relaxed) {
        let _ = writeln!(
            std::io::stderr(),
            "\r\x1b[2Kpctvb: pctvb is compiled without optimizations (the dev profile). {ADVICE}."
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_long_runs_of_an_unoptimized_build_get_the_note() {
        let text = note_for(true, Duration::from_millis(2500)).expect("a long unoptimized run");
        assert!(text.starts_with("note: this run took 2.5s"), "{text}");
        assert!(text.contains("[profile.dev.package.pctvb]"), "{text}");
        assert!(text.contains("opt-level = 3"), "{text}");
        assert_eq!(note_for(true, Duration::from_millis(1999)), None);
        assert_eq!(note_for(false, Duration::from_secs(60)), None);
        // This build's own flag decides (the suite runs unoptimized and optimized).
        assert_eq!(note(Duration::from_secs(60)).is_some(), cfg!(pctvb_unoptimized));
    }
}
