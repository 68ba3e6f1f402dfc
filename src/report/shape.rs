//! The measured shape of a found bug: how many preemptions its (minimized) schedule needs, at
//! accesses to how many variables, among how many threads, and how many reads saw another
//! thread's write. These are the (c, v, t) of the PCTVB paper and the interference measure of
//! bounded-interference testing, read off one failing schedule: an upper bound on the bug's
//! true (c, v, t), tight when the schedule was minimized.
//!
//! `t` is counted as the guarantees count it (see [`crate::guarantee`]): the threads whose
//! order the bug needs, plus every thread that spawned one of them while another of them
//! already existed, and every thread one of them waited for before the bug's last preemption
//! (the whole schedule without one), until no thread is added. That spawner decides whether
//! the thread spawned first can run ahead before the other exists, so its order relative to
//! them is part of the bug: a bug between two threads the test body spawns one after the
//! other is a 3-thread bug. A thread one of them waits for (joins, waits for a lock it holds,
//! a message or notification from it, its unpark or wake) decides when that one can run
//! again: a reader that joins a helper before its reads makes the helper one of the bug's
//! threads.

use std::fmt;

use crate::runtime::{EventKind, ObjectId, Step, ThreadId, WaitOn};
use crate::vars::VarId;

/// (c, v, t) and interference of one failing schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BugShape {
    /// Preemptive context switches (c).
    pub preemptions: usize,
    /// Distinct variables accessed at the preemption points (v).
    pub variables: usize,
    /// Distinct threads involved (t): those preempted or preempting; with no preemption, the
    /// failing thread and the threads whose writes it read, or, for a deadlock, the threads
    /// blocked at the end on an object (every blocked one if none is); for a data race, also
    /// both racing threads; and, with either, each thread that spawned one of them while
    /// another of them existed (counted in [`BugShape::spawners`] too).
    pub threads: usize,
    /// Of [`BugShape::threads`], how many are counted because they spawned one of the bug's
    /// threads while another of them existed (typically the test body's thread).
    pub spawners: usize,
    /// Of [`BugShape::threads`], how many are counted because one of the bug's threads
    /// waited for them before the bug's last preemption (a joined helper, a lock's holder).
    pub waited_for: usize,
    /// Reads that returned a value written by another thread (non-local reads).
    pub nonlocal_reads: usize,
}

impl fmt::Display for BugShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "c={} at v={} among t={}",
            super::plural(self.preemptions, "preemption"),
            super::plural(self.variables, "variable"),
            super::plural(self.threads, "thread"),
        )?;
        let spawners = match self.spawners {
            0 => None,
            1 => Some("the one that spawned the others".to_string()),
            s => Some(format!("{s} that spawned the others")),
        };
        let waited = match self.waited_for {
            0 => None,
            1 => Some("one they waited for".to_string()),
            w => Some(format!("{w} they waited for")),
        };
        match (spawners, waited) {
            (None, None) => {}
            (Some(one), None) | (None, Some(one)) => write!(f, " (counting {one})")?,
            (Some(s), Some(w)) => write!(f, " (counting {s} and {w})")?,
        }
        write!(f, "; {}", super::plural(self.nonlocal_reads, "non-local read"))
    }
}

/// Measures `trace`; `var_of` gives an object's variable, `failing` the thread that failed,
/// `race` the threads of a data race's two accesses ([`super::racing_threads`]). Linear in the
/// trace: threads, objects and variables are dense ids, so the sets and maps are vectors
/// indexed by them.
pub(crate) fn measure(
    trace: &[Step],
    waits_on: &[WaitOn],
    var_of: impl Fn(ObjectId) -> VarId,
    failing: Option<ThreadId>,
    race: Option<[ThreadId; 2]>,
) -> BugShape {
    let mut variables = DenseSet::default();
    let mut threads = DenseSet::default();
    // Without preemptions the bug is in the order threads ran whole: count the failing thread
    // and the threads whose writes it read.
    let mut read_from = DenseSet::default();
    if let Some(t) = failing {
        read_from.insert(t.index());
    }
    let mut last_var: Vec<Option<VarId>> = Vec::new();
    let mut last_writer: Vec<Option<ThreadId>> = Vec::new();
    let mut preemptions = 0;
    let mut nonlocal_reads = 0;
    let mut lives = Lifetimes::default();
    // Each thread's last step: a thread whose last step blocked it is blocked at the end.
    let mut last_step: Vec<Option<(usize, &Step)>> = Vec::new();
    // Each thread's last step as the chosen one.
    let mut last_chosen: Vec<Option<usize>> = Vec::new();
    for (i, s) in trace.iter().enumerate() {
        lives.record(i, s);
        *slot(&mut last_step, s.thread.index()) = Some((i, s));
        *slot(&mut last_chosen, s.chosen.index()) = Some(i);
        let var = s.object.filter(|_| s.kind != EventKind::Block).map(&var_of);
        if s.is_preemption() {
            preemptions += 1;
            threads.insert(s.thread.index());
            add_preempting(trace, i, &mut threads);
            // The paper counts a preemption against the variable accessed at that point (the
            // operation about to run), or else the one the thread accessed last.
            let last = last_var.get(s.thread.index()).copied().flatten();
            if let Some(v) = var.or(last) {
                variables.insert(v.index());
            }
        }
        if let Some(v) = var {
            *slot(&mut last_var, s.thread.index()) = Some(v);
        }
        if let Some(o) = s.object {
            let (reads, writes) = match s.kind {
                EventKind::AtomicLoad | EventKind::CellRead => (true, false),
                EventKind::AtomicStore | EventKind::CellWrite => (false, true),
                EventKind::AtomicRmw => (true, true),
                _ => (false, false),
            };
            let writer = last_writer.get(o.index()).copied().flatten();
            if let Some(w) = writer.filter(|&w| reads && w != s.thread) {
                nonlocal_reads += 1;
                if Some(s.thread) == failing {
                    read_from.insert(w.index());
                }
            }
            if writes {
                *slot(&mut last_writer, o.index()) = Some(s.thread);
            }
        }
    }
    if failing.is_none() && threads.len == 0 {
        // A deadlock without preemptions: the bug is in the order the threads took what they
        // block on. Count the threads blocked at the end on an object (a lock-order deadlock's
        // two threads, not the body blocked joining them); if none waits on an object (a lost
        // unpark), every thread blocked at the end.
        // A thread waits at the end if its last step waited (a lock or join it could not
        // take, a block) or never ran (it was preempted at a lock another thread then took:
        // it waits since, without a step of its own). The trace's last step is the operation
        // that blocked the last runnable thread (a `Block` of its own is not recorded).
        let end = trace.last().map(|s| s.thread);
        let never_ran = |i: usize, s: &Step| {
            s.kind != EventKind::ThreadExit
                && last_chosen.get(s.thread.index()).copied().flatten().is_none_or(|c| c < i)
        };
        let blocked = |on_object: bool| {
            last_step.iter().flatten().filter(move |&&(i, s)| {
                (s.waits || Some(s.thread) == end || never_ran(i, s))
                    && (!on_object || s.object.is_some())
            })
        };
        let on_object = blocked(true).next().is_some();
        for (_, s) in blocked(on_object) {
            read_from.insert(s.thread.index());
        }
    }
    let mut involved = if threads.len == 0 { read_from } else { threads };
    // A data race is between its two accesses' threads whatever the schedule: both are part
    // of the bug, with or without preemptions (`failing` is only the second one's thread, and
    // a preemption elsewhere need not involve either).
    for t in race.into_iter().flatten() {
        involved.insert(t.index());
    }
    let waits = waited_for(trace, waits_on);
    let (mut spawners, mut waited) = (0, 0);
    loop {
        let added = (lives.add_spawners(&mut involved), add_waited(&waits, &mut involved));
        spawners += added.0;
        waited += added.1;
        if added == (0, 0) {
            break;
        }
    }
    BugShape {
        preemptions,
        variables: variables.len,
        threads: involved.len,
        spawners,
        waited_for: waited,
        nonlocal_reads,
    }
}

/// Who waited for whom before the bug's last preemption (in the whole trace without one), as
/// `(waiter, waited for)`. Not only the waits of this schedule: what a thread may wait for
/// in another schedule decides when it can run there too (a reader that joins a helper can
/// read only after the helper's exit, however the priorities fall). So: the joins, unparks
/// and task wakes the engine recorded, and for each acquisition on an object (a lock, a
/// receive or send, a `Once`, a barrier, a condvar wait), the other thread that operated on
/// the object last before it (the previous holder, the sender) and those that operate on it
/// before the acquiring thread runs again (when it waited, or was preempted there).
fn waited_for(trace: &[Step], waits_on: &[WaitOn]) -> Vec<(usize, usize)> {
    let cutoff = trace.iter().rposition(Step::is_preemption).unwrap_or(trace.len());
    let mut edges: Vec<(usize, usize)> = waits_on
        .iter()
        .filter(|w| w.at < cutoff)
        .map(|w| (w.waiter.index(), w.on.index()))
        .collect();
    // Per object, the latest thread that used it and the latest other one before it: the
    // other thread an acquisition follows, found in one pass (a search back from every
    // acquisition was quadratic in a long trace).
    let mut users: Vec<Option<(usize, Option<usize>)>> = Vec::new();
    for (i, s) in trace[..cutoff].iter().enumerate() {
        let Some(object) = s.object.filter(|_| s.kind != EventKind::Block) else { continue };
        let (me, slot) = (s.thread.index(), slot(&mut users, object.index()));
        let acquires = matches!(
            s.kind,
            EventKind::Lock
                | EventKind::ReadLock
                | EventKind::WriteLock
                | EventKind::Recv
                | EventKind::Send
                | EventKind::Once
                | EventKind::BarrierWait
                | EventKind::CondvarWait
        );
        if acquires {
            let before = match *slot {
                Some((last, _)) if last != me => Some(last),
                Some((_, other)) => other,
                None => None,
            };
            edges.extend(before.map(|b| (me, b)));
            // Waiting, or preempted there: the threads that use the object before it runs
            // again (each thread's such intervals do not overlap, so this stays linear per
            // thread).
            edges.extend(users_until_it_runs(trace, i, object).map(|t| (me, t)));
        }
        *slot = match *slot {
            Some((last, other)) if last == me => Some((me, other)),
            Some((last, _)) => Some((me, Some(last))),
            None => Some((me, None)),
        };
    }
    edges
}

/// Adds to `involved` every thread one of them waited for (`waits`), until nothing changes;
/// returns how many were added.
fn add_waited(waits: &[(usize, usize)], involved: &mut DenseSet) -> usize {
    let mut added = 0;
    while let Some(&(_, on)) =
        waits.iter().find(|&&(w, on)| involved.contains(w) && !involved.contains(on))
    {
        involved.insert(on);
        added += 1;
    }
    added
}

/// Adds the threads a preemption at step `i` is ordered against: those that, before the
/// preempted thread runs again, operate on the object it was about to use (the operations
/// the preemption lets in between). The thread chosen at the preemption may only pass
/// through (block at once, or run unrelated work) and is counted only when no such thread
/// exists, or the preempted operation has no object.
fn add_preempting(trace: &[Step], i: usize, threads: &mut DenseSet) {
    let s = &trace[i];
    let mut found = false;
    if let Some(object) = s.object {
        for t in users_until_it_runs(trace, i, object) {
            threads.insert(t);
            found = true;
        }
    }
    if !found {
        threads.insert(s.chosen.index());
    }
}

/// The threads that operate on `object` after step `i` and before `i`'s thread runs again
/// (none when it goes on at once): what a preemption or a wait there lets in.
fn users_until_it_runs(
    trace: &[Step],
    i: usize,
    object: ObjectId,
) -> impl Iterator<Item = usize> + '_ {
    let thread = trace[i].thread;
    trace[i + 1..]
        .iter()
        .take_while(move |l| l.thread != thread)
        .filter(move |l| l.object == Some(object) && l.kind != EventKind::Block)
        .map(|l| l.thread.index())
}

/// When each thread was spawned, by whom, and when it exited, in trace steps. Thread ids are
/// dense and given in spawn order, so the `i`-th spawn step (1-based) created thread `i`;
/// thread 0 (the test body's) exists from the start.
#[derive(Default)]
struct Lifetimes {
    /// `(step, spawner)` of thread `i + 1`.
    spawned: Vec<(usize, usize)>,
    /// The exit step of thread `i`, if it exited.
    exited: Vec<Option<usize>>,
}

impl Lifetimes {
    fn record(&mut self, i: usize, s: &Step) {
        match s.kind {
            EventKind::Spawn => self.spawned.push((i, s.thread.index())),
            EventKind::ThreadExit => *slot(&mut self.exited, s.thread.index()) = Some(i),
            _ => {}
        }
    }

    /// `(step, spawner)` of thread `t`; `None` for the test body's thread.
    fn spawn_of(&self, t: usize) -> Option<(usize, usize)> {
        t.checked_sub(1).and_then(|i| self.spawned.get(i).copied())
    }

    /// Whether thread `t` existed (spawned, not exited) just before step `at`.
    fn existed_at(&self, t: usize, at: usize) -> bool {
        let born = match self.spawn_of(t) {
            Some((step, _)) => step < at,
            None => t == 0,
        };
        born && self.exited.get(t).copied().flatten().is_none_or(|exit| exit > at)
    }

    /// Adds to `involved`, until nothing changes, every thread that spawned one of `involved`
    /// while another of them existed; returns how many were added.
    fn add_spawners(&self, involved: &mut DenseSet) -> usize {
        let mut added = 0;
        loop {
            let members: Vec<usize> =
                (0..involved.member.len()).filter(|&t| involved.member[t]).collect();
            let needed = members.iter().find_map(|&x| {
                let (step, spawner) = self.spawn_of(x)?;
                let other_exists = members.iter().any(|&y| y != x && self.existed_at(y, step));
                (!involved.contains(spawner) && other_exists).then_some(spawner)
            });
            match needed {
                Some(spawner) => {
                    involved.insert(spawner);
                    added += 1;
                }
                None => return added,
            }
        }
    }
}

/// `v[i]`, growing `v` with `None`s to reach it.
fn slot<T>(v: &mut Vec<Option<T>>, i: usize) -> &mut Option<T> {
    if v.len() <= i {
        v.resize_with(i + 1, || None);
    }
    &mut v[i]
}

/// A set of dense indices with its size.
#[derive(Default)]
struct DenseSet {
    member: Vec<bool>,
    len: usize,
}

impl DenseSet {
    fn contains(&self, i: usize) -> bool {
        self.member.get(i).copied().unwrap_or(false)
    }

    fn insert(&mut self, i: usize) {
        if self.member.len() <= i {
            self.member.resize(i + 1, false);
        }
        if !self.member[i] {
            self.member[i] = true;
            self.len += 1;
        }
    }
}
