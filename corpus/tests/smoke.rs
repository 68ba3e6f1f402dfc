//! The corpus smoke test with a small budget (`cargo test -p pctvb-corpus`): every buggy
//! program is found by some tool, no correct program fails, and the catalog is what the
//! results document says it is. The full comparison is `cargo run --release -p pctvb-corpus --
//! --all`; `-- --quick` is the same smoke test over every tool.

use std::time::Duration;

use pctvb::StrategyKind;
use pctvb_corpus::run::{pctvb_default, Budget, Cell, Tool, SMOKE_SKIPPED};
use pctvb_corpus::{catalog, Group, ACCESS_FREQUENCIES, SCALING_THREADS};

#[test]
fn catalog_is_complete() {
    let programs = catalog();
    let mut names: Vec<&str> = programs.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), programs.len(), "program names are unique");
    let count = |g: Group| programs.iter().filter(|p| p.group == g).count();
    assert_eq!(count(Group::Figure), 8);
    assert!(count(Group::Table1) >= 11);
    assert_eq!(count(Group::ThreadScaling), SCALING_THREADS.len());
    assert_eq!(count(Group::AccessFrequency), ACCESS_FREQUENCIES.len());
    assert!(count(Group::LockFree) >= 2);
    assert!(count(Group::Correct) >= 3);
    // Async programs: buggy ones beside a correct one, under pctvb and shuttle only.
    let asynchronous: Vec<_> = programs.iter().filter(|p| p.group == Group::Async).collect();
    assert!(asynchronous.iter().filter(|p| p.bug).count() >= 2);
    assert!(asynchronous.iter().any(|p| !p.bug));
    for p in &asynchronous {
        assert!(!Tool::Loom(None).supports(p) && Tool::ShuttleRandom.supports(p), "{}", p.name);
        assert_eq!(Tool::Loom(Some(2)).unsupported(p), Some("n/a (loom has no spawn)"));
    }
    assert!(count(Group::Races) >= 4);
    for p in programs.iter().filter(|p| p.group == Group::Races) {
        // shuttle has no race detection: its cells say so instead of counting a miss.
        assert!(!Tool::ShuttleRandom.supports(p), "{}", p.name);
        assert_eq!(Tool::ShuttleRandom.unsupported(p), Some("no race detection"));
        assert!(Tool::Loom(None).supports(p), "{}", p.name);
    }
    assert!(count(Group::SctBench) >= 16, "the SCTBench families");
    for p in &programs {
        if p.group != Group::Async {
            assert_eq!(p.bug, p.group != Group::Correct);
        }
        // safestack's minimal shape is unknown (see its catalog entry).
        let known = p.name != "safestack";
        assert_eq!(
            p.bug && known,
            p.shape.is_some(),
            "{}: buggy programs carry a (c, v, t)",
            p.name
        );
    }
}

#[test]
fn bugs_found_and_no_false_alarms() {
    let budget = Budget { executions: 2000, loom_time: Duration::from_millis(500) };
    // Cheap tools first; a buggy program stops at the first that finds its bug.
    let tools = [
        Tool::Pctvb(StrategyKind::Random),
        Tool::Pctvb(pctvb_default()),
        Tool::Pctvb(StrategyKind::Pct { depth: 3 }),
        Tool::ShuttleRandom,
    ];
    let mut problems = Vec::new();
    for p in catalog() {
        // The debug build is slow on the largest family members; the release smoke run
        // (`-- --quick`) covers them.
        if p.threads > 30 {
            continue;
        }
        // No tool finds these within this budget; the full run measures them.
        if SMOKE_SKIPPED.contains(&p.name.as_str()) {
            continue;
        }
        if p.bug {
            let found = tools.iter().any(|t| Cell::run(t, &p, 1, budget).found() > 0);
            if !found {
                problems.push(format!("{}: no tool found the bug", p.name));
            }
        } else {
            for t in tools.iter().chain(&[Tool::Loom(Some(2))]).filter(|t| t.supports(&p)) {
                if Cell::run(t, &p, 1, budget).found() > 0 {
                    problems.push(format!("{}: false alarm under {}", p.name, t.name()));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// shuttle can leave the thread that ran it stuck mid-panic (`run::thread_poisoned`: wronglock
/// under its URW scheduler); the trials after it, under any tool, must not fail for that.
/// Fixed seeds (`Cell::run` uses seeds 0 and 1).
#[test]
fn a_poisoned_thread_fails_no_later_trial() {
    let find = |name: &str| catalog().into_iter().find(|p| p.name == name).expect(name);
    let (wronglock, counter) = (find("wronglock"), find("counter"));
    let budget = Budget { executions: 200, loom_time: Duration::from_millis(100) };
    let worker = std::thread::Builder::new().stack_size(64 << 20).spawn(move || {
        assert_eq!(Cell::run(&Tool::ShuttleUrw, &wronglock, 2, budget).found(), 2);
        for tool in [Tool::Pctvb(StrategyKind::Random), Tool::ShuttleUrw] {
            let cell = Cell::run(&tool, &counter, 2, budget);
            assert_eq!(cell.found(), 0, "{}: {:?}", tool.name(), cell.trials[0].message);
        }
    });
    worker.expect("spawn").join().expect("no false alarm after a poisoned thread");
}
