//! What a run asks of the instrumentation: the static pass's variables for its variable
//! table, the sessions a variable-bounding search runs under, and how a replay token names the
//! session its execution needs.
//!
//! A search of PCTVB or the combined strategy over a program with `#[pctvb::instrument]`ed
//! code profiles with every static variable tracked (so the accesses of heap variables are
//! scheduling points and their `k_q` is measured), then runs each execution tracking only the
//! variables its strategy chose, with primitive gating: the paper's variable bounding, where
//! only the chosen variables' accesses yield to the scheduler. An execution's schedule then
//! depends on the session it ran under, so the token of a failure found under one carries it
//! in its strategy text (see [`token_suffix`]) and a replay starts the same session. This
//! module never decides which variables to track: the strategy does.

use super::session::{session, track, Tracking};
use super::{registry, variables, Selection, StaticVarId};
use std::collections::HashSet;

use crate::vars::{VarInfo, VarProfile};

/// Marks the session in a replay token's strategy text.
const TAG: &str = " [instrument: ";

/// The variables the static pass found, as a run's variable table knows them.
pub(crate) fn static_var_infos() -> Vec<VarInfo> {
    variables().iter().map(|v| v.var_info()).collect()
}

/// The session a variable-bounding search profiles under: every static variable tracked, no
/// gating. `None` when this thread already has a session (the user's own comes first) or no
/// instrumented code is linked.
pub(crate) fn profiling_session() -> Option<Tracking> {
    if session().is_some() || registry().var_count() == 0 {
        return None;
    }
    Some(track(Selection::All))
}

/// The variables `Q` counts beside the shared ones, as indices into a run's variable table
/// (`vars`, with their `profiles` after profiling): those the static pass found in an
/// instrumented item the profiling executions entered (accessed one of its variables) that no
/// profiling execution accessed. Profiling tracked every variable, so these are variables the
/// code under test has but its profiled executions never reached; items the run never entered
/// (other tests' code linked into the same binary) are left out, so `Q` does not depend on
/// what else the binary holds.
pub(crate) fn unmet_in_entered_items(vars: &[VarInfo], profiles: &[VarProfile]) -> Vec<usize> {
    let statics = variables();
    let item = |info: &VarInfo| super::static_var_of(info).map(|id| statics[id.0 as usize].module);
    let entered: HashSet<&str> = vars
        .iter()
        .zip(profiles)
        .filter(|(_, p)| p.max_accesses > 0)
        .filter_map(|(v, _)| item(v))
        .collect();
    let unmet = |v: &VarInfo, p: &VarProfile| {
        p.max_accesses == 0 && !p.shared && item(v).is_some_and(|m| entered.contains(m))
    };
    let both = vars.iter().zip(profiles).enumerate();
    both.filter(|(_, (v, p))| unmet(v, p)).map(|(i, _)| i).collect()
}

/// The static variables among `vars` (a run's variables, e.g. an execution's chosen ones).
pub(crate) fn static_ids(vars: &[VarInfo]) -> Vec<StaticVarId> {
    vars.iter().filter_map(super::static_var_of).collect()
}

/// What a replay token's strategy text gets for an execution that ran under a session
/// tracking `tracked` (`None`: every variable), with or without primitive gating: the
/// variables by creation site, which stay the same across rebuilds where ids may not.
pub(crate) fn token_suffix(tracked: Option<&[StaticVarId]>, gate: bool) -> String {
    let mut out = String::from(TAG);
    if gate {
        out.push_str("gate ");
    }
    match tracked {
        None => out.push_str("all"),
        Some(ids) => {
            let vars = variables();
            let sites: Vec<String> = ids
                .iter()
                .map(|id| {
                    let v = &vars[id.0 as usize];
                    format!("{}:{}:{}", v.file, v.line, v.column)
                })
                .collect();
            out.push_str(if sites.is_empty() { "none" } else { "" });
            out.push_str(&sites.join(" | "));
        }
    }
    out.push(']');
    out
}

/// Starts the session a token's execution ran under, if its strategy text names one (see
/// [`token_suffix`]). An error names a variable this program does not have.
pub(crate) fn session_for_token(strategy: &str) -> Result<Option<Tracking>, String> {
    let Some(at) = strategy.find(TAG) else { return Ok(None) };
    let spec = strategy[at + TAG.len()..].trim_end_matches(']');
    let (gate, spec) = match spec.strip_prefix("gate ") {
        Some(rest) => (true, rest),
        None => (false, spec),
    };
    let selection = match spec {
        "all" => Selection::All,
        "none" => Selection::Nothing,
        list => {
            let mut ids = Vec::new();
            for site in list.split(" | ") {
                ids.push(static_var_at(site).ok_or_else(|| {
                    format!(
                        "the replay token's execution tracked the instrumented variable created \
                         at {site}, which this program does not have (the code changed since the \
                         token was recorded); run the test without the token to search again"
                    )
                })?);
            }
            Selection::Vars(ids)
        }
    };
    if session().is_some() {
        return Err("the replay token needs its own #[pctvb::instrument] tracking session, but \
                    this thread already has one: replay outside `pctvb::instrument::track`"
            .into());
    }
    Ok(Some(track(selection).gate_primitives(gate)))
}

/// The static variable created at `file:line:column`.
fn static_var_at(site: &str) -> Option<StaticVarId> {
    let mut parts = site.rsplitn(3, ':');
    let column = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    let file = parts.next()?;
    variables()
        .into_iter()
        .find(|v| v.file == file && v.line == line && v.column == column)
        .map(|v| v.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_without_a_session_starts_none() {
        assert!(session_for_token("combined(d=2,v=1,t=2)").unwrap().is_none());
    }

    #[test]
    fn suffixes_name_all_or_nothing_and_gating() {
        assert_eq!(token_suffix(None, false), " [instrument: all]");
        assert_eq!(token_suffix(Some(&[]), true), " [instrument: gate none]");
    }

    #[test]
    fn an_unknown_variable_is_an_error_that_says_what_to_do() {
        let e = session_for_token("pctvb(d=2,v=1) [instrument: gate src/gone.rs:3:9]")
            .err()
            .expect("no such variable in this program");
        assert!(e.contains("src/gone.rs:3:9") && e.contains("without the token"), "{e}");
    }
}
