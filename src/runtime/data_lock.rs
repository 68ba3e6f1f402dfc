//! The real lock over a primitive's data: what makes sharing a `Mutex`, `RwLock` or channel
//! between executions that run at the same time (parallel workers of a run, two tests sharing
//! a static, code outside any execution) free of data races.
//!
//! Within one execution the model already guarantees one holder (the logical threads run one
//! at a time on one OS thread, and the model state says who holds what). Across executions it
//! guarantees nothing: each execution has its own model state for a static. So the model
//! decides first, then the engine takes the object's [`DataLock`], a lock word owned by an
//! *execution* (its generation, unique in the process), not by an OS thread:
//! - free: one compare-and-swap, the whole cost on the hot path (and a plain store to
//!   release it);
//! - held by the same execution although the model said the object was free: the model and
//!   the lock disagree, an internal error reported loudly;
//! - held by another live execution (another OS thread) or by an OS thread outside any
//!   execution: the OS thread waits (spin, `yield_now`, short sleeps). Only timing changes,
//!   never the logical schedule, so replays stay deterministic. After [`CROSS_WAIT_LIMIT`]
//!   the wait fails the run with a message (a lock-order cycle between two executions);
//! - held by an execution that has ended (its guard was leaked: a failed execution's threads
//!   are reset without unwinding, see `Execution::run_one`): stolen. Whether an execution is
//!   alive is read from a small registry of the generations engines are running now
//!   ([`LiveSlot`]), consulted only on this contended path.
//!
//! Shared holds (`RwLock` readers) count within one owner: readers of one execution share the
//! word; readers of two executions take turns. Outside any execution, every OS thread has its
//! own owner id for exclusive holds (with a flag bit no generation has, so it is never taken
//! for a dead execution), and all outside readers share one owner.
//!
//! This file owns the lock word, the owner ids and the registry of live generations; it does
//! not know any object's model (the callers in `mutex.rs`, `rwlock.rs` and `channel.rs` decide
//! when to lock) and never touches an execution's state.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use super::time::real_now;

/// Low bits of the word: the number of shared holds, 0 for an exclusive hold.
const COUNT_BITS: u32 = 16;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
/// Set in the ids of OS threads outside any execution.
const OUTSIDE: u64 = 1 << 63;
/// Largest generation or outside id the word can carry.
const MAX_ID: u64 = (OUTSIDE >> COUNT_BITS) - 1;

/// How long an execution waits for an object another execution holds before it fails the
/// run: long enough for any real critical section, short enough to report a cycle.
pub(super) const CROSS_WAIT_LIMIT: Duration = Duration::from_secs(10);

/// Who holds a [`DataLock`]: an execution, by generation, or an OS thread outside any
/// execution. Stored pre-shifted, as it sits in the word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Owner(u64);

impl Owner {
    /// The execution of generation `gen`.
    #[inline]
    pub(super) fn execution(gen: u64) -> Owner {
        debug_assert!(gen != 0 && gen <= MAX_ID, "generation out of range");
        Owner(gen << COUNT_BITS)
    }

    /// The calling OS thread, outside any execution.
    pub(super) fn outside() -> Owner {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        thread_local! {
            static ID: Cell<u64> = const { Cell::new(0) };
        }
        let id = ID.with(|id| {
            if id.get() == 0 {
                id.set(NEXT.fetch_add(1, Ordering::Relaxed));
            }
            id.get()
        });
        assert!(id <= MAX_ID, "pctvb: too many OS threads used primitives outside executions");
        Owner(OUTSIDE | id << COUNT_BITS)
    }

    /// Every OS thread outside any execution, for shared holds.
    pub(super) const OUTSIDE_SHARED: Owner = Owner(OUTSIDE);

    /// Whether this owner is an execution (rather than an OS thread outside any).
    #[inline]
    pub(super) fn is_execution(self) -> bool {
        self.0 & OUTSIDE == 0
    }

    /// The generation of an execution owner.
    #[inline]
    pub(super) fn generation(self) -> u64 {
        self.0 >> COUNT_BITS
    }
}

fn owner_of(word: u64) -> Owner {
    Owner(word & !COUNT_MASK)
}

fn count_of(word: u64) -> u64 {
    word & COUNT_MASK
}

/// Why a lock could not be taken; the caller turns it into a failed execution (inside one) or
/// a panic (outside).
#[derive(Debug)]
pub(super) enum LockError {
    /// The model said the object was free, but this execution holds its data.
    Disagreement,
    /// This OS thread, outside any execution, already holds the object.
    Recursive,
    /// Another execution (or, if `outside`, an OS thread outside executions) held the object
    /// longer than [`CROSS_WAIT_LIMIT`].
    TooLong { outside: bool },
    /// More shared holds than the word counts.
    TooManyReaders,
}

impl LockError {
    /// The message for the object described by `what` (`Mutex@src/lib.rs:3:9`).
    pub(super) fn message(&self, what: &str) -> String {
        match self {
            LockError::Disagreement => format!(
                "pctvb internal error: the model says {what} is free, but its data lock is held \
                 by the same execution (please report this)"
            ),
            LockError::Recursive => format!(
                "pctvb: {what} was locked outside a pctvb execution by an OS thread that already \
                 holds it (with std this deadlocks)"
            ),
            LockError::TooLong { outside: false } => format!(
                "pctvb: waited more than {} s for {what}, which another execution running at \
                 the same time on another OS thread holds (two executions that share objects \
                 and lock them in opposite orders). Run with one worker (PCTVB_WORKERS=1 or \
                 `Config::workers(1)`, and one test thread), or create the object inside the \
                 test body so that executions do not share it",
                CROSS_WAIT_LIMIT.as_secs()
            ),
            LockError::TooLong { outside: true } => format!(
                "pctvb: waited more than {} s for {what}, which code outside any pctvb execution \
                 holds (a guard taken before the run, or by another OS thread). Release it \
                 before the run, or create the object inside the test body",
                CROSS_WAIT_LIMIT.as_secs()
            ),
            LockError::TooManyReaders => format!("pctvb: more than {COUNT_MASK} readers of {what}"),
        }
    }
}

/// A lock word over one object's data. See the module docs.
#[derive(Debug)]
pub(crate) struct DataLock {
    word: AtomicU64,
}

impl DataLock {
    pub(crate) const fn new() -> DataLock {
        DataLock { word: AtomicU64::new(0) }
    }

    /// Takes the lock for `owner` alone, waiting while another owner holds it.
    #[inline]
    pub(super) fn lock_exclusive(&self, owner: Owner) -> Result<(), LockError> {
        match self.word.compare_exchange(0, owner.0, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => Ok(()),
            Err(_) => self.lock_slow(owner, false),
        }
    }

    /// Takes one shared hold for `owner`, waiting while another owner holds the lock.
    #[inline]
    pub(super) fn lock_shared(&self, owner: Owner) -> Result<(), LockError> {
        let word = self.word.load(Ordering::Relaxed);
        let next = if word == 0 {
            owner.0 | 1
        } else if owner_of(word) == owner && (1..COUNT_MASK).contains(&count_of(word)) {
            word + 1
        } else {
            return self.lock_slow(owner, true);
        };
        match self.word.compare_exchange(word, next, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => Ok(()),
            Err(_) => self.lock_slow(owner, true),
        }
    }

    /// Takes the lock for `owner` alone if nobody (alive) holds it.
    pub(super) fn try_lock_exclusive(&self, owner: Owner) -> bool {
        self.try_once(owner, false)
    }

    /// Takes one shared hold for `owner` if no other owner (alive) holds the lock.
    pub(super) fn try_lock_shared(&self, owner: Owner) -> bool {
        self.try_once(owner, true)
    }

    /// Releases `owner`'s exclusive hold; false if it does not hold the lock (it was stolen
    /// after its execution ended). For holds that may have outlived their execution.
    #[inline]
    pub(super) fn unlock_exclusive(&self, owner: Owner) -> bool {
        self.word.compare_exchange(owner.0, 0, Ordering::Release, Ordering::Relaxed).is_ok()
    }

    /// Releases the exclusive hold of `owner`, which is alive (the running execution, or the
    /// calling OS thread outside executions): a live owner's hold is never stolen, so a plain
    /// store suffices (no read-modify-write on the hot path).
    #[inline]
    pub(super) fn unlock_exclusive_live(&self, owner: Owner) {
        debug_assert_eq!(self.word.load(Ordering::Relaxed), owner.0, "data lock not held");
        let _ = owner;
        self.word.store(0, Ordering::Release);
    }

    /// Turns `from`'s exclusive hold into one shared hold of `to` (a write guard's downgrade),
    /// the lock never free in between; false if `from` does not hold it (it was stolen after
    /// its execution ended).
    pub(super) fn downgrade(&self, from: Owner, to: Owner) -> bool {
        // Release: what the writer wrote is seen by the readers of other OS threads that take
        // the lock next (their Acquire).
        let shared = to.0 | 1;
        self.word.compare_exchange(from.0, shared, Ordering::Release, Ordering::Relaxed).is_ok()
    }

    /// Releases one of `owner`'s shared holds; false if it holds none.
    #[inline]
    pub(super) fn unlock_shared(&self, owner: Owner) -> bool {
        let mut word = self.word.load(Ordering::Relaxed);
        loop {
            if owner_of(word) != owner || count_of(word) == 0 {
                return false;
            }
            let next = if count_of(word) == 1 { 0 } else { word - 1 };
            match self.word.compare_exchange_weak(word, next, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => word = now,
            }
        }
    }

    /// Takes the lock if no other live owner holds it (stealing a dead one's), without
    /// waiting; false otherwise, and also where `lock_slow` would fail (a try-lock reports
    /// "would block", as std's does for a recursive `try_lock`).
    fn try_once(&self, owner: Owner, shared: bool) -> bool {
        loop {
            let word = self.word.load(Ordering::Acquire);
            let next = match self.next_word(word, owner, shared) {
                Next::Take(next) => next,
                Next::Steal(next) => next,
                Next::Wait | Next::Fail(_) => return false,
            };
            if self.word.compare_exchange(word, next, Ordering::Acquire, Ordering::Relaxed).is_ok()
            {
                return true;
            }
        }
    }

    /// What `owner` may do with the lock word `word`.
    fn next_word(&self, word: u64, owner: Owner, shared: bool) -> Next {
        let hold = owner.0 | shared as u64;
        if word == 0 {
            return Next::Take(hold);
        }
        let holder = owner_of(word);
        let count = count_of(word);
        if holder == owner {
            if shared && count > 0 {
                return match count < COUNT_MASK {
                    true => Next::Take(word + 1),
                    false => Next::Fail(LockError::TooManyReaders),
                };
            }
            return Next::Fail(if owner.is_execution() {
                LockError::Disagreement
            } else {
                LockError::Recursive
            });
        }
        if holder.is_execution() && !live(holder.generation()) {
            return Next::Steal(hold);
        }
        Next::Wait
    }

    #[cold]
    #[inline(never)]
    fn lock_slow(&self, owner: Owner, shared: bool) -> Result<(), LockError> {
        let mut backoff = Backoff::default();
        loop {
            let word = self.word.load(Ordering::Acquire);
            match self.next_word(word, owner, shared) {
                Next::Take(next) | Next::Steal(next) => {
                    if self
                        .word
                        .compare_exchange(word, next, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                    {
                        return Ok(());
                    }
                }
                Next::Fail(e) => return Err(e),
                Next::Wait => {
                    // Outside an execution a wait is std's: as long as it takes. An execution
                    // that waits too long is in a cycle with another one (or with this OS
                    // thread's own code outside the run).
                    if !backoff.snooze() && owner.is_execution() {
                        let outside = !owner_of(word).is_execution();
                        return Err(LockError::TooLong { outside });
                    }
                }
            }
        }
    }
}

enum Next {
    Take(u64),
    Steal(u64),
    Wait,
    Fail(LockError),
}

/// Spin, then yield, then sleep with a growing delay.
#[derive(Default)]
pub(super) struct Backoff {
    round: u32,
    since: Option<Instant>,
}

impl Backoff {
    /// Waits a little (at most about 1.3 ms); false once the waits have lasted more than
    /// [`CROSS_WAIT_LIMIT`] in all.
    pub(super) fn snooze(&mut self) -> bool {
        self.round = self.round.saturating_add(1);
        match self.round {
            0..=6 => {
                for _ in 0..1u32 << self.round {
                    std::hint::spin_loop();
                }
            }
            7..=16 => std::thread::yield_now(),
            _ => {
                let since = *self.since.get_or_insert_with(real_now);
                // A wait with its own limit, not a stuck thread: keep the watchdog off it.
                super::context::with_current(|exec| exec.map(|e| e.watch().still_waiting()));
                let micros = 20u64 << (self.round - 17).min(6);
                std::thread::sleep(Duration::from_micros(micros));
                return real_now().duration_since(since) <= CROSS_WAIT_LIMIT;
            }
        }
        true
    }
}

/// The generation each engine of the process is running now (0 between executions).
static LIVE: StdMutex<Vec<Arc<AtomicU64>>> = StdMutex::new(Vec::new());

/// Whether the execution of generation `gen` is running (on any OS thread).
fn live(gen: u64) -> bool {
    let slots = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    slots.iter().any(|s| s.load(Ordering::Acquire) == gen)
}

/// An engine's entry in the registry of live generations: set when an execution starts,
/// cleared when it ends, removed when the engine is dropped.
pub(super) struct LiveSlot(Arc<AtomicU64>);

impl LiveSlot {
    pub(super) fn register() -> LiveSlot {
        let slot = Arc::new(AtomicU64::new(0));
        LIVE.lock().unwrap_or_else(|e| e.into_inner()).push(slot.clone());
        LiveSlot(slot)
    }

    /// The engine runs execution `gen` now (0: none). An execution's generation is set here
    /// before any of its code runs, so before it can own a lock word.
    #[inline]
    pub(super) fn set(&self, gen: u64) {
        self.0.store(gen, Ordering::Release);
    }
}

impl Drop for LiveSlot {
    fn drop(&mut self) {
        let mut slots = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        slots.retain(|s| !Arc::ptr_eq(s, &self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_and_shared_holds() {
        // Generations no engine of this test binary reaches.
        let slot = LiveSlot::register();
        slot.set(MAX_ID - 1);
        let lock = DataLock::new();
        let a = Owner::execution(MAX_ID - 1);
        lock.lock_exclusive(a).unwrap();
        assert!(matches!(lock.lock_exclusive(a), Err(LockError::Disagreement)));
        assert!(lock.unlock_exclusive(a));
        lock.lock_shared(a).unwrap();
        lock.lock_shared(a).unwrap();
        assert!(!lock.try_lock_exclusive(Owner::outside()));
        assert!(lock.unlock_shared(a));
        assert!(lock.unlock_shared(a));
        assert!(!lock.unlock_shared(a));
        assert!(lock.try_lock_exclusive(Owner::outside()));
        assert!(matches!(lock.lock_exclusive(Owner::outside()), Err(LockError::Recursive)));
        assert!(lock.unlock_exclusive(Owner::outside()));
        // A downgrade keeps the lock held: shared with the owner's other readers, not with
        // another owner's writer.
        lock.lock_exclusive(a).unwrap();
        assert!(lock.downgrade(a, a));
        assert!(!lock.downgrade(a, a), "no exclusive hold left to downgrade");
        lock.lock_shared(a).unwrap();
        assert!(!lock.try_lock_exclusive(Owner::outside()));
        assert!(lock.unlock_shared(a) && lock.unlock_shared(a));
        let outside = Owner::outside();
        assert!(lock.try_lock_exclusive(outside));
        assert!(lock.downgrade(outside, Owner::OUTSIDE_SHARED));
        assert!(lock.try_lock_shared(Owner::OUTSIDE_SHARED));
        assert!(lock.unlock_shared(Owner::OUTSIDE_SHARED));
        assert!(lock.unlock_shared(Owner::OUTSIDE_SHARED));
        assert!(lock.try_lock_exclusive(outside));
        assert!(lock.unlock_exclusive(outside));
    }

    #[test]
    fn a_dead_execution_loses_its_hold() {
        let slot = LiveSlot::register();
        let lock = DataLock::new();
        // Generation MAX_ID - 3 held the lock and ended without releasing it.
        let dead = Owner::execution(MAX_ID - 3);
        lock.lock_exclusive(dead).unwrap();
        slot.set(MAX_ID - 2);
        let live = Owner::execution(MAX_ID - 2);
        lock.lock_exclusive(live).unwrap();
        assert!(!lock.unlock_exclusive(dead));
        assert!(lock.unlock_exclusive(live));
    }
}
