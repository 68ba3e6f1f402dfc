//! The failing execution's schedule as a person reads it: one line per scheduling point, the
//! thread, the operation with the object it touched and the value an atomic operation read or
//! wrote, the user-code location, preemptions marked, and long runs of one thread folded.

use std::fmt;
use std::path::Path;

use crate::runtime::{EventKind, ObjectId, Step, ThreadId};

/// One step of the failing execution's schedule, ready to print.
#[derive(Clone, Debug)]
pub struct ScheduleStep {
    /// Index of the scheduling point.
    pub step: u64,
    /// The thread that reached it.
    pub thread: ThreadId,
    /// A short label of that thread: `main`, `t3`, or its name.
    pub thread_label: String,
    /// The operation, e.g. `load Atomic@bank.rs:12 -> 7`.
    pub operation: String,
    /// Where in user code (`path:line`).
    pub location: String,
    /// Whether the scheduler preempted the thread here (switched away although it could run).
    pub preempted: bool,
    /// The thread that ran next.
    pub next: ThreadId,
}

/// Turns the runtime's trace into printable steps; `describe` names objects (`Mutex@path:l:c`)
/// and `label` names threads.
pub(crate) fn schedule_steps(
    trace: &[Step],
    describe: impl Fn(ObjectId) -> String,
    label: impl Fn(ThreadId) -> String,
) -> Vec<ScheduleStep> {
    trace
        .iter()
        .enumerate()
        .map(|(i, s)| ScheduleStep {
            step: i as u64,
            thread: s.thread,
            thread_label: label(s.thread),
            operation: operation(s, &describe),
            location: without_column(&s.location.to_string()),
            preempted: is_preemption(s),
            next: s.chosen,
        })
        .collect()
}

/// Whether the step switched away from a thread that could have continued.
pub(crate) fn is_preemption(s: &Step) -> bool {
    s.chosen != s.thread && !matches!(s.kind, EventKind::Block | EventKind::ThreadExit)
}

fn operation(s: &Step, describe: &impl Fn(ObjectId) -> String) -> String {
    let mut text = s.kind.to_string();
    if let Some(o) = s.object {
        text.push(' ');
        text.push_str(&short_object(&describe(o)));
    }
    if let Some(v) = s.value {
        let shown = match s.kind {
            EventKind::AtomicLoad => format!(" -> {v}"),
            EventKind::AtomicStore => format!(" = {v}"),
            _ => format!(" (was {v})"),
        };
        text.push_str(&shown);
    }
    text
}

/// `Mutex@src/bank/ledger.rs:12:20` -> `Mutex@ledger.rs:12:20`: enough to find the object in
/// a report that must fit 100 columns (the column tells apart objects created on one line).
fn short_object(full: &str) -> String {
    match full.split_once('@') {
        Some((kind, site)) => {
            let file = Path::new(site).file_name().map_or(site.into(), |f| f.to_string_lossy());
            format!("{kind}@{file}")
        }
        None => full.to_string(),
    }
}

/// `src/lib.rs:12:5` -> `src/lib.rs:12`.
fn without_column(location: &str) -> String {
    match location.rsplit_once(':') {
        Some((rest, col)) if col.chars().all(|c| c.is_ascii_digit()) && rest.contains(':') => {
            rest.to_string()
        }
        _ => location.to_string(),
    }
}

/// Runs of one thread longer than this are folded to their first and last two steps.
const FOLD_RUN: usize = 6;
/// Lines shown in full before the middle of a long schedule is left to the trace file.
const SHOWN_LINES: usize = 60;

/// What a line of the printed schedule is.
enum Line<'a> {
    Step(&'a ScheduleStep),
    Folded { thread: &'a str, steps: usize },
}

/// The schedule's lines after folding long uninterrupted runs of one thread.
fn lines(steps: &[ScheduleStep]) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < steps.len() {
        // A run: consecutive steps of one thread, ending at its first preemption or switch.
        let mut j = i;
        while j + 1 < steps.len() && steps[j + 1].thread == steps[i].thread && !steps[j].preempted {
            j += 1;
        }
        let run = &steps[i..=j];
        if run.len() > FOLD_RUN {
            out.extend(run[..2].iter().map(Line::Step));
            out.push(Line::Folded { thread: &run[0].thread_label, steps: run.len() - 4 });
            out.extend(run[run.len() - 2..].iter().map(Line::Step));
        } else {
            out.extend(run.iter().map(Line::Step));
        }
        i = j + 1;
    }
    out
}

/// Prints the schedule; returns whether lines were left out (the full trace is in a file).
pub(crate) fn write_schedule(f: &mut fmt::Formatter<'_>, steps: &[ScheduleStep]) -> fmt::Result {
    let lines = lines(steps);
    let width = steps.iter().map(|s| s.operation.len()).max().unwrap_or(0).clamp(9, 44);
    writeln!(f, "  {:>5}  {:<8} {:<width$} location", "step", "thread", "operation")?;
    let (head, tail_from) = if lines.len() > SHOWN_LINES {
        (10, lines.len() - (SHOWN_LINES - 10))
    } else {
        (lines.len(), lines.len())
    };
    for (i, line) in lines.iter().enumerate() {
        if i == head && tail_from > head {
            writeln!(f, "  {:>5}  ... {} lines not shown ...", "", tail_from - head)?;
        }
        if i >= head && i < tail_from {
            continue;
        }
        match line {
            Line::Step(s) => {
                let mark = if s.preempted {
                    let next = steps
                        .iter()
                        .find(|o| o.thread == s.next)
                        .map_or_else(|| format!("t{}", s.next), |o| o.thread_label.clone());
                    format!("  <- preempted: {next}")
                } else {
                    String::new()
                };
                writeln!(
                    f,
                    "  {:>5}  {:<8} {:<width$} {}{mark}",
                    s.step, s.thread_label, s.operation, s.location
                )?;
            }
            Line::Folded { thread, steps } => {
                writeln!(f, "  {:>5}  {:<8} ... {steps} more steps ...", "", thread)?;
            }
        }
    }
    Ok(())
}

/// The whole schedule, unfolded, for the trace file of a long failure.
pub(crate) fn full_text(steps: &[ScheduleStep]) -> String {
    let mut out =
        format!("{:>6}  {:<8} {:<40} {:<30} next\n", "step", "thread", "operation", "location");
    for s in steps {
        out += &format!(
            "{:>6}  {:<8} {:<40} {:<30} {}{}\n",
            s.step,
            s.thread_label,
            s.operation,
            s.location,
            s.next,
            if s.preempted { " (preemption)" } else { "" }
        );
    }
    out
}

/// Whether printing `steps` leaves lines out.
pub(crate) fn is_long(steps: &[ScheduleStep]) -> bool {
    lines(steps).len() > SHOWN_LINES
}
