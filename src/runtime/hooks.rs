//! Checks other modules install into the scheduling point, so that the engine never names
//! them: `#[pctvb::instrument]`'s soundness check and its gating of primitive data accesses
//! (see `crate::instrument`). The engine owns the switches (one relaxed load of
//! [`ANY_SESSIONS`] at a scheduling point while neither is switched on) and calls through the
//! installed functions; the instrument module installs them when a session first needs them
//! and counts its sessions in the switches ([`count_session`]).
//!
//! This file owns the switches and the installed functions; it knows nothing of sessions,
//! sites or variables.

use std::panic::Location;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use super::{EventKind, ObjectId};

/// Sessions with the soundness check on, process-wide.
static SOUNDNESS_SESSIONS: AtomicUsize = AtomicUsize::new(0);

/// Sessions gating primitive data accesses, process-wide.
static GATE_SESSIONS: AtomicUsize = AtomicUsize::new(0);

/// The two counts above added up: a scheduling point loads this one alone while no session
/// has either switch on (two loads and tests cost 4 instructions more a point).
static ANY_SESSIONS: AtomicUsize = AtomicUsize::new(0);

/// The switches a session turns, each counted in its own count and in [`ANY_SESSIONS`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Switch {
    /// The soundness check ([`SOUNDNESS_SESSIONS`]).
    Soundness,
    /// The gating of primitive data accesses ([`GATE_SESSIONS`]).
    Gate,
}

/// A session turns `switch` on or off. (The counts are private here, so that no other count
/// can be passed in and put [`ANY_SESSIONS`] out of step with them.)
pub(crate) fn count_session(switch: Switch, on: bool) {
    let count = match switch {
        Switch::Soundness => &SOUNDNESS_SESSIONS,
        Switch::Gate => &GATE_SESSIONS,
    };
    if on {
        count.fetch_add(1, Ordering::Relaxed);
        ANY_SESSIONS.fetch_add(1, Ordering::Relaxed);
    } else {
        count.fetch_sub(1, Ordering::Relaxed);
        ANY_SESSIONS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The functions a scheduling point calls while a switch is on.
pub(crate) struct PointHooks {
    /// The soundness check of one operation of kind `kind` on an object created at the first
    /// location, performed at the second.
    pub(crate) check_operation:
        fn(&'static Location<'static>, EventKind, &'static Location<'static>),
    /// Whether an operation on `object` of execution `gen` (created at the location) is a
    /// scheduling point under the gating session.
    pub(crate) gate: fn(ObjectId, u64, &'static Location<'static>, EventKind) -> bool,
}

static HOOKS: OnceLock<PointHooks> = OnceLock::new();

/// Installs the hooks (the first installation stays; there is one instrument module).
pub(crate) fn install(hooks: PointHooks) {
    let _ = HOOKS.set(hooks);
}

/// Whether some session has either switch on (one relaxed load).
#[inline]
pub(super) fn any_active() -> bool {
    ANY_SESSIONS.load(Ordering::Relaxed) != 0
}

/// Whether some session has the soundness check on (one relaxed load).
#[inline]
pub(super) fn soundness_active() -> bool {
    SOUNDNESS_SESSIONS.load(Ordering::Relaxed) != 0
}

/// Whether some session gates primitive data accesses (one relaxed load).
#[inline]
pub(super) fn gating_active() -> bool {
    GATE_SESSIONS.load(Ordering::Relaxed) != 0
}

/// Runs the installed soundness check, if any.
#[cold]
pub(super) fn check_operation(
    var_site: &'static Location<'static>,
    kind: EventKind,
    location: &'static Location<'static>,
) {
    if let Some(hooks) = HOOKS.get() {
        (hooks.check_operation)(var_site, kind, location);
    }
}

/// Asks the installed gate; without one every operation is a scheduling point.
#[cold]
pub(super) fn gate(
    object: ObjectId,
    gen: u64,
    var_site: &'static Location<'static>,
    kind: EventKind,
) -> bool {
    HOOKS.get().is_none_or(|hooks| (hooks.gate)(object, gen, var_site, kind))
}
