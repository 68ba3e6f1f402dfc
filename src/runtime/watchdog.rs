//! The watchdog: one OS thread per process, started with the first watched execution, that
//! notices an execution which has reached no scheduling point for too long (a logical thread
//! blocked in a std primitive pctvb does not control, in I/O, or looping without a
//! scheduling point; all logical threads of an execution share one OS thread, so the others
//! can never run again).
//!
//! It reads each engine's [`Watch`] (atomics the scheduling point bumps) every fraction of
//! the timeout. It cannot unwind the stuck thread, so it prints the diagnosis and ends the
//! process with exit code 101 (a failed test's).
//!
//! Even a run of one execution needs it (a test stuck in a std primitive is stuck in its
//! first execution), so its start is kept cheap: in a loom suite of one-execution models it
//! was the one thread pctvb adds to the process (issue #17's event-listener row). The first
//! engine to register starts it and no other waits for that (the engines' list is read when
//! it runs), and on Linux it is a bare POSIX thread with a small stack: std's thread set-up
//! (an alternate signal stack, its stack-guard query, whose allocation gives the thread a
//! malloc arena of its own, the thread handle) made 10 of the thread's 15 system calls, for a
//! loop that sleeps, reads atomics and may write to stderr.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
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
    {
        let mut watched = WATCHED.lock().unwrap_or_else(|e| e.into_inner());
        watched.retain(|w| w.watch.strong_count() > 0);
        watched.push(Watched {
            watch: Arc::downgrade(watch),
            timeout,
            seen: u64::MAX,
            since: Instant::now(),
        });
    }
    // Registered first: the watchdog finds this engine at its first look.
    static STARTED: AtomicBool = AtomicBool::new(false);
    if !STARTED.load(Ordering::Relaxed) && !STARTED.swap(true, Ordering::AcqRel) {
        start();
    }
}

/// The watchdog's stack: its loop and [`stuck`]'s message (a 1 KiB buffer) need little.
#[cfg(target_os = "linux")]
const STACK: usize = 256 * 1024;

/// Starts the watchdog thread: a detached POSIX thread with a [`STACK`]-byte stack, or a std
/// thread when that cannot be created.
#[cfg(target_os = "linux")]
fn start() {
    extern "C" fn main(_: *mut libc::c_void) -> *mut libc::c_void {
        // SAFETY: the name is a NUL-terminated string of at most 16 bytes, and the thread
        // names itself (for debuggers and profilers).
        unsafe {
            libc::pthread_setname_np(libc::pthread_self(), c"pctvb-watchdog".as_ptr());
        }
        // `run` never returns nor unwinds (it catches nothing that could panic: poisoned
        // locks are taken over, and `stuck` ends the process).
        run()
    }
    // SAFETY: `attr` is initialized before use and destroyed after; `main` has the signature
    // pthread_create expects and touches nothing of the caller's.
    let created = unsafe {
        let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
        if libc::pthread_attr_init(attr.as_mut_ptr()) != 0 {
            false
        } else {
            let mut attr = attr.assume_init();
            let stack = STACK.max(libc::PTHREAD_STACK_MIN);
            let mut thread: libc::pthread_t = std::mem::zeroed();
            let ok = libc::pthread_attr_setstacksize(&mut attr, stack) == 0
                && libc::pthread_attr_setdetachstate(&mut attr, libc::PTHREAD_CREATE_DETACHED) == 0
                && libc::pthread_create(&mut thread, &attr, main, std::ptr::null_mut()) == 0;
            libc::pthread_attr_destroy(&mut attr);
            ok
        }
    };
    if !created {
        spawn_std();
    }
}

#[cfg(not(target_os = "linux"))]
fn start() {
    spawn_std();
}

fn spawn_std() {
    let _ = std::thread::Builder::new().name("pctvb-watchdog".into()).spawn(|| run());
}

fn run() -> ! {
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
