//! The replay line of a failing `loom::model`, pasted as printed, runs exactly the failing test
//! as it was built: the package, this test target, the profile and the `RUSTFLAGS` (the
//! `--cfg loom` a crate switches to pctvb-loom with), not `cargo test -- --exact <test>`,
//! which ran every target but this one's test (`running 0 tests`, `test result: ok`) in a
//! crate whose loom tests need `--cfg loom` and live in an integration test. And a replay
//! line that still runs nothing (a feature of the failing build missing, a renamed test) fails
//! instead of passing.
//!
//! The `child` tests are the programs under test: they do nothing unless
//! `PCTVB_LOOM_REPLAY_CHILD` is set, and the tests below run this very binary again with it
//! set, exactly as `cargo test` runs it.

extern crate pctvb_loom as loom;

use std::process::{Command, Output};

mod child {
    fn wanted() -> bool {
        std::env::var_os("PCTVB_LOOM_REPLAY_CHILD").is_some()
    }

    /// A lost update: an ordinary failing model.
    #[test]
    fn plain_model() {
        if !wanted() {
            return;
        }
        use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        use loom::sync::Arc;
        loom::model(|| {
            let n = Arc::new(AtomicUsize::new(0));
            let n2 = n.clone();
            let h = loom::thread::spawn(move || {
                let v = n2.load(SeqCst);
                n2.store(v + 1, SeqCst);
            });
            let v = n.load(SeqCst);
            n.store(v + 1, SeqCst);
            h.join().unwrap();
            assert_eq!(n.load(SeqCst), 2, "an increment was lost");
        });
    }

    /// A test that is no model, beside the failing one.
    #[test]
    fn not_a_model() {}
}

/// Runs this binary with the harness arguments `args`, the children wanted, and `env` (on top
/// of an environment without pctvb's variables). A fixed seed: the same failure every time.
fn run_child(args: &[&str], env: &[(&str, &str)]) -> (Output, String) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(args).env("PCTVB_LOOM_REPLAY_CHILD", "1");
    for var in ["PCTVB_REPLAY", "PCTVB_ITERATIONS", "PCTVB_STRATEGY", "PCTVB_CONFIDENCE"] {
        command.env_remove(var);
    }
    command.env("PCTVB_SEED", "7");
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output, text)
}

/// The replay line the failing child prints.
fn replay_line() -> String {
    let (output, text) = run_child(&["--exact", "child::plain_model"], &[]);
    assert!(!output.status.success(), "{text}");
    assert!(text.contains("an increment was lost"), "{text}");
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with("PCTVB_REPLAY="))
        .unwrap_or_else(|| panic!("no replay line in:\n{text}"))
        .to_string()
}

fn token_of(line: &str) -> &str {
    line.split_whitespace().next().unwrap().trim_start_matches("PCTVB_REPLAY=")
}

#[test]
fn the_replay_line_runs_exactly_the_failing_model_as_it_was_built() {
    let line = replay_line();
    let token = token_of(&line);
    // The flags this build had (this test is compiled in the same build as pctvb-loom), or
    // `--cfg loom` when a config file gave it.
    let flags = match (option_env!("CARGO_ENCODED_RUSTFLAGS"), option_env!("RUSTFLAGS")) {
        (Some(e), _) if !e.is_empty() => e.replace('\x1f', " "),
        (_, Some(f)) if !f.trim().is_empty() => f.trim().to_string(),
        _ if cfg!(loom) => "--cfg loom".to_string(),
        _ => String::new(),
    };
    let flags = match flags.is_empty() {
        true => String::new(),
        false => format!("RUSTFLAGS=\"{flags}\" "),
    };
    let release = if cfg!(debug_assertions) { "" } else { " --release" };
    assert_eq!(
        line,
        format!(
            "PCTVB_REPLAY={token} {flags}cargo test -p pctvb-loom --test replay_line{release} \
             -- --exact child::plain_model"
        )
    );
    if cfg!(loom) {
        assert!(line.contains("--cfg loom"), "built with --cfg loom: {line}");
    }
    // What cargo hands this binary: exactly the failing test runs, and fails the same way.
    let harness_args: Vec<&str> = line.split(" -- ").nth(1).unwrap().split(' ').collect();
    let (output, text) = run_child(&harness_args, &[("PCTVB_REPLAY", token)]);
    assert!(!output.status.success(), "{text}");
    assert!(text.contains("1 failed"), "{text}");
    assert!(text.contains("0 passed"), "{text}");
    assert!(text.contains("an increment was lost"), "{text}");
    assert!(text.contains(&line), "the replay prints the same line:\n{text}");
}

#[test]
fn a_replay_line_that_runs_no_test_fails_instead_of_passing() {
    use pctvb::__internals::replay::{decode, encode};
    let line = replay_line();
    // The token of a test this build does not have (renamed here; a test behind a feature the
    // command lacks is the same to the harness): its filter selects no test, and libtest
    // reports success, having run nothing.
    let mut token = decode(token_of(&line)).unwrap();
    token.test = token.test.replace("plain_model", "renamed_model");
    let renamed = encode(&token);
    let (output, text) =
        run_child(&["--exact", "child::renamed_model"], &[("PCTVB_REPLAY", &renamed)]);
    assert!(text.contains("running 0 tests"), "{text}");
    assert_eq!(output.status.code(), Some(101), "a replay that ran nothing failed:\n{text}");
    assert!(
        text.contains(
            "PCTVB_REPLAY holds a token of test `child::renamed_model` of this test binary"
        ),
        "{text}"
    );
    assert!(text.contains("add what the failing `cargo test` had"), "{text}");
    // A run that does not select the token's test is not a replay of it: it passes as before,
    // and so does a listing.
    let (output, text) =
        run_child(&["--exact", "child::not_a_model"], &[("PCTVB_REPLAY", &renamed)]);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");
    let (output, text) = run_child(&["--list"], &[("PCTVB_REPLAY", &renamed)]);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("child::plain_model: test"), "{text}");
}
