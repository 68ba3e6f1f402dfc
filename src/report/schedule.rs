//! The failing execution's schedule as a person reads it: one line per scheduling point, the
//! thread, the operation with the object it touched and the value an atomic operation read or
//! wrote, the user-code location, preemptions marked, and long runs of one thread folded.

use std::fmt::{self, Write as _};
use std::ops::Range;
use std::panic::Location;
use std::path::Path;

use crate::runtime::{decimal, EventKind, ObjectId, Step, ThreadId, Value};

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
    /// Whether the operation had taken effect at its scheduling point (a spawn, an unlock:
    /// their point follows them), so a preemption there came after it and left nothing
    /// pending. Every other operation's point comes before it.
    pub ran_before_point: bool,
    /// The shared variable an atomic or cell access touched (its short name, as in
    /// `operation`); `None` for other operations.
    pub variable: Option<String>,
    /// The thread that ran next.
    pub next: ThreadId,
}

/// Turns the runtime's trace into printable steps; `describe` names objects (`Mutex@path:l:c`)
/// and `label` names threads. Each object and thread is named once, however many steps it has.
pub(crate) fn schedule_steps(
    trace: &[Step],
    describe: impl Fn(ObjectId) -> String,
    label: impl Fn(ThreadId) -> String,
) -> Vec<ScheduleStep> {
    let mut objects: Vec<Option<String>> = Vec::new();
    let mut labels: Vec<Option<String>> = Vec::new();
    trace
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let object = s
                .object
                .map(|o| memo(&mut objects, o.index(), || short_object(&describe(o))).as_str());
            ScheduleStep {
                step: i as u64,
                thread: s.thread,
                thread_label: memo(&mut labels, s.thread.index(), || label(s.thread)).clone(),
                operation: operation(s, object),
                location: without_column(s.location),
                preempted: s.is_preemption(),
                ran_before_point: s.kind.point_follows_effect(),
                variable: object.filter(|_| s.kind.is_value_access()).map(str::to_string),
                next: s.chosen,
            }
        })
        .collect()
}

/// `cache[i]`, computed by `make` the first time.
fn memo(cache: &mut Vec<Option<String>>, i: usize, make: impl FnOnce() -> String) -> &String {
    if cache.len() <= i {
        cache.resize(i + 1, None);
    }
    cache[i].get_or_insert_with(make)
}

/// The operation of `s` on `object` (its short name), with the value it read or wrote.
fn operation(s: &Step, object: Option<&str>) -> String {
    let kind = s.kind.name();
    let mut text = String::with_capacity(kind.len() + object.map_or(0, |o| o.len() + 1) + 28);
    text.push_str(kind);
    if let Some(o) = object {
        text.push(' ');
        text.push_str(o);
    }
    if let Some(v) = s.value {
        text.push_str(match s.kind {
            EventKind::AtomicLoad => " -> ",
            EventKind::AtomicStore => " = ",
            _ => " (was ",
        });
        match v {
            Value::Unsigned(n) => push_u64(&mut text, n),
            Value::Signed(n) => {
                if n < 0 {
                    text.push('-');
                }
                push_u64(&mut text, n.unsigned_abs());
            }
        }
        if !matches!(s.kind, EventKind::AtomicLoad | EventKind::AtomicStore) {
            text.push(')');
        }
    }
    // A lock held by another thread, a join of a running thread: the thread waits here, and
    // its operation runs when a later step chooses it.
    if s.waits && s.kind != EventKind::Block {
        text.push_str(" (waits)");
    }
    text
}

/// Appends `n` in decimal.
fn push_u64(out: &mut String, n: u64) {
    out.push_str(decimal(n, &mut [0; 20]));
}

/// Appends `n` spaces.
fn push_spaces(out: &mut String, mut n: usize) {
    const SPACES: &str = "                                ";
    while n > 0 {
        let k = n.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        n -= k;
    }
}

/// Appends `s` left-aligned in a field of `width` characters (as `{s:<width$}`).
fn push_left(out: &mut String, s: &str, width: usize) {
    out.push_str(s);
    push_spaces(out, width.saturating_sub(s.chars().count()));
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
fn without_column(location: &Location<'_>) -> String {
    let file = location.file();
    let mut text = String::with_capacity(file.len() + 11);
    text.push_str(file);
    text.push(':');
    push_u64(&mut text, location.line().into());
    text
}

/// Runs of one thread longer than this are folded to their first and last two steps.
const FOLD_RUN: usize = 6;
/// Lines shown in full before the middle of a long schedule is left to the trace file.
const SHOWN_LINES: usize = 60;

/// What a line of the printed schedule is.
enum Line<'a> {
    Step(&'a ScheduleStep),
    Folded {
        thread: &'a str,
        steps: usize,
    },
    /// The operation of a preempted step runs here: the scheduler had switched away before
    /// it ran, and the step just printed chose its thread again.
    Resumed(&'a ScheduleStep),
}

/// For each step index `j`, the preempted step whose operation runs right after `j`: a
/// preempted thread's operation was pending at its step, and runs when a later step chooses
/// the thread again. A spawn or an unlock preempted at its point had already run: nothing of
/// it is pending.
fn resumptions(steps: &[ScheduleStep]) -> Vec<Option<usize>> {
    let mut after = vec![None; steps.len()];
    for (i, s) in steps.iter().enumerate().filter(|(_, s)| s.preempted && !s.ran_before_point) {
        let resumed =
            steps[i + 1..].iter().position(|o| o.next == s.thread && o.thread != s.thread);
        if let Some(j) = resumed {
            after[i + 1 + j] = Some(i);
        }
    }
    after
}

/// The runs of the schedule: consecutive steps of one thread, each ending at its first
/// preemption or switch.
fn runs(steps: &[ScheduleStep]) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        if i >= steps.len() {
            return None;
        }
        let mut j = i;
        while j + 1 < steps.len() && steps[j + 1].thread == steps[i].thread && !steps[j].preempted {
            j += 1;
        }
        let run = i..j + 1;
        i = j + 1;
        Some(run)
    })
}

/// The steps of `run` a folded schedule shows: all of a short run; of a long one its first
/// two and last two, and each shared variable's last access in it. That access is what the
/// other threads' steps interleave with (a stale read before the switch); folding it away
/// hid the read that explains a lost update.
fn shown(steps: &[ScheduleStep], run: Range<usize>) -> Vec<usize> {
    if run.len() <= FOLD_RUN {
        return run.collect();
    }
    let (start, end) = (run.start, run.end);
    let mut shown: Vec<usize> = (start..start + 2).chain(end - 2..end).collect();
    for j in start + 2..end - 2 {
        let Some(variable) = &steps[j].variable else { continue };
        let later = steps[j + 1..end].iter().any(|o| o.variable.as_ref() == Some(variable));
        if !later {
            shown.push(j);
        }
    }
    shown.sort_unstable();
    shown
}

/// Lines a run takes once folded: its shown steps, and a line for each gap between them.
fn folded_len(steps: &[ScheduleStep], run: Range<usize>) -> usize {
    let shown = shown(steps, run);
    shown.len() + shown.windows(2).filter(|w| w[1] > w[0] + 1).count()
}

/// The schedule's lines after folding long uninterrupted runs of one thread, with the
/// operations preempted threads had pending shown where they ran.
fn lines<'a>(steps: &'a [ScheduleStep]) -> Vec<Line<'a>> {
    let resumed = resumptions(steps);
    let mut out = Vec::new();
    let step = |out: &mut Vec<Line<'a>>, j: usize| {
        out.push(Line::Step(&steps[j]));
        if let Some(i) = resumed[j] {
            out.push(Line::Resumed(&steps[i]));
        }
    };
    for run in runs(steps) {
        let thread = &steps[run.start].thread_label;
        let mut previous: Option<usize> = None;
        for j in shown(steps, run) {
            if let Some(p) = previous.filter(|&p| j > p + 1) {
                out.push(Line::Folded { thread, steps: j - p - 1 });
            }
            step(&mut out, j);
            previous = Some(j);
        }
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
                    match s.ran_before_point {
                        true => format!("  <- preempted after it ran: {next}"),
                        false => format!("  <- preempted before it ran: {next}"),
                    }
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
                let noun = if *steps == 1 { "step" } else { "steps" };
                writeln!(f, "  {:>5}  {:<8} ... {steps} more {noun} ...", "", thread)?;
            }
            Line::Resumed(s) => {
                writeln!(
                    f,
                    "  {:>5}  {:<8} {:<width$} {}  <- runs now (pending since step {})",
                    "", s.thread_label, s.operation, s.location, s.step
                )?;
            }
        }
    }
    Ok(())
}

/// The whole schedule, unfolded, for the trace file of a long failure: the header, then one
/// line per step as `{step:>6}  {label:<8} {operation:<40} {location:<30} {next}` with
/// ` (preemption)` after a preemption.
pub(crate) fn full_text(steps: &[ScheduleStep]) -> String {
    let field = |s: &str, width: usize| s.len().max(width) + 1;
    let size: usize = steps
        .iter()
        .map(|s| {
            8 + field(&s.thread_label, 8) + field(&s.operation, 40) + field(&s.location, 30) + 24
        })
        .sum();
    let mut out = String::with_capacity(size + 100);
    // Writing to a `String` cannot fail.
    let _ =
        writeln!(out, "{:>6}  {:<8} {:<40} {:<30} next", "step", "thread", "operation", "location");
    let mut digits = [0; 20];
    for s in steps {
        // The step number right-aligned in 6 columns.
        let step = decimal(s.step, &mut digits);
        push_spaces(&mut out, 6usize.saturating_sub(step.len()));
        out.push_str(step);
        out.push_str("  ");
        push_left(&mut out, &s.thread_label, 8);
        out.push(' ');
        push_left(&mut out, &s.operation, 40);
        out.push(' ');
        push_left(&mut out, &s.location, 30);
        out.push(' ');
        push_u64(&mut out, s.next.0.into());
        if s.preempted {
            out.push_str(" (preemption)");
        }
        out.push('\n');
    }
    out
}

/// Whether printing `steps` leaves lines out.
pub(crate) fn is_long(steps: &[ScheduleStep]) -> bool {
    let resumed = resumptions(steps).iter().flatten().count();
    runs(steps).map(|run| folded_len(steps, run)).sum::<usize>() + resumed > SHOWN_LINES
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(
        step: u64,
        label: &str,
        operation: &str,
        location: &str,
        preempted: bool,
    ) -> ScheduleStep {
        ScheduleStep {
            step,
            thread: ThreadId(1),
            thread_label: label.to_string(),
            operation: operation.to_string(),
            location: location.to_string(),
            preempted,
            ran_before_point: operation.starts_with("unlock") || operation.starts_with("spawn"),
            variable: None,
            next: ThreadId(12),
        }
    }

    /// The trace file's text, written with `format!` as it was specified.
    fn reference(steps: &[ScheduleStep]) -> String {
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

    #[test]
    fn full_text_pads_like_format() {
        let long = "x".repeat(75);
        let steps = [
            step(0, "main", "start", "src/lib.rs:1", false),
            step(7, "t3", "load Atomic@lib.rs:3:9 -> 18446744073709551615", "src/a.rs:9", true),
            step(123_456, "naïve-é", "lock Mutex@é.rs:1:1", "ünïcode/path.rs:12", false),
            step(u64::MAX, "12345678", &long, &long, true),
            step(99, "", "", "", false),
        ];
        assert_eq!(full_text(&steps), reference(&steps));
    }

    #[test]
    fn a_folded_run_keeps_each_variables_last_access() {
        // t1 reads n early in a long run of lock operations, then is switched away: the read
        // (the stale value of a lost update) stays shown, folding only the steps around it.
        let mut steps: Vec<ScheduleStep> = (0..12)
            .map(|i| {
                let operation = if i % 2 == 0 { "lock M" } else { "unlock M" };
                step(i, "t1", operation, "a.rs:1", false)
            })
            .collect();
        steps[4].operation = "load n -> 2".to_string();
        steps[4].variable = Some("n".to_string());
        steps[6].operation = "load k -> 0".to_string();
        steps[6].variable = Some("k".to_string());
        steps[8].operation = "load k -> 0".to_string();
        steps[8].variable = Some("k".to_string());
        let text = rendered(&steps);
        let lines: Vec<&str> = text.lines().skip(1).map(str::trim).collect();
        assert_eq!(lines.len(), 9, "{text}");
        assert!(lines[2].contains("... 2 more steps ..."), "{text}");
        assert!(lines[3].contains("load n -> 2"), "{text}");
        assert!(lines[4].contains("... 3 more steps ..."), "{text}");
        assert!(lines[5].starts_with("8") && lines[5].contains("load k"), "the last k: {text}");
        assert!(lines[6].contains("... 1 more step ..."), "{text}");
        assert!(!text.contains("     6  t1"), "k's earlier access is folded: {text}");
        assert!(!is_long(&steps));
        assert_eq!(folded_len(&steps, 0..12), lines.len());
    }

    #[test]
    fn is_long_counts_folded_lines() {
        let mut steps = Vec::new();
        for run in 0..40 {
            for i in 0..(run % 9) {
                let mut s = step(steps.len() as u64, "t", "yield", "a.rs:1", i + 1 == run % 9);
                s.thread = ThreadId(run as u32 % 3);
                steps.push(s);
            }
            for n in 0..steps.len() {
                assert_eq!(is_long(&steps[..n]), lines(&steps[..n]).len() > SHOWN_LINES);
            }
        }
    }

    /// Sets each step's thread and the thread that ran next, in order.
    fn who(steps: &mut [ScheduleStep], threads: &[(ThreadId, ThreadId)]) {
        for (s, &(thread, next)) in steps.iter_mut().zip(threads) {
            s.thread = thread;
            s.next = next;
        }
    }

    /// The schedule as `write_schedule` prints it.
    fn rendered(steps: &[ScheduleStep]) -> String {
        struct Table<'a>(&'a [ScheduleStep]);
        impl fmt::Display for Table<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write_schedule(f, self.0)
            }
        }
        Table(steps).to_string()
    }

    #[test]
    fn a_preempted_operation_is_shown_pending_and_where_it_ran() {
        let mut steps = vec![
            step(0, "t2", "load A -> 0", "a.rs:1", false),
            step(1, "t2", "store A = 1", "a.rs:2", true),
            step(2, "t1", "load A -> 0", "a.rs:1", false),
            step(3, "t1", "store A = 1", "a.rs:2", false),
            step(4, "t1", "exit", "a.rs:3", false),
            step(5, "t2", "exit", "a.rs:3", false),
        ];
        let (t1, t2) = (ThreadId(1), ThreadId(2));
        who(&mut steps, &[(t2, t2), (t2, t1), (t1, t1), (t1, t1), (t1, t2), (t2, t2)]);
        let text = rendered(&steps);
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        assert!(lines[2].ends_with("<- preempted before it ran: t1"), "{text}");
        // t2's store runs after t1 exits, before t2's exit: not before t1's load.
        assert!(lines[5].contains("t1") && lines[5].contains("exit"), "{text}");
        assert!(lines[6].contains("t2       store A = 1"), "{text}");
        assert!(lines[6].ends_with("<- runs now (pending since step 1)"), "{text}");
        assert!(lines[7].contains("t2") && lines[7].contains("exit"), "{text}");
    }

    #[test]
    fn a_preempted_unlock_or_spawn_had_run_and_is_not_shown_again() {
        // An unlock's and a spawn's scheduling point follows them: preempted there, the
        // thread had released the lock (had created the thread), so t2 may lock at once and
        // nothing of the step is pending when t1 runs again.
        let mut steps = vec![
            step(0, "t1", "spawn", "a.rs:1", true),
            step(1, "t2", "lock M", "a.rs:5", false),
            step(2, "t2", "unlock M", "a.rs:5", true),
            step(3, "t1", "lock M", "a.rs:2", false),
            step(4, "t1", "exit", "a.rs:3", false),
        ];
        let (t1, t2) = (ThreadId(1), ThreadId(2));
        who(&mut steps, &[(t1, t2), (t2, t2), (t2, t1), (t1, t1), (t1, t1)]);
        let trace_steps = steps.clone();
        let text = rendered(&trace_steps);
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        assert_eq!(lines.len(), 6, "one line per step, no pending one:\n{text}");
        assert!(lines[1].ends_with("<- preempted after it ran: t2"), "{text}");
        assert!(lines[3].ends_with("<- preempted after it ran: t1"), "{text}");
        assert!(!text.contains("runs now"), "{text}");
    }

    #[test]
    fn a_switch_at_a_join_is_not_a_preemption() {
        let at = Location::caller();
        let step = |kind, chosen| Step {
            thread: ThreadId(0),
            kind,
            object: None,
            location: at,
            chosen: ThreadId(chosen),
            value: None,
            waits: false,
            var_access: 0,
        };
        assert!(!step(EventKind::Join, 1).is_preemption());
        // A lock another thread holds: the thread waits, nobody preempts it.
        let waits = Step { waits: true, ..step(EventKind::Lock, 1) };
        assert!(!waits.is_preemption());
        assert!(step(EventKind::Lock, 1).is_preemption());
        assert!(!step(EventKind::Block, 1).is_preemption());
        assert!(step(EventKind::AtomicLoad, 1).is_preemption());
        assert!(!step(EventKind::AtomicLoad, 0).is_preemption());
    }

    #[test]
    fn numbers_and_locations() {
        for n in [0, 1, 9, 10, 99, 100, 12_345, u64::MAX] {
            let mut out = String::new();
            push_u64(&mut out, n);
            assert_eq!(out, n.to_string());
        }
        let here = Location::caller();
        let full = here.to_string();
        assert_eq!(without_column(here), full[..full.rfind(':').unwrap()]);
    }
}
