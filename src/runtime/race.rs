//! The data-race detector: happens-before between logical threads, tracked with vector clocks,
//! and the check of every `pctvb::cell::UnsafeCell` access (per cell; an access may stay open,
//! as pctvb-loom's pointer guards do: [`LiveSpan`]) and every instrumented
//! pointer access `#[pctvb::instrument]` reports (per byte range: overlapping ranges are
//! compared) against it. The detector forgets the accesses of memory it sees become new: an
//! instrumented allocation, a coroutine stack given to another thread, every free the watching
//! allocator logs ([`frees`], `crate::alloc::WatchFrees`), and everything between executions.
//!
//! Every thread has a clock ([`VClock`], indexed by thread id). A thread's own entry starts at
//! 1 and advances after each of its *release* operations, so an access made by thread `u` is
//! identified by its epoch `(u, clock_u[u])`, and it happens before the current point of
//! thread `t` exactly when `epoch <= clock_t[u]`.
//!
//! Edges (release: the object keeps the releaser's clock; acquire: the acquirer joins it):
//! - spawn: the child starts with its parent's clock; join: the joiner joins the child's
//!   final clock;
//! - mutex: unlock releases, lock acquires (also a condition variable's re-lock);
//! - rwlock: a write unlock (and a downgrade) releases to everyone, a read unlock releases to
//!   later writers only;
//! - condvar: a notify releases to the waiters it wakes (`notify_all`: to all of them);
//! - barrier: every arrival releases, and every thread leaving the barrier joins the clocks of
//!   all who arrived (conservatively, of every earlier generation too);
//! - once: the completion of the initialization releases to every later caller that finds it
//!   done;
//! - channel: each message carries its sender's clock to its receiver; on a rendezvous
//!   channel, a receipt also releases to the blocking sends that complete after it;
//! - park: `unpark` releases to the `park` that consumes the token;
//! - tasks: a task's completion (`future::spawn`'s body returning its output) releases to
//!   whoever takes or sees the output through the task's `JoinHandle` (an await that returns
//!   it, `is_finished`), also when the task finished before the handle was first polled;
//! - atomics, by the `Ordering` the code passes: a Release/AcqRel/SeqCst store puts the
//!   thread's clock on the atomic, an Acquire/AcqRel/SeqCst load joins it; a Relaxed store
//!   puts the clock of the thread's latest release fence (none: nothing), which also ends the
//!   release sequence; a read-modify-write keeps the atomic's clock (it continues the release
//!   sequence) and adds its own if it releases; a failed compare-exchange is a load with the
//!   failure ordering. Fences: an Acquire fence makes the clocks its thread's earlier relaxed
//!   loads read take effect; a Release fence gives the thread's later relaxed stores its clock
//!   at the fence; SeqCst fences are additionally ordered with each other in execution order
//!   (more edges than C11 promises between SeqCst fences: on the side of no false race).
//!
//! Atomics keep their sequentially consistent values: only this check uses orderings, so a
//! Relaxed flag that "protects" data is reported as the race it is on weak hardware, without
//! modelling weak memory.
//!
//! pctvb-loom's atomics also have loom's non-atomic accesses, `unsync_load` (a read) and
//! `with_mut` (a write), which race as loom's do ([`Races::unsync_atomic`]): an
//! `unsync_load` with any atomic store it does not follow, a `with_mut` with any access. For
//! that, an execution that asks for it ([`Races::check_unsync_atomics`], pctvb-loom's models)
//! keeps clocks from its start and records, per atomic and thread, the latest atomic load and
//! store; pctvb's own atomics have no such access, and other executions record nothing.
//!
//! All state is reused across executions: clocks are cleared, not freed, per-object state
//! is reset lazily when an object id is first used in a new execution, and the per-range
//! table is drained when an execution begins (its capacity and read vectors kept for reuse). With the detector off
//! (`Config::race_detection(false)`) every entry point returns after one branch.

use std::collections::VecDeque;
use std::panic::Location;
use std::sync::atomic::Ordering;

use super::clock::{join_within, VClock};
use super::{EventKind, Execution, FailureCause, Handle, ObjectId, ThreadId, ThreadInfo};
use crate::vars::VarKind;

/// One access of a cell, as the detector remembers it.
#[derive(Clone, Copy, Debug)]
struct Access {
    thread: u32,
    epoch: u32,
    location: &'static Location<'static>,
    step: u64,
}

/// Thread `t` releases its clock into `slot` (an unpark's, a task's completion), then starts
/// a new epoch: what it does next is not covered by the release.
fn release_to(threads: &mut [VClock], t: usize, slot: &mut VClock) {
    slot.join(&threads[t]);
    threads[t].tick(t);
}

/// [`RaceAccess::step`] of an access by a thread that has no scheduling point yet.
pub(crate) const NO_STEP: u64 = u64::MAX;

/// The two conflicting accesses of a data race, for the failure report.
#[derive(Clone, Debug)]
pub(crate) struct RaceAccess {
    /// Who accessed.
    pub(crate) thread: ThreadInfo,
    /// Whether it wrote (else it read).
    pub(crate) write: bool,
    /// Where in user code.
    pub(crate) location: &'static Location<'static>,
    /// The index of its scheduling point in the schedule (its thread's latest, for an access
    /// that is not one of its own); [`NO_STEP`] before the thread's first.
    pub(crate) step: u64,
    /// Whether the access was still in progress: a pointer guard of pctvb-loom's
    /// (`ConstPtr`/`MutPtr`) taken at `location` and not yet dropped (see [`LiveSpan`]).
    pub(crate) live: bool,
    /// What the access was, when "wrote" or "read" does not say it: an atomic's accesses
    /// ([`AtomicAccess`]).
    pub(crate) how: Option<AtomicAccess>,
}

impl RaceAccess {
    /// The earlier access of a race, as the detector recorded it.
    fn earlier(st: &super::state::State, earlier: &Access, write: bool, live: bool) -> RaceAccess {
        let thread = ThreadId(earlier.thread);
        RaceAccess {
            thread: st.thread_info(thread),
            write,
            location: earlier.location,
            step: st.own_step(thread, earlier.step),
            live,
            how: None,
        }
    }

    /// The current thread's access at `location`, made at or after its scheduling point
    /// `step`.
    fn current(
        st: &super::state::State,
        write: bool,
        location: &'static Location<'static>,
        step: u64,
    ) -> RaceAccess {
        let cur = st.current;
        RaceAccess {
            thread: st.thread_info(cur),
            write,
            location,
            step: st.own_step(cur, step),
            live: false,
            how: None,
        }
    }
}

/// An access of an atomic that races with a non-atomic one (pctvb-loom's `unsync_load` and
/// `with_mut`, see [`Races::unsync_atomic`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AtomicAccess {
    /// An atomic load (or a failed compare-exchange).
    Load,
    /// An atomic store or read-modify-write.
    Store,
    /// pctvb-loom's `unsync_load` (and `into_inner`): a non-atomic read.
    UnsyncLoad,
    /// pctvb-loom's `with_mut`: a non-atomic write.
    WithMut,
}

impl AtomicAccess {
    /// What the access did, for the report ("thread 1 <did> at ...").
    fn did(self) -> &'static str {
        match self {
            AtomicAccess::Load => "loaded it atomically",
            AtomicAccess::Store => "stored to it atomically",
            AtomicAccess::UnsyncLoad => "read it non-atomically (`unsync_load`)",
            AtomicAccess::WithMut => "wrote it non-atomically (`with_mut`)",
        }
    }
}

/// An access of a cell that stays open until it ends: pctvb-loom's `ConstPtr`/`MutPtr` (and
/// its closure forms) are accesses from the guard's creation to its drop, as loom's are.
/// While one is open, a conflicting access of the cell by another thread is a race whatever
/// the clocks say (the span's end comes after it in the execution, so nothing can order it
/// before that end). Each use of the pointer (`deref`, `with`) is recorded as an access with
/// the thread's clock then, so a release inside the span does not order the pointer's later
/// uses, and so is the end, with loom's clock (see [`Races::end_span`]: a release at the
/// thread's latest scheduling point covers it). Held by the guard (no allocation); ending a
/// span of an older execution does nothing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LiveSpan {
    gen: u64,
    object: ObjectId,
    thread: ThreadId,
    write: bool,
    location: &'static Location<'static>,
}

/// One thread's open spans of one cell.
#[derive(Clone, Copy, Debug, Default)]
struct Open {
    reads: u32,
    writes: u32,
    /// The latest open read's and write's start, for the report.
    read: Option<Access>,
    write: Option<Access>,
}

/// The detector's state of one object in one execution.
#[derive(Default)]
struct Slot {
    /// The execution generation this slot was last reset for.
    gen: u64,
    /// The release clock: a lock's last release, an atomic's release sequence, a condition
    /// variable's notifications, a barrier's arrivals, a `Once`'s completion.
    release: VClock,
    /// A second clock: a rwlock's read releases; a barrier's released arrivals.
    other: VClock,
    /// A channel's messages in flight: (ticket, sender's clock).
    messages: VecDeque<(u64, VClock)>,
    /// A cell's last write and, per thread, its last read since; for an atomic, its last
    /// `with_mut` and `unsync_load`s (see [`Races::unsync_atomic`]).
    write: Option<Access>,
    reads: Vec<Option<Access>>,
    /// An atomic's latest store and load per thread, since its last `with_mut`: recorded only
    /// in an execution that checks non-atomic accesses ([`Races::check_unsync_atomics`]).
    stores: Vec<Option<Access>>,
    loads: Vec<Option<Access>>,
    /// How many spans of this cell are open ([`LiveSpan`]), and per thread which: the
    /// checked access pays one branch on `open` while none is.
    open: u32,
    open_by: Vec<Open>,
}

impl Slot {
    fn reset(&mut self, gen: u64, spare: &mut Vec<VClock>) {
        self.gen = gen;
        self.release.clear();
        self.other.clear();
        // Most slots are no channel's: an empty queue's drain still cost ~2% of a cell-heavy
        // run (issue #17's profile), so it is skipped.
        if !self.messages.is_empty() {
            for (_, c) in self.messages.drain(..) {
                spare.push(c);
            }
        }
        self.write = None;
        self.reads.clear();
        self.stores.clear();
        self.loads.clear();
        self.open = 0;
        self.open_by.clear();
    }
}

/// The per-execution state of the race detector (part of the execution's `State`).
#[derive(Default)]
pub(super) struct Races {
    /// Whether the detector runs (`Config::race_detection`, `PCTVB_RACES`).
    pub(super) on: bool,
    /// Whether the clocks are kept in this execution: from its first checked access on (see
    /// [`Races::start_tracking`]). Until then every edge is skipped after one branch, so a
    /// program (or an execution) that touches no checked cell and no instrumented pointer
    /// pays nothing for the detector.
    tracking: bool,
    /// Whether atomics' loads and stores are recorded and checked against pctvb-loom's
    /// non-atomic accesses of them ([`Races::check_unsync_atomics`]); off when an execution
    /// begins.
    unsync_atomics: bool,
    gen: u64,
    /// Each thread's clock.
    threads: Vec<VClock>,
    /// Per thread, the instrumented `Drop::drop` calls it is inside (see
    /// `instrument::__rt::dropping`): its accesses there are recorded, not checked.
    in_drop: Vec<u32>,
    /// Per thread, the scheduling point of its latest releasing atomic operation, fence or
    /// unlock without a point of its own and its epoch before that release ticked it, while
    /// no cell access of the thread followed (`None` otherwise): a span that ends at that same
    /// scheduling point ends covered by the release (see [`Races::end_span`]).
    released_at: Vec<Option<(u64, u32)>>,
    /// Each thread's clock at its latest release fence (empty: none).
    fence_release: Vec<VClock>,
    /// Each thread's clocks read by relaxed loads, for its next acquire fence.
    pending_acquire: Vec<VClock>,
    /// Each thread's clocks released to it by `unpark`.
    unparked: Vec<VClock>,
    /// Each task's clock when it completed (`future::spawn`'s body returned its output),
    /// acquired by whoever takes or sees that output ([`Races::acquire_completion`]). Grown
    /// only by tasks that complete while clocks are kept.
    completed: Vec<VClock>,
    /// The clocks of all SeqCst fences so far.
    sc_fences: VClock,
    /// Per object id.
    objects: Vec<Slot>,
    /// Clocks of received messages, for reuse.
    spare: Vec<VClock>,
    /// Memory reached through instrumented pointer accesses (`#[pctvb::instrument]`): one entry
    /// per distinct byte range accessed, sorted by start (then end), with its last write and,
    /// per thread, its last read since. An access is checked against every entry its range
    /// overlaps, so a `u64` write and a `u32` read of its upper half conflict. Emptied when an
    /// execution begins (the vector keeps its capacity), and for a range when memory there is
    /// freed or new (see [`Races::forget_range`]).
    spans: Vec<Span>,
    /// The longest range in `spans` since it was last emptied (bounds the overlap search).
    longest: usize,
    /// Read vectors of forgotten ranges, for reuse.
    spare_reads: Vec<Vec<Option<Access>>>,
}

/// The detector's state of one byte range accessed through pointers (`Races::spans`).
struct Span {
    start: usize,
    end: usize,
    write: Option<Access>,
    reads: Vec<Option<Access>>,
}

fn releases(order: Ordering) -> bool {
    matches!(order, Ordering::Release | Ordering::AcqRel | Ordering::SeqCst)
}

fn acquires(order: Ordering) -> bool {
    matches!(order, Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst)
}

/// What an atomic operation did, for the detector.
#[derive(Clone, Copy, Debug)]
pub(crate) enum AtomicSync {
    /// A load (or a failed compare-exchange) with this ordering.
    Load(Ordering),
    /// A store with this ordering.
    Store(Ordering),
    /// A read-modify-write that wrote, with this ordering.
    Rmw(Ordering),
}

impl Races {
    /// A detector that runs if `on`.
    pub(super) fn new(on: bool) -> Races {
        Races { on, ..Races::default() }
    }

    /// Starts execution `gen`: thread 0 alone, nothing released.
    pub(super) fn begin(&mut self, gen: u64) {
        self.gen = gen;
        self.sc_fences.clear();
        for mut a in self.spans.drain(..) {
            a.reads.clear();
            self.spare_reads.push(a.reads);
        }
        self.longest = 0;
        self.in_drop.clear();
        self.released_at.clear();
        self.tracking = false;
        self.unsync_atomics = false;
        frees::reset();
    }

    /// Checks the non-atomic accesses of atomics (pctvb-loom's `unsync_load` and `with_mut`)
    /// in this execution, from now on; called when it starts, with its `threads` threads. The
    /// clocks are kept from here (not from the first checked access): an atomic store made
    /// before that access, unrecorded, would let an `unsync_load` that does not follow it pass.
    fn check_unsync_atomics(&mut self, threads: usize) {
        if self.on {
            self.unsync_atomics = true;
            self.ensure_tracking(threads);
        }
    }

    /// Starts keeping clocks, at the execution's first checked access: every one of its
    /// `threads` threads so far starts afresh (its own entry 1, nothing acquired), as does
    /// every object (their slots are reset on first use, being of an older generation).
    ///
    /// Why this loses no edge: an access is ordered before a later one only through edges
    /// that come after it (a release by its thread after it, ...), so happens-before between
    /// accesses made from now on does not depend on anything before now; and the detector
    /// records no access before now. What threads and objects carry from before now is
    /// dropped, not mixed into the new epochs.
    #[cold]
    fn start_tracking(&mut self, threads: usize) {
        self.tracking = true;
        self.sc_fences.clear();
        for t in 0..threads {
            self.start_thread(t);
            self.threads[t].set(t, 1);
        }
    }

    /// Starts the clocks if this is the execution's first checked access.
    #[inline]
    fn ensure_tracking(&mut self, threads: usize) {
        if !self.tracking {
            self.start_tracking(threads);
        }
    }

    /// How many instrumented `Drop::drop` calls thread `t` is inside.
    fn in_drop(&self, t: usize) -> u32 {
        self.in_drop.get(t).copied().unwrap_or(0)
    }

    fn start_thread(&mut self, t: usize) {
        for v in [&mut self.threads, &mut self.fence_release, &mut self.pending_acquire] {
            if v.len() <= t {
                v.resize_with(t + 1, VClock::default);
            }
            v[t].clear();
        }
        if self.unparked.len() <= t {
            self.unparked.resize_with(t + 1, VClock::default);
        }
        self.unparked[t].clear();
        if let Some(r) = self.released_at.get_mut(t) {
            *r = None;
        }
        if let Some(c) = self.completed.get_mut(t) {
            c.clear();
        }
    }

    /// The index of `object`'s slot, reset if this execution did not use it yet. Inlined for
    /// the common case (a slot this execution already uses: two compares), the rest out of
    /// line: this runs at every checked access, atomic operation and span end.
    #[inline]
    fn slot_index(&mut self, object: ObjectId) -> usize {
        let i = object.index();
        match self.objects.get(i) {
            Some(slot) if slot.gen == self.gen => i,
            _ => self.first_use(i),
        }
    }

    /// [`Races::slot_index`] of a slot not used yet in this execution (or not allocated).
    #[cold]
    #[inline(never)]
    fn first_use(&mut self, i: usize) -> usize {
        if self.objects.len() <= i {
            self.objects.resize_with(i + 1, Slot::default);
        }
        self.objects[i].reset(self.gen, &mut self.spare);
        i
    }

    fn slot(&mut self, object: ObjectId) -> &mut Slot {
        let i = self.slot_index(object);
        &mut self.objects[i]
    }

    /// Thread `parent` spawned `child`: the child starts with the parent's clock.
    #[inline]
    pub(super) fn spawn(&mut self, parent: ThreadId, child: ThreadId) {
        // As in `atomic`: only the check inlined.
        if self.tracking {
            self.spawn_tracked(parent, child);
        }
    }

    #[inline(never)]
    fn spawn_tracked(&mut self, parent: ThreadId, child: ThreadId) {
        let (p, c) = (parent.index(), child.index());
        self.start_thread(c);
        join_within(&mut self.threads, c, p);
        self.threads[c].set(c, 1);
        self.threads[p].tick(p);
    }

    /// `t` enters (`enter`) or leaves an instrumented `Drop::drop`.
    pub(super) fn dropping(&mut self, t: ThreadId, enter: bool) {
        if !self.on {
            return;
        }
        let t = t.index();
        if self.in_drop.len() <= t {
            self.in_drop.resize(t + 1, 0);
        }
        let d = &mut self.in_drop[t];
        *d = if enter { d.saturating_add(1) } else { d.saturating_sub(1) };
    }

    /// Thread `joiner` joined the finished thread `child`.
    pub(super) fn join(&mut self, joiner: ThreadId, child: ThreadId) {
        if self.tracking {
            join_within(&mut self.threads, joiner.index(), child.index());
        }
    }

    /// `t` releases to `object`'s release clock (joined with what it had).
    pub(super) fn release(&mut self, t: ThreadId, object: ObjectId) {
        self.release_into(t, object, |slot| &mut slot.release);
    }

    /// `t` acquires `object`'s release clock.
    pub(super) fn acquire(&mut self, t: ThreadId, object: ObjectId) {
        self.acquire_from(t, object, |slot| &slot.release);
    }

    /// `t` releases a read lock of the rwlock `object`: to later writers only.
    pub(super) fn release_read(&mut self, t: ThreadId, object: ObjectId) {
        self.release_into(t, object, |slot| &mut slot.other);
    }

    /// `t` unlocks the lock `object` (a mutex, or a rwlock it holds for writing, or for
    /// reading when `read`) with no scheduling point of its own (`State::unlock_points` off),
    /// as [`Races::release`] or [`Races::release_read`]; `step` is `t`'s latest scheduling
    /// point, so a span of `t` that ends before its next one ends covered by the unlock, as one
    /// after a releasing atomic operation ([`Races::released_at`]): a guard dropped before the
    /// pointer beside it, as loom covers it.
    pub(super) fn release_unlock(&mut self, t: ThreadId, object: ObjectId, read: bool, step: u64) {
        if self.tracking {
            let which: fn(&mut Slot) -> &mut VClock =
                if read { |slot| &mut slot.other } else { |slot| &mut slot.release };
            self.release_into_tracked(t, object, which, Some(step));
        }
    }

    /// `t` joins its clock into the clock `which` picks of `object`'s slot, then starts a new
    /// epoch of its own (its later operations are not covered by this release).
    #[inline]
    fn release_into(&mut self, t: ThreadId, object: ObjectId, which: fn(&mut Slot) -> &mut VClock) {
        // As in `atomic`: only the check inlined.
        if self.tracking {
            self.release_into_tracked(t, object, which, None);
        }
    }

    /// The release itself; `noted`: the thread's scheduling point to note it at (an unlock
    /// with no point of its own, [`Races::released_at`]), or none.
    #[inline(never)]
    fn release_into_tracked(
        &mut self,
        t: ThreadId,
        object: ObjectId,
        which: fn(&mut Slot) -> &mut VClock,
        noted: Option<u64>,
    ) {
        let t = t.index();
        let clock = std::mem::take(&mut self.threads[t]);
        which(self.slot(object)).join(&clock);
        self.threads[t] = clock;
        match noted {
            Some(step) => tick_noted(&mut self.threads[t], t, step, &mut self.released_at),
            None => self.threads[t].tick(t),
        }
    }

    /// `t` joins the clock `which` picks of `object`'s slot into its own.
    #[inline]
    fn acquire_from(&mut self, t: ThreadId, object: ObjectId, which: fn(&Slot) -> &VClock) {
        // As in `atomic`: only the check inlined.
        if self.tracking {
            self.acquire_from_tracked(t, object, which);
        }
    }

    #[inline(never)]
    fn acquire_from_tracked(&mut self, t: ThreadId, object: ObjectId, which: fn(&Slot) -> &VClock) {
        let mut clock = std::mem::take(&mut self.threads[t.index()]);
        clock.join(which(self.slot(object)));
        self.threads[t.index()] = clock;
    }

    /// `t` write-locked the rwlock `object`: it acquires writers' and readers' releases.
    pub(super) fn acquire_write(&mut self, t: ThreadId, object: ObjectId) {
        if !self.tracking {
            return;
        }
        let mut clock = std::mem::take(&mut self.threads[t.index()]);
        let slot = self.slot(object);
        clock.join(&slot.release);
        clock.join(&slot.other);
        self.threads[t.index()] = clock;
    }

    /// The last thread arrived at the barrier `object`: the arrivals so far become what
    /// leaving threads acquire.
    pub(super) fn barrier_release(&mut self, object: ObjectId) {
        if !self.tracking {
            return;
        }
        let slot = self.slot(object);
        let arrived = std::mem::take(&mut slot.release);
        slot.other.join(&arrived);
        slot.release = arrived;
        slot.release.clear();
    }

    /// `t` leaves the barrier `object`: it acquires every arrival's clock.
    pub(super) fn barrier_leave(&mut self, t: ThreadId, object: ObjectId) {
        self.acquire_from(t, object, |slot| &slot.other);
    }

    /// `t` sent message `ticket` on the channel `object`.
    pub(super) fn send(&mut self, t: ThreadId, object: ObjectId, ticket: u64) {
        if !self.tracking {
            return;
        }
        let t = t.index();
        let mut clock = self.spare.pop().unwrap_or_default();
        clock.copy_from(&self.threads[t]);
        self.slot(object).messages.push_back((ticket, clock));
        self.threads[t].tick(t);
    }

    /// `t` received message `ticket` on the channel `object` (messages sent before this
    /// execution carry no clock).
    pub(super) fn recv(&mut self, t: ThreadId, object: ObjectId, ticket: u64) {
        if !self.tracking {
            return;
        }
        let mut found = None;
        let i = self.slot_index(object);
        let messages = &mut self.objects[i].messages;
        while let Some((k, _)) = messages.front() {
            if *k > ticket {
                break;
            }
            let (k, clock) = messages.pop_front().expect("front exists");
            if k == ticket {
                found = Some(clock);
                break;
            }
            self.spare.push(clock);
        }
        if let Some(clock) = found {
            self.threads[t.index()].join(&clock);
            self.spare.push(clock);
        }
    }

    /// `t` received on the rendezvous channel `object`: what it did before happens before
    /// the completion of the blocking send it released (conservatively, of every later one).
    pub(super) fn rendezvous_receive(&mut self, t: ThreadId, object: ObjectId) {
        self.release_read(t, object)
    }

    /// `t`'s blocking send on the rendezvous channel `object` completed.
    pub(super) fn rendezvous_sent(&mut self, t: ThreadId, object: ObjectId) {
        if !self.tracking {
            return;
        }
        let mut clock = std::mem::take(&mut self.threads[t.index()]);
        clock.join(&self.slot(object).other);
        self.threads[t.index()] = clock;
    }

    /// `t` unparked `target`.
    pub(super) fn unpark(&mut self, t: ThreadId, target: ThreadId) {
        if !self.tracking {
            return;
        }
        release_to(&mut self.threads, t.index(), &mut self.unparked[target.index()]);
    }

    /// `t` consumed its park token.
    pub(super) fn park(&mut self, t: ThreadId) {
        if self.tracking {
            let t = t.index();
            let released = std::mem::take(&mut self.unparked[t]);
            self.threads[t].join(&released);
            self.unparked[t] = released;
        }
    }

    /// Task `t` completed: its output is about to be published to its `JoinHandle`, so it
    /// releases its clock to whoever takes or sees that output, then starts a new epoch (what
    /// it does after, its thread-locals' destructors, is not covered).
    pub(super) fn complete(&mut self, t: ThreadId) {
        if !self.tracking {
            return;
        }
        let t = t.index();
        if self.completed.len() <= t {
            self.completed.resize_with(t + 1, VClock::default);
        }
        release_to(&mut self.threads, t, &mut self.completed[t]);
    }

    /// `t` took or saw the output of the completed task `task` (an await of its handle that
    /// returned it, `is_finished`): `t` acquires the task's clock at its completion, as a
    /// join acquires a thread's end, whichever way the output reached `t`.
    pub(super) fn acquire_completion(&mut self, t: ThreadId, task: ThreadId) {
        if !self.tracking {
            return;
        }
        if let Some(released) = self.completed.get(task.index()) {
            self.threads[t.index()].join(released);
        }
    }

    /// `t` performed an atomic operation on `object`. Only the check is inlined: until the
    /// execution's first checked access (a cell or an instrumented pointer, `ensure_tracking`)
    /// nothing is tracked, and a program of atomics alone never tracks; a call that only
    /// returned cost about fifteen instructions at every atomic operation (the tracked path's
    /// register saves). `step` is `t`'s scheduling point of the operation (see
    /// [`Races::released_at`]).
    #[inline]
    pub(super) fn atomic(&mut self, t: ThreadId, object: ObjectId, sync: AtomicSync, step: u64) {
        if self.tracking {
            self.atomic_tracked(t, object, sync, step, None);
        }
    }

    /// As [`Races::atomic`], in an execution that checks non-atomic accesses of atomics
    /// ([`Races::check_unsync_atomics`]): the operation, at `location`, is also checked against
    /// the atomic's `with_mut` (any operation) and `unsync_load`s (a store), as loom checks
    /// them, and recorded for the later ones. Returns the earlier access it races with.
    fn atomic_checked(
        &mut self,
        t: ThreadId,
        object: ObjectId,
        sync: AtomicSync,
        step: u64,
        location: &'static Location<'static>,
    ) -> Option<(Access, AtomicAccess)> {
        self.ensure_tracking(self.threads.len());
        self.atomic_tracked(t, object, sync, step, Some(location))
    }

    #[inline(never)]
    fn atomic_tracked(
        &mut self,
        t: ThreadId,
        object: ObjectId,
        sync: AtomicSync,
        step: u64,
        checked: Option<&'static Location<'static>>,
    ) -> Option<(Access, AtomicAccess)> {
        let id = t;
        let t = t.index();
        let (load, store) = match sync {
            AtomicSync::Load(o) => (Some(o), None),
            AtomicSync::Store(o) => (None, Some(o)),
            AtomicSync::Rmw(o) => (Some(o), Some(o)),
        };
        let i = self.slot_index(object);
        // Borrowed field by field (every atomic operation comes here).
        let clock = &mut self.threads[t];
        let slot = &mut self.objects[i];
        if let Some(o) = load {
            if acquires(o) {
                clock.join(&slot.release);
            } else {
                self.pending_acquire[t].join(&slot.release);
            }
        }
        // After the operation's acquire (a read-modify-write's load comes before its store),
        // before its release ticks the clock: the access's epoch is the one the release
        // carries to whoever acquires it.
        let race = match checked {
            Some(location) => {
                let me = Access { thread: id.0, epoch: clock.get(t), location, step };
                atomic_against_unsync(slot, clock, me, load.is_some(), store.is_some())
            }
            None => None,
        };
        if let Some(o) = store {
            let carried = if releases(o) { &*clock } else { &self.fence_release[t] };
            if load.is_some() {
                // A read-modify-write continues the release sequence it reads from.
                slot.release.join(carried);
            } else {
                // A store starts a new one (C++20: a relaxed store by any thread ends it).
                slot.release.copy_from(carried);
            }
            if releases(o) {
                tick_noted(clock, t, step, &mut self.released_at);
            }
        }
        race
    }

    /// pctvb-loom's non-atomic access of the atomic `object` by `t` at `location` (its latest
    /// scheduling point `step`): `unsync_load` (a read) or `with_mut` (`write`), checked as
    /// loom checks them. A read races with the atomic's last `with_mut` and with any atomic
    /// store it does not follow (another thread may be storing while it reads); a write with
    /// every access it does not follow, atomic or not. Two reads, or a read and an atomic
    /// load, never race. Recorded when it does not race (a write, which follows everything
    /// recorded, replaces it all). Returns the earlier access it races with.
    fn unsync_atomic(
        &mut self,
        t: ThreadId,
        object: ObjectId,
        write: bool,
        location: &'static Location<'static>,
        step: u64,
    ) -> Option<(Access, AtomicAccess)> {
        self.ensure_tracking(self.threads.len());
        let ti = t.index();
        let i = self.slot_index(object);
        let clock = &self.threads[ti];
        let slot = &mut self.objects[i];
        let unordered = |list: &[Option<Access>]| {
            list.iter().flatten().copied().find(|a| a.epoch > clock.get(a.thread as usize))
        };
        let race = match slot.write.filter(|w| w.epoch > clock.get(w.thread as usize)) {
            Some(w) => Some((w, AtomicAccess::WithMut)),
            None => unordered(&slot.stores).map(|a| (a, AtomicAccess::Store)),
        };
        let race = race.or_else(|| match write {
            true => unordered(&slot.reads)
                .map(|a| (a, AtomicAccess::UnsyncLoad))
                .or_else(|| unordered(&slot.loads).map(|a| (a, AtomicAccess::Load))),
            false => None,
        });
        if race.is_none() {
            let epoch = clock.get(ti);
            record(epoch, t, &mut slot.write, &mut slot.reads, write, location, step);
            if write {
                slot.stores.clear();
                slot.loads.clear();
            }
        }
        race
    }

    /// `t` ran a fence with ordering `order`.
    pub(super) fn fence(&mut self, t: ThreadId, order: Ordering, step: u64) {
        if !self.tracking {
            return;
        }
        let t = t.index();
        if acquires(order) {
            let pending = std::mem::take(&mut self.pending_acquire[t]);
            self.threads[t].join(&pending);
            self.pending_acquire[t] = pending;
        }
        if order == Ordering::SeqCst {
            self.threads[t].join(&self.sc_fences);
            self.sc_fences.join(&self.threads[t]);
        }
        if releases(order) {
            self.fence_release[t].copy_from(&self.threads[t]);
            tick_noted(&mut self.threads[t], t, step, &mut self.released_at);
        }
    }

    /// Checks an access of the cell `object` by `t` at `location` (scheduling point `step`)
    /// against the cell's earlier accesses and its open spans, and records it (`open`: as the
    /// start of a span, see [`LiveSpan`]). Returns the earlier access it races with, whether
    /// that one wrote, and whether it is an open span.
    fn cell_access(
        &mut self,
        t: ThreadId,
        object: ObjectId,
        write: bool,
        location: &'static Location<'static>,
        step: u64,
        open: bool,
    ) -> Option<(Access, bool, bool)> {
        let ti = t.index();
        let unchecked = self.in_drop(ti) > 0;
        // As in loom, whose cell accesses advance the thread's clock: a span that ends after
        // this access is not covered by an earlier release (`end_span`).
        if let Some(r) = self.released_at.get_mut(ti) {
            *r = None;
        }
        let i = self.slot_index(object);
        // Borrowed field by field, not moved out and back: this is the hot path of a checked
        // access.
        let clock = &self.threads[ti];
        let slot = &mut self.objects[i];
        let race = if unchecked {
            let epoch = clock.get(ti);
            record(epoch, t, &mut slot.write, &mut slot.reads, write, location, step);
            None
        } else if let Some((a, wrote)) = open_conflict(slot, ti, write) {
            Some((a, wrote, true))
        } else {
            check(clock, t, &mut slot.write, &mut slot.reads, write, location, step)
                .map(|(a, wrote)| (a, wrote, false))
        };
        if open && race.is_none() {
            if slot.open_by.len() <= ti {
                slot.open_by.resize(ti + 1, Open::default());
            }
            let me = Some(Access { thread: t.0, epoch: clock.get(ti), location, step });
            let o = &mut slot.open_by[ti];
            if write {
                o.writes += 1;
                o.write = me;
            } else {
                o.reads += 1;
                o.read = me;
            }
            slot.open += 1;
        }
        race
    }

    /// Ends the open span `span` (its guard was dropped at scheduling point `step` of its
    /// thread): the end is recorded as an access (unless `record` is false: the thread
    /// unwinds). Not checked: an access before the span that the end does not follow was
    /// reported at the span's start (the start's clock is older), and one inside it as a
    /// conflict with the span.
    ///
    /// The end's epoch is loom's: the thread's clock at its latest synchronising operation.
    /// loom advances a thread's clock before each such operation, not after a release, so a
    /// pointer dropped right after a release (a guard whose `Drop` publishes the slot, then
    /// drops its pointer field) ends covered by that release; here a release ticks the clock
    /// after it, so the end takes the epoch before the tick when the release (an atomic
    /// operation or fence, or an unlock with no point of its own) was at the thread's latest
    /// scheduling point and no cell access came after it ([`Races::released_at`]). A use of
    /// the pointer after the release ([`Races::span_use`]) was recorded with the later epoch,
    /// which the end does not lower, so a write through the pointer after publishing still
    /// races with the reader.
    fn end_span(&mut self, span: &LiveSpan, step: u64, record_end: bool) {
        let ti = span.thread.index();
        let now = self.threads[ti].get(ti);
        let epoch = match self.released_at.get(ti) {
            Some(&Some((at, before))) if at == step && before.wrapping_add(1) == now => before,
            _ => now,
        };
        let i = self.slot_index(span.object);
        let slot = &mut self.objects[i];
        let Some(o) = slot.open_by.get_mut(ti) else { return };
        let count = if span.write { &mut o.writes } else { &mut o.reads };
        if *count == 0 {
            return;
        }
        *count -= 1;
        slot.open -= 1;
        if !record_end {
            return;
        }
        let own = if span.write {
            slot.write.filter(|a| a.thread as usize == ti)
        } else {
            slot.reads.get(ti).copied().flatten()
        };
        if own.is_some_and(|a| a.epoch > epoch) {
            return;
        }
        record_span(slot, span, epoch, step);
    }

    /// A use of the open span `span`'s pointer (`ConstPtr`/`MutPtr`'s `deref` or `with`) at its
    /// thread's scheduling point `step`: recorded as an access with the thread's clock now,
    /// so that a release between the pointer's creation and this use does not cover it. Not
    /// checked: a conflicting access that this use does not follow either came before the
    /// span's start (reported there) or inside the span (reported as a conflict with it).
    fn span_use(&mut self, span: &LiveSpan, step: u64) {
        let ti = span.thread.index();
        let epoch = self.threads[ti].get(ti);
        let i = self.slot_index(span.object);
        record_span(&mut self.objects[i], span, epoch, step);
    }

    /// The index range of `spans` whose entries may overlap `start..end`: every entry before
    /// it ends at or before `start` (none is longer than `longest`).
    fn overlapping(&self, start: usize, end: usize) -> std::ops::Range<usize> {
        let lo = self.spans.partition_point(|s| s.start.saturating_add(self.longest) <= start);
        let hi = lo + self.spans[lo..].partition_point(|s| s.start < end);
        lo..hi
    }

    /// Checks an instrumented pointer access of the `size` bytes at `addr` by `t` against
    /// every earlier access of overlapping memory, like [`Races::cell_access`] with the byte
    /// range in place of the cell, and records it under its exact range.
    fn addr_access(
        &mut self,
        t: ThreadId,
        addr: usize,
        size: usize,
        write: bool,
        location: &'static Location<'static>,
        step: u64,
    ) -> Option<(Access, bool)> {
        self.drain_frees();
        let (start, end) = (addr, addr.saturating_add(size.max(1)));
        let ti = t.index();
        let unchecked = self.in_drop(ti) > 0;
        let clock = &self.threads[ti];
        let mut exact = None;
        for i in self.overlapping(start, end) {
            let s = &self.spans[i];
            if s.end <= start {
                continue;
            }
            if !unchecked {
                if let Some(race) = conflict(clock, &s.write, &s.reads, write) {
                    return Some(race);
                }
            }
            if (s.start, s.end) == (start, end) {
                exact = Some(i);
            }
        }
        let i = match exact {
            Some(i) => i,
            None => {
                let at = self.spans.partition_point(|s| (s.start, s.end) < (start, end));
                let reads = self.spare_reads.pop().unwrap_or_default();
                self.spans.insert(at, Span { start, end, write: None, reads });
                self.longest = self.longest.max(end - start);
                at
            }
        };
        let span = &mut self.spans[i];
        let epoch = self.threads[ti].get(ti);
        record(epoch, t, &mut span.write, &mut span.reads, write, location, step);
        None
    }

    /// Forgets the accesses of every range overlapping `start..start + size`: memory there
    /// was freed, or is new (an instrumented allocation, a coroutine stack given to another
    /// thread), and nothing the detector sees orders its next use after the old accesses
    /// (the allocator's synchronization is not modelled).
    #[inline]
    pub(super) fn forget_range(&mut self, start: usize, size: usize) {
        // As in `atomic`: only the check inlined (no range is kept before an instrumented
        // pointer access).
        if !self.spans.is_empty() {
            self.forget_range_of_spans(start, size);
        }
    }

    #[inline(never)]
    fn forget_range_of_spans(&mut self, start: usize, size: usize) {
        let end = start.saturating_add(size.max(1));
        let range = self.overlapping(start, end);
        let mut i = range.start;
        let mut hi = range.end;
        while i < hi {
            if self.spans[i].end > start {
                let mut gone = self.spans.remove(i);
                gone.reads.clear();
                self.spare_reads.push(gone.reads);
                hi -= 1;
            } else {
                i += 1;
            }
        }
    }

    /// Forgets the ranges the watching allocator saw freed since the last call
    /// ([`frees`]): memory freed and reused within the execution starts afresh.
    fn drain_frees(&mut self) {
        frees::drain(|start, size| self.forget_range(start, size));
    }
}

/// Whether an access (`write` or a read) by the thread whose clock is `clock` conflicts with a
/// memory location's last write or reads since: the earlier access it races with, and whether
/// that one wrote.
fn conflict(
    clock: &VClock,
    last_write: &Option<Access>,
    reads: &[Option<Access>],
    write: bool,
) -> Option<(Access, bool)> {
    let ordered = |a: &Access| a.epoch <= clock.get(a.thread as usize);
    if let Some(w) = last_write.filter(|w| !ordered(w)) {
        return Some((w, true));
    }
    if write {
        return reads.iter().flatten().find(|r| !ordered(r)).map(|r| (*r, false));
    }
    None
}

/// Whether an access by thread `ti` (`write` or a read) conflicts with an open span of the
/// cell ([`LiveSpan`]): that span's start, and whether it writes. Any thread's span counts,
/// `ti`'s own too, as in loom, whose cell panics on a write while any pointer of the cell is
/// live and on a read while a write is (the same thread's `with_mut` inside its own `with`,
/// or while its own `MutPtr` lives: two live accesses that alias). Two reads never conflict.
/// Another thread's span is reported first: that is the race a fix has to order.
#[inline]
fn open_conflict(slot: &Slot, ti: usize, write: bool) -> Option<(Access, bool)> {
    if slot.open == 0 {
        return None;
    }
    let conflicting = |o: &Open| {
        if o.writes > 0 {
            o.write.map(|a| (a, true))
        } else if write && o.reads > 0 {
            o.read.map(|a| (a, false))
        } else {
            None
        }
    };
    let mut others = slot.open_by.iter().enumerate().filter(|&(u, _)| u != ti);
    others.find_map(|(_, o)| conflicting(o)).or_else(|| slot.open_by.get(ti).and_then(conflicting))
}

/// The check of an atomic operation `me` (a `load`, a `store`, or both) against the atomic's
/// non-atomic accesses in `slot` (see [`Races::unsync_atomic`]), by the thread whose clock is
/// `clock`: any operation races with a `with_mut` it does not follow, a store with an
/// `unsync_load`. Recorded when it does not race, as its thread's latest load or store.
fn atomic_against_unsync(
    slot: &mut Slot,
    clock: &VClock,
    me: Access,
    load: bool,
    store: bool,
) -> Option<(Access, AtomicAccess)> {
    let ordered = |a: &Access| a.epoch <= clock.get(a.thread as usize);
    if let Some(w) = slot.write.filter(|w| !ordered(w)) {
        return Some((w, AtomicAccess::WithMut));
    }
    if store {
        if let Some(r) = slot.reads.iter().flatten().find(|r| !ordered(r)) {
            return Some((*r, AtomicAccess::UnsyncLoad));
        }
    }
    let t = me.thread as usize;
    for (on, list) in [(load, &mut slot.loads), (store, &mut slot.stores)] {
        if on {
            if list.len() <= t {
                list.resize(t + 1, None);
            }
            list[t] = Some(me);
        }
    }
    None
}

/// Records an access of `span` (its use or its end) in its cell's `slot`, at `epoch` of the
/// span's thread.
fn record_span(slot: &mut Slot, span: &LiveSpan, epoch: u32, step: u64) {
    let (t, location) = (span.thread, span.location);
    record(epoch, t, &mut slot.write, &mut slot.reads, span.write, location, step);
}

/// `t`'s release ticks its `clock` at its scheduling point `step`, noted with the epoch
/// before the tick in `released_at` (see [`Races::released_at`]).
fn tick_noted(clock: &mut VClock, t: usize, step: u64, released_at: &mut Vec<Option<(u64, u32)>>) {
    let before = clock.get(t);
    clock.tick(t);
    if released_at.len() <= t {
        released_at.resize(t + 1, None);
    }
    released_at[t] = Some((step, before));
}

/// Records an access that did not race, at `epoch` of its thread `t`: a write replaces the
/// last write and the reads (all of which happen before it), a read replaces its thread's
/// last read.
fn record(
    epoch: u32,
    t: ThreadId,
    last_write: &mut Option<Access>,
    reads: &mut Vec<Option<Access>>,
    write: bool,
    location: &'static Location<'static>,
    step: u64,
) {
    let ti = t.index();
    let me = Access { thread: t.0, epoch, location, step };
    if write {
        *last_write = Some(me);
        reads.clear();
    } else {
        if reads.len() <= ti {
            reads.resize(ti + 1, None);
        }
        reads[ti] = Some(me);
    }
}

/// The race check of one access by `t` (clock `clock`) against a memory location's last write
/// and reads since, recording it when it does not race. Returns the earlier access it races
/// with and whether that one wrote.
fn check(
    clock: &VClock,
    t: ThreadId,
    last_write: &mut Option<Access>,
    reads: &mut Vec<Option<Access>>,
    write: bool,
    location: &'static Location<'static>,
    step: u64,
) -> Option<(Access, bool)> {
    let race = conflict(clock, last_write, reads, write);
    if race.is_none() {
        record(clock.get(t.index()), t, last_write, reads, write, location, step);
    }
    race
}

impl Execution {
    /// A checked access of the cell behind `handle` (`UnsafeCell::with`/`with_mut`): its
    /// scheduling point, then the race check, which fails the execution on a data race.
    pub(crate) fn cell_access(
        &self,
        handle: &Handle,
        write: bool,
        location: &'static Location<'static>,
    ) {
        self.checked_cell_access(handle, write, location, false, true);
    }

    /// pctvb-loom's access of a cell: as [`Execution::cell_access`], but, as in loom, no
    /// scheduling point while the detector is on (with it off, the scheduling point is all
    /// there is to an access, so it stays). The access stays open until
    /// [`Execution::end_span`] ends the span returned (`None`: the detector is off).
    ///
    /// Why no scheduling point loses nothing: whether two conflicting accesses race depends
    /// only on the happens-before order, which the synchronising operations (each a
    /// scheduling point) decide, not on where between them the accesses fall; and in an
    /// execution with no race, what an access sees is fixed by that order too. So every
    /// behaviour of a race-free execution is reached by ordering the synchronising operations
    /// alone, and a race is reported wherever the accesses fall. The cell is then no variable
    /// of the bounds: it has no access a change point could fall on (its objects' variable
    /// is of kind [`VarKind::CheckedCell`], never shared).
    pub(crate) fn begin_span(
        &self,
        handle: &Handle,
        write: bool,
        location: &'static Location<'static>,
    ) -> Option<LiveSpan> {
        self.checked_cell_access(handle, write, location, true, false)
    }

    /// The object of an unscheduled cell access (see [`Execution::begin_span`]): registered,
    /// a write counted as progress (it ends other threads' spinning, as a scheduled write
    /// does); `None` when the detector is off, so the access takes its scheduling point.
    #[inline]
    fn unscheduled_cell(
        &self,
        handle: &Handle,
        kind: EventKind,
        location: &'static Location<'static>,
    ) -> Option<ObjectId> {
        // `#[pctvb::instrument]`'s soundness check sees every operation, scheduled or not.
        if super::hooks::soundness_active() {
            super::hooks::check_operation(handle.site(), kind, location);
        }
        if !self.with_state(|st| st.races.on) {
            return None;
        }
        let object = self.object(handle, VarKind::CheckedCell);
        if kind == EventKind::CellWrite {
            self.with_state(|st| st.progress());
        }
        Some(object)
    }

    /// Ends `span`, if it belongs to this execution.
    pub(crate) fn end_span(&self, span: &LiveSpan) {
        self.on_span(span, |races, step| races.end_span(span, step, true));
    }

    /// A use of `span`'s pointer (see [`Races::span_use`]), if it belongs to this execution.
    pub(crate) fn use_span(&self, span: &LiveSpan) {
        self.on_span(span, |races, step| races.span_use(span, step));
    }

    /// Runs `f` with the detector and the span's thread's latest scheduling point, if `span`
    /// belongs to this execution and the detector tracks it.
    fn on_span(&self, span: &LiveSpan, f: impl FnOnce(&mut Races, u64)) {
        self.with_state(|st| {
            if st.gen == span.gen && st.races.on && st.races.tracking {
                let step = st.threads[span.thread.index()].last_step as u64;
                f(&mut st.races, step);
            }
        });
    }

    /// Ends `span` while its thread unwinds, as loom's guards do, so that a panic caught
    /// inside the execution (`catch_unwind`) does not leave the cell claimed for the rest of
    /// it. The end is not recorded as an access (loom skips its check then too), and nothing
    /// happens when the execution's state is in use: an engine tearing a failed execution's
    /// threads down holds it, and that execution is over anyway.
    pub(crate) fn end_span_unwinding(&self, span: &LiveSpan) {
        if let Ok(mut st) = self.state.try_borrow_mut() {
            if st.gen == span.gen && st.races.on && st.races.tracking {
                st.races.end_span(span, 0, false);
            }
        }
    }

    /// The scheduling point (unless not `scheduled` and the detector is on) and race check of
    /// a cell access, which stays open when `open` (the span to end, if the detector is on);
    /// fails the execution on a data race.
    #[inline(always)]
    fn checked_cell_access(
        &self,
        handle: &Handle,
        write: bool,
        location: &'static Location<'static>,
        open: bool,
        scheduled: bool,
    ) -> Option<LiveSpan> {
        let kind = if write { EventKind::CellWrite } else { EventKind::CellRead };
        let unscheduled =
            if scheduled { None } else { self.unscheduled_cell(handle, kind, location) };
        let object = match unscheduled {
            Some(object) => object,
            None => self.point_inlined(handle, VarKind::Cell, kind, location),
        };
        // The state borrowed here, not in a closure: the compiler left a closure of this size
        // out of line, a call at every cell access (criterion's `cell_access`, release build:
        // 23.3 ns an access with the detector off, against 17.1 ns inlined).
        let mut guard = self.state.borrow_mut();
        let st = &mut *guard;
        if !st.races.on {
            return None;
        }
        let cur = st.current;
        let step = st.threads[cur.index()].last_step as u64;
        st.races.ensure_tracking(st.threads.len());
        let Some((earlier, earlier_wrote, live)) =
            st.races.cell_access(cur, object, write, location, step, open)
        else {
            return open.then_some(LiveSpan { gen: st.gen, object, thread: cur, write, location });
        };
        let first = RaceAccess::earlier(st, &earlier, earlier_wrote, live);
        let second = RaceAccess::current(st, write, location, step);
        let cause = FailureCause::DataRace { what: st.describe_object(object), first, second };
        drop(guard);
        self.fail(cause)
    }

    /// The race check of an instrumented pointer access (`#[pctvb::instrument]`) by the
    /// calling thread of the `size` bytes at `addr`, at `location` (a zero-sized access
    /// counts as one byte): after its scheduling point when it
    /// has one (a tracked variable), else at the thread's latest step. `what` names the memory
    /// for the report (called only on a race). Fails the execution on a data race.
    pub(crate) fn pointer_access(
        &self,
        addr: usize,
        size: usize,
        write: bool,
        location: &'static Location<'static>,
        what: impl FnOnce() -> String,
    ) {
        let race = self.with_state(|st| {
            if !st.races.on {
                return None;
            }
            let cur = st.current;
            let step = st.threads[cur.index()].last_step as u64;
            st.races.ensure_tracking(st.threads.len());
            let (earlier, earlier_wrote) =
                st.races.addr_access(cur, addr, size, write, location, step)?;
            let first = RaceAccess::earlier(st, &earlier, earlier_wrote, false);
            Some((first, RaceAccess::current(st, write, location, step)))
        });
        if let Some((first, second)) = race {
            self.fail(FailureCause::DataRace { what: what(), first, second })
        }
    }

    /// The calling thread enters (`enter`) or leaves an instrumented `Drop::drop` (see
    /// `instrument::__rt::dropping`).
    pub(crate) fn dropping(&self, enter: bool) {
        self.with_state(|st| {
            let cur = st.current;
            st.races.dropping(cur, enter)
        });
    }

    /// An instrumented allocation returned `start..start + size`: earlier pointer accesses of
    /// that memory (before it was freed) no longer race with anything.
    pub(crate) fn forget_memory(&self, start: usize, size: usize) {
        self.with_state(|st| st.races.forget_range(start, size));
    }

    /// Records what the atomic operation on `object` the calling thread just ran did: the
    /// value for the trace, whether it changed the value (progress, see `State::progress`),
    /// and its synchronization for the race detector.
    ///
    /// `step` is the operation's trace step, as [`Execution::point_at_step`] returned it (or
    /// [`Execution::store_conditional`], for a weak compare-exchange's store).
    #[inline]
    pub(crate) fn atomic_done(
        &self,
        object: ObjectId,
        step: usize,
        value: super::Value,
        sync: AtomicSync,
        changed: bool,
    ) {
        // One borrow of the state for the trace, the progress and the detector.
        let checked = self.with_state(|st| {
            super::execution::note_access(st, step, value, changed);
            if st.races.unsync_atomics {
                return true;
            }
            let cur = st.current;
            st.races.atomic(cur, object, sync, step as u64);
            false
        });
        if checked {
            self.atomic_done_checked(object, step, sync);
        }
    }

    /// [`Execution::atomic_done`]'s record for the race detector in an execution that checks
    /// non-atomic accesses of atomics (pctvb-loom's `model`, [`Races::check_unsync_atomics`]).
    /// Out of line and cold: inlined, its frame (the race's report) made every atomic
    /// operation save and restore six registers, in executions that never check too (5% of
    /// the work-stealing deque's instructions, `strategy_instructions ws random`).
    #[cold]
    #[inline(never)]
    fn atomic_done_checked(&self, object: ObjectId, step: usize, sync: AtomicSync) {
        let race = self.with_state(|st| {
            let cur = st.current;
            // pctvb-loom's model: the operation is recorded where it ran, its trace step's
            // location (its point was just taken, so the step is there).
            let Some(location) = st.trace.get(step).map(|s| s.location) else {
                st.races.atomic(cur, object, sync, step as u64);
                return None;
            };
            let (earlier, how) =
                st.races.atomic_checked(cur, object, sync, step as u64, location)?;
            let second_how = match sync {
                AtomicSync::Load(_) => AtomicAccess::Load,
                AtomicSync::Store(_) | AtomicSync::Rmw(_) => AtomicAccess::Store,
            };
            Some(unsync_race(st, object, earlier, how, (location, step as u64, second_how)))
        });
        if let Some(cause) = race {
            self.fail(cause)
        }
    }

    /// pctvb-loom's `unsync_load` (a read) or `with_mut` (`write`) of the atomic behind
    /// `handle`, at `location`: checked against the atomic's other accesses
    /// ([`Races::unsync_atomic`]), failing the execution on a data race. No scheduling point,
    /// as loom's are none: when it races with nothing, the synchronising operations (each a
    /// point) order it after every store, so what it reads is decided by them (the argument of
    /// [`Execution::begin_span`]). Returns `false` when the detector is off (nothing checked):
    /// the caller then takes a scheduling point, which is all there is to the access; and in
    /// an execution that does not check such accesses ([`Races::check_unsync_atomics`]: not
    /// pctvb-loom's `model`), whose stores went unrecorded.
    pub(crate) fn unsync_atomic(
        &self,
        handle: &Handle,
        write: bool,
        location: &'static Location<'static>,
    ) -> bool {
        if !self.with_state(|st| st.races.on && st.races.unsync_atomics) {
            return false;
        }
        let object = self.object(handle, VarKind::Atomic);
        let race = self.with_state(|st| {
            let cur = st.current;
            let step = st.threads[cur.index()].last_step as u64;
            let (earlier, how) = st.races.unsync_atomic(cur, object, write, location, step)?;
            let second_how = if write { AtomicAccess::WithMut } else { AtomicAccess::UnsyncLoad };
            Some(unsync_race(st, object, earlier, how, (location, step, second_how)))
        });
        if let Some(cause) = race {
            self.fail(cause)
        }
        true
    }

    /// Makes this execution check pctvb-loom's non-atomic accesses of atomics (see
    /// [`Races::check_unsync_atomics`]); nothing when the detector is off.
    pub(crate) fn check_unsync_atomics(&self) {
        self.with_state(|st| {
            let threads = st.threads.len();
            st.races.check_unsync_atomics(threads)
        });
    }

    /// A fence of the calling thread with ordering `order`: its scheduling point, then its
    /// effect on the race detector's clocks.
    pub(crate) fn fence(&self, order: Ordering, location: &'static Location<'static>) {
        self.schedule(EventKind::Fence, None, location);
        self.with_state(|st| {
            let cur = st.current;
            let step = st.threads[cur.index()].last_step as u64;
            st.races.fence(cur, order, step)
        });
    }
}

/// The failure of a race between an atomic's `earlier` access (`how`) and the current thread's
/// access `now` (its location, scheduling point and kind), one of them non-atomic.
fn unsync_race(
    st: &super::state::State,
    object: ObjectId,
    earlier: Access,
    how: AtomicAccess,
    now: (&'static Location<'static>, u64, AtomicAccess),
) -> FailureCause {
    let (location, step, now_how) = now;
    let writes = |h: AtomicAccess| matches!(h, AtomicAccess::Store | AtomicAccess::WithMut);
    let first =
        RaceAccess { how: Some(how), ..RaceAccess::earlier(st, &earlier, writes(how), false) };
    let second = RaceAccess {
        how: Some(now_how),
        ..RaceAccess::current(st, writes(now_how), location, step)
    };
    FailureCause::DataRace { what: st.describe_object(object), first, second }
}

/// The failure message of a data race on `what`.
pub(crate) fn race_message(what: &str, first: &RaceAccess, second: &RaceAccess) -> String {
    let access = |a: &RaceAccess| {
        let did = match a.how {
            Some(how) => how.did(),
            None if a.write => "wrote it",
            None => "read it",
        };
        let at = format!("{}:{}", a.location.file(), a.location.line());
        // An access that is no scheduling point of its own (an instrumented pointer access of
        // a variable no session tracks) by a thread that has not reached one yet: no step of
        // the schedule is its.
        let step = match a.step {
            NO_STEP => "before its first scheduling point".to_string(),
            step => format!("step {step}"),
        };
        if a.live {
            format!("{} {did} through a pointer taken at {at} ({step}) and still live", a.thread)
        } else {
            format!("{} {did} at {at} ({step})", a.thread)
        }
    };
    if first.live && first.thread == second.thread {
        // The thread's own live pointer: no order between threads is missing, the two
        // accesses alias (loom panics on it too).
        return format!(
            "data race on {what}: {}, {}: the same thread accessed it while its own pointer was live",
            access(first),
            access(second)
        );
    }
    let unsync =
        |a: &RaceAccess| matches!(a.how, Some(AtomicAccess::UnsyncLoad | AtomicAccess::WithMut));
    // loom's contract for its non-atomic accesses of an atomic, which the fix must meet.
    let hint = match unsync(first) || unsync(second) {
        true => {
            "; `unsync_load` may not run concurrently with a store to the atomic, and \
             `with_mut` with any access of it: order them (a join, a lock, or a Release store \
             that an Acquire load reads), or use an atomic load"
        }
        false => "",
    };
    format!(
        "data race on {what}: {}, {}, with no happens-before between them{hint}",
        access(first),
        access(second)
    )
}

/// Frees the watching allocator ([`crate::alloc::WatchFrees`]) saw on this OS thread, for the
/// detector to forget (`Races::drain_frees`). The log is a fixed array in a const thread-local
/// without a destructor, so that recording a free allocates nothing, takes no lock and never
/// reenters the execution's state (the allocator runs inside it too): when the array is full,
/// a new range is merged into the last entry (forgetting more than was freed: races may be
/// missed there, none is invented).
pub(crate) mod frees {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicBool, Ordering};

    const CAPACITY: usize = 128;

    struct Log {
        len: Cell<usize>,
        ranges: [Cell<(usize, usize)>; CAPACITY],
    }

    thread_local! {
        static LOG: Log = const {
            Log { len: Cell::new(0), ranges: [const { Cell::new((0, 0)) }; CAPACITY] }
        };
    }

    /// Whether a watching allocator ever ran in this process.
    static WATCHING: AtomicBool = AtomicBool::new(false);

    /// Notes that a watching allocator is installed (it calls this on every allocation).
    #[inline]
    pub(crate) fn watching() {
        if !WATCHING.load(Ordering::Relaxed) {
            WATCHING.store(true, Ordering::Relaxed);
        }
    }

    /// Whether every free is seen (a watching allocator is installed).
    pub(crate) fn all_seen() -> bool {
        WATCHING.load(Ordering::Relaxed)
    }

    /// Records that `start..end` was freed on this OS thread.
    #[inline]
    pub(crate) fn freed(start: usize, end: usize) {
        if end <= start {
            return;
        }
        // `try_with`: a free during thread teardown, after the log is gone, needs no record
        // (no execution runs on this OS thread any more).
        let _ = LOG.try_with(|log| {
            let n = log.len.get();
            if n < CAPACITY {
                log.ranges[n].set((start, end));
                log.len.set(n + 1);
            } else {
                let (s, e) = log.ranges[CAPACITY - 1].get();
                log.ranges[CAPACITY - 1].set((s.min(start), e.max(end)));
            }
        });
    }

    /// Empties the log.
    pub(super) fn reset() {
        let _ = LOG.try_with(|log| log.len.set(0));
    }

    /// Calls `forget(start, size)` for every logged range, and empties the log.
    #[inline]
    pub(super) fn drain(mut forget: impl FnMut(usize, usize)) {
        let _ = LOG.try_with(|log| {
            // By index: forgetting can free pctvb's own memory, which appends to the log.
            let mut i = 0;
            while i < log.len.get() {
                let (start, end) = log.ranges[i].get();
                forget(start, end - start);
                i += 1;
            }
            log.len.set(0);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The detector of an execution that checks non-atomic accesses of atomics, with `threads`
    /// threads, each spawned by thread 0 before anything else ran.
    fn unsync_races(threads: u32) -> Races {
        let mut races = Races::new(true);
        races.begin(1);
        races.check_unsync_atomics(1);
        for child in 1..threads {
            races.spawn(ThreadId(0), ThreadId(child));
        }
        races
    }

    /// The atomic every access here is of.
    fn atomic() -> ObjectId {
        ObjectId::from_index(0)
    }

    fn op(races: &mut Races, t: u32, sync: AtomicSync) -> Option<AtomicAccess> {
        let at = Location::caller();
        races.atomic_checked(ThreadId(t), atomic(), sync, 0, at).map(|(_, how)| how)
    }

    fn unsync(races: &mut Races, t: u32, write: bool) -> Option<AtomicAccess> {
        let at = Location::caller();
        races.unsync_atomic(ThreadId(t), atomic(), write, at, 0).map(|(_, how)| how)
    }

    #[test]
    fn an_unsync_load_races_with_a_store_it_does_not_follow() {
        let mut r = unsync_races(2);
        assert_eq!(op(&mut r, 1, AtomicSync::Store(Ordering::Release)), None);
        assert_eq!(unsync(&mut r, 0, false), Some(AtomicAccess::Store));
        // The other order: the store finds the read.
        let mut r = unsync_races(2);
        assert_eq!(unsync(&mut r, 0, false), None);
        assert_eq!(
            op(&mut r, 1, AtomicSync::Store(Ordering::SeqCst)),
            Some(AtomicAccess::UnsyncLoad)
        );
        let mut r = unsync_races(2);
        assert_eq!(unsync(&mut r, 0, false), None);
        assert_eq!(
            op(&mut r, 1, AtomicSync::Rmw(Ordering::AcqRel)),
            Some(AtomicAccess::UnsyncLoad)
        );
    }

    #[test]
    fn an_unsync_load_after_an_acquire_of_the_store_or_a_join_does_not_race() {
        let mut r = unsync_races(2);
        assert_eq!(op(&mut r, 1, AtomicSync::Store(Ordering::Release)), None);
        assert_eq!(op(&mut r, 0, AtomicSync::Load(Ordering::Acquire)), None);
        assert_eq!(unsync(&mut r, 0, false), None);
        // A relaxed load of the store orders nothing.
        let mut r = unsync_races(2);
        assert_eq!(op(&mut r, 1, AtomicSync::Store(Ordering::Release)), None);
        assert_eq!(op(&mut r, 0, AtomicSync::Load(Ordering::Relaxed)), None);
        assert_eq!(unsync(&mut r, 0, false), Some(AtomicAccess::Store));
        let mut r = unsync_races(2);
        assert_eq!(op(&mut r, 1, AtomicSync::Store(Ordering::Relaxed)), None);
        r.join(ThreadId(0), ThreadId(1));
        assert_eq!(unsync(&mut r, 0, false), None);
        // Reads never race with reads, atomic or not.
        let mut r = unsync_races(3);
        assert_eq!(unsync(&mut r, 1, false), None);
        assert_eq!(op(&mut r, 2, AtomicSync::Load(Ordering::Relaxed)), None);
        assert_eq!(unsync(&mut r, 0, false), None);
    }

    #[test]
    fn with_mut_races_with_every_access_it_does_not_follow() {
        for (earlier, how) in [
            (AtomicSync::Load(Ordering::Relaxed), AtomicAccess::Load),
            (AtomicSync::Store(Ordering::Release), AtomicAccess::Store),
        ] {
            let mut r = unsync_races(2);
            assert_eq!(op(&mut r, 1, earlier), None);
            assert_eq!(unsync(&mut r, 0, true), Some(how));
            let mut r = unsync_races(2);
            assert_eq!(op(&mut r, 1, earlier), None);
            r.join(ThreadId(0), ThreadId(1));
            assert_eq!(unsync(&mut r, 0, true), None);
        }
        let mut r = unsync_races(2);
        assert_eq!(unsync(&mut r, 1, false), None);
        assert_eq!(unsync(&mut r, 0, true), Some(AtomicAccess::UnsyncLoad));
        // And every later access that does not follow it races with it.
        let mut r = unsync_races(3);
        assert_eq!(unsync(&mut r, 0, true), None);
        assert_eq!(op(&mut r, 1, AtomicSync::Load(Ordering::Acquire)), Some(AtomicAccess::WithMut));
        assert_eq!(unsync(&mut r, 2, false), Some(AtomicAccess::WithMut));
    }

    #[test]
    fn without_the_check_atomics_record_nothing() {
        let mut r = Races::new(true);
        r.begin(1);
        r.start_tracking(2);
        r.atomic(ThreadId(1), atomic(), AtomicSync::Store(Ordering::Relaxed), 0);
        let slot = &r.objects[0];
        assert!(slot.stores.is_empty() && slot.loads.is_empty());
        // The detector off: nothing to check, nothing kept.
        let mut off = Races::new(false);
        off.begin(1);
        off.check_unsync_atomics(1);
        assert!(!off.unsync_atomics && !off.tracking);
    }
}
