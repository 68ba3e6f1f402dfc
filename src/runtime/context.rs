//! The link between user code and the running execution: a per-OS-thread pointer to the
//! current [`Execution`], and the panic hook that keeps panics inside executions quiet,
//! records where they happened, and reports a panic during unwinding before std aborts the
//! process.

use std::cell::{Cell, RefCell};
use std::panic::{self, PanicHookInfo};
use std::sync::Once;

use super::Execution;

thread_local! {
    static CURRENT: Cell<*const Execution> = const { Cell::new(std::ptr::null()) };
    static LAST_PANIC_LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The last two panics raised inside executions on this OS thread, oldest first: when std
    /// aborts because a destructor panicked during unwinding, they are the panic being
    /// unwound and the destructor's.
    static RECENT_PANICS: RefCell<[Option<PanicRecord>; 2]> = const { RefCell::new([None, None]) };
}

/// A panic inside an execution, as the report of an abort shows it.
#[derive(Clone)]
pub(super) struct PanicRecord {
    pub(super) message: String,
    pub(super) location: Option<String>,
    pub(super) thread: Option<super::ThreadId>,
}

/// The messages of the panics std raises, without unwinding, when a panic tries to leave a
/// place that cannot unwind; std aborts the process after the hook returns.
const NON_UNWINDING: [&str; 2] =
    ["panic in a destructor during cleanup", "panic in a function that cannot unwind"];

/// The execution running on this OS thread (null outside executions); for the signal
/// handler, which must not touch anything but this pointer's atomics.
pub(super) fn current_ptr() -> *const Execution {
    CURRENT.try_with(|c| c.get()).unwrap_or(std::ptr::null())
}

/// Runs `f` with the execution running on this OS thread.
///
/// # Panics
/// Outside an execution, with a message naming `operation` and how to run it under pctvb.
#[inline]
#[track_caller]
pub(crate) fn with_execution<R>(
    operation: impl std::fmt::Display,
    f: impl FnOnce(&Execution) -> R,
) -> R {
    let ptr = CURRENT.with(|c| c.get());
    if ptr.is_null() {
        outside_execution(&operation.to_string());
    }
    // SAFETY: the pointer is set only while the execution is alive on this OS thread (see
    // `enter`), and cleared before it is dropped.
    f(unsafe { &*ptr })
}

/// Runs `f` with the execution running on this OS thread, or `None` outside any: for the
/// primitives that behave like std's outside executions.
#[inline]
pub(crate) fn with_current<R>(f: impl FnOnce(Option<&Execution>) -> R) -> R {
    let ptr = CURRENT.with(|c| c.get());
    // SAFETY: as in `with_execution`.
    f(unsafe { ptr.as_ref() })
}

#[cold]
#[inline(never)]
#[track_caller]
fn outside_execution(operation: &str) -> ! {
    panic!(
        "pctvb: {operation} was called outside a pctvb execution. It only works inside a test \
         body run by `#[pctvb::test]` or `pctvb::Config::run`; move this code into the test \
         body, or build without `--cfg pctvb`."
    )
}

/// Whether an execution is running on this OS thread. Inlined: a spawn asks from generic code
/// compiled in the user's crate (see `Execution::generation`).
#[inline]
pub(crate) fn in_execution() -> bool {
    CURRENT.with(|c| !c.get().is_null())
}

/// Marks `exec` as this OS thread's current execution until the guard drops.
pub(crate) fn enter(exec: &Execution) -> EnterGuard {
    install_panic_hook();
    super::crash::install();
    let previous = CURRENT.with(|c| c.replace(exec as *const Execution));
    assert!(
        previous.is_null(),
        "pctvb: a run was started inside a pctvb execution; nested runs are not supported"
    );
    EnterGuard(())
}

/// Clears the current execution when dropped.
pub(crate) struct EnterGuard(());

impl Drop for EnterGuard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(std::ptr::null()));
    }
}

/// Takes the location of the last panic raised inside an execution on this OS thread.
pub(crate) fn take_panic_location() -> Option<String> {
    LAST_PANIC_LOCATION.with(|l| l.borrow_mut().take())
}

/// Installs, once per process, a hook that records panics raised inside executions instead of
/// printing them (the failure report prints them once, with the schedule), and defers to the
/// previous hook everywhere else. A run that shows panics (`Config::show_panics`, or
/// `PCTVB_SHOW_PANICS=1` read with the run's other overrides) prints them as well: the hook
/// asks the execution it runs in, so each run decides for itself.
fn install_panic_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info: &PanicHookInfo<'_>| {
            if in_execution() {
                let location = info.location().map(|l| l.to_string());
                let message = super::execution::panic_message(info.payload());
                if NON_UNWINDING.contains(&message.as_str()) {
                    let recent = RECENT_PANICS.with(|r| r.borrow().clone());
                    with_current(|exec| {
                        if let Some(exec) = exec {
                            super::crash::report_abort(exec, &message, &recent);
                        }
                    });
                    return;
                }
                LAST_PANIC_LOCATION.with(|l| *l.borrow_mut() = location.clone());
                let thread = with_current(|exec| exec.and_then(|e| e.try_current_thread()));
                RECENT_PANICS.with(|r| {
                    let mut r = r.borrow_mut();
                    r[0] = r[1].take();
                    r[1] = Some(PanicRecord { message, location, thread });
                });
                if !with_current(|exec| exec.is_some_and(|e| e.show_panics())) {
                    return;
                }
            }
            previous(info);
        }));
    });
}
