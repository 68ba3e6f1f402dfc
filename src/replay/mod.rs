//! Replay: the token that pins down one execution, and the command line that re-runs it.
//!
//! This module owns the token format (see [`token`]), how a token becomes a command the user
//! can paste, and which test a token belongs to. It does not run anything: the runner turns a
//! decoded token into a `schedulers::Replay` strategy for one execution.
//!
//! # Which test a token replays
//!
//! A token carries the full path of the test it was recorded in (`crate::module::test`).
//! `PCTVB_REPLAY` is read by every test of every test binary `cargo test` starts, so a test
//! compares the token's path with its own:
//!
//! - the same test replays the token;
//! - a test of another binary (another crate segment), or a test of this binary while the
//!   harness's filter also selects the token's test, runs its normal search and prints a note
//!   (on stderr, past the harness's capture): the token's own test replays it in the same run;
//! - a test of this binary while the filter does not select the token's test (a wrong
//!   `--exact` name, a renamed test) fails with [`Error::Token`](crate::Error::Token), naming
//!   the test the token belongs to and the command that replays it: otherwise nothing would
//!   replay the token and the run would pass as if it had.
//!
//! # Tokens too long for a command line
//!
//! A token grows with the switches of its execution: a livelock of two threads that yield to
//! each other switches at every step, and under a raised `max_steps` its token passes the
//! 128 KiB Linux takes for one argument or environment string (`MAX_ARG_STRLEN`), where the
//! shell refuses the whole line ("Argument list too long"). A token longer than
//! [`INLINE_LIMIT`] is therefore written to a file (the runner chooses where: the target
//! directory's `pctvb/`), and the line reads it from there: `PCTVB_REPLAY=@<path>`, which
//! `Config::replay("@<path>")` takes too. `@` is no token character, so the two forms never
//! mix; shorter tokens stay in the line, as they always were.

pub mod token;

use std::path::{Path, PathBuf};

pub use token::{decode, encode, ReplayToken, ENV_VAR};

/// The longest token a replay line carries itself, in bytes; a longer one goes to a file
/// (see the module documentation). Linux takes at most 128 KiB (131,072 bytes, the final NUL
/// included) for `PCTVB_REPLAY=<token>`; this leaves room to spare.
pub const INLINE_LIMIT: usize = 100_000;

/// What starts a `PCTVB_REPLAY` (or `Config::replay`) value that names a file holding the
/// token rather than the token itself.
pub const FILE_MARK: char = '@';

/// The largest token file read (2 GiB): more than a token of
/// [`MAX_CHOICES`](token::MAX_CHOICES) choices, the most [`decode`] accepts, takes (at most 10
/// bytes a choice, 4/3 of that in base64: about 1.3 GB), so a larger file holds no token
/// pctvb could replay, and is refused before it fills the memory.
const MAX_TOKEN_FILE: u64 = 2 << 30;

/// The path of a value that names a token file (`@<path>`, with an optional leading
/// `PCTVB_REPLAY=` and matching quotes around it, as `decode` takes a token), or `None` for a
/// value that is meant as the token itself.
pub(crate) fn token_file(value: &str) -> Option<&str> {
    let mut text = value.trim();
    text = text.strip_prefix(&format!("{ENV_VAR}=")).unwrap_or(text);
    for quote in ['\'', '"'] {
        if text.len() >= 2 && text.starts_with(quote) && text.ends_with(quote) {
            text = &text[1..text.len() - 1];
            break;
        }
    }
    text.strip_prefix(FILE_MARK).map(str::trim)
}

/// The text of the token file at `path` (named by a `@<path>` value), or what is wrong with
/// it: no path, no such file, not a regular file (a FIFO would block the read for good, a
/// device such as `/dev/zero` never end it), larger than any token, or unreadable. A relative
/// path is read from the current directory, which under `cargo test` is the package's: the
/// error says which directory that was. The text is not checked here: [`decode`] does that.
pub(crate) fn read_token_file(path: &str) -> Result<String, String> {
    if path.is_empty() {
        return Err(format!(
            "`{FILE_MARK}` names no file: give the path of the token file after it (the replay \
             line prints it), or the token itself"
        ));
    }
    let shown = shown_path(Path::new(path));
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read the token file {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("the token file {shown} is not a regular file"));
    }
    if meta.len() > MAX_TOKEN_FILE {
        return Err(format!(
            "the token file {shown} holds {} bytes, more than any replay token",
            meta.len()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read the token file {shown}: {e}"))
}

/// `path` as an error shows it: a relative one with the directory it was read from.
fn shown_path(path: &Path) -> String {
    match std::env::current_dir() {
        Ok(dir) if path.is_relative() => {
            format!("{} (relative to {})", path.display(), dir.display())
        }
        _ => path.display().to_string(),
    }
}

/// `text` with every character but letters, digits and `_` made `-`: a test's name as part of
/// a file's (token files here; the runner's regression files, run records and trace files).
pub(crate) fn file_name(text: &str) -> String {
    text.chars().map(|c| if c.is_alphanumeric() || c == '_' { c } else { '-' }).collect()
}

/// Writes `token`, of the test `test` (a full path; empty for an unnamed run), to a file in
/// `dir` and returns its path. The file is named after the test and a hash of the token, so
/// every token has its own (a later failure never overwrites the file an earlier line reads)
/// and writing the same token again changes nothing. It is written whole under a temporary
/// name and renamed, so a line never reads half a token.
pub(crate) fn write_token_file(dir: &Path, test: &str, token: &str) -> std::io::Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let stem = file_name(if test.is_empty() { "run" } else { test });
    let name = format!("{stem}-{:016x}.token", token::fnv1a64(token.as_bytes()));
    std::fs::create_dir_all(dir)?;
    let path = std::path::absolute(dir.join(name))?;
    let text = format!("{token}\n");
    if std::fs::metadata(&path).is_ok_and(|m| m.len() == text.len() as u64) {
        return Ok(path);
    }
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let partial = path.with_extension(format!("token.{}-{n}.partial", std::process::id()));
    std::fs::write(&partial, text).and_then(|()| std::fs::rename(&partial, &path)).inspect_err(
        |_| {
            let _ = std::fs::remove_file(&partial);
        },
    )?;
    Ok(path)
}

/// The value `PCTVB_REPLAY=` takes for the token file at `path`: `@<path>`, as one shell word.
pub(crate) fn file_value(path: &Path) -> String {
    let value = format!("{FILE_MARK}{}", path.display());
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:=%@".contains(c);
    if value.chars().all(plain) {
        value
    } else {
        shell_quote(&value)
    }
}

/// How a `#[pctvb::test]` binary was built, captured by the attribute at compile time, so the
/// replay line builds and runs exactly that test again: `cargo test -p <package> <target>
/// <features> [--release]`, with the `RUSTFLAGS` the build saw.
#[doc(hidden)]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CargoTarget {
    /// The package (`CARGO_PKG_NAME`), for `-p`.
    pub package: &'static str,
    /// The cargo target selection: `--lib`, `--bin <name>`, `--test <name>`, or empty when
    /// unknown.
    pub target: &'static str,
    /// The enabled features as cargo arguments, e.g. `--features a,b`, or
    /// `--no-default-features --features a` when `default` was not enabled; empty for none.
    pub features: &'static str,
    /// The `RUSTFLAGS` environment variable the build saw (e.g. `--cfg pctvb`); empty when
    /// unset (flags from `.cargo/config.toml` apply again by themselves).
    pub rustflags: &'static str,
    /// Built without debug assertions: `--release`.
    pub release: bool,
    /// The package's directory when it was built (`CARGO_MANIFEST_DIR`): where its
    /// regression files are when the test binary runs without cargo's environment.
    pub manifest_dir: &'static str,
}

/// The settings a replay must take as the recorded execution had them, beyond its choices,
/// which a token's strategy text carries as tags (before an `#[pctvb::instrument]` session's
/// tag, which the runner appends later): ` [races off]`, ` [max_steps N]`, ` [max_threads N]`.
/// The replay of a token runs with each setting its text records, whatever the configuration
/// or the environment says; a setting it does not record is the configuration's.
///
/// - The data-race detector, when it was off. It decides where an execution stops: a race
///   ends it before a later assertion, so a token recorded without it, replayed with it, could
///   stop at the race on the very schedule recorded and report that race instead of the
///   recorded failure, with no divergence to say so. (A token recorded with it replays the
///   same without it, but for a race it found, which then diverges.)
/// - `max_steps`, for an execution that ran out of steps (a runaway or a livelock), and
///   `max_threads`, for one that spawned too many threads: the limit is the failure, and a
///   replay under another one diverged at it, naming neither the limit nor the setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Recorded {
    /// `Some(false)`: the detector was off.
    pub(crate) races: Option<bool>,
    /// The step limit an execution that ran out of steps ran under.
    pub(crate) max_steps: Option<u64>,
    /// The thread limit an execution that spawned too many threads ran under.
    pub(crate) max_threads: Option<usize>,
    /// Weak compare-exchanges could fail spuriously (`Config::weak_cas_failures`): their
    /// store-conditional points are in the schedule. Absent, they were not.
    pub(crate) weak_cas_failures: bool,
}

const RACES_OFF: &str = " [races off]";
const WEAK_CAS: &str = " [weak cas failures]";
const MAX_STEPS: &str = " [max_steps ";
const MAX_THREADS: &str = " [max_threads ";

impl Recorded {
    /// `strategy` with these settings' tags.
    pub(crate) fn tag(&self, mut strategy: String) -> String {
        if self.races == Some(false) {
            strategy.push_str(RACES_OFF);
        }
        if let Some(n) = self.max_steps {
            strategy.push_str(&format!("{MAX_STEPS}{n}]"));
        }
        if let Some(n) = self.max_threads {
            strategy.push_str(&format!("{MAX_THREADS}{n}]"));
        }
        if self.weak_cas_failures {
            strategy.push_str(WEAK_CAS);
        }
        strategy
    }

    /// The settings a token's strategy text records.
    pub(crate) fn read(strategy: &str) -> Recorded {
        fn number<T: std::str::FromStr>(strategy: &str, tag: &str) -> Option<T> {
            let at = strategy.find(tag)? + tag.len();
            strategy[at..].split_once(']')?.0.parse().ok()
        }
        let races_off =
            strategy.ends_with(RACES_OFF) || strategy.contains(&format!("{RACES_OFF} ["));
        Recorded {
            races: races_off.then_some(false),
            max_steps: number(strategy, MAX_STEPS),
            max_threads: number(strategy, MAX_THREADS),
            weak_cas_failures: strategy.contains(WEAK_CAS),
        }
    }
}

/// The line that re-runs exactly the execution `token` describes, for a test named `test`
/// (a full path such as `my_crate::tests::lost_update`; the crate segment is dropped because
/// cargo's test filter does not include it), built as `target` says when known. `token` is
/// what `PCTVB_REPLAY=` takes: the token, or `@<path>` of a file holding a token longer than
/// [`INLINE_LIMIT`] (which the runner writes when it prints a failure).
///
/// ```
/// use pctvb::__internals::replay::{command_line, CargoTarget};
/// let target = CargoTarget {
///     package: "bank",
///     target: "--test transfers",
///     features: "--features fast",
///     rustflags: "--cfg pctvb",
///     release: false,
///     manifest_dir: "/src/bank",
/// };
/// assert_eq!(
///     command_line("pctvb2-X", Some("transfers::tests::lost"), Some(&target)),
///     "PCTVB_REPLAY=pctvb2-X RUSTFLAGS=\"--cfg pctvb\" cargo test -p bank --test transfers \
///      --features fast -- --exact tests::lost"
/// );
/// ```
pub fn command_line(token: &str, test: Option<&str>, target: Option<&CargoTarget>) -> String {
    let Some(name) = test else {
        // A Rust string literal: a file's value may be quoted for the shell.
        return format!("{ENV_VAR}={token} (or Config::replay({token:?}) in code)");
    };
    let path = harness_path(name);
    let Some(t) = target else {
        return format!("{ENV_VAR}={token} cargo test -- --exact {path}");
    };
    let mut line = format!("{ENV_VAR}={token} ");
    if !t.rustflags.is_empty() {
        line += &format!("RUSTFLAGS={} ", shell_quote(t.rustflags));
    }
    line += "cargo test";
    for part in [format!("-p {}", t.package), t.target.to_string(), t.features.to_string()] {
        if !part.trim().is_empty() && part != "-p " {
            line.push(' ');
            line += part.trim();
        }
    }
    if t.release {
        line += " --release";
    }
    line += &format!(" -- --exact {path}");
    line
}

/// The test's name as the harness knows it: the full path without its crate segment.
pub(crate) fn harness_path(name: &str) -> &str {
    name.split_once("::").map_or(name, |(_, rest)| rest)
}

/// `value` as one shell word: in double quotes when that is enough, else in single quotes.
fn shell_quote(value: &str) -> String {
    if !value.contains(['"', '$', '`', '\\', '!']) {
        format!("\"{value}\"")
    } else {
        format!("'{}'", value.replace('\'', r"'\''"))
    }
}

/// Which test a `PCTVB_REPLAY` token belongs to, seen from one test (see the module
/// documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TokenFor {
    /// This test: replay it.
    ThisTest,
    /// Another test that runs in this process too (the harness's filter selects it), or a
    /// test of another binary or an unnamed run: run normally, with a note.
    OtherTest,
    /// Another test of this binary that the harness's filter does not select: nothing in
    /// this run would replay the token, so this test must not pass in its place.
    NotSelected,
}

/// Whether a token recorded in test `token_test` (a full path; empty for an unnamed run)
/// belongs to test `this_test`, given the test harness's command-line `args` (without the
/// program name).
pub(crate) fn token_for(token_test: &str, this_test: &str, args: &[String]) -> TokenFor {
    if token_test == this_test {
        return TokenFor::ThisTest;
    }
    let crate_of = |name: &str| name.split("::").next().unwrap_or("").to_string();
    if token_test.is_empty() || crate_of(token_test) != crate_of(this_test) {
        return TokenFor::OtherTest;
    }
    if harness_selects(harness_path(token_test), args) {
        TokenFor::OtherTest
    } else {
        TokenFor::NotSelected
    }
}

/// Whether libtest, started with `args`, runs the test at `path`: no filter, or a filter it
/// contains (equals, with `--exact`), and no `--skip` it contains (equals, with `--exact`).
pub(crate) fn harness_selects(path: &str, args: &[String]) -> bool {
    // libtest options that take a value as the next argument.
    const WITH_VALUE: &[&str] = &[
        "--skip",
        "--logfile",
        "--test-threads",
        "--format",
        "--color",
        "-Z",
        "--shuffle-seed",
        "--report-time",
    ];
    let exact = args.iter().any(|a| a == "--exact");
    let matches = |filter: &str| if exact { path == filter } else { path.contains(filter) };
    let (mut filters, mut skips) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if let Some(skip) = a.strip_prefix("--skip=") {
            skips.push(skip);
        } else if a == "--skip" {
            if let Some(v) = args.get(i + 1) {
                skips.push(v.as_str());
            }
            i += 1;
        } else if WITH_VALUE.contains(&a) && a != "--report-time" {
            i += 1;
        } else if !a.starts_with('-') {
            filters.push(a);
        }
        i += 1;
    }
    (filters.is_empty() || filters.iter().any(|f| matches(f))) && !skips.iter().any(|s| matches(s))
}

/// Set when a run of this process takes the `PCTVB_REPLAY` token as its own and replays it
/// (see [`unreplayed_env_token`]).
static ENV_TOKEN_REPLAYED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Notes that a run of this process replays the `PCTVB_REPLAY` token (the runner calls it).
pub(crate) fn note_env_token_replayed() {
    ENV_TOKEN_REPLAYED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// For pctvb-loom's check when its test binary exits: the test a `PCTVB_REPLAY` token was
/// recorded in, when that token belongs to this binary (its crate segment is
/// `binary_crate`, the binary's crate name), this process's harness arguments select its
/// test, and yet no run of this process replayed it. That is a replay line that ran nothing:
/// the test is not in this build (a feature or `--cfg` of the failing build missing), is
/// ignored, or was renamed, and libtest, having run no test, would report success. `None`
/// otherwise, and when the value is no token this can read (each test that reads it reports
/// that), or the harness only lists its tests.
#[doc(hidden)]
pub fn unreplayed_env_token(binary_crate: &str) -> Option<String> {
    if ENV_TOKEN_REPLAYED.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    let value = std::env::var(ENV_VAR).ok().filter(|v| !v.trim().is_empty())?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| matches!(a.as_str(), "--list" | "--help" | "-h")) {
        return None;
    }
    let text = match token_file(&value) {
        Some(path) => read_token_file(path).ok()?,
        None => value,
    };
    let test = decode(text.trim()).ok()?.test;
    let crate_segment = test.split("::").next().unwrap_or("");
    (!test.is_empty()
        && crate_segment == binary_crate
        && harness_selects(harness_path(&test), &args))
    .then_some(test)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_harness_filter_decides_whether_the_tokens_test_runs_here() {
        let selects = |path, a: &str| harness_selects(path, &args(a));
        assert!(selects("tests::lost", ""));
        assert!(selects("tests::lost", "lost"));
        assert!(selects("tests::lost", "--exact tests::lost"));
        assert!(!selects("tests::lost", "--exact lost"));
        assert!(!selects("tests::lost", "--exact tests::renamed"));
        assert!(!selects("tests::lost", "other"));
        assert!(selects("tests::lost", "other lost --nocapture"));
        assert!(!selects("tests::lost", "--skip lost"));
        assert!(!selects("tests::lost", "--skip=lost"));
        assert!(selects("tests::lost", "--test-threads 1 --format pretty"));
        assert!(!selects("tests::lost", "--test-threads 1 other"));
    }

    #[test]
    fn a_token_belongs_to_the_test_it_was_recorded_in() {
        let t = "bank::tests::lost";
        assert_eq!(token_for(t, t, &args("")), TokenFor::ThisTest);
        // Another test of the binary while the token's test runs too: a note.
        assert_eq!(token_for(t, "bank::tests::other", &args("")), TokenFor::OtherTest);
        assert_eq!(token_for(t, "bank::tests::other", &args("tests")), TokenFor::OtherTest);
        // A wrong `--exact` name, or a renamed test: nothing replays the token.
        let exact = args("--exact tests::other");
        assert_eq!(token_for(t, "bank::tests::other", &exact), TokenFor::NotSelected);
        // Another binary's test: `cargo test` starts that binary too.
        assert_eq!(token_for(t, "ledger::tests::lost", &exact), TokenFor::OtherTest);
        assert_eq!(token_for("", "bank::tests::other", &exact), TokenFor::OtherTest);
    }

    #[test]
    fn a_tokens_strategy_text_records_the_settings_its_replay_needs() {
        let none = Recorded::default();
        assert_eq!(none.tag("surw".into()), "surw");
        assert_eq!(Recorded::read("surw"), none);
        let all = Recorded {
            races: Some(false),
            max_steps: Some(3000),
            max_threads: Some(8),
            weak_cas_failures: true,
        };
        let text = all.tag("surw".into());
        assert_eq!(text, "surw [races off] [max_steps 3000] [max_threads 8] [weak cas failures]");
        assert_eq!(Recorded::read(&text), all);
        // Before an instrument session's tag, which the runner appends after them.
        assert_eq!(Recorded::read(&format!("{text} [instrument: all]")), all);
        let off = Recorded { races: Some(false), ..none };
        assert_eq!(Recorded::read(&format!("{} [instrument: all]", off.tag("p".into()))), off);
        assert_eq!(Recorded::read("pct(d=2) [instrument: all]"), none);
    }

    #[test]
    fn a_value_names_a_token_file_with_an_at_sign() {
        assert_eq!(token_file("@/t/x.token"), Some("/t/x.token"));
        assert_eq!(token_file("  PCTVB_REPLAY=@/t/x.token\n"), Some("/t/x.token"));
        assert_eq!(token_file("'@/t/a b.token'"), Some("/t/a b.token"));
        assert_eq!(token_file("PCTVB_REPLAY=\"@rel.token\""), Some("rel.token"));
        assert_eq!(token_file("@"), Some(""));
        assert_eq!(token_file("pctvb2-AbC"), None);
        assert_eq!(token_file("PCTVB_REPLAY=pctvb2-AbC"), None);
        // As one shell word: quoted only when the path needs it.
        assert_eq!(file_value(Path::new("/t/x-1_2.token")), "@/t/x-1_2.token");
        assert_eq!(file_value(Path::new("/my dir/x.token")), "\"@/my dir/x.token\"");
        assert_eq!(file_value(Path::new("/a$b/x.token")), "'@/a$b/x.token'");
        assert_eq!(token_file(&file_value(Path::new("/my dir/x.token"))), Some("/my dir/x.token"));
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("pctvb-token-file-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_token_file_is_named_after_its_test_and_token_and_read_back() {
        let dir = scratch("write");
        let a = write_token_file(&dir, "bank::tests::lost", "pctvb2-A").unwrap();
        assert!(a.is_absolute(), "{}", a.display());
        let name = a.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("bank--tests--lost-") && name.ends_with(".token"), "{name}");
        assert_eq!(read_token_file(a.to_str().unwrap()).unwrap(), "pctvb2-A\n");
        // The same token, the same file; another token, another file (an earlier line keeps
        // reading its own).
        assert_eq!(write_token_file(&dir, "bank::tests::lost", "pctvb2-A").unwrap(), a);
        let b = write_token_file(&dir, "bank::tests::lost", "pctvb2-B").unwrap();
        assert_ne!(a, b);
        assert_eq!(read_token_file(a.to_str().unwrap()).unwrap(), "pctvb2-A\n");
        let unnamed = write_token_file(&dir, "", "pctvb2-A").unwrap();
        assert!(unnamed.file_name().unwrap().to_str().unwrap().starts_with("run-"));
        // Nothing but the token files is left (no partial file).
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 3);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_token_file_that_cannot_be_read_says_why() {
        let dir = scratch("read");
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.token");
        let err = read_token_file(missing.to_str().unwrap()).unwrap_err();
        assert!(
            err.contains(&format!("cannot read the token file {}", missing.display())),
            "{err}"
        );
        let err = read_token_file(dir.to_str().unwrap()).unwrap_err();
        assert!(err.contains("is not a regular file"), "{err}");
        assert!(read_token_file("").unwrap_err().contains("names no file"));
        let err = read_token_file("no-such.token").unwrap_err();
        assert!(err.contains("no-such.token (relative to "), "{err}");
        // A FIFO is refused before it is opened: reading it would wait for a writer forever.
        #[cfg(unix)]
        {
            let fifo = dir.join("fifo");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: a NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            let err = read_token_file(fifo.to_str().unwrap()).unwrap_err();
            assert!(err.contains("is not a regular file"), "{err}");
            let err = read_token_file("/dev/zero").unwrap_err();
            assert!(err.contains("is not a regular file"), "{err}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_command_line_builds_the_test_as_it_was_built() {
        let lib = CargoTarget { package: "bank", target: "--lib", ..CargoTarget::default() };
        assert_eq!(
            command_line("T", Some("bank::tests::lost"), Some(&lib)),
            "PCTVB_REPLAY=T cargo test -p bank --lib -- --exact tests::lost"
        );
        let release = CargoTarget {
            package: "bank",
            target: "--bin server",
            features: "--no-default-features --features a,b",
            rustflags: "--cfg pctvb -C link-arg=\"x\"",
            release: true,
            manifest_dir: "",
        };
        assert_eq!(
            command_line("T", Some("server::lost"), Some(&release)),
            "PCTVB_REPLAY=T RUSTFLAGS='--cfg pctvb -C link-arg=\"x\"' cargo test -p bank --bin \
             server --no-default-features --features a,b --release -- --exact lost"
        );
        assert_eq!(
            command_line("T", Some("bank::lost"), None),
            "PCTVB_REPLAY=T cargo test -- --exact lost"
        );
    }
}
