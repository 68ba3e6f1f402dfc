//! The live allocations, [`Track`](crate::alloc::Track)s and [`Arc`](crate::sync::Arc)s of
//! the running execution, for loom's leak report at the end of each execution, and its
//! unfinished threads (of [`thread::spawn`](crate::thread::spawn) and
//! [`thread::Builder`](crate::thread::Builder)), a deadlock for loom.
//!
//! Every logical thread of a pctvb execution runs on the OS thread that runs the execution,
//! and one OS thread runs one execution at a time, so an OS-thread-local registry reset when
//! an execution's body starts holds exactly that execution's objects. [`begin`] also asks
//! pctvb to call [`end_of_execution`] when the execution ends (every thread finished, its
//! thread-locals dropped), which reports what is still live then.

use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::Location;

/// What a live object is, for the report.
struct Live {
    what: String,
    location: &'static Location<'static>,
}

#[derive(Default)]
struct Registry {
    /// Whether a `model` body is running on this OS thread.
    active: bool,
    next: u64,
    live: HashMap<u64, Live>,
    /// The threads `thread::spawn` or `Builder` started in this execution whose closure has
    /// not returned (or unwound), by key, with where each was spawned.
    threads: HashMap<u64, &'static Location<'static>>,
}

thread_local! {
    static REGISTRY: RefCell<Registry> = RefCell::new(Registry::default());
}

/// Starts counting for the execution whose body calls it, and has pctvb run
/// [`end_of_execution`] when that execution ends.
pub(crate) fn begin() {
    REGISTRY.with(|r| {
        let mut r = r.borrow_mut();
        r.active = true;
        r.live.clear();
        r.threads.clear();
    });
    pctvb::__internals::execution::at_end(end_of_execution);
}

/// pctvb's end-of-execution check: the leak report if objects of the execution are still
/// live once every thread finished; stops counting either way.
///
/// First, as loom: a thread the body spawned that never finished fails the execution. pctvb
/// ends an execution normally when the body has returned and the threads left wait forever
/// (as a process exit would end them); loom requires every thread to finish and reports
/// "deadlock" (a lost wake-up in a thread the body did not join went unreported).
fn end_of_execution() -> Option<String> {
    let blocked = unfinished_threads();
    let report = report();
    end();
    if blocked.is_some() {
        return blocked;
    }
    report.map(|r| {
        format!("objects still live when the execution ended (every thread finished):\n{r}")
    })
}

/// The failure message when threads of [`thread_started`] never finished.
fn unfinished_threads() -> Option<String> {
    REGISTRY.with(|r| {
        let lines = oldest_first(&r.borrow().threads, |at| {
            format!("  a thread spawned at {at} waits forever")
        })?;
        Some(format!(
            "deadlock: the model's body returned, and threads it spawned can never finish \
             (loom requires every thread to finish: join them, or let them end):\n{lines}"
        ))
    })
}

/// One line per entry of `entries`, oldest (smallest key) first; `None` when it is empty.
fn oldest_first<V>(entries: &HashMap<u64, V>, line: impl Fn(&V) -> String) -> Option<String> {
    if entries.is_empty() {
        return None;
    }
    let mut sorted: Vec<_> = entries.iter().collect();
    sorted.sort_by_key(|(k, _)| **k);
    Some(sorted.iter().map(|(_, v)| line(v)).collect::<Vec<_>>().join("\n"))
}

/// Inserts what `insert` puts under a new key while a `model` body runs; the key, or 0
/// outside one.
fn with_new_key(insert: impl FnOnce(&mut Registry, u64)) -> u64 {
    REGISTRY.with(|r| {
        let mut r = r.borrow_mut();
        if !r.active {
            return 0;
        }
        r.next += 1;
        let key = r.next;
        insert(&mut r, key);
        key
    })
}

/// A thread of `thread::spawn` or `Builder::spawn` starts (its key for [`thread_finished`];
/// 0 outside a `model` body).
pub(crate) fn thread_started(location: &'static Location<'static>) -> u64 {
    with_new_key(|r, key| {
        r.threads.insert(key, location);
    })
}

/// A thread of [`thread_started`] finished: its closure returned or unwound.
pub(crate) fn thread_finished(key: u64) {
    if key == 0 {
        return;
    }
    let _ = REGISTRY.try_with(|r| {
        r.borrow_mut().threads.remove(&key);
    });
}

/// Stops counting (the execution ended, or the run is over after a failing execution).
pub(crate) fn end() {
    REGISTRY.with(|r| {
        let mut r = r.borrow_mut();
        r.active = false;
        r.live.clear();
        r.threads.clear();
    })
}

/// Records a live object; the key to give [`remove`], or 0 outside a `model` body.
pub(crate) fn add(what: String, location: &'static Location<'static>) -> u64 {
    with_new_key(|r, key| {
        r.live.insert(key, Live { what, location });
    })
}

/// Records an object with a key of the caller's (an allocation's address).
pub(crate) fn add_at(key: u64, what: String, location: &'static Location<'static>) {
    REGISTRY.with(|r| {
        let mut r = r.borrow_mut();
        if r.active {
            r.live.insert(key | 1 << 63, Live { what, location });
        }
    })
}

/// Forgets an object of [`add_at`].
pub(crate) fn remove_at(key: u64) {
    remove(key | 1 << 63)
}

/// Forgets an object of [`add`].
pub(crate) fn remove(key: u64) {
    if key == 0 {
        return;
    }
    // `try_with`: a `Track` may be dropped while the OS thread's locals are torn down.
    let _ = REGISTRY.try_with(|r| {
        r.borrow_mut().live.remove(&key);
    });
}

/// The leak report, if objects are still live: one line per object, oldest first.
fn report() -> Option<String> {
    REGISTRY.with(|r| {
        oldest_first(&r.borrow().live, |l| format!("leaked: {} created at {}", l.what, l.location))
    })
}
