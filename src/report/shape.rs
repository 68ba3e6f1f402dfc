//! The measured shape of a found bug: how many preemptions its (minimized) schedule needs, at
//! accesses to how many variables, among how many threads, and how many reads saw another
//! thread's write. These are the (c, v, t) of the PCTVB paper and the interference measure of
//! bounded-interference testing, read off one failing schedule: an upper bound on the bug's
//! true (c, v, t), tight when the schedule was minimized.

use std::fmt;

use super::schedule::is_preemption;
use crate::runtime::{EventKind, ObjectId, Step, ThreadId};
use crate::vars::VarId;

/// (c, v, t) and interference of one failing schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BugShape {
    /// Preemptive context switches (c).
    pub preemptions: usize,
    /// Distinct variables accessed at the preemption points (v).
    pub variables: usize,
    /// Distinct threads involved (t): those preempted or preempting; with no preemption, the
    /// failing thread and the threads whose writes it read.
    pub threads: usize,
    /// Reads that returned a value written by another thread (non-local reads).
    pub nonlocal_reads: usize,
}

impl fmt::Display for BugShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "c={} at v={} among t={}; {}",
            super::plural(self.preemptions, "preemption"),
            super::plural(self.variables, "variable"),
            super::plural(self.threads, "thread"),
            super::plural(self.nonlocal_reads, "non-local read")
        )
    }
}

/// Measures `trace`; `var_of` gives an object's variable, `failing` the thread that failed.
/// Linear in the trace: threads, objects and variables are dense ids, so the sets and maps
/// are vectors indexed by them.
pub(crate) fn measure(
    trace: &[Step],
    var_of: impl Fn(ObjectId) -> VarId,
    failing: Option<ThreadId>,
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
    for s in trace {
        let var = s.object.filter(|_| s.kind != EventKind::Block).map(&var_of);
        if is_preemption(s) {
            preemptions += 1;
            threads.insert(s.thread.index());
            threads.insert(s.chosen.index());
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
    let threads = if threads.len == 0 { read_from.len } else { threads.len };
    BugShape { preemptions, variables: variables.len, threads, nonlocal_reads }
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
