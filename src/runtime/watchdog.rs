//! The watchdog: one OS thread per process, started with the first watched execution, that
//! notices an execution which has reached no scheduling point for too long (a logical thread
//! blocked in a std primitive pctvb does not control, in I/O, or looping without a
//! scheduling point; all logical threads of an execution share one OS thread, so the others
//! can never run again).
//!
//! It reads each engine's [`Watch`] (atomics the scheduling point bumps) every fraction of
//! the timeout. It cannot unwind the stuck thread, so it prints the diagnosis and ends the
//! process with exit code 101 (a failed test's).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Once, Weak};
use std::time::{Duration, Instant};

use super::crash::{describe_execution, RawMessage, Watch};

struct Watched {
    watch: Weak<Watch>,
    timeout: Duration,
    /// The progress seen last, and since when.
    seen: u64,
    since: Instant,
}

static WATCHED: Mutex<Vec<Watched>> = Mutex::new(Vec::new());

/// Watches `watch`'s executions with `timeout` until the engine is dropped.
pub(super) fn watch(watch: &Arc<Watch>, timeout: Duration) {
    static START: Once = Once::new();
    START.call_once(|| {
        let _ = std::thread::Builder::new().name("pctvb-watchdog".into()).spawn(run);
    });
    let mut watched = WATCHED.lock().unwrap_or_else(|e| e.into_inner());
    watched.retain(|w| w.watch.strong_count() > 0);
    watched.push(Watched {
        watch: Arc::downgrade(watch),
        timeout,
        seen: u64::MAX,
        since: Instant::now(),
    });
}

fn run() {
    loop {
        let tick = {
            let mut watched = WATCHED.lock().unwrap_or_else(|e| e.into_inner());
            watched.retain(|w| w.watch.strong_count() > 0);
            let now = Instant::now();
            for w in watched.iter_mut() {
                let Some(watch) = w.watch.upgrade() else { continue };
                let progress = watch.progress.load(Ordering::Relaxed);
                if !watch.active.load(Ordering::Acquire) || progress != w.seen {
                    w.seen = progress;
                    w.since = now;
                } else if now.duration_since(w.since) >= w.timeout {
                    stuck(&watch, now.duration_since(w.since));
                }
            }
            let shortest = watched.iter().map(|w| w.timeout).min();
            shortest.map_or(Duration::from_secs(1), |t| {
                (t / 4).clamp(Duration::from_millis(20), Duration::from_secs(1))
            })
        };
        std::thread::sleep(tick);
    }
}

/// Prints why `watch`'s execution is stuck and ends the process.
fn stuck(watch: &Watch, for_how_long: Duration) -> ! {
    let thread = watch.thread.load(Ordering::Relaxed);
    let mut msg = RawMessage::new();
    msg.str("\npctvb: test `")
        .str(&watch.run.test)
        .str("`: no scheduling point for ")
        .num(for_how_long.as_secs())
        .str(" s (watchdog): ")
        .thread(thread)
        .str(" is running and has reached no scheduling point since its last one, at ")
        .location(watch.last_location())
        .str("\n");
    describe_execution(&mut msg, watch);
    msg.str(
        "  likely causes: the thread blocks in a std primitive pctvb does not control (a \
         std::sync::Mutex held by another logical thread, a std::sync::mpsc channel, a Condvar, \
         the join of a real OS thread): every logical thread runs on one OS thread, so the \
         others can never run; use pctvb::sync and pctvb::thread under cfg(pctvb); or it waits \
         for I/O; or it loops without a scheduling point (a spin loop on a plain variable: use \
         pctvb's atomics, or call pctvb::thread::yield_now in the loop)\n",
    );
    msg.str(
        "  the watchdog cannot unwind the stuck thread, so it ends the process (exit code \
         101); if the test is just slow, raise the limit with Config::watchdog or \
         PCTVB_WATCHDOG=<seconds> (0 turns it off)\n",
    );
    msg.flush();
    super::crash::mark_reported();
    #[cfg(unix)]
    // SAFETY: ends the process at once, without running destructors or flushing std's
    // buffers (whose locks the stuck thread may hold).
    unsafe {
        libc::_exit(101)
    };
    #[cfg(not(unix))]
    std::process::exit(101)
}
