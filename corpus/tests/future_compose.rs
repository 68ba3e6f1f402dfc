//! `pctvb::future` composes with the executor-independent `futures` crate: its oneshot
//! channel and `join!` run under pctvb's control (fixed seeds), and a dropped sender is a
//! canceled receive, not a hang.

use futures::channel::oneshot;
use pctvb::future::{block_on, spawn, yield_now};
use pctvb::sync::atomic::{AtomicUsize, Ordering};
use pctvb::sync::Arc;
use pctvb::{Config, StrategyKind};

fn passes(strategy: StrategyKind, body: impl Fn() + Sync) {
    let report = Config::new().ignore_env().seed(9).iterations(500).strategy(strategy).run(body);
    assert!(report.is_ok(), "unexpected failure:\n{}", report.failure().unwrap());
    assert!(report.stats.distinct_schedules > 1, "the schedule must vary");
}

#[test]
fn oneshot_and_join_run_under_every_strategy() {
    for strategy in
        [StrategyKind::UniformWalk, StrategyKind::Random, StrategyKind::Pct { depth: 3 }]
    {
        passes(strategy, || {
            let hits = Arc::new(AtomicUsize::new(0));
            let (tx_a, rx_a) = oneshot::channel::<u32>();
            let (tx_b, rx_b) = oneshot::channel::<u32>();
            let h = hits.clone();
            let producer = spawn(async move {
                h.fetch_add(1, Ordering::SeqCst);
                tx_a.send(1).unwrap();
                yield_now().await;
                tx_b.send(2).unwrap();
            });
            let (a, b, ()) = block_on(async { futures::join!(rx_a, rx_b, producer) });
            assert_eq!((a.unwrap(), b.unwrap()), (1, 2));
            assert_eq!(hits.load(Ordering::SeqCst), 1);
        });
    }
}

#[test]
fn a_dropped_oneshot_sender_cancels_the_receiver() {
    passes(StrategyKind::UniformWalk, || {
        let (tx, rx) = oneshot::channel::<u32>();
        let dropper = spawn(async move { drop(tx) });
        assert!(block_on(rx).is_err());
        block_on(dropper);
    });
}

#[test]
fn a_lost_wakeup_through_futures_is_found() {
    // A receiver whose sender is leaked (kept alive but never used) waits forever.
    let report = Config::new().ignore_env().seed(9).iterations(20).run(|| {
        let (tx, rx) = oneshot::channel::<u32>();
        let task = spawn(async move { rx.await.ok() });
        std::mem::forget(tx);
        block_on(task);
    });
    let failure = report.failure().expect("the receiver waits forever");
    assert!(failure.message.starts_with("lost wake-up"), "{}", failure.message);
}
