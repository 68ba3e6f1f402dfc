//! The clock a logical thread reads: `std::time::Instant::now()` inside an execution reads a
//! virtual clock the execution owns, so code that takes deadlines from std's clock behaves
//! the same in every replay of a schedule and never times out because the OS descheduled the
//! test's OS thread.
//!
//! How: on Linux with glibc, this file defines the C symbol `clock_gettime`. A definition in
//! the executable takes precedence over glibc's for every call the executable's code makes
//! (std's `Instant::now` among them), so it sees each read. While the calling OS thread runs
//! a logical thread's code (the host loop sets a thread-local flag around each resumption of
//! a coroutine, [`Virtual`]), reads of the monotonic clocks (`CLOCK_MONOTONIC`, its `_RAW`
//! and `_COARSE` variants, `CLOCK_BOOTTIME`) return virtual time; every other read, and every
//! read of any other clock (`CLOCK_REALTIME`, that is `SystemTime`; the CPU-time clocks),
//! goes to glibc's own function (found once with `dlsym(RTLD_NEXT)`, so the vDSO's speed is
//! kept), as does everything outside executions: other OS threads, the watchdog, the runner
//! between executions, libtest.
//!
//! The virtual clock: each execution starts at its run's base (each clock's real reading when
//! the run started, [`Base`]), so values look like real ones and every execution of a run
//! sees the same ones. Each read advances it by one microsecond (so a loop that waits for a
//! deadline with no scheduling point in it ends); a timed wait of pctvb's (`park_timeout`,
//! `recv_timeout`, `wait_timeout`, `sleep`) that ends by its timeout moves it forward to the
//! wait's deadline if it is behind ([`deadline`], [`reach`]). Nothing else moves it: real
//! time spent by the OS thread (preemption, a real `std::thread::sleep`) does not show.
//!
//! pctvb's own code that needs real time (the runner's limits, the data lock's
//! cross-execution wait, the watchdog's bookkeeping) reads [`real_now`], which is real even
//! when it runs inside a logical thread.
//!
//! Consequences worth knowing: std's own timed waits called inside an execution (a std
//! `Condvar::wait_timeout`, `std::thread::park_timeout`) compute an absolute deadline from
//! `CLOCK_MONOTONIC`, which is virtual there and behind the real clock, so they return at
//! once (they block every logical thread anyway); `std::thread::sleep` sleeps for real
//! (it takes a relative duration) and the virtual clock does not move. Every binary that
//! links pctvb gets the symbol (a read outside executions checks one thread-local flag, then
//! calls glibc's); another definition of `clock_gettime` in the same binary is a link error.
//! That the symbol does win at link time is checked by `tests/virtual_clock.rs` (whose first
//! assertion fails in a binary where it does not) and pctvb-loom's `tests/clock.rs`.
//!
//! Elsewhere (other operating systems, musl) nothing is interposed: `Instant::now()` reads
//! the real clock everywhere, the functions here keep no state, and [`deadline`]/[`reach`]
//! do nothing.

use std::time::{Duration, Instant};

/// The real time now, whatever the calling thread runs: for pctvb's own timing (the runner's
/// time limits, the data lock's wait limit, the watchdog), which must not read the virtual
/// clock when it runs inside a logical thread.
pub(crate) fn real_now() -> Instant {
    imp::real(Instant::now)
}

pub(crate) use imp::{deadline, reach, Base, Virtual};

/// The clock pctvb does not control, as messages about nondeterminism name it: on Linux with
/// glibc only the wall clock (`Instant` reads the execution's clock), elsewhere every clock.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) const UNCONTROLLED_TIME: &str = "the wall clock (SystemTime)";
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) const UNCONTROLLED_TIME: &str = "time";

/// `thread::sleep` inside an execution: a yield (see `thread::yield_now`), after which the
/// clock reads at least `duration` later than before.
pub(crate) fn sleep(duration: Duration, location: &'static std::panic::Location<'static>) {
    let deadline = deadline(Some(duration));
    super::with_execution("thread::sleep", |ex| {
        ex.schedule(super::EventKind::Sleep, None, location)
    });
    reach(deadline);
}

/// Linux with glibc: the interposed `clock_gettime` and the per-OS-thread virtual clock.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod imp {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicPtr, Ordering};
    use std::time::Duration;

    use libc::{c_int, clockid_t, timespec};

    /// The clocks that read virtual time, in [`Base`]'s order.
    const CLOCKS: [clockid_t; 4] = [
        libc::CLOCK_MONOTONIC,
        libc::CLOCK_MONOTONIC_RAW,
        libc::CLOCK_MONOTONIC_COARSE,
        libc::CLOCK_BOOTTIME,
    ];

    const NANOS: u64 = 1_000_000_000;

    /// How far a read of the virtual clock advances it, in nanoseconds: one microsecond.
    const QUANTUM: u64 = 1_000;

    /// Where each virtual clock starts in every execution of a run: that clock's real
    /// reading, in nanoseconds, when the run started.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Base([u64; 4]);

    impl Base {
        /// The real readings now.
        pub(crate) fn now() -> Base {
            let mut base = [0; 4];
            for (b, &clock) in base.iter_mut().zip(&CLOCKS) {
                let mut ts = timespec { tv_sec: 0, tv_nsec: 0 };
                // SAFETY: `ts` is a valid timespec to write.
                if unsafe { real_clock_gettime(clock, &mut ts) } == 0 {
                    *b = (ts.tv_sec as u64).saturating_mul(NANOS).saturating_add(ts.tv_nsec as u64);
                }
            }
            Base(base)
        }
    }

    /// The calling OS thread's virtual clock. `const`-initialized plain cells: reading them
    /// from `clock_gettime` allocates nothing, registers no destructor and cannot fail, even
    /// while the thread starts or exits.
    struct Clock {
        /// Whether reads are virtual now: a logical thread is running on this OS thread.
        on: Cell<bool>,
        /// Virtual nanoseconds since the execution started.
        elapsed: Cell<u64>,
        base: Cell<[u64; 4]>,
    }

    thread_local! {
        static CLOCK: Clock = const {
            Clock { on: Cell::new(false), elapsed: Cell::new(0), base: Cell::new([0; 4]) }
        };
    }

    /// Reads on this OS thread are virtual while this guard lives (the host loop holds one
    /// around each resumption of a logical thread's coroutine).
    pub(crate) struct Virtual(());

    impl Virtual {
        /// Starts an execution's clock at `base` on this OS thread (reads stay real).
        pub(crate) fn start(base: Base) {
            CLOCK.with(|c| {
                c.elapsed.set(0);
                c.base.set(base.0);
            });
        }

        /// Makes reads virtual until the guard drops.
        #[inline]
        pub(crate) fn on() -> Virtual {
            CLOCK.with(|c| c.on.set(true));
            Virtual(())
        }
    }

    impl Drop for Virtual {
        #[inline]
        fn drop(&mut self) {
            CLOCK.with(|c| c.on.set(false));
        }
    }

    /// Runs `f` with real reads on this OS thread.
    #[inline]
    pub(super) fn real<R>(f: impl FnOnce() -> R) -> R {
        let was = CLOCK.with(|c| c.on.replace(false));
        let r = f();
        if was {
            CLOCK.with(|c| c.on.set(true));
        }
        r
    }

    /// The virtual time (nanoseconds since the execution started) a timed wait of `timeout`
    /// that starts now ends at; `None` when reads are real or the wait has no timeout.
    pub(crate) fn deadline(timeout: Option<Duration>) -> Option<u64> {
        let timeout = timeout?;
        CLOCK.with(|c| {
            c.on.get().then(|| {
                let t = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
                c.elapsed.get().saturating_add(t)
            })
        })
    }

    /// A timed wait ended by its timeout: the clock reads at least its `deadline` from now on.
    pub(crate) fn reach(deadline: Option<u64>) {
        if let Some(d) = deadline {
            CLOCK.with(|c| c.elapsed.set(c.elapsed.get().max(d)));
        }
    }

    /// The virtual reading of `clock` (advancing the clock by a quantum), or `None` when this
    /// read must be real.
    #[inline]
    fn virtual_read(clock: clockid_t) -> Option<u64> {
        let i = CLOCKS.iter().position(|&c| c == clock)?;
        CLOCK
            .try_with(|c| {
                if !c.on.get() {
                    return None;
                }
                let now = c.elapsed.get().saturating_add(QUANTUM);
                c.elapsed.set(now);
                Some(c.base.get()[i].saturating_add(now))
            })
            .ok()
            .flatten()
    }

    type ClockGettime = unsafe extern "C" fn(clockid_t, *mut timespec) -> c_int;

    /// glibc's `clock_gettime`, once found.
    static REAL: AtomicPtr<libc::c_void> = AtomicPtr::new(std::ptr::null_mut());

    /// Finds glibc's `clock_gettime` before `main`, so that the first read of a thread that
    /// runs in a signal handler or holds a loader lock does not have to.
    #[ctor::ctor(unsafe)]
    fn find_real() {
        let _ = real_fn();
    }

    /// The next definition of `clock_gettime` after this executable's (glibc's); `None` if
    /// there is none or the lookup found this one (pctvb in a shared library), and then the
    /// system call serves.
    fn real_fn() -> Option<ClockGettime> {
        let mut p = REAL.load(Ordering::Acquire);
        if p.is_null() {
            // SAFETY: a lookup by a NUL-terminated name; racing lookups store the same value.
            p = unsafe { libc::dlsym(libc::RTLD_NEXT, c"clock_gettime".as_ptr()) };
            if p.is_null() || p as usize == clock_gettime as ClockGettime as usize {
                p = usize::MAX as *mut libc::c_void;
            }
            REAL.store(p, Ordering::Release);
        }
        if p as usize == usize::MAX {
            return None;
        }
        // SAFETY: `p` is glibc's `clock_gettime`, which has this signature.
        Some(unsafe { std::mem::transmute::<*mut libc::c_void, ClockGettime>(p) })
    }

    /// A real reading of `clock`.
    ///
    /// # Safety
    /// `tp` must be valid to write a `timespec` to.
    unsafe fn real_clock_gettime(clock: clockid_t, tp: *mut timespec) -> c_int {
        match real_fn() {
            // SAFETY: the caller's contract.
            Some(f) => unsafe { f(clock, tp) },
            // SAFETY: as above; the kernel writes `tp` or fails with EFAULT.
            None => unsafe { libc::syscall(libc::SYS_clock_gettime, clock, tp) as c_int },
        }
    }

    /// The C library's `clock_gettime`, interposed (see the module docs): virtual time for the
    /// monotonic clocks while a logical thread runs on the calling OS thread, glibc's answer
    /// otherwise.
    ///
    /// # Safety
    /// As glibc's: `tp` must be valid to write a `timespec` to.
    #[no_mangle]
    pub unsafe extern "C" fn clock_gettime(clock: clockid_t, tp: *mut timespec) -> c_int {
        match virtual_read(clock) {
            Some(ns) if !tp.is_null() => {
                // SAFETY: the caller's contract.
                unsafe {
                    *tp = timespec {
                        tv_sec: (ns / NANOS) as libc::time_t,
                        tv_nsec: (ns % NANOS) as libc::c_long,
                    };
                }
                0
            }
            // SAFETY: the caller's contract.
            _ => unsafe { real_clock_gettime(clock, tp) },
        }
    }
}

/// Other targets: no interposition (a definition of `clock_gettime` would not take
/// precedence over the system's, or the C library is not glibc, whose symbol lookup this
/// relies on), so `Instant::now()` is real everywhere and these do nothing.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod imp {
    use std::time::Duration;

    /// Where the virtual clock would start: nothing to record here.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Base;

    impl Base {
        pub(crate) fn now() -> Base {
            Base
        }
    }

    /// Does nothing: reads are always real here.
    pub(crate) struct Virtual(());

    impl Virtual {
        pub(crate) fn start(_: Base) {}

        #[inline]
        pub(crate) fn on() -> Virtual {
            Virtual(())
        }
    }

    #[inline]
    pub(super) fn real<R>(f: impl FnOnce() -> R) -> R {
        f()
    }

    pub(crate) fn deadline(_: Option<Duration>) -> Option<u64> {
        None
    }

    pub(crate) fn reach(_: Option<u64>) {}
}
