//! What pctvb says when an execution ends the process instead of failing: a stack overflow
//! of a logical thread (`SIGSEGV`/`SIGBUS` in a coroutine stack's guard page), any other
//! fatal signal inside an execution (`SIGSEGV`, `SIGBUS`, `SIGABRT`: a heap corruption, an
//! `abort()`), and the abort that follows a panic during unwinding (from the panic hook in
//! `context.rs`).
//!
//! Everything a report needs is prepared before the execution runs: the run's [`RunInfo`]
//! (test name, the line that re-runs the run, `stack_size`) is built once per run, and the
//! execution's [`Watch`] holds, in atomics, the execution index, the logical thread running
//! and its last scheduling point. The signal handler only reads them and writes with
//! `write(2)` from a buffer on its own stack: no allocation, no lock, no formatting machinery.
//! The watchdog (`watchdog.rs`) reads the same `Watch` from its own OS thread.
//!
//! The signal handler runs on the OS thread's alternate signal stack (std gives one to every
//! thread it starts; other threads get one here), prints its message, then restores the
//! previous disposition and lets the signal take its course; signals that do not come from an
//! execution go straight to the previous handler (std's own stack-overflow handler, for one).

use std::panic::Location;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What a crash report says about the run: fixed for the whole run, built before it starts.
pub(crate) struct RunInfo {
    /// The test's name, or a description of an unnamed run.
    pub(crate) test: String,
    /// The name replay tokens carry (`Config::name`, empty for an unnamed run).
    pub(crate) token_name: String,
    /// The line that re-runs the run so that it reaches the same execution (for a search, the
    /// rerun command with `PCTVB_SEED`; for a replay, the replay line itself).
    pub(crate) rerun_line: String,
    /// The replay line with `\0` where the token goes.
    pub(crate) replay_template: String,
    /// The run's seed.
    pub(crate) seed: u64,
    /// Stack size of every logical thread (`Config::stack_size`).
    pub(crate) stack_size: usize,
    /// Time without a scheduling point after which the watchdog ends the process.
    pub(crate) watchdog: Option<Duration>,
    /// Where the run records the execution it is in (see `runner/record.rs`), if anywhere.
    pub(crate) record: Option<Box<dyn ExecutionRecord>>,
    /// Encodes the replay token of an execution cut short by a crash: (strategy, execution,
    /// choices, digest) with this run's name and seed, as the replay line takes it (a token
    /// too long for a command line goes to a file, and the line names the file). The runner
    /// provides it (tokens are replay's business, not the engine's); `None` prints the rerun
    /// line instead.
    pub(crate) encode_token: Option<EncodeToken>,
    /// Where the virtual clock starts in each of the run's executions (`time.rs`): the real
    /// clocks when the run started.
    pub(crate) clock_base: super::time::Base,
    /// Whether the run's executions check for data races, which a token records.
    pub(crate) races: bool,
    /// Whether weak compare-exchanges may fail spuriously, which a token records.
    pub(crate) weak_cas_failures: bool,
}

/// Encodes the replay token of an execution as [`RunInfo::replay_line`] takes it: the run,
/// then (strategy, execution, choices, digest).
pub(crate) type EncodeToken = fn(&RunInfo, String, u64, Vec<u32>, u64) -> String;

impl std::fmt::Debug for RunInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunInfo").field("test", &self.test).field("seed", &self.seed).finish()
    }
}

impl RunInfo {
    /// A run with no name and no record (tests of the runtime, runs built without a config).
    pub(crate) fn anonymous(stack_size: usize) -> RunInfo {
        RunInfo {
            test: "(unnamed run)".into(),
            token_name: String::new(),
            rerun_line: String::new(),
            replay_template: String::new(),
            seed: 0,
            stack_size,
            watchdog: None,
            record: None,
            encode_token: None,
            clock_base: super::time::Base::now(),
            races: true,
            weak_cas_failures: false,
        }
    }

    /// The replay line for `token` (what `PCTVB_REPLAY=` takes: the token, or `@<file>`).
    pub(crate) fn replay_line(&self, token: &str) -> String {
        self.replay_template.replace('\0', token)
    }
}

/// Somewhere that keeps, across a crash of the process, which execution each engine of the
/// run is in. `claim` is called once per engine (it returns the engine's slot), `enter` at the
/// start of every execution and `leave` at its end: they must be a few plain stores.
pub(crate) trait ExecutionRecord: Send + Sync {
    fn claim(&self) -> usize;
    fn enter(&self, slot: usize, index: u64);
    fn leave(&self, slot: usize);
}

/// One execution's progress as the crash handlers and the watchdog see it: written by the OS
/// thread that runs the execution with relaxed stores, read anywhere.
pub(crate) struct Watch {
    pub(crate) run: Arc<RunInfo>,
    /// Scheduling points and switches so far; the watchdog sees progress when it changes.
    pub(crate) progress: AtomicU64,
    /// Where the running logical thread's last scheduling point was.
    pub(crate) location: AtomicPtr<Location<'static>>,
    /// The logical thread running now.
    pub(crate) thread: AtomicU32,
    /// The execution's index within the run.
    pub(crate) index: AtomicU64,
    /// Whether an execution runs now (the watchdog ignores the time between executions).
    pub(crate) active: AtomicBool,
    /// This engine's slot in the run's record.
    record_slot: usize,
}

impl Watch {
    pub(crate) fn new(run: Arc<RunInfo>) -> Arc<Watch> {
        let record_slot = run.record.as_ref().map_or(0, |r| r.claim());
        let watch = Arc::new(Watch {
            run,
            progress: AtomicU64::new(0),
            location: AtomicPtr::new(std::ptr::null_mut()),
            thread: AtomicU32::new(0),
            index: AtomicU64::new(0),
            active: AtomicBool::new(false),
            record_slot,
        });
        if let Some(timeout) = watch.run.watchdog {
            super::watchdog::watch(&watch, timeout);
        }
        watch
    }

    /// Execution `index` starts.
    #[inline]
    pub(crate) fn begin(&self, index: u64, location: &'static Location<'static>) {
        if let Some(record) = &self.run.record {
            record.enter(self.record_slot, index);
        }
        self.index.store(index, Ordering::Relaxed);
        self.thread.store(0, Ordering::Relaxed);
        self.location.store(location as *const _ as *mut _, Ordering::Relaxed);
        self.bump();
        self.active.store(true, Ordering::Release);
    }

    /// The execution is over.
    #[inline]
    pub(crate) fn end(&self) {
        self.active.store(false, Ordering::Release);
        if let Some(record) = &self.run.record {
            record.leave(self.record_slot);
        }
    }

    /// A scheduling point at `location`: the hot path, two relaxed stores.
    #[inline]
    pub(crate) fn point(&self, location: &'static Location<'static>) {
        self.bump();
        self.location.store(location as *const _ as *mut _, Ordering::Relaxed);
    }

    /// Logical thread `thread` runs next (it stores its own last scheduling point when it
    /// resumes, see `Execution::schedule`).
    #[inline]
    pub(crate) fn switch(&self, thread: u32) {
        self.bump();
        self.thread.store(thread, Ordering::Relaxed);
    }

    /// The running thread waits, with a limit of its own, for another execution's object
    /// (`data_lock.rs`): progress, for the watchdog.
    pub(crate) fn still_waiting(&self) {
        self.bump();
    }

    #[inline]
    fn bump(&self) {
        // One writer: a load and a store, no read-modify-write.
        let p = self.progress.load(Ordering::Relaxed);
        self.progress.store(p.wrapping_add(1), Ordering::Relaxed);
    }

    /// The last scheduling point, if any.
    pub(crate) fn last_location(&self) -> Option<&'static Location<'static>> {
        let ptr = self.location.load(Ordering::Relaxed);
        // SAFETY: only `&'static Location` are stored.
        unsafe { ptr.cast_const().as_ref() }
    }
}

/// A message assembled without allocating, written to stderr in pieces as its buffer fills.
pub(crate) struct RawMessage {
    buf: [u8; 1024],
    len: usize,
}

impl RawMessage {
    pub(crate) const fn new() -> RawMessage {
        RawMessage { buf: [0; 1024], len: 0 }
    }

    pub(crate) fn str(&mut self, s: &str) -> &mut RawMessage {
        for &b in s.as_bytes() {
            if self.len == self.buf.len() {
                self.flush();
            }
            self.buf[self.len] = b;
            self.len += 1;
        }
        self
    }

    pub(crate) fn num(&mut self, n: u64) -> &mut RawMessage {
        let mut digits = [0u8; 20];
        self.str(decimal(n, &mut digits))
    }

    pub(crate) fn location(&mut self, location: Option<&'static Location<'static>>) -> &mut Self {
        match location {
            Some(l) => {
                self.str(l.file()).str(":").num(l.line() as u64).str(":").num(l.column() as u64)
            }
            None => self.str("(none yet)"),
        }
    }

    /// `thread N` (`thread 0 (the test body)` for the main thread).
    pub(crate) fn thread(&mut self, thread: u32) -> &mut RawMessage {
        self.str("logical thread ").num(thread as u64);
        if thread == 0 {
            self.str(" (the test body)");
        }
        self
    }

    /// Writes what is buffered to stderr.
    pub(crate) fn flush(&mut self) {
        write_stderr(&self.buf[..self.len]);
        self.len = 0;
    }
}

#[cfg(unix)]
fn write_stderr(mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `write(2)` on a valid buffer; async-signal-safe.
        let n = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

#[cfg(not(unix))]
fn write_stderr(bytes: &[u8]) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(bytes);
}

/// Appends "execution I of the run seeded S" and the line that reproduces it.
pub(crate) fn describe_execution(msg: &mut RawMessage, watch: &Watch) {
    msg.str("  in execution ")
        .num(watch.index.load(Ordering::Relaxed))
        .str(" of the run seeded ")
        .num(watch.run.seed)
        .str("\n");
    if !watch.run.rerun_line.is_empty() {
        msg.str("  to reproduce it (the run repeats its executions up to this one):\n    ")
            .str(&watch.run.rerun_line)
            .str("\n");
    }
}

#[cfg(unix)]
pub(crate) use signals::{install, note_finished_run, running_stack};

#[cfg(not(unix))]
pub(crate) fn install() {}

#[cfg(not(unix))]
pub(crate) fn note_finished_run(_run: &RunInfo) {}

#[cfg(not(unix))]
#[inline]
pub(crate) fn running_stack(_lo: usize, _hi: usize, _name: (*const u8, usize)) {}

#[cfg(unix)]
mod signals {
    use std::cell::{Cell, UnsafeCell};
    use std::sync::atomic::Ordering;
    use std::sync::Once;

    use super::{describe_execution, RawMessage, RunInfo};

    /// The signals handled: a stack overflow is `SIGSEGV` (`SIGBUS` on some systems); a heap
    /// corruption detected by the allocator and `abort()` are `SIGABRT`.
    const SIGNALS: [libc::c_int; 3] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGABRT];

    /// The dispositions before ours, by index in `SIGNALS`, written once before ours are
    /// installed.
    static mut PREVIOUS: [Option<libc::sigaction>; 3] = [None; 3];

    thread_local! {
        /// The mapping (guard page included) of the coroutine stack that runs on this OS
        /// thread now, `(lowest address, highest)`; `(0, 0)` outside coroutines.
        static RUNNING: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
        /// The name of the logical thread running now (pointer and length of a string the
        /// execution's thread table owns while the thread runs), null when it has none.
        static RUNNING_NAME: Cell<(*const u8, usize)> = const { Cell::new((std::ptr::null(), 0)) };
        /// Whether this OS thread has an alternate signal stack pctvb checked or installed.
        static ALT_STACK: Cell<bool> = const { Cell::new(false) };
        /// Whether a report was already printed on this OS thread (the panic hook's, or a
        /// first signal's), so a following `SIGABRT` does not print another.
        pub(crate) static REPORTED: Cell<bool> = const { Cell::new(false) };
    }

    /// The coroutine whose stack maps `lo..hi` runs next on this OS thread, for the logical
    /// thread named `name` (a string its execution's thread table owns while it runs).
    #[inline]
    pub(crate) fn running_stack(lo: usize, hi: usize, name: (*const u8, usize)) {
        RUNNING.with(|r| r.set((lo, hi)));
        RUNNING_NAME.with(|r| r.set(name));
    }

    /// The last run that ended on an OS thread, for a crash that comes after it: text
    /// written before `len` is set, so the handler never reads a half-written one.
    struct LastRun {
        len: Cell<usize>,
        text: UnsafeCell<[u8; 1024]>,
    }

    thread_local! {
        static LAST_RUN: LastRun =
            const { LastRun { len: Cell::new(0), text: UnsafeCell::new([0; 1024]) } };
    }

    /// The run `run` ended on this OS thread (without the process dying): a crash after it,
    /// outside any execution, names it.
    pub(crate) fn note_finished_run(run: &RunInfo) {
        if run.rerun_line.is_empty() {
            return;
        }
        let text = format!(
            "`{}`, seeded {}; to run it again:\n    {}",
            run.test, run.seed, run.rerun_line
        );
        let _ = LAST_RUN.try_with(|last| {
            last.len.set(0);
            let mut n = text.len().min(1024);
            while !text.is_char_boundary(n) {
                n -= 1;
            }
            // SAFETY: only this OS thread touches its buffer; the handler reads it only up to
            // `len`, which is 0 while it is written.
            unsafe {
                std::ptr::copy_nonoverlapping(text.as_ptr(), last.text.get().cast::<u8>(), n)
            };
            last.len.set(n);
        });
    }

    fn last_run() -> Option<&'static str> {
        LAST_RUN
            .try_with(|last| {
                let n = last.len.get();
                // SAFETY: the first `n` bytes were written before `len` was set to `n`; the
                // thread-local lives as long as the thread the handler runs on.
                let bytes: &'static [u8] =
                    unsafe { std::slice::from_raw_parts(last.text.get().cast::<u8>(), n) };
                std::str::from_utf8(bytes).ok().filter(|s| !s.is_empty())
            })
            .ok()
            .flatten()
    }

    /// The running logical thread's name, if it has one.
    fn running_name() -> Option<&'static str> {
        let (ptr, len) = RUNNING_NAME.try_with(|r| r.get()).ok()?;
        if ptr.is_null() {
            return None;
        }
        // SAFETY: set from a live `String` of the execution's thread table, which is not
        // changed while its thread runs (and the handler runs on that thread).
        std::str::from_utf8(unsafe { std::slice::from_raw_parts(ptr, len) }).ok()
    }

    /// Installs the handlers (once per process) and makes sure this OS thread has an
    /// alternate signal stack (once per thread): the handler of an overflow cannot run on
    /// the stack that overflowed.
    pub(crate) fn install() {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            for (i, &sig) in SIGNALS.iter().enumerate() {
                // SAFETY: plain sigaction calls; PREVIOUS is written before the handler that
                // reads it is installed, and never again.
                unsafe {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                        continue;
                    }
                    (*std::ptr::addr_of_mut!(PREVIOUS))[i] = Some(old);
                    let mut new: libc::sigaction = std::mem::zeroed();
                    new.sa_sigaction = handler as *const () as usize;
                    new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                    libc::sigemptyset(&mut new.sa_mask);
                    libc::sigaction(sig, &new, std::ptr::null_mut());
                }
            }
        });
        if !ALT_STACK.with(|a| a.replace(true)) {
            ensure_alt_stack();
        }
    }

    /// An alternate signal stack for this OS thread, unless it has one (std's threads do).
    fn ensure_alt_stack() {
        // SAFETY: querying and setting this thread's sigaltstack; the mapping is leaked on
        // purpose (the thread may take a signal until it exits) unless released below.
        unsafe {
            let mut old: libc::stack_t = std::mem::zeroed();
            if libc::sigaltstack(std::ptr::null(), &mut old) != 0 {
                return;
            }
            if old.ss_flags & libc::SS_DISABLE == 0 {
                return;
            }
            let size = 64 * 1024;
            let ptr = libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if ptr == libc::MAP_FAILED {
                return;
            }
            let stack = libc::stack_t { ss_sp: ptr, ss_flags: 0, ss_size: size };
            if libc::sigaltstack(&stack, std::ptr::null_mut()) != 0 {
                libc::munmap(ptr, size);
                return;
            }
            ALT_RELEASE.with(|r| r.0.set((ptr as usize, size)));
        }
    }

    thread_local! {
        /// The alternate stack installed here, released when the OS thread exits.
        static ALT_RELEASE: AltRelease = const { AltRelease(Cell::new((0, 0))) };
    }

    struct AltRelease(Cell<(usize, usize)>);

    impl Drop for AltRelease {
        fn drop(&mut self) {
            let (ptr, size) = self.0.get();
            if ptr == 0 {
                return;
            }
            // SAFETY: disable the alternate stack before unmapping it.
            unsafe {
                let off = libc::stack_t {
                    ss_sp: std::ptr::null_mut(),
                    ss_flags: libc::SS_DISABLE,
                    ss_size: 0,
                };
                libc::sigaltstack(&off, std::ptr::null_mut());
                libc::munmap(ptr as *mut libc::c_void, size);
            }
        }
    }

    fn page_size() -> usize {
        // SAFETY: sysconf is async-signal-safe.
        let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if size > 0 {
            size as usize
        } else {
            4096
        }
    }

    extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        let index = SIGNALS.iter().position(|&s| s == sig).unwrap_or(0);
        let exec = super::super::context::current_ptr();
        // SAFETY: the pointer is live while set (see `context::enter`); the handler reads only
        // atomics and data fixed for the run.
        if let Some(exec) = unsafe { exec.as_ref() } {
            let watch = exec.watch();
            let (lo, _hi) = RUNNING.try_with(|r| r.get()).unwrap_or((0, 0));
            let fault = if sig == libc::SIGABRT || info.is_null() {
                0
            } else {
                // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
                unsafe { (*info).si_addr() as usize }
            };
            let overflow = lo != 0 && fault >= lo && fault < lo + page_size();
            let already = REPORTED.try_with(|r| r.replace(true)).unwrap_or(true);
            let mut msg = RawMessage::new();
            let thread = watch.thread.load(Ordering::Relaxed);
            if overflow {
                msg.str("\npctvb: test `").str(&watch.run.test).str("`: ").thread(thread);
                if let Some(name) = running_name() {
                    msg.str(" '").str(name).str("'");
                }
                msg.str(" overflowed its stack of ")
                    .num(watch.run.stack_size as u64)
                    .str(" bytes (stack_size)\n");
                msg.str("  last scheduling point: ").location(watch.last_location()).str("\n");
                describe_execution(&mut msg, watch);
                msg.str(
                    "  every logical thread, the test body's included, runs on a stack of \
                     `stack_size` bytes: raise it with #[pctvb::test(stack_size = N)] or \
                     Config::stack_size(N) (or move large values to the heap, e.g. in a Box or \
                     a Vec)\n",
                );
                msg.flush();
            } else if !already {
                msg.str("\npctvb: test `")
                    .str(&watch.run.test)
                    .str("`: the process received ")
                    .str(signal_name(sig))
                    .str(" while ")
                    .thread(thread);
                if let Some(name) = running_name() {
                    msg.str(" '").str(name).str("'");
                }
                msg.str(" ran\n");
                msg.str("  last scheduling point: ").location(watch.last_location()).str("\n");
                describe_execution(&mut msg, watch);
                msg.flush();
            }
        } else if let Some(last) = last_run() {
            if !REPORTED.try_with(|r| r.replace(true)).unwrap_or(true) {
                let mut msg = RawMessage::new();
                msg.str("\npctvb: the process received ")
                    .str(signal_name(sig))
                    .str(" outside any pctvb execution; the last pctvb run on this OS thread was ")
                    .str(last)
                    .str(
                        "\n  if one of its executions corrupted memory (a crash that comes after \
                         the run), running it again with the same seed may reproduce the crash \
                         there\n",
                    );
                msg.flush();
            }
        }
        // SAFETY: PREVIOUS is only read here after `install` wrote it.
        let previous = unsafe { (*std::ptr::addr_of!(PREVIOUS))[index] };
        chain(sig, previous, info, ctx);
    }

    fn signal_name(sig: libc::c_int) -> &'static str {
        match sig {
            libc::SIGSEGV => "SIGSEGV (invalid memory access)",
            libc::SIGBUS => "SIGBUS (invalid memory access)",
            // Rust's own aborts (a panic in a panic hook, a panic while panicking, a failed
            // allocation) print their cause first: the message must not point elsewhere.
            _ => {
                "SIGABRT (abort: the lines above say why when Rust aborted, e.g. a panic while \
                 panicking; otherwise e.g. a heap corruption the allocator detected)"
            }
        }
    }

    /// Hands the signal to the disposition before ours: its handler runs now; the default
    /// action is restored and takes effect when the signal comes again (a fault re-executes
    /// the faulting instruction when the handler returns; an abort raises again).
    fn chain(
        sig: libc::c_int,
        previous: Option<libc::sigaction>,
        info: *mut libc::siginfo_t,
        ctx: *mut libc::c_void,
    ) {
        // SAFETY: calling the previous handler the way the kernel would have, or restoring
        // the default disposition; both async-signal-safe.
        unsafe {
            if let Some(prev) = previous {
                let action = prev.sa_sigaction;
                if action != libc::SIG_DFL && action != libc::SIG_IGN {
                    if prev.sa_flags & libc::SA_SIGINFO != 0 {
                        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                            std::mem::transmute(action);
                        f(sig, info, ctx);
                    } else {
                        let f: extern "C" fn(libc::c_int) = std::mem::transmute(action);
                        f(sig);
                    }
                    return;
                }
            }
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigemptyset(&mut dfl.sa_mask);
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
            if sig == libc::SIGABRT {
                // Blocked while this handler runs: delivered, with the default action, when
                // it returns.
                libc::raise(sig);
            }
        }
    }
}

/// Notes that a report was already printed on this OS thread: a `SIGABRT` that follows (the
/// abort after a panic during unwinding) prints nothing more.
pub(crate) fn mark_reported() {
    #[cfg(unix)]
    let _ = signals::REPORTED.try_with(|r| r.set(true));
}

/// Prints, before std aborts the process, the panics that led to the abort (`recent`: the
/// panic being unwound and the one a destructor raised during the unwinding, oldest first),
/// the logical thread, and the replay line of the execution so far. `message` is std's own
/// ("panic in a destructor during cleanup").
pub(super) fn report_abort(
    exec: &super::Execution,
    message: &str,
    recent: &[Option<super::context::PanicRecord>; 2],
) {
    use std::fmt::Write;
    let watch = exec.watch();
    let state = exec.state.try_borrow().ok();
    let thread_name = |id: Option<super::ThreadId>| match (id, &state) {
        (Some(id), Some(st)) if id.index() < st.threads.len() => st.thread_info(id).to_string(),
        (Some(id), _) => format!("thread {id}"),
        (None, _) => "a logical thread".to_string(),
    };
    let describe = |p: &super::context::PanicRecord| {
        format!(
            "{} panicked at {}: {}",
            thread_name(p.thread),
            p.location.as_deref().unwrap_or("(unknown location)"),
            p.message
        )
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\npctvb: test `{}`: a panic during unwinding aborts the process (std: \"{message}\")",
        watch.run.test
    );
    match recent {
        [Some(first), Some(second)] => {
            let _ = writeln!(out, "  first panic (being unwound): {}", describe(first));
            let _ = writeln!(
                out,
                "  second panic (in a destructor run by the unwinding): {}",
                describe(second)
            );
        }
        [_, Some(only)] | [Some(only), None] => {
            let _ = writeln!(out, "  panic: {}", describe(only));
        }
        [None, None] => {}
    }
    let _ = writeln!(
        out,
        "  in execution {} of the run seeded {}",
        watch.index.load(Ordering::Relaxed),
        watch.run.seed
    );
    let token = state.as_ref().zip(watch.run.encode_token).map(|(st, encode)| {
        let execution = watch.index.load(Ordering::Relaxed);
        encode(&watch.run, st.strategy.describe(), execution, st.choices().collect(), st.digest)
    });
    match token {
        Some(token) if !watch.run.replay_template.is_empty() => {
            let _ = writeln!(out, "  replay it:\n    {}", watch.run.replay_line(&token));
        }
        _ if !watch.run.rerun_line.is_empty() => {
            let _ = writeln!(out, "  to reproduce it:\n    {}", watch.run.rerun_line);
        }
        _ => {}
    }
    let _ = writeln!(
        out,
        "  a destructor that panics while a panic unwinds aborts the process in Rust; check what \
         the first panic left behind for the destructor (a broken invariant, a count already \
         released)"
    );
    let mut msg = RawMessage::new();
    msg.str(&out).flush();
    mark_reported();
}

/// `n` in decimal, written into `digits` without allocating (signal handlers use it, and the
/// report writes a few numbers per step with it).
pub(crate) fn decimal(mut n: u64, digits: &mut [u8; 20]) -> &str {
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // ASCII digits are UTF-8.
    std::str::from_utf8(&digits[i..]).unwrap_or("?")
}
