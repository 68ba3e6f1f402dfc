//! Regression files: a failure's token is saved, the next run replays it first, a token that
//! no longer fails is reported as "fixed?" and kept, and corrupt lines are errors.

use std::path::PathBuf;

#[path = "common/programs.rs"]
mod programs;

use pctvb::{Config, Error};
use programs::{fixed_update, lost_update};

fn scratch_file(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pctvb-regressions-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

#[test]
fn a_failure_is_saved_and_replayed_first_next_time() {
    let path = scratch_file("round_trip.txt");
    let config = Config::new().ignore_env().name("regressions::lost_update").regressions(&path);

    let first = config.clone().seed(1).iterations(1000).run(lost_update);
    let failure = first.failure().expect("found");
    let token = failure.token.clone().unwrap();
    let saved = std::fs::read_to_string(&path).unwrap();
    assert!(saved.contains(&token), "the token is saved: {saved}");
    assert!(first.notes.iter().any(|n| n.contains("saved to")), "{:?}", first.notes);

    // A different seed would search elsewhere, but the saved failure is replayed first.
    let second = config.clone().seed(999).iterations(1000).run(lost_update);
    assert_eq!(second.executions, 1, "the saved token failed on its first replay");
    assert!(second.replayed);
    let again = second.failure().unwrap();
    assert_eq!(again.token.as_deref(), Some(token.as_str()));
    assert!(second.notes.iter().any(|n| n.contains("still fails")), "{:?}", second.notes);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), saved, "nothing is saved twice");

    // After the fix the saved token no longer replays: reported as fixed?, kept.
    let third = config.seed(5).iterations(50).run(fixed_update);
    assert!(third.is_ok(), "{:?}", third.failure());
    assert_eq!(third.regressions_replayed, 1);
    assert!(third.notes.iter().any(|n| n.contains("fixed?")), "{:?}", third.notes);
    assert!(third.summary().contains("fixed?"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), saved, "the line is kept");
}

#[test]
fn corrupt_lines_are_reported_not_ignored() {
    let path = scratch_file("corrupt.txt");
    std::fs::write(&path, "# a comment\n\npctvb2-thisisnotatoken # oops\n").unwrap();
    let report = Config::new().ignore_env().seed(1).regressions(&path).run(fixed_update);
    assert!(report.failure().is_none(), "a corrupt file is not a bug");
    let error = report.error().expect("a corrupt file is an error");
    assert!(
        matches!(error, Error::Token { origin, .. } if origin.ends_with("corrupt.txt:3")),
        "{error:?}"
    );
    assert!(error.message().contains("corrupt.txt:3: not a replay token"), "{error}");
    assert!(error.message().contains("fix or delete the line"), "{error}");
    assert_eq!(report.executions, 0);
}

#[test]
fn the_attribute_uses_a_file_per_test_in_the_crate() {
    let config = Config::new().name("my_crate::tests::transfer").default_regressions();
    let report = config.clone().ignore_env().seed(1).iterations(5).run(fixed_update);
    assert!(report.is_ok());
    let expected = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("pctvb-regressions")
        .join("my_crate--tests--transfer.txt");
    assert!(!expected.exists(), "a passing run writes nothing");
}

/// A failure of a profiling execution (before a priority strategy's search) is saved with
/// the execution as the report names it ("profiling execution 1"), not its internal index
/// (`PROFILE_INDEX_BASE + 0`, 9223372036854775808).
#[test]
fn a_profiling_executions_failure_is_saved_as_the_report_names_it() {
    let base = pctvb::__internals::runner::PROFILE_INDEX_BASE;
    let path = scratch_file("profiling.txt");
    let config = Config::new().ignore_env().depth(2).iterations(100).minimize_runs(0);
    // The lost update fails in most random walks: some seed fails in profiling.
    let (report, n) = (0..50)
        .find_map(|seed| {
            let _ = std::fs::remove_file(&path);
            let report = config.clone().seed(seed).regressions(&path).run(lost_update);
            let execution = report.failure()?.execution;
            (execution >= base).then(|| (report, execution - base + 1))
        })
        .expect("a profiling execution fails for one of 50 seeds");
    let failure = report.failure().unwrap();
    let shown = format!("execution {n} of the run (a profiling execution, before the search)");
    assert!(failure.to_string().contains(&shown), "{failure}");
    let saved = std::fs::read_to_string(&path).unwrap();
    let line = saved.lines().find(|l| l.starts_with("pctvb")).expect("the token's line");
    assert!(line.contains(&format!(" # profiling execution {n}: ")), "{saved}");
    assert!(!saved.contains(&base.to_string()), "{saved}");
}

#[test]
fn a_file_shared_by_two_tests_replays_each_tests_own_tokens() {
    // Two tests given one file: the first's saved failure is not replayed by the second
    // (its body on the first's schedule, credited to the wrong test with a replay line that
    // names it); the second searches, saves its own, and each still replays its own (fixed
    // seeds).
    let path = scratch_file("shared.txt");
    let first = Config::new().ignore_env().name("regressions::first").regressions(&path);
    let second = Config::new().ignore_env().name("regressions::second").regressions(&path);
    let saved_first = first.clone().seed(1).iterations(1000).run(lost_update);
    let token = saved_first.failure().expect("found").token.clone().unwrap();

    let other = second.clone().seed(3).iterations(50).run(fixed_update);
    assert!(other.is_ok(), "{:?}", other.failure());
    assert_eq!(other.regressions_replayed, 0, "the first test's token is not the second's");
    assert!(!other.notes.iter().any(|n| n.contains("fixed?")), "{:?}", other.notes);

    let found = second.clone().seed(2).iterations(1000).run(lost_update);
    let own = found.failure().expect("found").token.clone().unwrap();
    assert_ne!(own, token);
    let again = second.seed(7).iterations(1000).run(lost_update);
    assert_eq!(again.failure().unwrap().token.as_deref(), Some(own.as_str()));
    let again = first.seed(7).iterations(1000).run(lost_update);
    assert_eq!(again.failure().unwrap().token.as_deref(), Some(token.as_str()));
}

/// How `#[pctvb::test]` would describe a test built in the package's lib, or in its bin.
fn built_in(target: &'static str) -> pctvb::__private::CargoTarget {
    pctvb::__private::CargoTarget {
        package: "bank",
        target,
        features: "",
        rustflags: "",
        release: false,
        manifest_dir: env!("CARGO_MANIFEST_DIR"),
    }
}

/// Removes the default regression files a test wrote in this package, however it ends, and
/// their directories when nothing else is left in them.
struct RemoveOnDrop(Vec<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::fs::remove_file(path);
        }
        for path in &self.0 {
            for dir in path.ancestors().skip(1).take(2) {
                if dir.ends_with("pctvb-regressions")
                    || dir.parent().is_some_and(|p| p.ends_with("pctvb-regressions"))
                {
                    let _ = std::fs::remove_dir(dir); // only when empty
                }
            }
        }
    }
}

#[test]
fn a_lib_and_a_bin_with_the_same_test_path_have_a_file_each() {
    // A package's lib and bin compile the same modules under the same crate name, so their
    // tests have one path; the default file was one, and the lib's failure replayed in the
    // bin's test. Each target now has its own (fixed seeds; the files go in this package's
    // pctvb-regressions/, named after this process so runs never share them, and are removed).
    let name = format!("bank{}::tests::lost", std::process::id());
    let file = format!("{}.txt", name.replace("::", "--"));
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("pctvb-regressions");
    let (lib_file, bin_file, legacy) =
        (dir.join("lib").join(&file), dir.join("bin-bank").join(&file), dir.join(&file));
    let _cleanup = RemoveOnDrop(vec![lib_file.clone(), bin_file.clone(), legacy.clone()]);
    let config =
        |target| Config::new().ignore_env().name(name.clone()).__cargo_target(built_in(target));
    let (lib, bin) =
        (config("--lib").default_regressions(), config("--bin bank").default_regressions());

    let found = lib.clone().seed(1).iterations(1000).run(lost_update);
    let token = found.failure().expect("found").token.clone().unwrap();
    assert!(std::fs::read_to_string(&lib_file).unwrap().contains(&token));
    assert!(!bin_file.exists() && !legacy.exists());

    let other = bin.clone().seed(3).iterations(50).run(fixed_update);
    assert!(other.is_ok(), "{:?}", other.failure());
    assert_eq!(other.regressions_replayed, 0, "the lib's failure is not the bin's");
    let own = lib.clone().seed(3).iterations(50).run(fixed_update);
    assert_eq!(own.regressions_replayed, 1, "the lib replays its own");
    assert!(own.notes.iter().any(|n| n.contains("fixed?")), "{:?}", own.notes);

    // A file of the old name (before per-target files) still replays, in every target, and
    // the report says to move its lines.
    std::fs::remove_file(&lib_file).unwrap();
    std::fs::write(&legacy, format!("{token} # saved before per-target files\n")).unwrap();
    for target in [lib, bin] {
        let report = target.seed(3).iterations(50).run(fixed_update);
        assert_eq!(report.regressions_replayed, 1);
        let moved = report.notes.iter().find(|n| n.contains("before each cargo target"));
        let moved = moved.unwrap_or_else(|| panic!("{:?}", report.notes));
        assert!(moved.contains(&legacy.display().to_string()), "{moved}");
    }
}
