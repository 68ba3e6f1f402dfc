//! The module rules of ARCHITECTURE.md, checked: which top-level module of `src/` may name
//! which (`crate::<module>` in code, not in comments), so that a new dependency that would
//! close a cycle fails here instead of slipping in. The one allowed cycle is the engine and
//! the strategies (`runtime` <-> `schedulers`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each module and the modules it may name. `runner` is the top: it may name every other one.
const ALLOWED: &[(&str, &[&str])] = &[
    ("runtime", &["schedulers", "vars"]),
    ("schedulers", &["runtime", "guarantee", "vars"]),
    ("guarantee", &[]),
    ("vars", &[]),
    ("error", &[]),
    ("instrument", &["runtime", "vars"]),
    ("replay", &["runtime", "schedulers", "vars", "error"]),
    ("report", &["runtime", "schedulers", "guarantee", "vars", "error"]),
    ("sync", &["runtime", "vars"]),
    ("thread", &["runtime"]),
    ("future", &["runtime", "thread"]),
    ("cell", &["runtime", "vars"]),
    ("alloc", &["runtime"]),
    ("hint", &["runtime", "thread"]),
];

/// The `crate::<module>` names in the code (comment lines and `//` tails dropped) of a file.
fn named_modules(text: &str, into: &mut BTreeSet<String>) {
    for line in text.lines() {
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String =
                rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() && name.chars().next().unwrap().is_ascii_lowercase() {
                into.insert(name);
            }
        }
    }
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn modules_name_only_what_architecture_md_allows() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules: BTreeSet<&str> =
        ALLOWED.iter().map(|(m, _)| *m).chain(["runner", "lib"]).collect();
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, _) in ALLOWED {
        let mut paths = Vec::new();
        let dir = src.join(module);
        if dir.is_dir() {
            files(&dir, &mut paths);
        }
        let file = src.join(format!("{module}.rs"));
        if file.is_file() {
            paths.push(file);
        }
        assert!(!paths.is_empty(), "src/{module} is gone: update ALLOWED and ARCHITECTURE.md");
        let named = uses.entry(module.to_string()).or_default();
        for path in paths {
            named_modules(&std::fs::read_to_string(&path).unwrap(), named);
        }
        named.remove(*module);
    }
    let mut wrong = Vec::new();
    for (module, allowed) in ALLOWED {
        for named in &uses[*module] {
            if modules.contains(named.as_str()) && !allowed.contains(&named.as_str()) {
                wrong.push(format!("{module} names crate::{named}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "module rules broken (see ARCHITECTURE.md, 'Which module may use which'):\n  {}",
        wrong.join("\n  ")
    );
}

#[test]
fn the_checker_sees_code_and_skips_comments() {
    let mut named = BTreeSet::new();
    named_modules(
        "use crate::runtime::Step; // crate::report\n/// [`crate::runner`]\nlet x = crate::vars::f();",
        &mut named,
    );
    assert_eq!(named.into_iter().collect::<Vec<_>>(), ["runtime", "vars"]);
}

/// pctvb times itself with the real clock: inside a logical thread `Instant::now()` reads the
/// execution's virtual clock (`src/runtime/time.rs`), so its own limits, waits and rates read
/// `runtime::real_now()`. Only the clock's own file, and the facade's `wait_timeout_while`
/// (whose timeout is the user's, so virtual inside an execution and real outside), read std's
/// clock in code.
#[test]
fn pctvb_reads_the_real_clock_through_real_now() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let allowed = [src.join("runtime/time.rs"), src.join("sync/condvar.rs")];
    let mut paths = Vec::new();
    files(&src, &mut paths);
    let mut wrong = Vec::new();
    for path in paths.iter().filter(|p| !allowed.contains(p)) {
        for (n, line) in std::fs::read_to_string(path).unwrap().lines().enumerate() {
            let code = line.find("//").map_or(line, |i| &line[..i]);
            if ["Instant::now", ".elapsed()"].iter().any(|w| code.contains(w)) {
                wrong.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(paths.len() > 50, "the walk found the sources");
    assert!(wrong.is_empty(), "read real_now() instead:\n  {}", wrong.join("\n  "));
}
