//! Model checking entry points, as loom's: [`model`] and [`Builder`], running pctvb.
//!
//! # Settings
//! A model runs [`pctvb::Config::new`]: pctvb's default strategy (its explorer, the
//! selectively uniform random walk, SURW) for 1000 executions. The environment changes it without a source edit:
//! - pctvb's own variables, which `Config` reads itself: `PCTVB_SEED`, `PCTVB_ITERATIONS`,
//!   `PCTVB_TIME`, `PCTVB_REPLAY`, `PCTVB_WORKERS`, `PCTVB_SHARD`, `PCTVB_PROGRESS`,
//!   `PCTVB_WATCHDOG`, `PCTVB_SHOW_PANICS`, `PCTVB_EXPLORER` (e.g. `uniform`: the uniform
//!   walk in SURW's place, as before SURW was the default);
//! - `PCTVB_STRATEGY=<name>` (a [`pctvb::StrategyKind::from_name`] name, e.g. `pct`,
//!   `combined`, `systematic`, `random`) and `PCTVB_CONFIDENCE=<p>` (e.g. `0.99`: run as many
//!   executions as pctvb's bound needs for that guarantee), read here. With a confidence and
//!   no strategy, pctvb's default with a target runs: the combined strategy's class is first
//!   enumerated by the systematic search when that fits in a quarter of the executions
//!   sampling it needs (`pctvb::Config::enumerate`; `PCTVB_ENUMERATE=0` turns it off), with
//!   the explorer (revfuzz: race reversal, then schedule fuzzing) in every second execution and, after a class that passed, as many
//!   executions of it as the enumeration took, at least 1000 in all; a class that does not fit is
//!   sampled by the combined strategy with the explorer in one execution in two (not counted
//!   by the bound; it explores past the bound's class). `PCTVB_STRATEGY=combined` with it runs
//!   the same without the explorer;
//! - loom's `LOOM_MAX_PREEMPTIONS`, `LOOM_MAX_PERMUTATIONS`, `LOOM_MAX_DURATION`,
//!   `LOOM_MAX_BRANCHES`, `LOOM_CHECKPOINT_FILE`, `LOOM_CHECKPOINT_INTERVAL`, `LOOM_LOCATION`
//!   and `LOOM_LOG`, read by [`Builder::new`] into its fields as loom does.
//!
//! [`Builder`]'s fields map as follows:
//! - `max_threads` → [`pctvb::Config::max_threads`];
//! - `max_permutations` → [`pctvb::Config::iterations`] (unless a confidence is asked for);
//!   without it, `PCTVB_STRATEGY=systematic` has no budget short of `PCTVB_ITERATIONS` or a
//!   time limit, so that it explores every schedule within its bounds, as loom does;
//! - `max_duration` → [`pctvb::Config::time_budget`];
//! - `preemption_bound` → the systematic search's preemption bound, when
//!   `PCTVB_STRATEGY=systematic`; other strategies take no such bound;
//! - `location`: pctvb always records locations;
//! - `expect_explicit_explore`: each execution starts with exploration off (no preemption,
//!   no branching choice) until [`crate::explore`], as in loom;
//! - `max_branches` → [`pctvb::Config::max_steps`] when it is above pctvb's limit of
//!   scheduling points per execution, 100,000 (each of loom's branches is at least one
//!   scheduling point, so an execution loom allows fits); below it, the limit stays 100,000
//!   (a branch count is no step count) and a value other than loom's default says so once
//!   per process on stderr;
//! - `checkpoint_file`, `checkpoint_interval` and `log` are not honoured: set to other than
//!   loom's defaults, each says so once per process on stderr.
//!
//! # Unlocks
//! As in loom, unlocking a `Mutex` or `RwLock` is no scheduling point (under pctvb it is one,
//! after the release): the other threads see the release from the unlocking thread's next
//! operation on, which reaches the same interleavings of the threads' operations with fewer
//! points. A cell's `MutPtr` or `ConstPtr` dropped right after a guard (a struct that holds the
//! guard before the pointer) ends covered by the unlock, as under loom, where pctvb's point
//! after the release let the next holder in while the pointer was still live.
//!
//! A failing model panics with pctvb's report: the original panic message, the schedule, and
//! the line that replays that execution.
//!
//! # Replay lines
//! `#[pctvb::test]` captures how its test was built while the crate compiles; `loom::model` is
//! a function, so its line is made of what the running test binary can tell, e.g. for a test
//! `plain_model` in `tests/builder.rs` of a crate `bank` run with `RUSTFLAGS="--cfg loom"`:
//!
//! ```text
//! PCTVB_REPLAY=pctvb2-... RUSTFLAGS="--cfg loom" cargo test -p bank --test builder -- --exact plain_model
//! ```
//!
//! - the package (`-p`): `cargo test` runs a test binary with its package's `CARGO_PKG_NAME`;
//! - the target (`--test`, `--bench`, `--example`, `--bin`, `--lib`): the test binary's file
//!   name (`<crate>-<hash>`) matched against the package's target files (`tests/<name>.rs`,
//!   `tests/<name>/main.rs`, the same under `benches/`, `examples/` and `src/bin/`; the
//!   package's own name for its `src/lib.rs` or `src/main.rs`). A target the manifest names
//!   otherwise selects none: the line then runs every test target of the package (the failing
//!   test among them), and the report says so;
//! - the profile: the binary's directory (`release`: `--release`; a custom profile's:
//!   `--profile <name>`);
//! - `RUSTFLAGS`: the value pctvb-loom was compiled under (it is compiled in the same build,
//!   with the same flags), or `--cfg loom` when none was set but pctvb-loom was built with it
//!   (flags from `.cargo/config.toml` or `--config`: that `RUSTFLAGS` replaces a config
//!   file's flags for the command, so add the file's others if the test needs them).
//!
//! Not known at run time: the features the failing build enabled and a `--target`. So that a
//! line that lacks one never passes without replaying (libtest reports `running 0 tests ...
//! test result: ok` for a test the build does not have), a process of a test binary that uses
//! pctvb-loom, run with a `PCTVB_REPLAY` token of one of its own tests that its harness
//! arguments select (no filter, or one that matches the test), fails when no test replayed
//! the token: exit code 101 and a message that says what to add (`--features`, a `--cfg`, the
//! profile; `--include-ignored` for an ignored test; a new token for a renamed one). This
//! check is on Unix; it needs pctvb-loom in the binary, which a build without `--cfg loom`
//! leaves out (hence the flag in the line).

use std::path::PathBuf;
use std::sync::{Arc, Once};
use std::time::Duration;

use pctvb::{Config, StrategyKind};

/// loom's default of [`Builder::max_branches`].
const DEFAULT_MAX_BRANCHES: usize = 1_000;
/// pctvb's default limit of scheduling points per execution ([`pctvb::Config::max_steps`]),
/// which a larger [`Builder::max_branches`] raises.
const PCTVB_MAX_STEPS: u64 = 100_000;
/// loom's default of [`Builder::checkpoint_interval`].
const DEFAULT_CHECKPOINT_INTERVAL: usize = 20_000;

/// Configures a model run, as loom's `Builder`; see the [module documentation](self) for
/// what each field means under pctvb.
#[derive(Debug)]
#[non_exhaustive]
pub struct Builder {
    /// Most threads an execution may create, the test body's included (default
    /// [`crate::MAX_THREADS`]).
    pub max_threads: usize,
    /// loom's limit on branches per execution; raises pctvb's limit of scheduling points per
    /// execution (100,000) when above it, else not honoured.
    pub max_branches: usize,
    /// Most executions to run (loom: permutations to explore).
    pub max_permutations: Option<usize>,
    /// Most time to spend.
    pub max_duration: Option<Duration>,
    /// Most preemptions per execution, for the systematic search.
    pub preemption_bound: Option<usize>,
    /// loom's checkpoint file; not honoured.
    pub checkpoint_file: Option<PathBuf>,
    /// loom's checkpoint interval; not honoured.
    pub checkpoint_interval: usize,
    /// Whether each execution starts with exploration off, until [`crate::explore`].
    pub expect_explicit_explore: bool,
    /// Whether to record locations; pctvb always does.
    pub location: bool,
    /// loom's execution log; not honoured (pctvb prints the failing schedule).
    pub log: bool,
}

/// The systematic search's budget of executions under `loom::model` when nothing sets one:
/// in effect none (a search that explores every level stops by itself).
const SYSTEMATIC_BUDGET: u64 = 1_000_000_000_000;

impl Builder {
    /// A builder with loom's defaults and loom's `LOOM_*` environment variables.
    pub fn new() -> Builder {
        Builder {
            max_threads: crate::MAX_THREADS,
            max_branches: loom_env("LOOM_MAX_BRANCHES").unwrap_or(DEFAULT_MAX_BRANCHES),
            max_permutations: loom_env("LOOM_MAX_PERMUTATIONS"),
            max_duration: loom_env("LOOM_MAX_DURATION").map(Duration::from_secs),
            preemption_bound: loom_env("LOOM_MAX_PREEMPTIONS"),
            checkpoint_file: std::env::var_os("LOOM_CHECKPOINT_FILE").map(PathBuf::from),
            checkpoint_interval: loom_env("LOOM_CHECKPOINT_INTERVAL")
                .unwrap_or(DEFAULT_CHECKPOINT_INTERVAL),
            expect_explicit_explore: false,
            location: std::env::var_os("LOOM_LOCATION").is_some(),
            log: std::env::var_os("LOOM_LOG").is_some(),
        }
    }

    /// Sets the checkpoint file (not honoured: said once on stderr).
    pub fn checkpoint_file(&mut self, file: &str) -> &mut Self {
        self.checkpoint_file = Some(file.into());
        self
    }

    /// Runs the model: `f` in many executions, each under another schedule. Panics with
    /// pctvb's report when an execution fails, and when the run could not test (a bad
    /// setting).
    #[track_caller]
    pub fn check<F>(&self, f: F)
    where
        F: Fn() + Sync + Send + 'static,
    {
        let (config, confidence) = match self.config() {
            Ok(config) => config,
            Err(why) => panic!("pctvb-loom could not run this model: {why}"),
        };
        let counts = Arc::new(crate::explore::Counts::default());
        let explicit_explore = self.expect_explicit_explore;
        let run_counts = Arc::clone(&counts);
        let report = config.run(move || {
            // Leaks are checked when the execution ends, after threads the body did not
            // join finished too (see `crate::leaks`).
            crate::leaks::begin();
            crate::explore::begin(explicit_explore, &run_counts);
            // As loom's: unlocking is no scheduling point (see the module docs).
            pctvb::__internals::execution::set_unlock_points(false);
            // As loom's: `unsync_load` and `with_mut` race with the atomic's other accesses
            // (see `crate::sync::atomic`); from the first operation on, so that no store goes
            // unrecorded.
            pctvb::__internals::execution::check_unsync_atomics();
            f();
        });
        // After a failing execution nothing checked the registry: stop counting here.
        crate::leaks::end();
        crate::explore::end();
        let explored: String = crate::explore::notes(&counts, confidence)
            .iter()
            .map(|n| format!("\npctvb-loom: {n}"))
            .collect();
        let notes: String = report.notes.iter().map(|n| format!("\npctvb: {n}")).collect();
        let notes = notes + &explored;
        if let Some(error) = report.error() {
            panic!("pctvb could not run this model: {error}{notes}");
        }
        if let Some(failure) = report.failure() {
            // What the replay line could not name (see `crate::rerun`), beside the line.
            let missing = match crate::rerun::binary().missing.as_deref() {
                Some(m) if failure.token.is_some() => format!("\npctvb-loom: {m}"),
                _ => String::new(),
            };
            panic!("pctvb found a bug in this model:\n{failure}{notes}{missing}");
        }
        // As `#[pctvb::test]`: what the run covered, shown with `--nocapture`, with what it
        // did not explore.
        println!("{}{explored}", report.summary());
    }

    /// The pctvb configuration this builder and the environment ask for, and whether it
    /// asks for a guarantee (`PCTVB_CONFIDENCE`).
    fn config(&self) -> Result<(Config, bool), String> {
        let mut config = Config::new().max_threads(self.max_threads);
        let strategy = match std::env::var("PCTVB_STRATEGY") {
            Ok(name) if !name.trim().is_empty() => {
                Some(StrategyKind::from_name(name.trim()).ok_or_else(|| {
                    format!("PCTVB_STRATEGY={name:?} names no pctvb strategy (e.g. pct, combined, systematic, random)")
                })?)
            }
            _ => None,
        };
        let confidence = match std::env::var("PCTVB_CONFIDENCE") {
            Ok(text) if !text.trim().is_empty() => match text.trim().parse::<f64>() {
                Ok(p) if p > 0.0 && p < 1.0 => Some(p),
                _ => {
                    return Err(format!(
                        "PCTVB_CONFIDENCE={text:?} is not a probability strictly between 0 and 1 (e.g. 0.99)"
                    ))
                }
            },
            _ => None,
        };
        let systematic = matches!(strategy, Some(StrategyKind::Systematic { .. }));
        match strategy {
            Some(mut kind) => {
                if let (StrategyKind::Systematic { preemptions, .. }, Some(bound)) =
                    (&mut kind, self.preemption_bound)
                {
                    *preemptions = u32::try_from(bound).unwrap_or(u32::MAX);
                } else if self.preemption_bound.is_some() {
                    note_once(&PREEMPTIONS, "model::Builder::preemption_bound (LOOM_MAX_PREEMPTIONS) applies only with PCTVB_STRATEGY=systematic; ignored");
                }
                config = config.strategy(kind);
            }
            None if self.preemption_bound.is_some() => {
                note_once(&PREEMPTIONS, "model::Builder::preemption_bound (LOOM_MAX_PREEMPTIONS) applies only with PCTVB_STRATEGY=systematic; ignored");
            }
            None => {}
        }
        if let Some(n) = self.max_permutations {
            config = config.iterations(n.max(1) as u64);
        } else if systematic {
            // loom explores every schedule within its bound: so does the systematic search
            // here, with no budget short of `max_permutations`, `PCTVB_ITERATIONS` or a time
            // limit (pctvb's default budget would stop it after 1,000 executions, and a
            // passing test shows the levels it did not finish only with `--nocapture`).
            config = config.iterations(SYSTEMATIC_BUDGET);
        }
        if let Some(p) = confidence {
            config = config.confidence(p);
        }
        if let Some(d) = self.max_duration {
            config = config.time_budget(d);
        }
        if self.max_branches as u64 > PCTVB_MAX_STEPS {
            // A model that needs more than pctvb's default limit: each of loom's branches is
            // at least one scheduling point, so the executions loom allows fit.
            config = config.max_steps(self.max_branches as u64);
        } else if self.max_branches != DEFAULT_MAX_BRANCHES {
            note_once(&BRANCHES, "model::Builder::max_branches (LOOM_MAX_BRANCHES) below 100,000 is not honoured; pctvb's limit of 100,000 scheduling points per execution applies");
        }
        if self.checkpoint_file.is_some() || self.checkpoint_interval != DEFAULT_CHECKPOINT_INTERVAL
        {
            note_once(&CHECKPOINT, "model::Builder::checkpoint_file/checkpoint_interval (LOOM_CHECKPOINT_*) are not supported; no checkpoint is read or written (replay a failure with its PCTVB_REPLAY line instead)");
        }
        if self.log {
            note_once(&LOG, "model::Builder::log (LOOM_LOG) is not supported; a failure's report shows its schedule");
        }
        if let Some(test) = std::thread::current().name().filter(|n| *n != "main") {
            // libtest names a test's thread by its path without the crate; pctvb's name
            // carries the crate segment a `#[pctvb::test]` of this binary would have (so a
            // token tells which binary it belongs to), which the replay line drops again. The
            // line builds and selects this binary as far as the running binary can tell (see
            // `crate::rerun`): `loom::model` is a function, with no compile-time view of the
            // user's build, as `#[pctvb::test]` has.
            let binary = crate::rerun::binary();
            config = config
                .name(format!("{}::{test}", binary.crate_name))
                .__cargo_target(binary.target.clone());
        }
        Ok((config, confidence.is_some()))
    }
}

impl Default for Builder {
    fn default() -> Builder {
        Builder::new()
    }
}

/// Runs `f` under pctvb with [`Builder::new`]'s settings, as `loom::model`.
#[track_caller]
pub fn model<F>(f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    Builder::new().check(f)
}

static PREEMPTIONS: Once = Once::new();
static BRANCHES: Once = Once::new();
static CHECKPOINT: Once = Once::new();
static LOG: Once = Once::new();

fn note_once(once: &Once, what: &str) {
    once.call_once(|| eprintln!("pctvb-loom: {what}"));
}

/// A `LOOM_*` number, as loom reads it (a malformed value panics, as in loom).
fn loom_env<T: std::str::FromStr>(name: &str) -> Option<T> {
    let text = std::env::var(name).ok()?;
    match text.trim().parse() {
        Ok(v) => Some(v),
        Err(_) => panic!("invalid value for `{name}`: {text:?}"),
    }
}
