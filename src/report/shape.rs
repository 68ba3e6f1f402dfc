//! The measured shape of a found bug: how many preemptions its (minimized) schedule needs, at
//! accesses to how many variables, among how many threads, and how many reads saw another
//! thread's write. These are the (c, v, t) of the PCTVB paper and the interference measure of
//! bounded-interference testing, read off one failing schedule: an upper bound on the bug's
//! true (c, v, t), tight when the schedule was minimized.

use std::collections::{BTreeSet, HashMap};
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
pub(crate) fn measure(
    trace: &[Step],
    var_of: impl Fn(ObjectId) -> VarId,
    failing: Option<ThreadId>,
) -> BugShape {
    let mut variables = BTreeSet::new();
    let mut threads: BTreeSet<ThreadId> = BTreeSet::new();
    // Without preemptions the bug is in the order threads ran whole: count the failing thread
    // and the threads whose writes it read.
    let mut read_from: BTreeSet<ThreadId> = failing.into_iter().collect();
    let mut last_var: HashMap<ThreadId, VarId> = HashMap::new();
    let mut last_writer: HashMap<ObjectId, ThreadId> = HashMap::new();
    let mut preemptions = 0;
    let mut nonlocal_reads = 0;
    for s in trace {
        let var = s.object.filter(|_| s.kind != EventKind::Block).map(&var_of);
        if is_preemption(s) {
            preemptions += 1;
            threads.insert(s.thread);
            threads.insert(s.chosen);
            // The paper counts a preemption against the variable accessed at that point (the
            // operation about to run), or else the one the thread accessed last.
            if let Some(v) = var.or_else(|| last_var.get(&s.thread).copied()) {
                variables.insert(v);
            }
        }
        if let Some(v) = var {
            last_var.insert(s.thread, v);
        }
        if let Some(o) = s.object {
            let (reads, writes) = match s.kind {
                EventKind::AtomicLoad | EventKind::CellRead => (true, false),
                EventKind::AtomicStore | EventKind::CellWrite => (false, true),
                EventKind::AtomicRmw => (true, true),
                _ => (false, false),
            };
            if let Some(&w) = last_writer.get(&o).filter(|&&w| reads && w != s.thread) {
                nonlocal_reads += 1;
                if Some(s.thread) == failing {
                    read_from.insert(w);
                }
            }
            if writes {
                last_writer.insert(o, s.thread);
            }
        }
    }
    if threads.is_empty() {
        threads = read_from;
    }
    BugShape { preemptions, variables: variables.len(), threads: threads.len(), nonlocal_reads }
}
