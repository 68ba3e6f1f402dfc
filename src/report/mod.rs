//! Reports: what a run did, and a failure written for the person who has to fix it.
//!
//! This module owns the [`Report`] and [`Failure`] types and their text form: the original
//! panic message first, then the schedule of the failing execution, then the replay line. It
//! only formats what the runner measured; it never runs executions.

use std::fmt;
use std::time::Duration;

mod levels;
mod schedule;
mod shape;

pub use levels::{LevelStats, OrderSet, SearchShard, SystematicReport};
pub use schedule::ScheduleStep;
pub(crate) use schedule::{full_text, is_long, schedule_steps};
pub(crate) use shape::measure as measure_shape;
pub use shape::BugShape;

// The parts of a report that private modules define: a report shows them, so they are public
// here.
pub use crate::runtime::ThreadInfo;
pub use crate::vars::{VarInfo, VarKind, VarProfile};

use crate::error::Error;
use crate::guarantee::{BoundFactors, GuaranteeStatement};
use crate::runtime::{FailureCause, ThreadId};

/// What kind of bug ended a run. Reasons a run could not test (an invalid configuration or
/// token, a replay that diverged, an internal error) are not failures but an [`Error`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FailureKind {
    /// A thread panicked (an assertion failed).
    Panic,
    /// No thread could run while some had not finished, or a thread locked a lock it held.
    Deadlock,
    /// Every thread that could run kept yielding (`yield_now`, `sleep`, `hint::spin_loop`)
    /// while no thread changed shared state, until the execution ran out of steps: each spins
    /// waiting for progress that never comes.
    Livelock,
    /// The execution ran more than `max_steps` scheduling points.
    MaxSteps,
    /// The execution spawned more than `max_threads` threads.
    TooManyThreads,
    /// Two accesses of a checked cell (`pctvb::cell::UnsafeCell`), at least one a write, by
    /// different threads with no happens-before between them.
    DataRace,
}

/// The first bug a run found: an execution that failed (or a replay that reproduced one).
#[derive(Clone, Debug)]
pub struct Failure {
    /// What kind of failure.
    pub kind: FailureKind,
    /// Index of the failing execution within the run (for replays, the recorded index).
    pub execution: u64,
    /// The thread that failed, when one did.
    pub thread: Option<ThreadInfo>,
    /// The original message: the panic message, or a description of the deadlock or limit.
    pub message: String,
    /// Where the panic was raised, when known.
    pub location: Option<String>,
    /// The replay token for this execution, when there is one.
    pub token: Option<String>,
    /// The command line that replays it: `PCTVB_REPLAY=<token> ...`, or
    /// `PCTVB_REPLAY=@<file> ...` when the token is too long for a command line and pctvb
    /// wrote it to that file.
    pub replay_command: Option<String>,
    /// The schedule of the failing execution.
    pub schedule: Vec<ScheduleStep>,
    /// Number of preemptions in the schedule.
    pub preemptions: usize,
    /// Preemptions of the schedule first found, when minimization shortened it.
    pub minimized_from: Option<usize>,
    /// Replays minimization ran.
    pub minimization_runs: u64,
    /// The measured (c, v, t) and interference of the (minimized) schedule.
    pub shape: Option<BugShape>,
    /// Where the full schedule was written when it is too long to print.
    pub trace_file: Option<String>,
    /// Why the token does not replay this failure, when a replay right after it was found
    /// did not follow it (the body depends on something pctvb does not control): the replay
    /// line is then not offered.
    pub replay_diverges: Option<String>,
}

/// Statistics of a run.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Most threads in one execution.
    pub max_threads: usize,
    /// Most scheduling points in one execution.
    pub max_steps: u64,
    /// Number of different schedules among the executions (a lower bound when
    /// [`Stats::distinct_schedules_capped`]).
    pub distinct_schedules: u64,
    /// Whether the run stopped counting distinct schedules at a cap, to keep its memory
    /// bounded: [`Stats::distinct_schedules`] is then "at least".
    pub distinct_schedules_capped: bool,
    /// Every variable met, with its profile.
    pub variables: Vec<(VarInfo, VarProfile)>,
}

/// What the profiling executions measured before a priority strategy's search, and how the
/// search executions compared with it (the assumptions of the guarantee).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    /// Profiling executions run (a random walk, naive or uniform, before the search).
    pub runs: u64,
    /// Most threads in one execution (`n`), measured by profiling.
    pub n: u64,
    /// Most scheduling points in one execution (`k`), measured by profiling.
    pub k: u64,
    /// Shared variables (accessed by two or more threads), measured by profiling.
    pub shared_variables: u64,
    /// Variables of `#[pctvb::instrument]`ed items the profiling executions entered that none
    /// of them accessed; `Q` counts them beside the shared ones (see [`mod@crate::instrument`],
    /// "How runs use it").
    pub static_only_variables: u64,
    /// The largest `k_q` of a shared variable, measured by profiling.
    pub max_kq: u64,
    /// Search executions that exceeded the counts they were drawn with (more threads than `n`,
    /// or, as the strategy uses them, more steps than `k`, more accesses than some `k_q`, or a
    /// newly shared variable). The guarantee does not cover them.
    pub exceeded: u64,
    /// Search executions drawn with the final counts: the ones the guarantee counts.
    pub covered: u64,
    /// The counts at the end of the run (after any raise), which the bound uses.
    pub final_n: u64,
    /// See `final_n`.
    pub final_k: u64,
    /// See `final_n`.
    pub final_shared_variables: u64,
    /// See `final_n`.
    pub final_static_only_variables: u64,
    /// See `final_n`.
    pub final_max_kq: u64,
    /// What happened to the counts and the bound during the run, e.g. that `k` rose and the
    /// bound was recomputed, or why no guarantee could be computed.
    pub notes: Vec<String>,
}

/// The result of a run. Must be used: a run whose report is dropped passes whatever it found
/// (call [`Report::assert_ok`], or look at [`Report::failure`] and [`Report::error`]).
#[derive(Clone, Debug)]
#[must_use = "a dropped report hides the bug or error the run found: call `assert_ok()` or \
              check `failure()` and `error()`"]
pub struct Report {
    /// The test's name, when known.
    pub name: Option<String>,
    /// The strategy, with parameters.
    pub strategy: String,
    /// The run seed.
    pub seed: u64,
    /// Executions run (the failing one included).
    pub executions: u64,
    /// Executions planned.
    pub planned: u64,
    /// The first failure (a bug the run found), if any.
    pub failure: Option<Failure>,
    /// Why the run could not test, if it could not (then the executions it ran, if any, say
    /// nothing about the program). A run has a failure or an error, never both.
    pub error: Option<Error>,
    /// Run statistics.
    pub stats: Stats,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// Whether this run replayed a token.
    pub replayed: bool,
    /// Executions that failed; with [`crate::Config::stop_at_first_failure`]`(false)` every
    /// failing execution counts, otherwise this is 0 or 1.
    pub failures: u64,
    /// The profiling measurements, for priority strategies.
    pub profile: Option<Profile>,
    /// The per-execution lower bound of the strategy, from the final counts.
    pub bound: Option<BoundFactors>,
    /// What a passing run proves (priority strategies only).
    pub guarantee: Option<GuaranteeStatement>,
    /// Saved failures replayed from the regression file before the search.
    pub regressions_replayed: u64,
    /// Things the user should know about the run (saved failures, fixed regressions, ...).
    pub notes: Vec<String>,
    /// What a systematic search covered, level by level ([`crate::StrategyKind::Systematic`]).
    pub systematic: Option<SystematicReport>,
    /// Whether the run stopped early because its time budget
    /// ([`Config::time_budget`](crate::Config::time_budget)) was spent; the statement then
    /// gives what the executions that ran prove.
    pub time_budget_spent: bool,
    /// Whether the run stopped because it had explored the only schedule there is: an
    /// execution reached no scheduling point where two threads could run, so every execution
    /// would repeat it.
    pub only_schedule: bool,
}

impl Report {
    /// Whether the run tested the program and found no failure: false when it found a bug
    /// ([`Report::failure`]) and when it could not test ([`Report::error`]).
    pub fn is_ok(&self) -> bool {
        self.failure.is_none() && self.error.is_none()
    }

    /// The failure (a bug the run found), if any.
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// Why the run could not test, if it could not: an invalid configuration or token, a
    /// replay that diverged, a strategy that could not continue, an internal error. Not a bug
    /// in the program; see [`Error`].
    pub fn error(&self) -> Option<&Error> {
        self.error.as_ref()
    }

    /// For a program that demonstrates a known bug (like the crate's examples): prints the
    /// failure report, or the summary if no failure was found, and returns the process exit
    /// code: success when the bug was found.
    ///
    /// ```no_run
    /// fn main() -> std::process::ExitCode {
    ///     pctvb::Config::new().iterations(1000).run(|| { /* a buggy body */ }).print_expecting_bug()
    /// }
    /// ```
    pub fn print_expecting_bug(&self) -> std::process::ExitCode {
        if let Some(error) = &self.error {
            println!("pctvb could not run: {error}");
            return std::process::ExitCode::FAILURE;
        }
        match &self.failure {
            Some(failure) => {
                let plural = if self.executions == 1 { "" } else { "s" };
                println!(
                    "pctvb found the bug after {} execution{plural} (seed {:#x}).\n\n{failure}",
                    self.executions, self.seed
                );
                std::process::ExitCode::SUCCESS
            }
            None => {
                println!("{}\npctvb: the bug was not found", self.summary());
                std::process::ExitCode::FAILURE
            }
        }
    }

    /// Panics with the full failure report if the run found a bug, and with the error if it
    /// could not test.
    #[track_caller]
    pub fn assert_ok(&self) {
        if let Some(e) = &self.error {
            panic!("pctvb could not run this test: {e}");
        }
        if let Some(f) = &self.failure {
            panic!("{f}");
        }
    }

    /// The one-line summary of a passing run.
    pub fn summary(&self) -> String {
        let secs = self.elapsed.as_secs_f64();
        let rate = if secs > 0.0 { self.executions as f64 / secs } else { 0.0 };
        let name = self.name.as_deref().unwrap_or("run");
        let outcome = match (&self.failure, &self.error) {
            (_, Some(_)) => "stopped (could not test) after",
            (Some(_), None) => "FAILED",
            (None, None) => "passed",
        };
        let distinct = match self.stats.distinct_schedules_capped {
            true => format!("at least {} distinct schedules", self.stats.distinct_schedules),
            false => plural(self.stats.distinct_schedules as usize, "distinct schedule"),
        };
        let mut line = format!(
            "pctvb: {name} {outcome} {} in {secs:.2}s ({rate:.0}/s; {}, seed {:#x}; up to {}, {}; {distinct})",
            plural(self.executions as usize, "execution"),
            self.strategy,
            self.seed,
            plural(self.stats.max_threads, "thread"),
            plural(self.stats.max_steps as usize, "scheduling point"),
        );
        if self.only_schedule {
            line += "\npctvb: the only schedule was explored: no scheduling point had two threads \
                     that could run, so every further execution would repeat it";
        }
        line + &self.guarantee_lines()
    }

    /// The guarantee, the bound, notes and the variable table, one per line, each line
    /// starting with a newline (empty without a profile).
    fn guarantee_lines(&self) -> String {
        let mut out = String::new();
        if self.regressions_replayed > 0 {
            out += &format!("\npctvb: replayed {} saved failures first", self.regressions_replayed);
        }
        for note in &self.notes {
            out += &format!("\npctvb: {note}");
        }
        if let Some(g) = &self.guarantee {
            out += &format!("\npctvb: guarantee: {g}");
        }
        if let Some(b) = &self.bound {
            out += &format!("\npctvb: per-execution bound: {b}");
        }
        if let Some(p) = &self.profile {
            for note in &p.notes {
                out += &format!("\npctvb: note: {note}");
            }
            out += "\n";
            out += &self.variable_table();
        }
        out
    }

    /// The variables of the run with their profiles, as a table: id, variable (kind and
    /// allocation site), `k_q` (most accesses in one execution) and whether it is shared.
    pub fn variable_table(&self) -> String {
        let shared = self.stats.variables.iter().filter(|(_, p)| p.shared).count();
        let static_only = self.profile.as_ref().map_or(0, |p| p.final_static_only_variables);
        let q = match static_only {
            0 => format!("Q={shared}"),
            s => format!(
                "Q={}: these and {} of #[pctvb::instrument]ed code that no profiling execution \
                 accessed",
                shared as u64 + s,
                plural(s as usize, "variable")
            ),
        };
        let mut out = format!(
            "pctvb: {}, {shared} shared ({q}):\n  {:>4}  {:<50} {:>10}  shared\n",
            plural(self.stats.variables.len(), "variable"),
            "id",
            "variable",
            "k_q"
        );
        for (i, (info, profile)) in self.stats.variables.iter().enumerate() {
            // A cell whose accesses are race checks only: no scheduling point, so no k_q.
            let (kq, shared) = if info.kind == VarKind::CheckedCell {
                ("-".to_string(), "race-checked, not scheduled")
            } else {
                (profile.max_accesses.to_string(), if profile.shared { "yes" } else { "no" })
            };
            out += &format!("  {:>4}  {:<50} {:>10}  {}\n", i, info.to_string(), kq, shared);
        }
        out.pop();
        out
    }
}

/// The error of a cause that means pctvb could not test: the strategy `strategy` could not
/// continue in execution `execution`, or an internal error; `None` for a bug. The runner sorts
/// every failing execution's cause with this before it builds a failure.
pub(crate) fn could_not_test(
    cause: &FailureCause,
    strategy: &str,
    execution: u64,
) -> Option<Error> {
    match cause {
        FailureCause::Strategy { message } => Some(Error::Strategy {
            strategy: strategy.to_string(),
            execution,
            message: message.clone(),
        }),
        FailureCause::Internal { message } => Some(Error::Internal { message: message.clone() }),
        FailureCause::Setting { what, message } => Some(Error::config(*what, message.clone())),
        FailureCause::Unsupported { message } => {
            Some(Error::Unsupported { message: message.clone() })
        }
        FailureCause::Panic { .. }
        | FailureCause::Deadlock { .. }
        | FailureCause::Livelock { .. }
        | FailureCause::RecursiveLock { .. }
        | FailureCause::MaxSteps { .. }
        | FailureCause::TooManyThreads { .. }
        | FailureCause::DataRace { .. } => None,
    }
}

/// Kind, message, thread and location of a bug's cause (a cause [`could_not_test`] returns
/// `None` for).
pub(crate) fn explain(
    cause: &FailureCause,
) -> (FailureKind, String, Option<ThreadInfo>, Option<String>) {
    match cause {
        FailureCause::Panic { thread, message, location } => {
            (FailureKind::Panic, message.clone(), Some(thread.clone()), location.clone())
        }
        FailureCause::Deadlock { waits, lost_wakeup: true } => (
            FailureKind::Deadlock,
            format!(
                "lost wake-up: a task waits for a wake-up no one will give, and no thread can \
                 run.\n  {}",
                waits.join("\n  ")
            ),
            None,
            None,
        ),
        FailureCause::Deadlock { waits, lost_wakeup: false } => (
            FailureKind::Deadlock,
            format!("deadlock: no thread can run.\n  {}", waits.join("\n  ")),
            None,
            None,
        ),
        FailureCause::Livelock { spins, waits, limit, window, body_returned } => {
            let mut message = format!(
                "livelock: every thread that can run spins, waiting for a change no other \
                 thread makes (none in the last {window} scheduling points before max_steps = \
                 {limit}).\n  {}",
                spins.join("\n  ")
            );
            for wait in waits {
                message.push_str("\n  ");
                message.push_str(wait);
            }
            message.push_str(
                "\n(A thread spins when it yields, or sleeps again, and no other thread has \
                 changed shared state since: written an atomic or cell with a new value, locked \
                 or unlocked, sent, received, notified, unparked, spawned or exited. Its own \
                 changes, such as the lock it takes to read a flag, do not end its wait.)",
            );
            if *body_returned {
                message.push_str(
                    "\nThe test body had returned: these threads were left running, and pctvb \
                     runs every thread to its end. Stop them before the body returns (a flag or \
                     a channel they check) and join them.",
                );
            }
            (FailureKind::Livelock, message, None, None)
        }
        FailureCause::RecursiveLock { thread, what, behind: None } => (
            FailureKind::Deadlock,
            format!("deadlock: {thread} tried to lock {what}, which it already holds"),
            Some(thread.clone()),
            None,
        ),
        FailureCause::RecursiveLock { thread, what, behind: Some(writer) } => (
            FailureKind::Deadlock,
            format!(
                "deadlock: {thread} read-locked {what} again, which it already holds for \
                 reading, while {writer} waits to write it. std's RwLock may make a new reader \
                 wait behind a waiting writer (it does on Linux; std says a recursive `read` \
                 might panic or block), and then each waits for the other. Take the read lock \
                 once and pass the guard (or the data) down."
            ),
            Some(thread.clone()),
            None,
        ),
        FailureCause::MaxSteps { limit, thread, location, left_running } => (
            FailureKind::MaxSteps,
            if left_running.is_empty() {
                format!(
                    "the execution ran more than max_steps = {limit} scheduling points (the last \
                     in {thread} at {location}). This is usually a spin loop waiting for another \
                     thread without calling `pctvb::thread::yield_now()` (or `sleep`), which a \
                     priority scheduler never preempts; add a yield in the loop. If the test is \
                     simply long, raise max_steps (`max_steps = N` in the attribute, or \
                     Config::max_steps)."
                )
            } else {
                format!(
                    "the execution ran more than max_steps = {limit} scheduling points (the last \
                     in {thread} at {location}) after the test body had returned, leaving {} \
                     running. pctvb runs every thread and task to its end (it cannot kill one as a \
                     process exit would), so one that never ends makes every execution run out \
                     of steps. Stop it before the body returns (a flag or a channel it checks) \
                     and join it; if it does end, only later, raise max_steps (`max_steps = N` \
                     in the attribute, or Config::max_steps).",
                    left_running.join(", ")
                )
            },
            Some(thread.clone()),
            Some(location.to_string()),
        ),
        FailureCause::TooManyThreads { limit, location } => (
            FailureKind::TooManyThreads,
            format!(
                "the execution would have more than max_threads = {limit} threads, the test \
                 body's own thread included: the spawn at {location} would make them {}; \
                 raise max_threads (`max_threads = N` in the attribute, Config::max_threads, or \
                 loom::model::Builder's max_threads under pctvb-loom) if the test really needs \
                 them",
                limit + 1
            ),
            None,
            Some(location.to_string()),
        ),
        FailureCause::DataRace { what, first, second } => (
            FailureKind::DataRace,
            crate::runtime::race_message(what, first, second),
            Some(second.thread.clone()),
            Some(second.location.to_string()),
        ),
        FailureCause::Strategy { .. }
        | FailureCause::Internal { .. }
        | FailureCause::Setting { .. }
        | FailureCause::Unsupported { .. } => unreachable!(
            "the runner reports a strategy or internal error as an Error, never as a Failure"
        ),
    }
}

/// The threads of a data race's two accesses, for the bug's shape ([`measure_shape`]): the
/// race is between them (the failing thread [`explain`] names is only the second's); `None`
/// for any other cause.
pub(crate) fn racing_threads(cause: &FailureCause) -> Option<[ThreadId; 2]> {
    match cause {
        FailureCause::DataRace { first, second, .. } => Some([first.thread.id, second.thread.id]),
        _ => None,
    }
}

impl Failure {
    /// For a failure of a profiling execution (a random walk before a priority strategy's
    /// search, run on its own index range from `PROFILE_INDEX_BASE`), its ordinal among them,
    /// from 1, as the report names it; `None` for a search execution.
    pub(crate) fn profiling_execution(&self) -> Option<u64> {
        self.execution.checked_sub(crate::runtime::PROFILE_INDEX_BASE).map(|i| i + 1)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.thread, &self.location, self.kind) {
            (Some(t), Some(l), FailureKind::Panic) => writeln!(f, "{t} panicked at {l}:")?,
            (Some(t), None, FailureKind::Panic) => writeln!(f, "{t} panicked:")?,
            _ => {}
        }
        writeln!(f, "{}", self.message)?;
        if !self.schedule.is_empty() {
            // Profiling executions (a random walk, before a priority strategy's search) run
            // on their own index range; name them as such rather than by a huge index.
            let which = match self.profiling_execution() {
                Some(n) => {
                    format!("execution {n} of the run (a profiling execution, before the search)")
                }
                None => format!("execution {}", self.execution),
            };
            writeln!(
                f,
                "\npctvb: failing {which} ({} scheduling points, {}):",
                self.schedule.len(),
                plural(self.preemptions, "preemption")
            )?;
            schedule::write_schedule(f, &self.schedule)?;
            if let Some(path) = &self.trace_file {
                writeln!(f, "  (the full schedule is in {path})")?;
            }
        }
        if let Some(shape) = &self.shape {
            writeln!(f, "\npctvb: bug shape: {shape}")?;
            if let Some(from) = self.minimized_from.filter(|&from| from != self.preemptions) {
                writeln!(
                    f,
                    "       (minimized from {} in {})",
                    plural(from, "preemption"),
                    plural(self.minimization_runs as usize, "replay")
                )?;
            }
        }
        match (&self.replay_diverges, &self.replay_command) {
            (Some(why), _) => writeln!(
                f,
                "\npctvb: no replay line: replaying this execution right after it failed did not \
                 reproduce it ({why}). A fresh token would not replay either: make the test \
                 deterministic under pctvb first (no HashMap iteration order, {}, I/O, real \
                 OS threads or std locks in the body; see the guide's \"Replaying\")",
                crate::runtime::UNCONTROLLED_TIME
            )?,
            (None, Some(cmd)) => {
                writeln!(f, "\nTo replay exactly this execution:\n    {cmd}")?;
                // A token too long for a command line is in a file the line names (the
                // runner's choice, see `replay`): say why the line has no token.
                if let Some(token) = self.token.as_deref().filter(|t| !cmd.contains(t.trim())) {
                    writeln!(
                        f,
                        "    (the token, {} characters, is too long for a command line: \
                         PCTVB_REPLAY=@<file> reads it from that file)",
                        token.trim().len()
                    )?;
                }
            }
            (None, None) => {}
        }
        Ok(())
    }
}

/// `"1 preemption"`, `"3 preemptions"`.
pub(crate) fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::could_not_test;
    use crate::runtime::FailureCause;
    use crate::Error;

    /// A could-not-test cause found during an execution is reported as what it is: the
    /// program's use pctvb does not support is not an internal error.
    #[test]
    fn an_unsupported_cause_is_an_unsupported_error() {
        let message = "pctvb: waited more than 10 s for Mutex@x.rs:1:1".to_string();
        let error = could_not_test(&FailureCause::Unsupported { message: message.clone() }, "r", 2);
        assert_eq!(error, Some(Error::Unsupported { message }));
        assert!(!error.unwrap().to_string().contains("internal error"));
        let internal = FailureCause::Internal { message: "no stack".to_string() };
        assert!(matches!(could_not_test(&internal, "r", 2), Some(Error::Internal { .. })));
    }

    /// A setting the runtime could not honour (a stack of the configured `stack_size` that
    /// could not be mapped) is that setting's configuration error, not an internal one that
    /// asks to be reported to pctvb.
    #[test]
    fn a_setting_cause_is_a_config_error_naming_the_setting() {
        let message = "the stack of thread 0 could not be allocated".to_string();
        let cause = FailureCause::Setting { what: "stack_size", message: message.clone() };
        let error = could_not_test(&cause, "r", 0);
        assert_eq!(error, Some(Error::Config { what: "stack_size".into(), message }));
        assert!(!error.unwrap().to_string().contains("internal error"));
    }
}
