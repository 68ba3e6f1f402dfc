//! Runs a schedule given as blocks, for minimization: "thread T runs for n scheduling points,
//! then U for m, ...". Merging a block into the same thread's previous block removes the
//! preemption between them while keeping every thread's own order of operations, which is the
//! move trace simplification needs; a block whose thread cannot run when its turn comes is
//! skipped, and once the blocks run out the running thread keeps running as long as it can.

use super::{Decision, ExecutionStart, ScheduleRng, Strategy, StrategyError};
use crate::runtime::{EventKind, Step, ThreadId};

/// A schedule as runs of one thread: (thread, how many consecutive choices it gets).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Blocks(pub(crate) Vec<(ThreadId, u64)>);

impl Blocks {
    /// The blocks of a recorded execution's choices (its trace beside them); running them
    /// reproduces it exactly. When the first choice preempted the thread that made the first
    /// decision (the main thread at its first spawn, where a new thread starts at once), an
    /// empty block of that thread comes first: that preemption then ends a block, as every
    /// other does, and [`Blocks::preemptions`] offers it for removal.
    pub(crate) fn of(choices: &[u32], trace: &[Step]) -> Blocks {
        let mut blocks: Vec<(ThreadId, u64)> = Vec::new();
        if let (Some(first), Some(&c)) = (trace.first(), choices.first()) {
            if first.is_preemption() && first.thread.0 != c {
                blocks.push((first.thread, 0));
            }
        }
        for &c in choices {
            match blocks.last_mut() {
                Some((t, n)) if t.0 == c => *n += 1,
                _ => blocks.push((ThreadId(c), 1)),
            }
        }
        Blocks(blocks)
    }

    /// The schedules that each remove one preemption of the recorded one (`trace`): per
    /// preemption, its block merged with the thread's next one, then, unless the block is the
    /// empty first one (postponing nothing changes nothing), postponed into it. A thread
    /// preempted for good (no later block: the failure came before it ran again) keeps running
    /// instead for as long as it can, or runs its block after all the others.
    /// Built as they are taken: a search that stops early builds no more.
    pub(crate) fn moves(&self, trace: &[Step]) -> impl Iterator<Item = Blocks> + '_ {
        let preemptions = self.preemptions(trace).into_iter().flat_map(|(i, j)| {
            let postponed = (self.0[i].1 > 0).then(|| self.postponed(i, j));
            std::iter::once(self.merged(i, j)).chain(postponed)
        });
        let spurious = self.spurious_wakeups(trace);
        // The wake-up's detour left out, or only its own step (the thread went on without
        // waiting again, as a notification would have let it), or nothing.
        let unspurred = spurious.into_iter().flat_map(|(i, at, detour)| {
            let detour = (detour > 1).then(|| self.woken_later(i, at, detour));
            let drops = [1, 0].map(|d| self.woken_later(i, at, d));
            detour.into_iter().chain(drops)
        });
        preemptions.chain(unspurred)
    }

    /// The spurious wake-ups of the recorded schedule (`trace`): `(i, at, detour)` where the
    /// choice at position `at` of block `i` chose its thread while it waited, to wake
    /// spuriously (`Execution::block_or_wake_spuriously`: the step that choice ran is the
    /// thread's `SpuriousWakeup`), and `detour` of the block's choices from there ran the
    /// thread until it waited again (the wake-up, the re-check, the next wait and its
    /// `blocked` step; 0 if it did not wait again within the block).
    fn spurious_wakeups(&self, trace: &[Step]) -> Vec<(usize, u64, u64)> {
        let mut out = Vec::new();
        let mut start = 0u64;
        for (i, &(t, n)) in self.0.iter().enumerate() {
            for k in 0..n {
                // Choice `c` chose the thread that runs step `c + 1`.
                let c = (start + k) as usize;
                if !trace.get(c + 1).is_some_and(|s| s.kind == EventKind::SpuriousWakeup) {
                    continue;
                }
                let left = (n - k) as usize;
                let detour = trace[c + 1..]
                    .iter()
                    .take(left)
                    .position(|s| s.thread == t && s.kind == EventKind::Block)
                    .map_or(0, |p| p as u64 + 1);
                out.push((i, k, detour));
            }
            start += n;
        }
        out
    }

    /// The blocks with block `i` cut before its choice at position `at` (one that woke its
    /// thread spuriously), its next `drop` choices left out (the detour the wake-up made: the
    /// thread waits instead), and the rest of it run at the start of the thread's next
    /// block, or after every other block if it has none.
    fn woken_later(&self, i: usize, at: u64, drop: u64) -> Blocks {
        let mut blocks = self.0.clone();
        let (t, n) = blocks[i];
        blocks[i].1 = at;
        let rest = n - at - drop;
        if rest > 0 {
            match (i + 1..blocks.len()).find(|&j| blocks[j].0 == t) {
                Some(j) => blocks[j].1 = blocks[j].1.saturating_add(rest),
                None => blocks.push((t, rest)),
            }
        }
        Blocks(blocks)
    }

    /// Pairs `(i, j)` such that block `i` ends in a preemption of its thread and `j` is that
    /// thread's next block (`None`: it has none, the execution ended first): merging `j` into
    /// `i` (or letting `i` run on) removes that preemption.
    fn preemptions(&self, trace: &[Step]) -> Vec<(usize, Option<usize>)> {
        let mut out = Vec::new();
        let mut end = 0u64;
        for (i, &(t, n)) in self.0.iter().enumerate() {
            end += n;
            let preempted =
                trace.get(end as usize).is_some_and(|s| s.thread == t && s.is_preemption());
            if preempted {
                out.push((i, (i + 1..self.0.len()).find(|&j| self.0[j].0 == t)));
            }
        }
        out
    }

    /// The blocks with block `j` merged into block `i`: the preempted thread keeps running
    /// instead of being preempted at the end of `i`. Without a `j`, it runs on for as long as
    /// it can (until it blocks, waits or ends), and the blocks after `i` follow.
    fn merged(&self, i: usize, j: Option<usize>) -> Blocks {
        let mut blocks = self.0.clone();
        match j {
            Some(j) => {
                blocks[i].1 = blocks[i].1.saturating_add(blocks[j].1);
                blocks.remove(j);
            }
            None => blocks[i].1 = u64::MAX,
        }
        Blocks(blocks)
    }

    /// The blocks with block `i` moved into the start of block `j` (the same thread's next
    /// one): the preempted thread does not run at `i` at all, and runs those steps when its
    /// turn `j` comes. The other way to remove the preemption at the end of `i`: when keeping
    /// the thread running changes the outcome, running it later may not. Without a `j`, the
    /// block goes after all the others.
    fn postponed(&self, i: usize, j: Option<usize>) -> Blocks {
        let mut blocks = self.0.clone();
        match j {
            Some(j) => {
                blocks[j].1 = blocks[j].1.saturating_add(blocks[i].1);
                blocks.remove(i);
            }
            None => {
                let block = blocks.remove(i);
                blocks.push(block);
            }
        }
        Blocks(blocks)
    }
}

/// Follows [`Blocks`].
pub(crate) struct Guided {
    blocks: Blocks,
    cursor: usize,
    used: u64,
    describe: String,
}

impl Guided {
    pub(crate) fn new(blocks: Blocks, describe: String) -> Guided {
        Guided { blocks, cursor: 0, used: 0, describe }
    }
}

impl Strategy for Guided {
    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn begin_execution(&mut self, _: &ExecutionStart<'_>, _: &mut ScheduleRng) {
        self.cursor = 0;
        self.used = 0;
    }

    fn choose(
        &mut self,
        d: &Decision<'_>,
        _rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError> {
        while let Some(&(t, n)) = self.blocks.0.get(self.cursor) {
            if self.used < n && d.enabled.contains(&t) {
                self.used += 1;
                return Ok(t);
            }
            self.cursor += 1;
            self.used = 0;
        }
        Ok(if d.current_enabled { d.current } else { d.enabled[0] })
    }
}
