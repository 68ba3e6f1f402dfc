//! Regression files, as proptest's: every failure's token is appended to a file next to the
//! test crate, and every later run of the test replays the saved tokens first, before any new
//! exploration. A saved token that no longer reproduces is reported as "fixed?" and kept until
//! the user deletes it; a line that is not a token is an error naming the file and line.
//!
//! File format: one token per line, optionally followed by `# comment`; blank lines and lines
//! starting with `#` are ignored.

use std::fs;
use std::io::Write;
use std::panic::Location;
use std::path::{Path, PathBuf};

use super::Config;
use crate::error::Error;
use crate::replay;
use crate::report::{Failure, Report};

/// Where a run keeps its regression file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum RegressionFile {
    /// No file.
    Off,
    /// `$CARGO_MANIFEST_DIR/pctvb-regressions/<target>/<test path>.txt` (what
    /// `#[pctvb::test]` uses; see [`default_path`]).
    Default,
    /// This file.
    At(PathBuf),
}

/// A saved token and where it was read.
struct Saved {
    token: String,
    line: usize,
}

impl Config {
    /// The regression file of this run, if any.
    pub(super) fn regression_path(&self) -> Option<PathBuf> {
        match &self.regressions {
            RegressionFile::Off => None,
            RegressionFile::At(path) => Some(path.clone()),
            RegressionFile::Default => default_path(
                std::env::var_os("CARGO_MANIFEST_DIR"),
                self.cargo_target.as_ref().map(|t| t.manifest_dir),
                self.cargo_target.as_ref().map(|t| t.target),
                self.name.as_deref()?,
            ),
        }
    }

    /// The default regression file of this run as it was named before files were per target
    /// (`pctvb-regressions/<test path>.txt`, shared by every target with a test of that
    /// path), when it differs from [`Config::regression_path`]: its tokens for this test are
    /// still replayed, after the target's own file's, until the user moves them.
    pub(super) fn legacy_regression_path(&self) -> Option<PathBuf> {
        let RegressionFile::Default = self.regressions else { return None };
        let legacy = default_path(
            std::env::var_os("CARGO_MANIFEST_DIR"),
            self.cargo_target.as_ref().map(|t| t.manifest_dir),
            None,
            self.name.as_deref()?,
        )?;
        (Some(&legacy) != self.regression_path().as_ref()).then_some(legacy)
    }

    /// Replays the tokens saved in `path`. Returns the report to end the run with (a saved
    /// failure that still fails, or a corrupt file), or the notes to add to the run's report.
    pub(super) fn replay_saved(
        &self,
        path: &Path,
        body: &dyn Fn(),
        at: &'static Location<'static>,
    ) -> Result<(u64, Vec<String>), Box<Report>> {
        let saved = match read(path) {
            Ok(saved) => saved,
            Err(message) => {
                return Err(Box::new(self.error_report(Error::config("regression file", message))))
            }
        };
        let mut notes = Vec::new();
        let mut replayed = 0;
        for s in &saved {
            let origin = format!("{}:{}", path.display(), s.line);
            let token = match replay::decode(&s.token) {
                Ok(t) => t,
                Err(e) => {
                    let message =
                        format!("{origin}: not a replay token ({e}); fix or delete the line");
                    return Err(Box::new(self.error_report(Error::token(origin, message))));
                }
            };
            // A file shared by several tests (`regressions = "..."` on each) holds their
            // tokens side by side: each test replays its own. A token of another test would
            // run this test's body on that test's schedule, and its failure would be credited
            // here with a replay line that names the wrong test. Unnamed runs (Config::run
            // without a name) and tokens without a test replay as before.
            if let (Some(name), false) = (&self.name, token.test.is_empty()) {
                if token.test != *name {
                    continue;
                }
            }
            replayed += 1;
            let mut report = self.replay_one(token, s.token.clone(), &origin, body, at);
            match (&report.failure, &report.error) {
                (None, None) => notes.push(format!(
                    "{origin}: the saved failure no longer fails (fixed?); delete the line when sure"
                )),
                (_, Some(Error::ReplayDiverged { .. })) => notes.push(format!(
                    "{origin}: the saved failure no longer replays (the code changed: fixed?); \
                     delete the line when sure"
                )),
                (_, Some(_)) => return Err(Box::new(report)),
                (Some(_), None) => {
                    report.notes.push(format!(
                        "this failure was saved in {}:{} and still fails",
                        path.display(),
                        s.line
                    ));
                    return Err(Box::new(report));
                }
            }
        }
        Ok((replayed, notes))
    }
}

/// The default regression file of the test `name`: `pctvb-regressions/<target>/<name>.txt`
/// in the package's directory, which cargo gives the test in `CARGO_MANIFEST_DIR`
/// (`from_env`); a test binary run by hand, or by another runner, finds the directory it was
/// built for (`built_for`, from `#[pctvb::test]`) instead of silently saving nothing.
///
/// `<target>` names the cargo target the test was built in (`target`, its selection as
/// `#[pctvb::test]` read it at compile time: `--lib` gives `lib`, `--bin app` gives
/// `bin-app`, `--test api` gives `test-api`): a package's lib and bin compile the same
/// modules under the same crate name, so their tests have the same path, and without it one
/// target's failures replayed in the other's test. Without a known target (a `Config` run
/// outside the attribute) the file is `pctvb-regressions/<name>.txt`, the name every test had
/// before.
fn default_path(
    from_env: Option<std::ffi::OsString>,
    built_for: Option<&str>,
    target: Option<&str>,
    name: &str,
) -> Option<PathBuf> {
    let dir = from_env.or_else(|| built_for.filter(|d| !d.is_empty()).map(Into::into))?;
    let mut path = Path::new(&dir).join("pctvb-regressions");
    if let Some(target) = target.and_then(target_dir) {
        path.push(target);
    }
    Some(path.join(format!("{}.txt", crate::replay::file_name(name))))
}

/// The directory of a cargo target's regression files: `--lib` -> `lib`, `--bin app` ->
/// `bin-app`; `None` when unknown (empty).
fn target_dir(selection: &str) -> Option<String> {
    let words: Vec<&str> =
        selection.split_whitespace().map(|w| w.trim_start_matches('-')).collect();
    (!words.is_empty()).then(|| crate::replay::file_name(&words.join("-")))
}

/// The saved tokens of `path` (none if it does not exist).
fn read(path: &Path) -> Result<Vec<Saved>, String> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(format!(
                "cannot read the regression file {}: {e}; make it readable, or move it away to \
                 run without the saved failures",
                path.display()
            ))
        }
    };
    Ok(text
        .lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let token = line.split('#').next().unwrap_or("").trim();
            (!token.is_empty()).then(|| Saved { token: token.to_string(), line: i + 1 })
        })
        .collect())
}

/// Appends `failure`'s token to `path` unless it is already there. Returns a note for the
/// report saying where it went (or why it could not be saved).
pub(super) fn save(path: &Path, failure: &Failure) -> Option<String> {
    let token = failure.token.as_deref()?;
    let known = read(path).map(|s| s.iter().any(|s| s.token == token)).unwrap_or(false);
    if known {
        return None;
    }
    let first_line = failure.message.lines().next().unwrap_or("");
    // The execution as the report names it, not a profiling execution's internal index.
    let which = match failure.profiling_execution() {
        Some(n) => format!("profiling execution {n}"),
        None => format!("execution {}", failure.execution),
    };
    let line = format!("{token} # {which}: {first_line}\n");
    let write = || -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        let fresh = !path.exists();
        let mut file = fs::OpenOptions::new().create(true).append(true).open(path)?;
        if fresh {
            file.write_all(
                b"# Failures pctvb found in this test; each line is replayed before new\n\
                  # executions. Commit this file; delete a line once its bug is fixed.\n",
            )?;
        }
        file.write_all(line.as_bytes())
    };
    Some(match write() {
        Ok(()) => format!("the failure was saved to {}", path.display()),
        Err(e) => format!("could not save the failure to {}: {e}", path.display()),
    })
}

#[cfg(test)]
mod tests {
    use super::default_path;
    use std::path::Path;

    #[test]
    fn the_default_file_is_found_without_cargos_environment() {
        let name = "bank::tests::lost";
        let file = "pctvb-regressions/lib/bank--tests--lost.txt";
        let lib = Some("--lib");
        let env = default_path(Some("/run".into()), Some("/built"), lib, name).unwrap();
        assert_eq!(env, Path::new("/run").join(file), "cargo's directory first");
        let built = default_path(None, Some("/built"), lib, name).unwrap();
        assert_eq!(built, Path::new("/built").join(file), "then the one it was built for");
        assert_eq!(default_path(None, None, lib, name), None);
        assert_eq!(default_path(None, Some(""), lib, name), None);
    }

    #[test]
    fn each_target_has_its_own_default_file() {
        // A package's lib and bin compile the same modules under the same crate name: the
        // same test path, a file each.
        let name = "bank::tests::lost";
        let path = |target| default_path(Some("/p".into()), None, target, name).unwrap();
        let under = |dir: &str| Path::new("/p/pctvb-regressions").join(dir);
        assert_eq!(path(Some("--lib")), under("lib/bank--tests--lost.txt"));
        assert_eq!(path(Some("--bin bank")), under("bin-bank/bank--tests--lost.txt"));
        assert_eq!(path(Some("--test api-v2")), under("test-api-v2/bank--tests--lost.txt"));
        assert_eq!(path(Some("--example demo")), under("example-demo/bank--tests--lost.txt"));
        // An unknown target: the name every test had before per-target files.
        assert_eq!(path(None), under("bank--tests--lost.txt"));
        assert_eq!(path(Some("")), under("bank--tests--lost.txt"));
    }
}
