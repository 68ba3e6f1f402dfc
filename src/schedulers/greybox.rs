//! Coverage-guided schedule fuzzing (`strategy = "greybox"`,
//! [`StrategyKind::Greybox`](crate::StrategyKind::Greybox)): greybox fuzzing (AFL's loop)
//! applied to schedules, as RFF (Wolff et al., ASPLOS 2024) does with other feedback. A
//! schedule whose execution did something no earlier execution did is kept; later executions
//! replay a random prefix of a kept schedule and continue with the selectively uniform walk
//! (SURW, [`Surw`], the default's explorer), which also runs the first [`SURW_FIRST`]
//! executions alone.
//!
//! # What counts as new
//!
//! Each operation a thread completes has a feature: its call site (line, column, kind) and the
//! value it read or wrote (small values exactly, the others as one bucket: addresses and hashes
//! would make every execution new). An execution sets, per operation, one bit of the coverage
//! map for each of
//! - the feature with the same thread's previous one,
//! - the feature with the same thread's two previous ones,
//! - the feature with the operation another thread completed just before it and the same
//!   thread's previous one (a context switch and what it interleaved with).
//!
//! Thread ids are left out, so symmetric threads do not make a schedule new. The contexts
//! are the point: a value alone, or which site a read read from, says little of how the
//! threads interleaved, so the corpus would stop growing long before a chain of rare states.
//!
//! # Why it finds deep lock-free bugs
//!
//! SCTBench's `SafeStack` (an ABA on a lock-free stack) needs at least 8 preemptions
//! (`scripts/safestack-min-preemptions.py`) at narrow windows, each making a state the next
//! builds on (a stale head read, a lock slot overwritten by a push's retry, a CAS that succeeds
//! with a stale `next`, a count that drops to zero). A random walk must hit all of them in one
//! execution; here each is a short random step from a kept schedule that already made the
//! previous ones, and each such state shows as new values in a new context.
//!
//! # Executions
//!
//! The first [`SURW_FIRST`] executions are fresh walks: SURW's own schedules (the same as
//! `strategy = "surw"` with the same seed), observed, and kept when they reach something
//! new. So a bug SURW finds within them costs what it costs SURW; the fuzzing is for the
//! bugs it does not. After them, one execution in [`FRESH_ONE_IN`] is a fresh walk, so the
//! corpus keeps gaining schedules unlike its own. The others take a kept schedule (half the
//! time one of the [`RECENT`] latest, which extend the newest finds; otherwise any) and
//! follow it up to a uniformly drawn step while the thread it names can run. Past that step,
//! and in fresh executions, SURW chooses. It is told every decision, the followed ones
//! included ([`Surw::choose_given`]), so its counts of each thread's remaining accesses and
//! its intention are those of the schedule that runs. SURW, rather than the uniform walk it
//! wraps, roughly halved the executions to SafeStack's bug (the guide's strategy section has
//! the measurements): its selective executions hold back a thread at an access to the
//! selected variable while the others run, which is the kind of stall the chain is made of.
//!
//! # revfuzz: race reversal's walks
//!
//! `strategy = "revfuzz"` ([`REVFUZZ_INFO`], [`Greybox::over_reversal`]), the default's
//! explorer beside a target, is the same loop with race reversal ([`Reversal`]) in place of
//! the fresh walks: its first [`REVERSAL_FIRST`] executions are `strategy = "reversal"`'s
//! with the same seed (so a bug reversal finds within them costs what it costs reversal),
//! observed and kept when new; after them one execution in [`REVERSAL_FRESH_ONE_IN`] is a
//! fresh one of reversal's, which learns its pairs from every execution it runs, and every
//! other one extends one of the [`REVERSAL_RECENT`] latest kept schedules, past its prefix
//! with SURW (told the followed choices, as above; it learns its estimates in the first
//! execution that follows a prefix). Fewer fresh executions and extending only the newest
//! finds (a depth-first flavour: the chain grows from its latest link) roughly halved the
//! executions to SafeStack's bug against greybox's mix, and starting after 500 executions
//! rather than once reversal's targets ran out kept the programs whose bugs reversal finds
//! in a few hundred executions as cheap as with reversal alone (the guide's strategy section
//! has the measurements).
//!
//! No guarantee. Every execution depends on the run's earlier ones (the corpus), so a run's
//! executions are serial, and a seed reproduces a run, not an execution by its index alone; a
//! failing execution is replayed from its recorded choices, as every strategy's is.
//!
//! # Cost
//!
//! A scheduling point does the choice (race reversal's or SURW's, after a look at the kept
//! schedule when one is followed) and nothing else: the coverage is computed when the
//! execution ends, from its trace ([`Strategy::observe_trace`]), in one pass that hashes a
//! few integers and sets three bits per operation. The bits, and the order they are set in,
//! are those a look at every scheduling point would set (each operation is seen at its
//! thread's next scheduling point); one tight pass keeps the hashing and the map out of the
//! scheduling points' way. In revfuzz's fresh executions the same pass gives race reversal
//! each step for its pairs of conflicting accesses (`Reversal::observe_step`): one read of
//! the trace where two cost 1.6-2.6% more time on the bench's work-stealing deque and
//! producer/consumer. Nothing allocates once the per-thread table has grown, but a kept
//! schedule.
//!
//! Until the fuzzing starts nothing reads the coverage, so it waits: each execution's steps
//! are kept as the pass needs them (a feature hash, the thread, the choice; 16 bytes a step,
//! at most [`DEFERRED_MAX`] steps, past which the coverage catches up and is computed as
//! executions end), and the first execution that may fuzz covers them in the order they
//! ran, which sets the same bits and keeps the same schedules in the same order as covering
//! each as it ended (`coverage_deferred_until_the_fuzzing_starts_keeps_what_eager_coverage_keeps`,
//! and `tests/schedule_fingerprints.rs`, which runs past the start). A run that ends before
//! never covers: a run of the default length (1,000 executions), whose explorer runs 10
//! profiling executions and 495 of the search, is race reversal's throughout, since the
//! profiling ones do not count towards [`REVERSAL_FIRST`] (`ExecutionStart::profiling`).
//! Measured with callgrind (`corpus/examples/strategy_instructions.rs`, `default`, 1,000
//! executions): 5.8% fewer instructions per execution of the default on ws_deque, 3.4% on
//! producer/consumer. When profiling executions counted, a default run's explorer fuzzed its
//! last 5 executions, so the deferral only added its copies (CHANGELOG).
//!
//! A run whose number of executions is fixed says so before the first
//! ([`Strategy::runs_at_most`]: all of them, or the explorer's one in `explore_every`); when
//! that leaves no execution past the fresh ones, as in a default run, the steps are not even
//! kept, and the pass gives race reversal its pairs alone. The choices are the same (nothing
//! before the fuzzing reads the coverage). Measured the same way: 3.2% fewer instructions per
//! execution on ws_deque (61,543 to 59,544), 2.4% on producer/consumer (25,722 to 25,092),
//! 2.6% on the counter and 2.9% on the atomic counter. A confidence target, whose plan may
//! grow, tells nothing and keeps the deferral.

use rand::RngExt;

use super::registry::StrategyInfo;
use super::reversal::Reversal;
use super::surw::Surw;
use super::{asked, Decision, ExecutionStart, ScheduleRng, Strategy, StrategyError};
use crate::runtime::{Step, ThreadId, Value};

/// Bits of the coverage map (a power of two; 32 KiB).
const MAP_BITS: usize = 1 << 18;
/// One execution in this many is a fresh walk (no kept prefix), after the first [`SURW_FIRST`].
pub(crate) const FRESH_ONE_IN: u32 = 4;
/// The first executions, all fresh walks: the same schedules as `strategy = "surw"` with the
/// same seed, while they build the corpus. Measured on the corpus (the guide's strategy
/// section): a bug SURW finds within them costs what it costs SURW, where following kept
/// prefixes from the start paid up to twice SURW's cost on programs whose bug needs no chain
/// (the thread-scaling family); SafeStack's bug is found as often (18 to 19 of 20 trials within
/// 10^4 executions with 200, 500 or 1000 of them). 500 leaves half of a default run's 1000
/// executions to the fuzzing.
pub(crate) const SURW_FIRST: u64 = 500;
/// Half of the other executions extend one of this many latest kept schedules.
pub(crate) const RECENT: usize = 8;
/// `revfuzz`: its first search executions, all fresh (race reversal's alone; profiling ones
/// before them are fresh too and do not count: see the module docs' cost). Measured on the corpus
/// (the guide's strategy section): after 250, 500 or 1000 of them the default with a target
/// finds SafeStack as often (17 of 20 trials) and the other programs cost the same as with
/// race reversal alone but for two of 100 threads or a recycled slot pool, whose bugs
/// reversal needs a few hundred executions for: starting after 20 (once reversal's targets
/// ran out) made them two to six times costlier; 500 is the middle.
pub(crate) const REVERSAL_FIRST: u64 = 500;
/// `revfuzz`: one execution in this many is a fresh walk after the first [`REVERSAL_FIRST`].
/// Measured on SafeStack (the guide): 8 paid less than 4 (fewer executions spent away from
/// the chain being built); 2 paid half again as much.
pub(crate) const REVERSAL_FRESH_ONE_IN: u32 = 8;
/// `revfuzz`: every fuzzed execution extends one of this many latest kept schedules (a chain
/// of rare states is built from the newest finds; greybox's half of executions that take any
/// kept schedule paid nearly twice as much on SafeStack). 16 and 64 paid a little more.
pub(crate) const REVERSAL_RECENT: usize = 32;
/// Most schedules kept; past it new coverage is still recorded, the schedule is not kept.
const CORPUS_MAX: usize = 4096;
/// Most choices kept over the corpus (16 MiB of `u32`s).
const CHOICES_MAX: usize = 1 << 22;
/// Most deferred steps (16 bytes each: 16 MiB); past them the coverage catches up and is
/// computed as executions end.
const DEFERRED_MAX: usize = 1 << 20;
/// Values in `-VALUE_EXACT..VALUE_EXACT` are features exactly; the others are one bucket.
const VALUE_EXACT: i64 = 64;

/// Coverage-guided schedule fuzzing: keeps the schedules that reached new features, and runs
/// a random prefix of a kept one followed by a random walk.
#[derive(Clone, Debug)]
pub(crate) struct Greybox {
    /// Coverage map: one bit per feature hash.
    seen: Box<[u64; MAP_BITS / 64]>,
    /// Kept schedules: the thread chosen at each scheduling point.
    corpus: Vec<Box<[u32]>>,
    /// Choices over the corpus.
    kept_choices: usize,
    /// Before the fuzzing starts, the steps of the executions that ended, as the coverage
    /// needs them: they are covered, in order, when it starts ([`Greybox::catch_up`]), so a
    /// run that ends before (a default run's explorer) never computes its coverage.
    deferred: Vec<Deferred>,
    /// Where each execution's steps end in `deferred`.
    deferred_ends: Vec<usize>,
    /// The coverage is computed as each execution ends: the fuzzing has started, or the
    /// deferred steps reached [`DEFERRED_MAX`].
    eager: bool,
    /// The kept schedule this execution follows, and up to which step.
    prefix: Option<(usize, usize)>,
    /// Per thread, while a trace is read: the feature of the operation it announced at its
    /// latest step, and the features of its previous two operations (0: none).
    last: Vec<Prev>,
    /// The walk past the prefix (the selectively uniform walk, SURW); it sees every decision,
    /// the followed ones included, so its counts stay right.
    walk: Surw,
    /// Search executions begun in this run: the profiling ones, which a run that explores
    /// beside a priority strategy gives its explorer first, run as fresh ones and do not
    /// count ([`ExecutionStart::profiling`]).
    executions: u64,
    /// `revfuzz`: race reversal, which runs the fresh executions (from its own execution 0 on,
    /// so it learns from every fresh execution); `walk` then runs only past a kept prefix.
    reversal: Option<Box<Reversal>>,
    /// This execution is race reversal's (a fresh one of `revfuzz`).
    by_reversal: bool,
    /// Executions that followed a kept schedule.
    followed: u64,
    /// Whether the run may reach the fuzzing, which reads the coverage: false when its budget
    /// gives this strategy no more search executions than the fresh ones before it
    /// ([`Strategy::runs_at_most`]), and then no coverage is computed or kept.
    fuzzes: bool,
}

impl Default for Greybox {
    fn default() -> Self {
        Greybox {
            seen: Box::new([0; MAP_BITS / 64]),
            corpus: Vec::new(),
            kept_choices: 0,
            deferred: Vec::new(),
            deferred_ends: Vec::new(),
            eager: false,
            prefix: None,
            last: Vec::new(),
            walk: Surw::new(),
            executions: 0,
            reversal: None,
            by_reversal: false,
            followed: 0,
            fuzzes: true,
        }
    }
}

impl Greybox {
    /// `revfuzz`: fresh executions are race reversal's, and the fuzzing after them extends the
    /// newest kept schedules.
    pub(crate) fn over_reversal() -> Greybox {
        Greybox { reversal: Some(Box::new(Reversal::new())), ..Greybox::default() }
    }
}

/// Mixes `x` into `h` (a multiply and xor-shift: cheap, no table).
#[inline]
fn mix(h: u64, x: u64) -> u64 {
    let h = (h ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^ (h >> 29)
}

/// The value as a feature: small values exactly, the others one bucket, none one of its own.
#[inline]
fn value_bucket(value: Option<Value>) -> u64 {
    let v = match value {
        None => return 1 << 40,
        Some(Value::Signed(v)) => v,
        Some(Value::Unsigned(v)) => i64::try_from(v).unwrap_or(i64::MAX),
    };
    if (-VALUE_EXACT..VALUE_EXACT).contains(&v) {
        (v + VALUE_EXACT) as u64
    } else {
        1 << 41
    }
}

/// The feature of the operation a thread announced at its latest step, and its previous two
/// operations' features, as a trace is read (0: none; a feature is never 0).
#[derive(Clone, Copy, Debug)]
struct Prev {
    announced: u64,
    features: [u64; 2],
}

impl Prev {
    const NONE: Prev = Prev { announced: 0, features: [0; 2] };
}

/// Distinguishes the three kinds of coverage bits.
const SAME_THREAD: u64 = 1;
const TWO_BACK: u64 = 2;
const SWITCH: u64 = 3;

/// One step of an execution whose coverage waits for the fuzzing to start: what the coverage
/// needs of it.
#[derive(Clone, Copy, Debug)]
struct Deferred {
    /// The feature of the operation its thread announced ([`announced`]).
    announced: u64,
    thread: u32,
    /// The thread chosen there (the kept schedule's entry).
    chosen: u32,
}

/// The feature of the operation `step`'s thread announced: its call site and the value the
/// operation read or wrote. Line and column, not the `Location`'s address: addresses differ
/// between processes, and a seed must give the same run in each. `| 1`: never 0, which means
/// "none".
#[inline(always)]
fn announced(step: &Step) -> u64 {
    let loc = step.location;
    let site = mix(mix(loc.line() as u64, loc.column() as u64), step.kind as u64);
    mix(site, value_bucket(step.value)) | 1
}

impl Greybox {
    /// Sets the bits of one execution's operations, from its steps that asked for a choice
    /// ([`asked`]), each given as its thread and the feature it announced: at each, those of
    /// the operation its thread completed last (the one it announced at its previous
    /// scheduling point), if it has one. Whether a bit was new.
    #[inline(always)]
    fn cover_steps(&mut self, steps: impl Iterator<Item = (usize, u64)>) -> bool {
        // Locals, not fields, in the loop: the map's writes would make the compiler reload
        // them at every step.
        let Greybox { seen, last, .. } = self;
        let seen: &mut [u64; MAP_BITS / 64] = seen;
        last.clear();
        // The feature of the operation completed last, by any thread, and that thread.
        let (mut other, mut by) = (0, u32::MAX);
        let mut new = false;
        // One pass: each step's feature waits in its thread's entry until the thread's next
        // step completes it (a first pass of features into a table cost more instructions).
        for (t, announced) in steps {
            if last.len() <= t {
                last.resize(t + 1, Prev::NONE);
            }
            let thread = &mut last[t];
            let feature = std::mem::replace(&mut thread.announced, announced);
            if feature == 0 {
                continue;
            }
            let [prev, prev2] = thread.features;
            let with_prev = mix(feature, prev);
            new |= cover(seen, mix(with_prev, SAME_THREAD), true);
            new |= cover(seen, mix(mix(with_prev, prev2), TWO_BACK), true);
            // A context switch's bit, set without a branch (which switches make unpredictable).
            let switched = by != t as u32;
            new |= cover(seen, mix(mix(mix(feature, other), prev), SWITCH), switched);
            thread.features = [feature, prev];
            (other, by) = (feature, t as u32);
        }
        new
    }

    /// Reads the ended execution's steps that asked for a choice (`decided`), `also` seeing
    /// each first (race reversal's pairs, in revfuzz's fresh executions): one read of the
    /// trace for both. Once the coverage is eager, its bits are set and the schedule kept if
    /// one was new; before, the steps wait in `deferred`.
    #[inline(always)]
    fn observe_steps(&mut self, decided: &[Step], mut also: impl FnMut(&Step)) {
        if !self.eager && self.deferred.len() + decided.len() > DEFERRED_MAX {
            self.catch_up();
        }
        if self.eager {
            let steps = decided.iter().map(|s| {
                also(s);
                (s.thread.index(), announced(s))
            });
            if self.cover_steps(steps) {
                self.keep(decided.iter().map(|s| s.chosen.0));
            }
            return;
        }
        self.deferred.extend(decided.iter().map(|s| {
            also(s);
            Deferred { announced: announced(s), thread: s.thread.0, chosen: s.chosen.0 }
        }));
        self.deferred_ends.push(self.deferred.len());
    }

    /// Covers the deferred executions in the order they ran, keeping those that set a new
    /// bit, as if each had been covered as it ended (the same bits, the same kept schedules
    /// in the same order); the coverage is eager from then on.
    fn catch_up(&mut self) {
        let deferred = std::mem::take(&mut self.deferred);
        let mut from = 0;
        for end in std::mem::take(&mut self.deferred_ends) {
            let steps = &deferred[from..end];
            if self.cover_steps(steps.iter().map(|d| (d.thread as usize, d.announced))) {
                self.keep(steps.iter().map(|d| d.chosen));
            }
            from = end;
        }
        self.eager = true;
    }

    /// Keeps a schedule that reached something new, unless the corpus is full.
    fn keep(&mut self, choices: impl ExactSizeIterator<Item = u32>) {
        if self.corpus.len() < CORPUS_MAX && self.kept_choices + choices.len() <= CHOICES_MAX {
            self.kept_choices += choices.len();
            self.corpus.push(choices.collect());
        }
    }
}

/// Sets the feature's bit in `seen` if `set`; whether it was set and was not before.
#[inline]
fn cover(seen: &mut [u64; MAP_BITS / 64], feature: u64, set: bool) -> bool {
    let bit = (feature as usize) & (MAP_BITS - 1);
    let (word, mask) = (bit / 64, u64::from(set) << (bit % 64));
    let old = seen[word];
    seen[word] = old | mask;
    !old & mask != 0
}

impl Strategy for Greybox {
    fn describe(&self) -> String {
        match self.reversal {
            None => INFO.name.to_string(),
            Some(_) => REVFUZZ_INFO.name.to_string(),
        }
    }

    fn begin_execution(&mut self, start: &ExecutionStart<'_>, rng: &mut ScheduleRng) {
        // greybox: SURW's draws come first in every execution (so its first executions are
        // `strategy = "surw"`'s); revfuzz: whichever runs it begins it, below.
        let over_reversal = self.reversal.is_some();
        if !over_reversal {
            self.walk.begin_execution(start, rng);
        }
        self.prefix = None;
        self.executions += u64::from(!start.profiling);
        // The first `SURW_FIRST` executions are SURW's alone (observed, and kept when new);
        // then one in `FRESH_ONE_IN` is.
        let (first, fresh_one_in) = match over_reversal {
            false => (SURW_FIRST, FRESH_ONE_IN),
            true => (REVERSAL_FIRST, REVERSAL_FRESH_ONE_IN),
        };
        debug_assert!(
            self.fuzzes || self.executions <= first,
            "the run gave the explorer more executions than it was told (`runs_at_most`)"
        );
        // The fuzzing starts: it needs the corpus of every execution so far.
        if self.executions > first && !self.eager {
            self.catch_up();
        }
        let n = self.corpus.len();
        if n > 0 && self.executions > first && rng.random_range(0..fresh_one_in) != 0 {
            let entry = if over_reversal {
                n - 1 - rng.random_range(0..n.min(REVERSAL_RECENT))
            } else if rng.random_range(0..2) == 0 {
                n - 1 - rng.random_range(0..n.min(RECENT))
            } else {
                rng.random_range(0..n)
            };
            let cut = rng.random_range(0..=self.corpus[entry].len());
            self.prefix = Some((entry, cut));
            self.followed += 1;
        }
        self.by_reversal = false;
        if let Some(reversal) = &mut self.reversal {
            if self.prefix.is_none() {
                reversal.begin_execution(start, rng);
                self.by_reversal = true;
            } else {
                self.walk.begin_execution(start, rng);
            }
        }
    }

    fn choose(
        &mut self,
        decision: &Decision<'_>,
        rng: &mut ScheduleRng,
    ) -> Result<ThreadId, StrategyError> {
        if self.by_reversal {
            return self
                .reversal
                .as_mut()
                .expect("a fresh revfuzz execution")
                .choose(decision, rng);
        }
        let enabled = decision.enabled;
        // The engine asks at every scheduling point, so its step index is this execution's
        // decisions so far: the kept schedule's position.
        let step = decision.step as usize;
        let mut chosen = None;
        if let Some((entry, cut)) = self.prefix {
            let want = (step < cut).then(|| ThreadId(self.corpus[entry][step]));
            match want {
                Some(t) if enabled.binary_search(&t).is_ok() => chosen = Some(t),
                // Past the cut, or diverged: the kept schedule no longer applies.
                _ => self.prefix = None,
            }
        }
        self.walk.choose_given(decision, rng, chosen)
    }

    /// A fresh revfuzz execution's answer is race reversal's; one that follows a kept
    /// schedule or walks after it is asked at every point (the kept schedule's position).
    fn skips_forced(&self) -> bool {
        self.by_reversal && self.reversal.as_ref().is_some_and(|r| r.skips_forced())
    }

    fn observe_trace(&mut self, trace: &[Step]) {
        let decided = asked(trace);
        if !self.fuzzes {
            // Nothing will read the coverage: race reversal's pairs alone.
            if let Some(reversal) = self.reversal.as_mut().filter(|_| self.by_reversal) {
                reversal.observe_begin();
                decided.iter().for_each(|s| reversal.observe_step(s));
            }
            return;
        }
        // A fresh revfuzz execution: race reversal learns its pairs in the same pass.
        match self.reversal.take() {
            Some(mut reversal) if self.by_reversal => {
                reversal.observe_begin();
                self.observe_steps(decided, |s| reversal.observe_step(s));
                self.reversal = Some(reversal);
            }
            reversal => {
                self.reversal = reversal;
                self.observe_steps(decided, |_| {});
            }
        }
    }

    /// A budget that ends the run before the fuzzing starts (a default run's explorer: 495
    /// search executions) makes the coverage dead work: it is not computed. The schedules are
    /// the same, since nothing before the fuzzing reads it.
    fn runs_at_most(&mut self, executions: u64) {
        let first = if self.reversal.is_some() { REVERSAL_FIRST } else { SURW_FIRST };
        self.fuzzes = executions > first;
    }

    fn end_execution(&mut self, digest: u64, steps: u64) -> Result<(), StrategyError> {
        match &mut self.reversal {
            Some(reversal) if self.by_reversal => reversal.end_execution(digest, steps)?,
            _ => self.walk.end_execution(digest, steps)?,
        }
        Ok(())
    }

    fn summary(&self) -> Option<String> {
        let reversal = self.reversal.as_ref()?.summary()?;
        if self.executions <= REVERSAL_FIRST {
            return Some(format!(
                "{reversal}; schedule fuzzing: not started (it starts after {REVERSAL_FIRST} \
                 search executions)"
            ));
        }
        Some(format!(
            "{reversal}; schedule fuzzing: {} executions followed a kept schedule, {} kept",
            self.followed,
            self.corpus.len()
        ))
    }
}

/// `strategy = "greybox"`: no parameters, no bound; serial (each execution learns from the
/// earlier ones).
pub(crate) const INFO: StrategyInfo = StrategyInfo {
    name: "greybox",
    title: "greybox schedule fuzzing",
    params: &[],
    bound: None,
    priority: false,
    learns_from_execution_0: false,
    parallel: false,
    build: |_| Box::new(Greybox::default()),
};

/// `strategy = "revfuzz"`: no parameters, no bound; serial. Its fresh executions are race
/// reversal's, whose selective walk learns in execution 0.
pub(crate) const REVFUZZ_INFO: StrategyInfo = StrategyInfo {
    name: "revfuzz",
    title: "race reversal with schedule fuzzing",
    params: &[],
    bound: None,
    priority: false,
    learns_from_execution_0: true,
    parallel: false,
    build: |_| Box::new(Greybox::over_reversal()),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{Event, EventKind, Pending};
    use rand::SeedableRng;

    fn rng() -> ScheduleRng {
        ScheduleRng::seed_from_u64(7)
    }

    fn start() -> ExecutionStart<'static> {
        ExecutionStart::FIRST
    }

    /// `g`'s choice at scheduling point `step` among `enabled`.
    fn pick(g: &mut Greybox, step: u64, enabled: &[ThreadId], rng: &mut ScheduleRng) -> ThreadId {
        let event = Event {
            kind: EventKind::Yield,
            object: None,
            var: None,
            location: std::panic::Location::caller(),
        };
        let decision = Decision {
            enabled,
            engine: crate::runtime::Enabled::none(),
            current: enabled[0],
            current_enabled: true,
            event: &event,
            step,
            var_access: 0,
            pending: Pending::NONE,
        };
        g.choose(&decision, rng).unwrap()
    }

    #[test]
    fn revfuzz_runs_reversal_fresh_then_extends_only_the_newest_schedules() {
        let mut g = Greybox::over_reversal();
        let mut r = rng();
        let both = [ThreadId(0), ThreadId(1)];
        for i in 0..40u32 {
            g.corpus.push(vec![i % 2; 3].into());
        }
        for _ in 0..REVERSAL_FIRST {
            g.begin_execution(&start(), &mut r);
            assert!(g.by_reversal && g.prefix.is_none());
            pick(&mut g, 0, &both, &mut r);
            g.end_execution(0, 1).unwrap();
        }
        let (mut fresh, mut followed) = (0, 0);
        for _ in 0..800 {
            g.begin_execution(&start(), &mut r);
            match g.prefix {
                None => {
                    assert!(g.by_reversal);
                    fresh += 1;
                }
                Some((entry, _)) => {
                    assert!(!g.by_reversal);
                    assert!(entry >= 40 - REVERSAL_RECENT, "{entry}");
                    followed += 1;
                }
            }
            g.end_execution(0, 0).unwrap();
        }
        // One in REVERSAL_FRESH_ONE_IN is fresh: 100 expected of 800 (the seed is fixed).
        assert!((60..=140).contains(&fresh), "{fresh}");
        assert_eq!(g.followed, followed);
        let summary = g.summary().unwrap();
        assert!(summary.starts_with("race reversal: "), "{summary}");
        assert!(
            summary.ends_with(&format!("{followed} executions followed a kept schedule, 40 kept"))
        );
        assert_eq!(g.describe(), "revfuzz");
        assert_eq!(Greybox::default().summary(), None);
    }

    #[test]
    fn values_are_exact_when_small_and_one_bucket_otherwise() {
        assert_ne!(value_bucket(Some(Value::Signed(-1))), value_bucket(Some(Value::Signed(0))));
        assert_eq!(value_bucket(Some(Value::Unsigned(3))), value_bucket(Some(Value::Signed(3))));
        let big = value_bucket(Some(Value::Unsigned(u64::MAX)));
        assert_eq!(big, value_bucket(Some(Value::Unsigned(1 << 20))));
        assert_eq!(big, value_bucket(Some(Value::Signed(-1000))));
        assert_ne!(big, value_bucket(None));
        assert_ne!(big, value_bucket(Some(Value::Signed(63))));
    }

    #[test]
    fn a_bit_is_new_once() {
        let mut g = Greybox::default();
        assert!(cover(&mut g.seen, 12345, true));
        assert!(!cover(&mut g.seen, 12345, true));
        // A bit not to set is neither set nor new.
        assert!(!cover(&mut g.seen, 12346, false));
        assert!(cover(&mut g.seen, 12346, true));
        // Bits wrap at the map's size.
        assert!(!cover(&mut g.seen, 12345 + MAP_BITS as u64, true));
    }

    /// A step of a trace: `thread` at an atomic load (one call site) that read `value`,
    /// choosing `chosen`.
    fn step(thread: u32, value: i64, chosen: u32) -> Step {
        Step {
            thread: ThreadId(thread),
            kind: EventKind::AtomicLoad,
            object: None,
            location: site(),
            chosen: ThreadId(chosen),
            value: Some(Value::Signed(value)),
            waits: false,
            var_access: 0,
        }
    }

    fn site() -> &'static std::panic::Location<'static> {
        std::panic::Location::caller()
    }

    /// Runs an execution of `g` whose trace is `trace` (its choices not asked of `g`).
    fn ended(g: &mut Greybox, trace: &[Step], r: &mut ScheduleRng) {
        g.begin_execution(&start(), r);
        g.observe_trace(trace);
        g.end_execution(0, trace.len() as u64).unwrap();
    }

    /// Whether `g` kept the ended execution's schedule (its corpus grew by one).
    fn kept(g: &mut Greybox, trace: &[Step], r: &mut ScheduleRng) -> bool {
        let before = g.corpus.len();
        ended(g, trace, r);
        g.corpus.len() > before
    }

    #[test]
    fn only_executions_with_new_coverage_are_kept() {
        // Covered as each execution ends (as once the fuzzing has started).
        let mut g = Greybox { eager: true, ..Greybox::default() };
        let mut r = rng();
        // Thread 0 reads 1 then 2 while thread 1 reads 1: each operation is seen at its
        // thread's next step, so the last step of each thread adds nothing.
        let trace = [step(0, 1, 1), step(1, 1, 0), step(0, 2, 0), step(0, 5, 1), step(1, 7, 1)];
        assert!(kept(&mut g, &trace, &mut r));
        assert_eq!(&*g.corpus[0], [1, 0, 0, 1, 1].as_slice());
        // The same operations again: nothing new, not kept.
        assert!(!kept(&mut g, &trace, &mut r));
        // Only the values of operations that are followed by a step count: the last ones'
        // differ, nothing new.
        let mut last_differ = trace;
        last_differ[3].value = Some(Value::Signed(6));
        last_differ[4].value = Some(Value::Signed(8));
        assert!(!kept(&mut g, &last_differ, &mut r));
        // Symmetric threads (ids swapped) are the same behaviour.
        let swapped = trace.map(|s| Step { thread: ThreadId(1 - s.thread.0), ..s });
        assert!(!kept(&mut g, &swapped, &mut r));
        // A value an operation read that no execution read there: new, kept.
        let mut other = trace;
        other[2].value = Some(Value::Signed(3));
        assert!(kept(&mut g, &other, &mut r));
        assert_eq!(g.corpus.len(), 2);
        // A last step at which the execution ended with no thread to run asked no choice:
        // it observes nothing and is not in the kept schedule.
        let mut stuck = other.to_vec();
        stuck[2].value = Some(Value::Signed(4));
        stuck.push(Step { waits: true, chosen: ThreadId(0), ..step(0, 9, 0) });
        assert!(kept(&mut g, &stuck, &mut r));
        assert_eq!(&*g.corpus[2], [1, 0, 0, 1, 1].as_slice());
        stuck.last_mut().unwrap().thread = ThreadId(1);
        stuck.last_mut().unwrap().chosen = ThreadId(1);
        assert!(!kept(&mut g, &stuck, &mut r), "thread 1's read of 7, now followed by a step");
    }

    /// Random traces of up to 3 threads over 2 call sites and values 0-7 (so that later
    /// ones repeat earlier coverage), some ending with no thread to run.
    fn random_traces(n: usize, r: &mut ScheduleRng) -> Vec<Vec<Step>> {
        let sites = [site(), site()];
        (0..n)
            .map(|_| {
                let len = r.random_range(1..12);
                let mut trace: Vec<Step> = (0..len)
                    .map(|_| Step {
                        location: sites[r.random_range(0..2)],
                        ..step(r.random_range(0..3), r.random_range(0..8), r.random_range(0..3))
                    })
                    .collect();
                if r.random_range(0..4) == 0 {
                    let last = trace.last_mut().unwrap();
                    (last.waits, last.chosen) = (true, last.thread);
                }
                trace
            })
            .collect()
    }

    #[test]
    fn coverage_deferred_until_the_fuzzing_starts_keeps_what_eager_coverage_keeps() {
        // Fixed seed. The same traces covered as each ends, and deferred: until the fuzzing
        // starts nothing is covered or kept; once it starts, the map and the corpus (which
        // schedules, in which order) are those of eager coverage.
        let traces = random_traces(300, &mut rng());
        let mut eager = Greybox { eager: true, ..Greybox::default() };
        let mut deferred = Greybox::default();
        let (mut r1, mut r2) = (rng(), rng());
        for trace in &traces {
            ended(&mut eager, trace, &mut r1);
            ended(&mut deferred, trace, &mut r2);
        }
        assert!(eager.corpus.len() > 10, "{}", eager.corpus.len());
        assert!(deferred.corpus.is_empty() && deferred.seen.iter().all(|&w| w == 0));
        assert_eq!(deferred.deferred_ends.len(), traces.len());
        // The executions up to SURW_FIRST, then the first that may fuzz catches up.
        for _ in traces.len() as u64..=SURW_FIRST {
            deferred.begin_execution(&start(), &mut r2);
            deferred.end_execution(0, 0).unwrap();
        }
        assert!(deferred.eager && deferred.deferred.is_empty());
        assert_eq!(deferred.corpus, eager.corpus);
        assert_eq!(deferred.kept_choices, eager.kept_choices);
        assert!(deferred.seen.iter().eq(eager.seen.iter()));
        // From then on the coverage is eager: a new schedule is kept as it ends.
        let mut other = traces[0].clone();
        other[0].value = Some(Value::Signed(40));
        other.push(step(0, 41, 0));
        assert!(kept(&mut deferred, &other, &mut r2));
    }

    #[test]
    fn a_run_that_ends_before_the_fuzzing_keeps_no_coverage_and_the_same_choices() {
        // Fixed seed. Told that the run gives it no more executions than the fresh ones
        // before the fuzzing, revfuzz neither covers nor defers, while race reversal still
        // learns its pairs: its choices are those of a revfuzz that was not told.
        // Loads and stores of two objects by three threads: conflicting pairs to learn.
        let mut traces = random_traces(40, &mut rng());
        let mut r = rng();
        for step in traces.iter_mut().flatten() {
            step.object = Some(crate::runtime::ObjectId(r.random_range(0..2)));
            if r.random_range(0..2) == 0 {
                step.kind = EventKind::AtomicStore;
            }
        }
        let mut told = Greybox::over_reversal();
        told.runs_at_most(REVERSAL_FIRST);
        let mut untold = Greybox::over_reversal();
        let (mut r1, mut r2) = (rng(), rng());
        for trace in &traces {
            ended(&mut told, trace, &mut r1);
            ended(&mut untold, trace, &mut r2);
        }
        assert!(told.deferred.is_empty() && told.deferred_ends.is_empty());
        assert!(told.corpus.is_empty() && told.seen.iter().all(|&w| w == 0));
        assert_eq!(untold.deferred_ends.len(), traces.len(), "the untold one defers");
        let (a, b) = (told.reversal.as_ref().unwrap(), untold.reversal.as_ref().unwrap());
        // Its whole state: the seen pairs, the targets, its walk's estimates.
        assert!(format!("{a:?}") == format!("{b:?}"), "race reversal learnt the same");
        // The next execution chooses alike.
        told.begin_execution(&start(), &mut r1);
        untold.begin_execution(&start(), &mut r2);
        let enabled = [ThreadId(0), ThreadId(1), ThreadId(2)];
        for step in 0..50 {
            let a = pick(&mut told, step, &enabled, &mut r1);
            assert_eq!(a, pick(&mut untold, step, &enabled, &mut r2), "step {step}");
        }
        // One more execution than the fresh ones: the coverage is kept (deferred).
        let mut longer = Greybox::over_reversal();
        longer.runs_at_most(REVERSAL_FIRST + 1);
        ended(&mut longer, &traces[0], &mut rng());
        assert_eq!(longer.deferred_ends.len(), 1);
        // greybox's own fresh executions are SURW_FIRST.
        let mut greybox = Greybox::default();
        greybox.runs_at_most(SURW_FIRST);
        ended(&mut greybox, &traces[0], &mut rng());
        assert!(greybox.deferred.is_empty());
    }

    #[test]
    fn deferred_steps_past_their_limit_are_covered_at_once() {
        let mut g = Greybox::default();
        let mut r = rng();
        let trace = [step(0, 1, 1), step(1, 1, 0), step(0, 2, 0)];
        // A long execution of thread 0 reading 9 again and again, deferred.
        let long = step(0, 9, 0);
        g.deferred.resize(
            DEFERRED_MAX - 2,
            Deferred { announced: announced(&long), thread: 0, chosen: 0 },
        );
        g.deferred_ends.push(g.deferred.len());
        // Three more steps would pass the limit: everything is covered, this one too.
        ended(&mut g, &trace, &mut r);
        assert!(g.eager && g.deferred.is_empty() && g.deferred_ends.is_empty());
        assert_eq!(g.corpus.len(), 2, "the long execution's schedule, then this one's");
        assert_eq!(&*g.corpus[1], [1, 0, 0].as_slice());
    }

    #[test]
    fn profiling_executions_do_not_count_towards_the_first_executions() {
        let mut g = Greybox::over_reversal();
        g.corpus.push(vec![0; 3].into());
        let mut r = rng();
        let profiling = ExecutionStart { profiling: true, ..start() };
        for _ in 0..10 {
            g.begin_execution(&profiling, &mut r);
            assert!(g.by_reversal && g.prefix.is_none());
            g.end_execution(0, 0).unwrap();
        }
        for _ in 0..REVERSAL_FIRST {
            g.begin_execution(&start(), &mut r);
            assert!(g.by_reversal && g.prefix.is_none());
            g.end_execution(0, 0).unwrap();
        }
        assert!(!g.eager, "the fuzzing has not started");
        let followed = (0..50)
            .filter(|_| {
                g.begin_execution(&start(), &mut r);
                g.end_execution(0, 0).unwrap();
                g.prefix.is_some()
            })
            .count();
        assert!(g.eager);
        // 7 in 8 follow the kept schedule: 44 expected of 50 (the seed is fixed).
        assert!(followed > 30, "{followed}");
    }

    #[test]
    fn executions_follow_a_kept_prefix_while_its_threads_can_run() {
        let mut g = Greybox::default();
        g.corpus.push(vec![1, 1, 0, 1].into());
        let both = [ThreadId(0), ThreadId(1)];
        let mut r = rng();
        // The first executions are SURW's alone, whatever the corpus holds.
        for _ in 0..SURW_FIRST {
            g.begin_execution(&start(), &mut r);
            assert_eq!(g.prefix, None);
        }
        let mut followed = 0;
        for _ in 0..200 {
            g.begin_execution(&start(), &mut r);
            let Some((entry, cut)) = g.prefix else { continue };
            assert_eq!(entry, 0);
            assert!(cut <= 4);
            followed += 1;
            let got: Vec<u32> = (0..cut).map(|i| pick(&mut g, i as u64, &both, &mut r).0).collect();
            assert_eq!(got, [1, 1, 0, 1][..cut]);
        }
        // About 3 in 4 executions follow a kept schedule (1 in FRESH_ONE_IN is fresh); the
        // seed is fixed.
        assert!((100..=190).contains(&followed), "{followed}");
        // A prefix thread that cannot run ends the prefix: the choice is among the enabled.
        g.prefix = Some((0, 4));
        assert_eq!(pick(&mut g, 0, &[ThreadId(0)], &mut r), ThreadId(0));
        assert_eq!(g.prefix, None);
    }
}
