//! `#[pctvb::test]` end to end: failing tests panic with the report, passing tests pass, and
//! tests running at the same time (libtest runs this file's tests in parallel) do not interfere.

#[path = "common/programs.rs"]
mod programs;

use pctvb::sync::atomic::{AtomicUsize, Ordering};
use pctvb::sync::{Arc, LazyLock, Mutex};
use pctvb::thread;

#[pctvb::test(iterations = 1000, seed = 7, regressions = false)]
#[should_panic(expected = "PCTVB_REPLAY=pctvb2-")]
fn lost_update_fails_with_a_replay_line() {
    programs::lost_update();
}

#[pctvb::test(iterations = 50, seed = 1, regressions = false)]
#[should_panic(
    expected = "cargo test -p pctvb --test attribute -- --exact lost_update_names_the_test"
)]
fn lost_update_names_the_test() {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    let h = thread::spawn(move || {
        let v = n2.load(Ordering::SeqCst);
        n2.store(v + 1, Ordering::SeqCst);
    });
    let v = n.load(Ordering::SeqCst);
    n.store(v + 1, Ordering::SeqCst);
    h.join().unwrap();
    assert_eq!(n.load(Ordering::SeqCst), 2);
}

// Both tests below use the same statics at the same time on different OS threads; each
// execution must see only its own state.
static SHARED: LazyLock<Mutex<Vec<usize>>> = LazyLock::new(|| Mutex::new(Vec::new()));
static PLAIN_COUNTER: AtomicUsize = AtomicUsize::new(0);

fn isolated_body(tag: usize) {
    let hs: Vec<_> = (0..2)
        .map(|_| {
            thread::spawn(move || {
                SHARED.lock().unwrap().push(tag);
                PLAIN_COUNTER.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*SHARED.lock().unwrap(), vec![tag, tag], "only this execution's pushes");
}

#[pctvb::test(iterations = 3000, seed = 11)]
fn isolation_a() {
    isolated_body(1);
}

#[pctvb::test(iterations = 3000, seed = 12)]
fn isolation_b() {
    isolated_body(2);
}

#[pctvb::test(iterations = 100)]
fn result_returning_tests_work() -> Result<(), String> {
    let m = Mutex::new(1);
    *m.lock().unwrap() += 1;
    if *m.lock().unwrap() == 2 {
        Ok(())
    } else {
        Err("wrong".into())
    }
}

#[pctvb::test(iterations = 10, regressions = false)]
#[should_panic(expected = "test body returned an error: \"broken\"")]
fn result_errors_fail_the_test() -> Result<(), String> {
    Err("broken".into())
}

#[test]
fn runs_on_parallel_os_threads_match_serial_runs() {
    let body = || {
        let n = Arc::new(AtomicUsize::new(0));
        let n2 = n.clone();
        let h = thread::spawn(move || {
            let v = n2.load(Ordering::SeqCst);
            n2.store(v + 1, Ordering::SeqCst);
        });
        let v = n.load(Ordering::SeqCst);
        n.store(v + 1, Ordering::SeqCst);
        h.join().unwrap();
        assert_eq!(n.load(Ordering::SeqCst), 2);
    };
    let run = move |seed: u64| {
        let report = pctvb::Config::new().ignore_env().seed(seed).iterations(1000).run(body);
        let f = report.failure().expect("found");
        (f.execution, f.token.clone())
    };
    let serial: Vec<_> = (0..4).map(run).collect();
    let parallel: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4).map(|seed| s.spawn(move || run(seed))).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(serial, parallel);
}

#[pctvb::test(iterations = 1000, seed = 7, regressions = false)]
#[should_panic(expected = "pctvb found a bug in this test:\nthread")]
fn a_bug_says_it_is_a_bug() {
    programs::lost_update();
}

/// The support function of `#[pctvb::test]`, with a configuration the attribute cannot spell:
/// a run that could not test must not read like a bug.
#[test]
#[should_panic(expected = "pctvb could not run this test: invalid replay token")]
fn a_bad_token_says_the_test_could_not_run() {
    let config = pctvb::Config::new().ignore_env().replay("not-a-token");
    pctvb::__private::run_test(config, programs::lost_update);
}

/// The smallest stack the attribute takes (the macro's minimum, which cannot name pctvb's
/// constant) is pctvb's `MIN_STACK_SIZE`, and runs a body; one byte less is a compile error
/// (compile-tests/tests/ui/test_stack_size_too_small.rs).
#[pctvb::test(stack_size = 65536, iterations = 100, regressions = false)]
fn the_smallest_stack_the_attribute_takes_runs_a_body() {
    assert_eq!(pctvb::__internals::runner::MIN_STACK_SIZE, 65536);
    let h = pctvb::thread::spawn(|| pctvb::thread::spawn(|| {}).join().unwrap());
    h.join().unwrap();
}

/// The largest depth the attribute takes (the macro's maximum, which cannot name pctvb's
/// constant) is pctvb's `MAX_DEPTH`, and runs every strategy with a depth; one more is a
/// compile error (compile-tests/tests/ui/test_depth_above_the_largest.rs), where depth =
/// 4294967295 aborted the test binary allocating 34 GB per execution.
#[pctvb::test(depth = 100, strategy = "pct", iterations = 50, regressions = false)]
fn the_largest_depth_the_attribute_takes_runs_a_body() {
    assert_eq!(pctvb::__internals::runner::MAX_DEPTH, 100);
    programs::fixed_update();
}

#[pctvb::test(depth = 100, strategy = "systematic", iterations = 50, regressions = false)]
fn the_largest_depth_runs_the_systematic_search() {
    programs::fixed_update();
}

/// The largest stack the attribute takes is pctvb's `MAX_STACK_SIZE` (`isize::MAX`); one more
/// is a compile error (compile-tests/tests/ui/test_stack_size_too_large.rs). Through `Config`,
/// `stack_size(usize::MAX)` fails the test with a message that names the setting: the
/// allocator's overflow panic failed it with none ("test huge_stack ... FAILED", no more).
#[test]
#[should_panic(
    expected = "pctvb could not run this test: stack_size 18446744073709551615 is larger than \
                any stack can be"
)]
fn a_stack_larger_than_any_mapping_says_the_test_could_not_run() {
    #[cfg(target_pointer_width = "64")]
    assert_eq!(pctvb::__internals::runner::MAX_STACK_SIZE as u64, i64::MAX as u64);
    let config = pctvb::Config::new().ignore_env().iterations(5).stack_size(usize::MAX);
    pctvb::__private::run_test(config, || thread::spawn(|| {}).join().unwrap());
}
