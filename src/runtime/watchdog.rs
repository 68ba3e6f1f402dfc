//! The watchdog: one OS thread per process that notices an execution which has reached no
//! scheduling point for too long (a logical thread blocked in a std primitive pctvb does not
//! control, in I/O, or looping without a scheduling point; all logical threads of an
//! execution share one OS thread, so the others can never run again).
//!
//! It reads each engine's [`Watch`] (atomics the scheduling point bumps) every fraction of
//! the timeout. It cannot unwind the stuck thread, so it prints the diagnosis and ends the
//! process with exit code 101 (a failed test's).
//!
//! When it starts: every engine registers when it is built, and the thread starts when a
//! watched execution spawns its first logical thread ([`before_spawn`]), not before. Until
//! then the execution has one logical thread, and nothing of pctvb's leaves one thread stuck:
//! the serialization above needs two (a hang of a lone thread is the program's own, as it is
//! without pctvb). The spawn comes before the new thread can hold or wait for anything, so
//! every hang the watchdog exists for is watched. What that saves: a process whose models
//! all have one thread (many of a loom suite's: issue #17's event-listener, nine
//! one-execution models) starts no thread of pctvb's; spawning it there cost 0.1 to 0.4 ms
//! of the binary's 2.2 to 2.6 ms, more on a busier machine (a thread created while libtest's
//! test threads start, on two cores). The thread itself is cheap: on Linux a bare POSIX
//! thread with a small stack, since std's thread set-up (an alternate signal stack, its
//! stack-guard query, whose allocation gives the thread a malloc arena of its own, the thread
//! handle) made 10 of its 15 system calls, for a loop that sleeps, reads atomics and may write
//! to stderr; and the execution that starts it does not make a concurrent one wait (the list
//! of engines is read when it runs).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use super::crash::{describe_execution, RawMessage, Watch};
use super::time::real_now;

struct Watched {
    watch: Weak<Watch>,
    timeout: Duration,
    /// The progress seen last, and since when.
    seen: u64,
    since: Instant,
}

static WATCHED: Mutex<Vec<Watched>> = Mutex::new(Vec::new());

/// Whether the watchdog thread was started.
static STARTED: AtomicBool = AtomicBool::new(false);

/// Watches `watch`'s executions with `timeout` until the engine is dropped, from the first
/// spawn of a logical thread on ([`before_spawn`]).
pub(super) fn watch(watch: &Arc<Watch>, timeout: Duration) {
    let mut watched = WATCHED.lock().unwrap_or_else(|e| e.into_inner());
    watched.retain(|w| w.watch.strong_count() > 0);
    watched.push(Watched {
        watch: Arc::downgrade(watch),
        timeout,
        seen: u64::MAX,
        since: real_now(),
    });
}

/// The calling OS thread's execution is about to spawn a logical thread: starts the watchdog
/// if that execution is watched and the watchdog is not running yet (one relaxed load once
/// it is).
/// Inlined, the check alone (a spawn calls it from generic code compiled in the user's crate);
/// the start is [`start_if_watched`].
#[inline]
pub(crate) fn before_spawn() {
    if !STARTED.load(Ordering::Relaxed) {
        start_if_watched();
    }
}

/// [`before_spawn`] while the watchdog is not running: starts it if the execution is watched.
#[inline(never)]
fn start_if_watched() {
    let watched =
        super::context::with_current(|ex| ex.is_some_and(|ex| ex.watch().run.watchdog.is_some()));
    if watched && !STARTED.swap(true, Ordering::AcqRel) {
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
            let now = real_now();
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
