//! The replay line of a failing model, and the check that a replay line ran its test.
//!
//! `#[pctvb::test]` knows how its test was built because the attribute runs inside rustc while
//! the user's crate compiles (`pctvb::__private::CargoTarget`: package, target, features,
//! `RUSTFLAGS`). `loom::model` is a function, compiled once with pctvb-loom: nothing of the
//! user's crate's build reaches it. What it can still tell, and the line takes:
//!
//! - the test's path: libtest names each test's thread after it;
//! - the package and its directory: `cargo test` runs every test binary with the package's
//!   `CARGO_PKG_NAME` and `CARGO_MANIFEST_DIR` set;
//! - the target: cargo names a test binary `<crate name>-<hash>` (the crate name is the
//!   target's name with `-` made `_`), so the binary's file name gives the crate, and the
//!   package's directory the target whose file has that name (`tests/<name>.rs` or
//!   `tests/<name>/main.rs`, likewise `benches/`, `examples/`, `src/bin/`; the package's own
//!   name for `--lib` or its `src/main.rs` binary). A target the manifest names otherwise is
//!   not found: the line then selects none, and `cargo test -p <package>` runs the failing
//!   test among all of the package's;
//! - the profile: the binary's directory, `<target dir>/<profile>/deps/` (`release`:
//!   `--release`; another than `debug`: `--profile <name>`);
//! - the `RUSTFLAGS`: pctvb-loom is compiled in the same build as the test, with the same
//!   flags, so it keeps the `RUSTFLAGS` (or `CARGO_ENCODED_RUSTFLAGS`) it was compiled under.
//!   When none was set but pctvb-loom was compiled with `--cfg loom` (from a config file, or
//!   `--config`), the line sets `RUSTFLAGS="--cfg loom"`, the flag a crate switches to
//!   pctvb-loom with: without it the replay would build the crate without its loom tests.
//!
//! The features of the failing build are not known (only rustc sees them, as `--cfg feature`
//! arguments of the user's crate), nor a `--target`. So that a line missing one never passes
//! having run nothing, a process of this binary that `PCTVB_REPLAY` asked to replay a test of
//! its own, whose harness arguments select that test, and in which no test replayed it, fails
//! when it exits (`guard`, on Unix): libtest alone reports `running 0 tests ... ok` for a test that
//! is not in the build.

use std::path::Path;
use std::sync::OnceLock;

use pctvb::__internals::replay::CargoTarget;

/// What the running test binary tells about itself.
pub(crate) struct Binary {
    /// Its crate name, the first segment of a model's test path (as `module_path!` gives it
    /// to a `#[pctvb::test]`), so that a token names the binary it belongs to.
    pub(crate) crate_name: &'static str,
    /// How to build and select it again, as far as known.
    pub(crate) target: CargoTarget,
    /// What the line could not name and the user should add, for a note in the report.
    pub(crate) missing: Option<String>,
}

/// This process's test binary, found once.
pub(crate) fn binary() -> &'static Binary {
    static BINARY: OnceLock<Binary> = OnceLock::new();
    BINARY.get_or_init(|| {
        let exe = std::env::current_exe().ok();
        let var = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        find_binary(exe.as_deref(), var("CARGO_PKG_NAME"), var("CARGO_MANIFEST_DIR"))
    })
}

/// [`binary`] from the binary's path `exe` and the package's name and directory, when known.
fn find_binary(exe: Option<&Path>, package: Option<String>, dir: Option<String>) -> Binary {
    let crate_name = exe.and_then(crate_of_binary);
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let selection = match (&crate_name, &package, &dir) {
        (Some(c), Some(p), Some(d)) => target_selection(Path::new(d), p, c),
        _ => None,
    };
    // The profile: `debug` holds the dev and test profiles' builds (`cargo test`'s default),
    // `release` the release and bench profiles' (`--release`), a custom profile its own
    // directory; outside cargo's layout, pctvb-loom was built with the test's profile.
    let (release, profile) = match exe.and_then(deps_profile) {
        Some("debug") => (false, None),
        Some("release") => (true, None),
        Some(custom) => (false, Some(format!("--profile {custom}"))),
        None => (!cfg!(debug_assertions), None),
    };
    let missing = match (&crate_name, &package, &selection) {
        (_, None, _) => Some(
            "the test binary ran outside cargo (no CARGO_PKG_NAME): add `-p <package>` and \
             the test target (`--test <name>`, `--lib`, ...) to the replay line"
                .to_string(),
        ),
        (Some(c), Some(p), None) => Some(format!(
            "no target file of package `{p}` matches the test binary's crate `{c}` (a target \
             the manifest names or places elsewhere): the replay line runs every test target \
             of the package; add `--test <name>` (or `--lib`, `--bin <name>`) to run only its \
             own"
        )),
        _ => None,
    };
    let target: Vec<String> = selection.into_iter().chain(profile).collect();
    Binary {
        crate_name: leak(crate_name.unwrap_or_else(|| "crate".to_string())),
        target: CargoTarget {
            package: leak(package.unwrap_or_default()),
            target: leak(target.join(" ")),
            features: "",
            rustflags: leak(build_rustflags(
                option_env!("CARGO_ENCODED_RUSTFLAGS"),
                option_env!("RUSTFLAGS"),
                cfg!(loom),
            )),
            release,
            manifest_dir: leak(dir.unwrap_or_default()),
        },
        missing,
    }
}

/// The crate name of the test binary at `exe`: its file name without cargo's `-<hash>`
/// (16 hex digits) and extension.
fn crate_of_binary(exe: &Path) -> Option<String> {
    let stem = exe.file_stem()?.to_str()?;
    let name = match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) => {
            name
        }
        _ => stem,
    };
    (!name.is_empty()).then(|| name.to_string())
}

/// The profile directory of a binary in cargo's layout, `<profile>/deps/<binary>`.
fn deps_profile(exe: &Path) -> Option<&str> {
    let deps = exe.parent()?;
    if deps.file_name()? != "deps" {
        return None;
    }
    deps.parent()?.file_name()?.to_str()
}

/// The `cargo test` arguments that select the target whose crate is `crate_name` in the
/// package `package` at `dir`, by its file (see the module documentation); `None` when no file
/// tells.
fn target_selection(dir: &Path, package: &str, crate_name: &str) -> Option<String> {
    for (sub, kind) in [("tests", "test"), ("benches", "bench"), ("examples", "example")] {
        if let Some(name) = target_named(&dir.join(sub), crate_name) {
            return Some(format!("--{kind} {name}"));
        }
    }
    if let Some(name) = target_named(&dir.join("src").join("bin"), crate_name) {
        return Some(format!("--bin {name}"));
    }
    if crate_name == package.replace('-', "_") {
        // The package's own name: its library, or its `src/main.rs` binary. With both, the two
        // test binaries have the same crate name, and neither selection is sure.
        let lib = dir.join("src").join("lib.rs").is_file();
        let main = dir.join("src").join("main.rs").is_file();
        match (lib, main) {
            (true, false) => return Some("--lib".to_string()),
            (false, true) => return Some(format!("--bin {package}")),
            _ => {}
        }
    }
    None
}

/// The target in `dir` whose crate name is `crate_name`: a `<name>.rs` file or a
/// `<name>/main.rs` directory, `name` with `-` made `_` being the crate name.
fn target_named(dir: &Path, crate_name: &str) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let path = entry.path();
            let name = if path.is_dir() {
                path.join("main.rs").is_file().then(|| path.file_name())??
            } else if path.extension().is_some_and(|e| e == "rs") {
                path.file_stem()?
            } else {
                return None;
            };
            let name = name.to_str()?.to_string();
            (name.replace('-', "_") == crate_name).then_some(name)
        })
        .collect();
    // Sorted, so that the line does not depend on the directory's order.
    names.sort();
    names.into_iter().next()
}

/// The `RUSTFLAGS` of the build pctvb-loom was compiled in (`encoded`: the
/// `CARGO_ENCODED_RUSTFLAGS` it saw, flags separated by 0x1f; `plain`: the `RUSTFLAGS`), or
/// `--cfg loom` when neither was set but `loom` (pctvb-loom compiled with `--cfg loom`): the
/// flag then came from a config file or `--config`, and the crate needs it to build its loom
/// tests. (A config file's other flags apply again by themselves only while `RUSTFLAGS` is
/// unset; see the module documentation.)
fn build_rustflags(encoded: Option<&str>, plain: Option<&str>, loom: bool) -> String {
    let flags = match encoded {
        Some(e) if !e.is_empty() => e.split('\x1f').collect::<Vec<_>>().join(" "),
        _ => plain.unwrap_or("").trim().to_string(),
    };
    if flags.is_empty() && loom {
        "--cfg loom".to_string()
    } else {
        flags
    }
}

/// The check a replaying process makes when it exits (see the module documentation): armed
/// before `main` when `PCTVB_REPLAY` is set, on Unix (it exits through `libc`).
#[cfg(unix)]
mod guard {
    /// Arms the check: one environment lookup in a process that does not replay.
    #[ctor::ctor(unsafe)]
    fn arm() {
        if std::env::var_os("PCTVB_REPLAY").is_some_and(|v| !v.is_empty()) {
            // SAFETY: registers a function that takes no arguments and does not unwind.
            unsafe { libc::atexit(check) };
        }
    }

    /// Fails the process when its replay line ran nothing: its `PCTVB_REPLAY` token belongs
    /// to a test of this binary that the harness's arguments select, and no test replayed it.
    extern "C" fn check() {
        use std::io::Write;
        // A panic must not cross this `extern "C"` boundary, so nothing here may panic.
        let outcome = std::panic::catch_unwind(|| {
            let binary = super::binary();
            let test = pctvb::__internals::replay::unreplayed_env_token(binary.crate_name)?;
            let path = test.split_once("::").map_or(test.as_str(), |(_, p)| p);
            Some(format!(
                "\npctvb-loom: PCTVB_REPLAY holds a token of test `{path}` of this test binary, \
                 and this run selected that test, but no test replayed it: nothing was \
                 replayed, so this run fails rather than pass. The test is not in this build \
                 (a `--features`, `--cfg` flag or profile of the failing build is missing from \
                 the command: add what the failing `cargo test` had; the replay line cannot \
                 know the features), or it is #[ignore]d (add `--include-ignored` after `--`), \
                 or it was renamed or removed (unset PCTVB_REPLAY and run it again to get a \
                 new token)."
            ))
        });
        if let Ok(Some(message)) = outcome {
            let _ = std::io::stdout().flush();
            let _ = writeln!(std::io::stderr(), "{message}");
            // SAFETY: ends the process at once; `exit` may not be called again from an
            // `atexit` handler. 101 is libtest's code for a failed run.
            unsafe { libc::_exit(101) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crate_is_the_binary_name_without_cargos_hash() {
        let crate_of = |p: &str| crate_of_binary(Path::new(p));
        assert_eq!(crate_of("/t/debug/deps/builder-0123456789abcdef").as_deref(), Some("builder"));
        assert_eq!(crate_of("/t/debug/deps/my_test-5c8fd2c116fbb985").as_deref(), Some("my_test"));
        assert_eq!(crate_of("C:/t/deps/a_b-0123456789abcdef.exe").as_deref(), Some("a_b"));
        // No hash (a binary copied out of `deps/`): the whole name.
        assert_eq!(crate_of("/t/debug/builder").as_deref(), Some("builder"));
        assert_eq!(crate_of("/t/debug/my-tool-v2").as_deref(), Some("my-tool-v2"));
    }

    #[test]
    fn the_profile_is_the_binarys_directory() {
        let built = |p: &str| {
            let b = find_binary(Some(Path::new(p)), Some("pkg".into()), Some("/no/such".into()));
            (b.target.release, b.target.target)
        };
        assert_eq!(built("/t/debug/deps/b-0123456789abcdef"), (false, ""));
        assert_eq!(built("/t/release/deps/b-0123456789abcdef"), (true, ""));
        assert_eq!(
            built("/t/x86_64-unknown-linux-gnu/ci/deps/b-0123456789abcdef"),
            (false, "--profile ci")
        );
        assert_eq!(deps_profile(Path::new("/somewhere/b")), None);
    }

    /// A package directory with these files (empty).
    fn package(files: &[&str]) -> std::path::PathBuf {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "pctvb-loom-rerun-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        for f in files {
            let path = dir.join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        dir
    }

    #[test]
    fn the_target_is_the_file_the_binary_was_built_from() {
        let dir = package(&[
            "src/lib.rs",
            "tests/builder.rs",
            "tests/my-test.rs",
            "tests/suite/main.rs",
            "tests/common/mod.rs",
            "benches/speed.rs",
            "examples/demo.rs",
            "src/bin/tool.rs",
        ]);
        let select = |c| target_selection(&dir, "my-pkg", c);
        assert_eq!(select("builder").as_deref(), Some("--test builder"));
        // cargo names the binary after the crate (`my_test`), but selects the target by its
        // name (`--test my_test` is an error).
        assert_eq!(select("my_test").as_deref(), Some("--test my-test"));
        assert_eq!(select("suite").as_deref(), Some("--test suite"));
        assert_eq!(select("speed").as_deref(), Some("--bench speed"));
        assert_eq!(select("demo").as_deref(), Some("--example demo"));
        assert_eq!(select("tool").as_deref(), Some("--bin tool"));
        assert_eq!(select("my_pkg").as_deref(), Some("--lib"));
        // A directory without `main.rs` is no target; a crate no file names selects none.
        assert_eq!(select("common"), None);
        assert_eq!(select("renamed"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_package_with_a_library_and_a_binary_of_its_name_selects_neither() {
        let both = package(&["src/lib.rs", "src/main.rs"]);
        assert_eq!(target_selection(&both, "app", "app"), None);
        let bin = package(&["src/main.rs"]);
        assert_eq!(target_selection(&bin, "my-app", "my_app").as_deref(), Some("--bin my-app"));
        for dir in [both, bin] {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    #[test]
    fn the_line_keeps_the_builds_flags_and_the_loom_cfg() {
        assert_eq!(
            build_rustflags(None, Some(" --cfg loom -C opt-level=1 "), true),
            "--cfg loom -C opt-level=1"
        );
        assert_eq!(build_rustflags(Some("--cfg\x1floom"), Some("ignored"), true), "--cfg loom");
        // Set by a config file: the flag the loom tests need, said again.
        assert_eq!(build_rustflags(None, None, true), "--cfg loom");
        assert_eq!(build_rustflags(Some(""), Some(""), true), "--cfg loom");
        assert_eq!(build_rustflags(None, None, false), "");
    }

    #[test]
    fn a_binary_outside_cargo_says_what_the_line_lacks() {
        let b = find_binary(Some(Path::new("/x/builder")), None, None);
        assert_eq!(b.crate_name, "builder");
        assert_eq!(b.target.package, "");
        assert!(
            b.missing.as_deref().is_some_and(|m| m.contains("-p <package>")),
            "{:?}",
            b.missing
        );
        let dir = package(&["src/lib.rs"]);
        let b = find_binary(
            Some(Path::new("/t/release/deps/renamed-0123456789abcdef")),
            Some("pkg".to_string()),
            Some(dir.display().to_string()),
        );
        assert_eq!((b.target.package, b.target.target, b.target.release), ("pkg", "", true));
        assert!(b.missing.as_deref().is_some_and(|m| m.contains("runs every test target")));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
