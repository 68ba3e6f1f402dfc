//! What the runtime asks at a primitive operation: whether gating makes it no scheduling
//! point, and the soundness check.

use std::panic::Location;
use std::sync::atomic::Ordering;

use super::registry::{registry, Registry};
use super::session::{session, with_local, with_session, Local, GATE_FORCE_EVERY};
use super::{SiteId, SiteKind, StaticVarId};
use crate::runtime::{with_execution, EventKind, ObjectId};

/// when a guard drops, `Once` also when a `LazyLock` is dereferenced, and a condvar's relock
/// inside `wait`: none of them has a site of its own.
/// Event kinds the soundness check covers: operations with a syntactic site. Unlocks happen
fn checked(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::AtomicLoad
            | EventKind::AtomicStore
            | EventKind::AtomicRmw
            | EventKind::Lock
            | EventKind::ReadLock
            | EventKind::WriteLock
            | EventKind::CellRead
            | EventKind::CellWrite
            | EventKind::CondvarWait
            | EventKind::CondvarNotify
            | EventKind::BarrierWait
            | EventKind::Send
            | EventKind::Recv
    )
}

/// Installs [`gate`] and [`check_operation`] into the engine's scheduling point (before a
/// session switches either on).
pub(super) fn install_hooks() {
    crate::runtime::hooks::install(crate::runtime::hooks::PointHooks { check_operation, gate });
}

/// Whether an operation of kind `kind` on object `object` of execution `gen`, created at
/// `var_site`, is a scheduling point under the gating session (see
/// [`Tracking::gate_primitives`]).
#[cold]
#[inline(never)]
fn gate(object: ObjectId, gen: u64, var_site: &'static Location<'static>, kind: EventKind) -> bool {
    if !kind.is_value_access() {
        return true;
    }
    with_session(|s| {
        let Some(s) = s.filter(|s| s.gate.load(Ordering::Relaxed)) else { return true };
        let i = object.index();
        // The common case, an object already decided: one borrow of the execution's record.
        let decided = with_local(s.id, gen, |l| match l.gate.get(i) {
            Some(1) => Some(true),
            Some(2) => Some(skip_one(l)),
            _ => None,
        });
        if let Some(schedule) = decided {
            return schedule;
        }
        // Decided once per object and execution, outside the record's borrow (a session that
        // follows the strategy reads the execution's chosen variables).
        let key = (var_site.file(), var_site.line(), var_site.column());
        let var = registry().by_key.get(&key).copied();
        let skip = var.is_some_and(|v| !s.tracks(gen, v));
        with_local(s.id, gen, |l| {
            if l.gate.len() <= i {
                l.gate.resize(i + 1, 0);
            }
            l.gate[i] = if skip { 2 } else { 1 };
        });
        if !skip {
            return true;
        }
        with_local(s.id, gen, skip_one)
    })
}

/// Counts one gated access; whether it is kept as a scheduling point anyway (one in
/// [`GATE_FORCE_EVERY`], so spin loops on untracked flags still end).
fn skip_one(l: &mut Local) -> bool {
    l.skipped += 1;
    let keep = l.skipped >= GATE_FORCE_EVERY;
    if keep {
        l.skipped = 0;
    }
    keep
}

/// The soundness check of one operation on a pctvb object created at `var_site`, performed at
/// `location`: if the object is a tracked variable, some armed site at `location` must list it.
#[cold]
#[inline(never)]
fn check_operation(
    var_site: &'static Location<'static>,
    kind: EventKind,
    location: &'static Location<'static>,
) {
    if !checked(kind) {
        return;
    }
    let key = (var_site.file(), var_site.line(), var_site.column());
    let Some(var) = registry().by_key.get(&key).copied() else {
        return;
    };
    let Some(s) = session() else { return };
    if !s.soundness.load(Ordering::Relaxed) {
        return;
    }
    let gen = with_execution("instrumented access", |ex| ex.generation());
    if !s.tracks(gen, var) {
        return;
    }
    let reg = registry();
    let key = (location.file(), location.line(), location.column());
    let mut through = None;
    for &(mi, i) in reg.sites_at.get(&key).map(Vec::as_slice).unwrap_or(&[]) {
        let m = reg.modules[mi];
        let site = &m.sites[i];
        let listed = site.anything
            || site.may.iter().any(|&v| reg.var_base[mi] + v as usize == var.0 as usize);
        let relock = kind == EventKind::Lock && site.kind == SiteKind::Wait;
        // (With the check on, every site with hook code is armed by the session; a site
        // listing the variable was armed by the selection itself.)
        if site.hooked && (listed || relock) && s.arms(m, i) {
            through = Some(SiteId((reg.site_base[mi] + i) as u32));
        }
    }
    if let Some(site) = through {
        s.stats().touched_sites.insert(site);
        return;
    }
    let name = describe_var(&reg, var);
    drop(reg);
    let message = format!(
        "pctvb::instrument soundness check: {kind} of tracked variable {name} at {location} did \
         not go through an armed hook (the site is not in instrumented code, or the alias pass \
         missed that it may access this variable)"
    );
    s.stats().misses.push(message.clone());
    panic!("{message}");
}

pub(super) fn describe_var(reg: &Registry, var: StaticVarId) -> String {
    let mut i = var.0 as usize;
    for m in &reg.modules {
        if i < m.vars.len() {
            let v = &m.vars[i];
            return format!("`{}` ({:?} at {}:{}:{})", v.name, v.kind, v.file, v.line, v.column);
        }
        i -= m.vars.len();
    }
    format!("#{}", var.0)
}
