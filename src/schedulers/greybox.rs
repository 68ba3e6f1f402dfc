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
/// `revfuzz`: its first executions, all fresh (race reversal's alone). Measured on the corpus
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
    /// The ended execution's choices, when it is kept (read from its trace).
    choices: Vec<u32>,
    /// The kept schedule this execution follows, and up to which step.
    prefix: Option<(usize, usize)>,
    /// The ended execution set a new bit.
    found_new: bool,
    /// Per thread, while a trace is read: the feature of the operation it announced at its
    /// latest step, and the features of its previous two operations (0: none).
    last: Vec<Prev>,
    /// The walk past the prefix (the selectively uniform walk, SURW); it sees every decision,
    /// the followed ones included, so its counts stay right.
    walk: Surw,
    /// Executions begun in this run.
    executions: u64,
    /// `revfuzz`: race reversal, which runs the fresh executions (from its own execution 0 on,
    /// so it learns from every fresh execution); `walk` then runs only past a kept prefix.
    reversal: Option<Box<Reversal>>,
    /// This execution is race reversal's (a fresh one of `revfuzz`).
    by_reversal: bool,
    /// Executions that followed a kept schedule.
    followed: u64,
}

impl Default for Greybox {
    fn default() -> Self {
        Greybox {
            seen: Box::new([0; MAP_BITS / 64]),
            corpus: Vec::new(),
            kept_choices: 0,
            choices: Vec::new(),
            prefix: None,
            found_new: false,
            last: Vec::new(),
            walk: Surw::new(),
            executions: 0,
            reversal: None,
            by_reversal: false,
            followed: 0,
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

impl Greybox {
    /// Sets the bits of the ended execution's operations, from the steps of its trace that
    /// asked for a choice ([`asked`]): at each, those of the operation its thread completed
    /// last (the one it announced at its previous scheduling point), if it has one.
    /// `also` sees each step first (race reversal's pairs, in revfuzz's fresh executions): one
    /// read of the trace for both.
    #[inline(always)]
    fn observe_steps(&mut self, decided: &[Step], mut also: impl FnMut(&Step)) {
        // Locals, not fields, in the loop: the map's writes would make the compiler reload
        // them at every step.
        let Greybox { seen, last, found_new, .. } = self;
        let seen: &mut [u64; MAP_BITS / 64] = seen;
        last.clear();
        // The feature of the operation completed last, by any thread, and that thread.
        let (mut other, mut by) = (0, u32::MAX);
        let mut new = false;
        // One pass: each step's feature waits in its thread's entry until the thread's next
        // step completes it (a first pass of features into a table cost more instructions).
        for s in decided {
            also(s);
            let loc = s.location;
            // Line and column, not the `Location`'s address: addresses differ between
            // processes, and a seed must give the same run in each. `| 1`: never 0, which
            // means "none".
            let site = mix(mix(loc.line() as u64, loc.column() as u64), s.kind as u64);
            let announced = mix(site, value_bucket(s.value)) | 1;
            let t = s.thread.index();
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
        *found_new |= new;
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
        self.choices.clear();
        self.found_new = false;
        self.prefix = None;
        let n = self.corpus.len();
        self.executions += 1;
        // The first `SURW_FIRST` executions are SURW's alone (observed, and kept when new);
        // then one in `FRESH_ONE_IN` is.
        let (first, fresh_one_in) = match over_reversal {
            false => (SURW_FIRST, FRESH_ONE_IN),
            true => (REVERSAL_FIRST, REVERSAL_FRESH_ONE_IN),
        };
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

    fn observe_trace(&mut self, trace: &[Step]) {
        let decided = asked(trace);
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
        if self.found_new {
            self.choices.clear();
            self.choices.extend(decided.iter().map(|s| s.chosen.0));
        }
    }

    fn end_execution(&mut self, digest: u64, steps: u64) -> Result<(), StrategyError> {
        match &mut self.reversal {
            Some(reversal) if self.by_reversal => reversal.end_execution(digest, steps)?,
            _ => self.walk.end_execution(digest, steps)?,
        }
        if self.found_new
            && self.corpus.len() < CORPUS_MAX
            && self.kept_choices + self.choices.len() <= CHOICES_MAX
        {
            self.kept_choices += self.choices.len();
            self.corpus.push(self.choices.as_slice().into());
        }
        Ok(())
    }

    fn summary(&self) -> Option<String> {
        let reversal = self.reversal.as_ref()?.summary()?;
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
        ExecutionStart { max_threads: 1, max_steps: 0, vars: &[], profiles: &[], ordinal: 0 }
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

    #[test]
    fn only_executions_with_new_coverage_are_kept() {
        let mut g = Greybox::default();
        let mut r = rng();
        // Thread 0 reads 1 then 2 while thread 1 reads 1: each operation is seen at its
        // thread's next step, so the last step of each thread adds nothing.
        let trace = [step(0, 1, 1), step(1, 1, 0), step(0, 2, 0), step(0, 5, 1), step(1, 7, 1)];
        ended(&mut g, &trace, &mut r);
        assert!(g.found_new);
        assert_eq!(g.corpus.len(), 1);
        assert_eq!(&*g.corpus[0], [1, 0, 0, 1, 1].as_slice());
        // The same operations again: nothing new, not kept.
        ended(&mut g, &trace, &mut r);
        assert!(!g.found_new);
        // Only the values of operations that are followed by a step count: the last ones'
        // differ, nothing new.
        let mut last_differ = trace;
        last_differ[3].value = Some(Value::Signed(6));
        last_differ[4].value = Some(Value::Signed(8));
        ended(&mut g, &last_differ, &mut r);
        assert!(!g.found_new);
        // Symmetric threads (ids swapped) are the same behaviour.
        let swapped = trace.map(|s| Step { thread: ThreadId(1 - s.thread.0), ..s });
        ended(&mut g, &swapped, &mut r);
        assert!(!g.found_new);
        // A value an operation read that no execution read there: new, kept.
        let mut other = trace;
        other[2].value = Some(Value::Signed(3));
        ended(&mut g, &other, &mut r);
        assert!(g.found_new);
        assert_eq!(g.corpus.len(), 2);
        // A last step at which the execution ended with no thread to run asked no choice:
        // it observes nothing and is not in the kept schedule.
        let mut stuck = other.to_vec();
        stuck[2].value = Some(Value::Signed(4));
        stuck.push(Step { waits: true, chosen: ThreadId(0), ..step(0, 9, 0) });
        ended(&mut g, &stuck, &mut r);
        assert_eq!(&*g.corpus[2], [1, 0, 0, 1, 1].as_slice());
        stuck.last_mut().unwrap().thread = ThreadId(1);
        stuck.last_mut().unwrap().chosen = ThreadId(1);
        ended(&mut g, &stuck, &mut r);
        assert!(!g.found_new, "thread 1's read of 7, now followed by a step, is not seen");
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
