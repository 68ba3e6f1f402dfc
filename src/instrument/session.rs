//! Tracking sessions: which variables are tracked, per OS thread, and the per-execution record
//! (heap variables, shadow stacks) of the execution running on that thread.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use super::registry::registry;
use super::{Selection, StaticVarId, Stats};
use crate::runtime::Handle;

/// Starts tracking `selection`: arms the hooks whose may-access set intersects it, until the
/// returned guard is dropped.
///
/// A session is process-wide (runs spread executions over worker threads): one session exists
/// at a time (`track` waits for the previous one to end), and every run in the process sees it
/// while it lasts, so tests that track should not run at the same time as other tests that use
/// the same instrumented code. Call it around `Config::run`, not inside a test body (a body
/// runs once per execution, and two logical threads waiting for the session would deadlock).
pub fn track(selection: impl Into<Selection>) -> Tracking {
    let selection = selection.into();
    let lock = SESSION_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let reg = registry();
    let tracked: HashSet<StaticVarId> = match &selection {
        Selection::Nothing => HashSet::new(),
        Selection::All => (0..reg.var_count()).map(|i| StaticVarId(i as u32)).collect(),
        Selection::Vars(v) => v.iter().copied().collect(),
    };
    let mut armed = Vec::new();
    let mut hooked_sites = 0;
    for (mi, m) in reg.modules.iter().enumerate() {
        let base = reg.var_base[mi];
        for (i, s) in m.sites.iter().enumerate() {
            if !s.hooked {
                continue;
            }
            hooked_sites += 1;
            let hit = if s.anything {
                !tracked.is_empty()
            } else {
                s.may.iter().any(|&v| tracked.contains(&StaticVarId((base + v as usize) as u32)))
            };
            if hit {
                m.armed[i].fetch_add(1, Ordering::Relaxed);
                armed.push((mi, i));
            }
        }
    }
    let mut statics = Vec::new();
    for (mi, m) in reg.modules.iter().enumerate() {
        for &(v, address) in m.statics {
            let id = StaticVarId((reg.var_base[mi] + v as usize) as u32);
            if tracked.contains(&id) {
                let (start, size, site) = address();
                statics.push((start, start + size.max(1), id, Box::new(Handle::at(site))));
            }
        }
    }
    drop(reg);
    let session = Session {
        id: SESSION_IDS.fetch_add(1, Ordering::Relaxed),
        tracked,
        soundness: AtomicBool::new(false),
        gate: AtomicBool::new(false),
        loop_bound: AtomicU64::new(NO_BOUND),
        statics,
        stats: Mutex::new(Stats { hooked_sites, armed_sites: armed.len(), ..Stats::default() }),
    };
    *SESSION.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(session));
    Tracking {
        armed,
        checked: Vec::new(),
        soundness: false,
        loop_bound: false,
        gate: false,
        _lock: lock,
    }
}

/// What [`search_loop_bounds`] found.
#[derive(Debug)]
pub struct LoopSearch {
    /// The smallest loop-iteration bound at which a run failed, if one did.
    pub failed_at: Option<u32>,
    /// The report of the last run (the failing one, or the run at the largest bound).
    pub report: crate::Report,
}

/// Loop-iteration bounding as a search (the paper's Figure 5 with `l` rising): runs `config`
/// on `body` with `selection` tracked and the loop-iteration bound `l = 0, 1, ..., max_l`,
/// stopping at the first failing run. Bugs among the first few objects a loop allocates are
/// found at small `l`, where fewer variables are tracked.
#[track_caller]
pub fn search_loop_bounds<F: Fn() + Sync>(
    config: &crate::Config,
    selection: impl Into<Selection>,
    max_l: u32,
    body: F,
) -> LoopSearch {
    let selection = selection.into();
    let mut l = 0;
    loop {
        let _tracking = track(selection.clone()).loop_bound(Some(l));
        let report = config.run(&body);
        if report.failure().is_some() {
            return LoopSearch { failed_at: Some(l), report };
        }
        if l >= max_l {
            return LoopSearch { failed_at: None, report };
        }
        l += 1;
    }
}

/// A tracking session; dropping it disarms its hooks.
#[must_use = "tracking stops when the guard is dropped"]
pub struct Tracking {
    armed: Vec<(usize, usize)>,
    /// Sites armed only for the soundness check (hook code whose may-access set does not
    /// intersect the selection).
    checked: Vec<(usize, usize)>,
    soundness: bool,
    loop_bound: bool,
    gate: bool,
    _lock: MutexGuard<'static, ()>,
}

impl Tracking {
    /// Turns the soundness check on or off for this session (see the module docs).
    pub fn soundness_check(mut self, on: bool) -> Tracking {
        if on != self.soundness {
            let reg = registry();
            if on {
                SOUNDNESS_SESSIONS.fetch_add(1, Ordering::Relaxed);
                // Arm every site with hook code, so a raw access to a tracked variable at a
                // site whose may-access set misses it is seen (and fails) instead of skipped.
                for (mi, m) in reg.modules.iter().enumerate() {
                    for (i, s) in m.sites.iter().enumerate() {
                        if s.emitted && !self.armed.contains(&(mi, i)) {
                            m.armed[i].fetch_add(1, Ordering::Relaxed);
                            self.checked.push((mi, i));
                        }
                    }
                }
            } else {
                SOUNDNESS_SESSIONS.fetch_sub(1, Ordering::Relaxed);
                for &(mi, i) in &self.checked {
                    reg.modules[mi].armed[i].fetch_sub(1, Ordering::Relaxed);
                }
                self.checked.clear();
            }
            self.soundness = on;
        }
        if let Some(s) = session() {
            s.soundness.store(on, Ordering::Relaxed);
        }
        self
    }

    /// Loop-iteration bounding (the paper's Figure 5): with `Some(l)`, an allocation of a
    /// tracked heap variable is tracked only if its loop-iteration number, how many times its
    /// site already allocated with an identical call stack in this execution, is at most `l`.
    /// Call stacks come from a shadow stack the instrumented functions maintain (calls through
    /// code outside instrumented items do not appear in it). A search raises `l` over time.
    pub fn loop_bound(mut self, l: Option<u32>) -> Tracking {
        let on = l.is_some();
        if on != self.loop_bound {
            if on {
                LOOP_SESSIONS.fetch_add(1, Ordering::Relaxed);
            } else {
                LOOP_SESSIONS.fetch_sub(1, Ordering::Relaxed);
            }
            self.loop_bound = on;
        }
        if let Some(s) = session() {
            s.loop_bound.store(l.map_or(NO_BOUND, u64::from), Ordering::Relaxed);
        }
        self
    }

    /// Variable bounding for primitives: with `true`, an atomic operation or `UnsafeCell`
    /// access (`with`, `with_mut`) on an object whose variable the static pass found but which
    /// is not tracked is not a scheduling point, as an access at an unarmed site of the paper
    /// (synchronization operations, spawn and join always are). Objects created outside
    /// instrumented code are not affected. Every 1000 skipped accesses of an execution one
    /// scheduling point is kept, so a spin loop on an untracked flag still reaches the
    /// step limit instead of hanging. Replaying a failure needs the same session.
    pub fn gate_primitives(mut self, on: bool) -> Tracking {
        if on != self.gate {
            if on {
                GATE_SESSIONS.fetch_add(1, Ordering::Relaxed);
            } else {
                GATE_SESSIONS.fetch_sub(1, Ordering::Relaxed);
            }
            self.gate = on;
        }
        if let Some(s) = session() {
            s.gate.store(on, Ordering::Relaxed);
        }
        self
    }

    /// The session's counters so far.
    pub fn stats(&self) -> Stats {
        session()
            .map(|s| s.stats.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .unwrap_or_default()
    }
}

impl Drop for Tracking {
    fn drop(&mut self) {
        *SESSION.write().unwrap_or_else(|e| e.into_inner()) = None;
        let reg = registry();
        for &(mi, i) in self.armed.iter().chain(&self.checked) {
            reg.modules[mi].armed[i].fetch_sub(1, Ordering::Relaxed);
        }
        if self.soundness {
            SOUNDNESS_SESSIONS.fetch_sub(1, Ordering::Relaxed);
        }
        if self.loop_bound {
            LOOP_SESSIONS.fetch_sub(1, Ordering::Relaxed);
        }
        if self.gate {
            GATE_SESSIONS.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

const NO_BOUND: u64 = u64::MAX;

/// The active tracking session.
pub(super) struct Session {
    pub(super) id: u64,
    pub(super) tracked: HashSet<StaticVarId>,
    pub(super) soundness: AtomicBool,
    /// Whether data accesses of untracked static variables are not scheduling points.
    pub(super) gate: AtomicBool,
    /// Loop-iteration bound `l` ([`NO_BOUND`]: none).
    pub(super) loop_bound: AtomicU64,
    /// Tracked statics: (start, end, variable, handle).
    pub(super) statics: Vec<(usize, usize, StaticVarId, Box<Handle>)>,
    pub(super) stats: Mutex<Stats>,
}

impl Session {
    pub(super) fn stats(&self) -> MutexGuard<'_, Stats> {
        self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn loop_bound(&self) -> Option<u32> {
        let l = self.loop_bound.load(Ordering::Relaxed);
        (l != NO_BOUND).then_some(l as u32)
    }
}

static SESSION: RwLock<Option<Arc<Session>>> = RwLock::new(None);
static SESSION_LOCK: Mutex<()> = Mutex::new(());
static SESSION_IDS: AtomicU64 = AtomicU64::new(1);

pub(super) fn session() -> Option<Arc<Session>> {
    SESSION.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// What the execution running on this OS thread did so far (an OS thread runs one execution
/// at a time): its tracked heap variables, the shadow stacks of its logical threads, and its
/// allocation counts per (site, call stack) and per site.
#[derive(Default)]
pub(super) struct Local {
    pub(super) session: u64,
    pub(super) gen: u64,
    /// Live tracked heap variables: start -> (end, variable, handle).
    pub(super) heap: BTreeMap<usize, (usize, StaticVarId, Box<Handle>)>,
    /// Shadow call stack of each logical thread (function ids), by thread index.
    pub(super) stacks: HashMap<usize, Vec<u64>>,
    /// (allocation site, call-stack hash) -> allocations so far: the next loop-iteration number.
    pub(super) loop_counts: HashMap<(usize, u64), u32>,
    /// Allocation site -> allocations so far: the next instance number.
    pub(super) instances: HashMap<usize, u32>,
    /// Gating decisions by object id: 0 not decided yet, 1 schedule, 2 skip.
    pub(super) gate: Vec<u8>,
    /// Data accesses skipped by gating since the last forced scheduling point.
    pub(super) skipped: u32,
}

thread_local! {
    static LOCAL: RefCell<Local> = RefCell::new(Local::default());
}

/// Runs `f` on this OS thread's record of execution `gen` of session `session`, starting a
/// fresh one when either changed.
pub(super) fn with_local<R>(session: u64, gen: u64, f: impl FnOnce(&mut Local) -> R) -> R {
    LOCAL.with(|l| {
        let mut l = l.borrow_mut();
        if l.session != session || l.gen != gen {
            *l = Local { session, gen, ..Local::default() };
        }
        f(&mut l)
    })
}

/// The tracked variable whose memory holds `addr`, and the handle naming it.
pub(super) fn find(
    session: &Session,
    gen: u64,
    addr: usize,
) -> Option<(StaticVarId, *const Handle)> {
    let heap = with_local(session.id, gen, |l| {
        let (_, (end, var, handle)) = l.heap.range(..=addr).next_back()?;
        (addr < *end).then_some((*var, &**handle as *const Handle))
    });
    heap.or_else(|| {
        session
            .statics
            .iter()
            .find(|(s, e, _, _)| (*s..*e).contains(&addr))
            .map(|(_, _, v, h)| (*v, &**h as *const Handle))
    })
}

/// Sessions with the soundness check on, process-wide: the check in the scheduling point
/// costs one load while this is 0.
pub(super) static SOUNDNESS_SESSIONS: AtomicUsize = AtomicUsize::new(0);

/// Sessions gating primitive data accesses, process-wide: the gate in the scheduling point
/// costs one load while this is 0.
pub(super) static GATE_SESSIONS: AtomicUsize = AtomicUsize::new(0);

/// Skipped data accesses after which one scheduling point is kept anyway.
pub(super) const GATE_FORCE_EVERY: u32 = 1000;

/// Sessions bounding loop iterations, process-wide: instrumented functions maintain the
/// shadow stack only while this is not 0.
pub(super) static LOOP_SESSIONS: AtomicUsize = AtomicUsize::new(0);
