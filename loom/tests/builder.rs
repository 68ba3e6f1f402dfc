//! `model::Builder` as loom's users set it, and pctvb's settings from the environment. One
//! test per concern that reads the environment, in this file alone, so that setting a
//! variable races with nothing.
extern crate pctvb_loom as loom;

use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;

fn lost_update() {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    let h = thread::spawn(move || {
        let v = n2.load(SeqCst);
        n2.store(v + 1, SeqCst);
    });
    let v = n.load(SeqCst);
    n.store(v + 1, SeqCst);
    h.join().unwrap();
    assert_eq!(n.load(SeqCst), 2, "lost update");
}

fn message(err: Box<dyn std::any::Any + Send>) -> String {
    err.downcast_ref::<String>().cloned().unwrap_or_default()
}

#[test]
fn builder_and_environment() {
    // loom's usual builder: fields set by hand, then check.
    let mut builder = loom::model::Builder::new();
    builder.max_permutations = Some(50);
    builder.preemption_bound = Some(2);
    builder.max_duration = Some(std::time::Duration::from_secs(30));
    builder.checkpoint_file("ignored.json");
    builder.check(|| {
        let n = Arc::new(AtomicUsize::new(0));
        let n2 = n.clone();
        thread::spawn(move || n2.fetch_add(1, SeqCst)).join().unwrap();
        assert_eq!(n.load(SeqCst), 1);
    });

    // More threads than loom's default cap fail the execution, as in loom...
    let err = std::panic::catch_unwind(|| {
        loom::model(|| {
            let hs: Vec<_> = (0..loom::MAX_THREADS).map(|_| thread::spawn(|| {})).collect();
            hs.into_iter().for_each(|h| h.join().unwrap());
        })
    })
    .expect_err("max_threads is honoured");
    assert!(message(err).contains("max_threads"));
    // ...unless the builder raises it.
    let mut builder = loom::model::Builder::new();
    builder.max_threads = 8;
    builder.check(|| {
        let hs: Vec<_> = (0..7).map(|_| thread::spawn(|| {})).collect();
        hs.into_iter().for_each(|h| h.join().unwrap());
    });

    // PCTVB_STRATEGY=systematic with loom's preemption bound: the search finds the lost
    // update (it needs one preemption)...
    std::env::set_var("PCTVB_STRATEGY", "systematic");
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(1);
    let err = std::panic::catch_unwind(|| builder.check(lost_update)).expect_err("found");
    assert!(message(err).contains("lost update"));
    // ...and the bound is the search's: with 0 the search explores only schedules without
    // preemptions (pctvb's random profiling executions before it may still find the bug).
    builder.preemption_bound = Some(0);
    if let Err(err) = std::panic::catch_unwind(|| builder.check(lost_update)) {
        let msg = message(err);
        assert!(msg.contains("all schedules with <= 0 preemptions"), "{msg}");
    }
    // ...and without `max_permutations` the search is not cut at pctvb's default budget of
    // 1,000 executions: it explores every level within its bounds, as loom explores every
    // schedule within its own. Three threads of four operations each on two atomics have more
    // schedules within two preemptions than that; the count of executions (each runs the
    // closure once) shows the search went past 1,000 and ended by itself.
    static EXECUTIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let builder = loom::model::Builder::new();
    builder.check(|| {
        EXECUTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (a, b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let hs: Vec<_> = (0..3)
            .map(|_| {
                let (a, b) = (a.clone(), b.clone());
                thread::spawn(move || {
                    for _ in 0..2 {
                        a.fetch_add(1, SeqCst);
                        b.fetch_add(1, SeqCst);
                    }
                })
            })
            .collect();
        hs.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(a.load(SeqCst), 6);
    });
    let executions = EXECUTIONS.load(std::sync::atomic::Ordering::Relaxed);
    assert!(executions > 1_100, "the search stopped at {executions} executions");
    std::env::remove_var("PCTVB_STRATEGY");

    // PCTVB_CONFIDENCE asks for a guarantee (the combined strategy) without a source edit.
    std::env::set_var("PCTVB_CONFIDENCE", "0.9");
    let err = std::panic::catch_unwind(|| loom::model(lost_update)).expect_err("found");
    assert!(message(err).contains("lost update"));
    std::env::set_var("PCTVB_CONFIDENCE", "1.5");
    let err = std::panic::catch_unwind(|| loom::model(|| {})).expect_err("rejected");
    assert!(message(err).contains("PCTVB_CONFIDENCE=\"1.5\""));
    std::env::remove_var("PCTVB_CONFIDENCE");

    std::env::set_var("PCTVB_STRATEGY", "exhaustive-please");
    let err = std::panic::catch_unwind(|| loom::model(|| {})).expect_err("rejected");
    assert!(message(err).contains("names no pctvb strategy"));
    std::env::remove_var("PCTVB_STRATEGY");

    // loom's hints are accepted.
    loom::model(|| {
        loom::stop_exploring();
        loom::explore();
        loom::skip_branch();
        loom::hint::spin_loop();
    });
}
