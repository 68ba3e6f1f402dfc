//! Tracking sessions: which variables are tracked, per OS thread, and the per-execution record
//! (heap variables, shadow stacks) of the execution running on that thread.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::__rt;
use super::registry::registry;
use super::{Selection, StaticVarId, Stats};
use crate::runtime::hooks::Switch;
use crate::runtime::{with_execution, Handle};
use crate::vars::{VarId, VarInfo, VarKind};

/// Starts tracking `selection` on this OS thread: arms the hooks whose may-access set
/// intersects it, until the returned guard is dropped.
///
/// A session belongs to the OS thread that started it: runs on that thread (and the worker
/// threads a run spreads its executions over) see it, other tests running at the same time do
/// not. Sessions do not nest: starting one while this thread has one panics. Call it around
/// `Config::run`, not inside a test body (a body runs once per execution).
///
/// Runs of the variable-bounding strategies (PCTVB and the combined strategy) start a session
/// of their own when the program has instrumented code and none is active (see
/// [`Config::instrument_tracking`](crate::Config::instrument_tracking)); a session started
/// here takes precedence over it.
#[track_caller]
pub fn track(selection: impl Into<Selection>) -> Tracking {
    let selection = selection.into();
    let count = registry().var_count();
    let mut tracked = vec![matches!(selection, Selection::All); count];
    if let Selection::Vars(ids) = &selection {
        for id in ids {
            if let Some(t) = tracked.get_mut(id.0 as usize) {
                *t = true;
            }
        }
    }
    start(Scope::Fixed(tracked))
}

/// A session that tracks, in each execution, the variables the execution's strategy chose
/// ([`Strategy::chosen_variables`](crate::schedulers::Strategy::chosen_variables)), with
/// primitive gating on: the paper's variable bounding with instrumentation, where only the
/// accesses of the chosen variables are scheduling points. `None` when this thread already has
/// a session or no instrumented code is linked.
pub(crate) fn follow_strategy() -> Option<Tracking> {
    if current().is_some() || registry().var_count() == 0 {
        return None;
    }
    Some(start(Scope::FollowStrategy).gate_primitives(true))
}

fn start(scope: Scope) -> Tracking {
    if current().is_some() {
        panic!(
            "pctvb::instrument::track: a tracking session is already active on this thread; \
             drop its guard before starting another (sessions do not nest)"
        );
    }
    let reg = registry();
    let mut armed = HashSet::new();
    let mut hooked_sites = 0;
    for (mi, m) in reg.modules.iter().enumerate() {
        let base = reg.var_base[mi];
        for (i, s) in m.sites.iter().enumerate() {
            if !s.hooked {
                continue;
            }
            hooked_sites += 1;
            let hit = match &scope {
                // Which variables an execution tracks is known only once it starts: arm every
                // hooked site; the hooks ask the session about each access.
                Scope::FollowStrategy => true,
                Scope::Fixed(tracked) if s.anything => tracked.contains(&true),
                Scope::Fixed(tracked) => s.may.iter().any(|&v| tracked[base + v as usize]),
            };
            if hit {
                m.armed[i].fetch_add(1, Ordering::Relaxed);
                armed.insert((module_key(m), i));
            }
        }
    }
    let mut statics = Vec::new();
    for (mi, m) in reg.modules.iter().enumerate() {
        for &(v, address) in m.statics {
            let id = StaticVarId((reg.var_base[mi] + v as usize) as u32);
            let wanted = match &scope {
                Scope::FollowStrategy => true,
                Scope::Fixed(tracked) => tracked[id.0 as usize],
            };
            if wanted {
                let (start, size, site) = address();
                statics.push((start, start + size.max(1), id, Box::new(Handle::at(site))));
            }
        }
    }
    let var_infos = reg
        .modules
        .iter()
        .flat_map(|m| m.vars.iter().map(|v| VarInfo { site: v.location, kind: v.kind.var_kind() }))
        .collect();
    let var_bases = reg.modules.iter().map(|m| module_key(m)).zip(reg.var_base.clone()).collect();
    drop(reg);
    let armed_sites = armed.len();
    let session = Arc::new(Session {
        id: SESSION_IDS.fetch_add(1, Ordering::Relaxed),
        scope,
        armed,
        var_infos,
        var_bases,
        hits: AtomicU64::new(0),
        soundness: AtomicBool::new(false),
        gate: AtomicBool::new(false),
        loop_bound: AtomicU64::new(NO_BOUND),
        statics,
        stats: Mutex::new(Stats { hooked_sites, armed_sites, ..Stats::default() }),
    });
    CURRENT.with(|c| *c.borrow_mut() = Some(session.clone()));
    Tracking { session, _not_send: PhantomData }
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
/// found at small `l`, where fewer variables are tracked. With the systematic strategy
/// ([`crate::StrategyKind::systematic`]) this is the paper's exhaustive search with `l`
/// rising: a level that completes without a failure proves there is no bug within its bounds
/// among the objects tracked at that `l`.
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

/// A tracking session; dropping it disarms its hooks. It belongs to the OS thread that
/// started it (it is not `Send`).
#[must_use = "tracking stops when the guard is dropped"]
pub struct Tracking {
    session: Arc<Session>,
    _not_send: PhantomData<*const ()>,
}

impl Tracking {
    /// Turns the soundness check on or off for this session (see the module docs).
    pub fn soundness_check(self, on: bool) -> Tracking {
        if on != self.session.soundness.load(Ordering::Relaxed) {
            let reg = registry();
            // With the check on, every site with hook code is armed, so a raw access to a
            // tracked variable at a site whose may-access set misses it is seen (and fails)
            // instead of skipped.
            for m in &reg.modules {
                for (i, s) in m.sites.iter().enumerate() {
                    if s.emitted && !self.session.armed.contains(&(module_key(m), i)) {
                        if on {
                            m.armed[i].fetch_add(1, Ordering::Relaxed);
                        } else {
                            m.armed[i].fetch_sub(1, Ordering::Relaxed);
                        }
                    }
                }
            }
            hook_count(Switch::Soundness, on);
            self.session.soundness.store(on, Ordering::Relaxed);
        }
        self
    }

    /// Loop-iteration bounding (the paper's Figure 5): with `Some(l)`, an allocation of a
    /// tracked heap variable is tracked only if its loop-iteration number, how many times its
    /// site already allocated with an identical call stack in this execution, is at most `l`.
    /// Call stacks come from a shadow stack the instrumented functions maintain (calls through
    /// code outside instrumented items do not appear in it). A search raises `l` over time.
    pub fn loop_bound(self, l: Option<u32>) -> Tracking {
        if l.is_some() != self.session.loop_bound().is_some() {
            flag_count(&LOOP_SESSIONS, l.is_some());
        }
        self.session.loop_bound.store(l.map_or(NO_BOUND, u64::from), Ordering::Relaxed);
        self
    }

    /// Variable bounding for primitives: with `true`, an atomic operation or `UnsafeCell`
    /// access (`with`, `with_mut`) on an object whose variable the static pass found but which
    /// is not tracked is not a scheduling point, as an access at an unarmed site of the paper
    /// (synchronization operations, spawn and join always are). Objects created outside
    /// instrumented code are not affected. Every 1000 skipped accesses of an execution one
    /// scheduling point is kept, so a spin loop on an untracked flag still reaches the
    /// step limit instead of hanging. Replaying a failure needs the same session (the replay
    /// tokens of runs that start their own session carry it).
    pub fn gate_primitives(self, on: bool) -> Tracking {
        if on != self.session.gate.load(Ordering::Relaxed) {
            hook_count(Switch::Gate, on);
            self.session.gate.store(on, Ordering::Relaxed);
        }
        self
    }

    /// The session's counters so far.
    pub fn stats(&self) -> Stats {
        let mut stats = self.session.stats().clone();
        stats.hits = self.session.hits.load(Ordering::Relaxed);
        stats
    }
}

impl Drop for Tracking {
    fn drop(&mut self) {
        CURRENT.with(|c| {
            let mut c = c.borrow_mut();
            if c.as_ref().is_some_and(|s| Arc::ptr_eq(s, &self.session)) {
                *c = None;
            }
        });
        let soundness = self.session.soundness.load(Ordering::Relaxed);
        let reg = registry();
        for m in &reg.modules {
            for (i, s) in m.sites.iter().enumerate() {
                let armed = self.session.armed.contains(&(module_key(m), i));
                if armed || (soundness && s.emitted) {
                    m.armed[i].fetch_sub(1, Ordering::Relaxed);
                }
            }
        }
        if soundness {
            hook_count(Switch::Soundness, false);
        }
        if self.session.loop_bound().is_some() {
            flag_count(&LOOP_SESSIONS, false);
        }
        if self.session.gate.load(Ordering::Relaxed) {
            hook_count(Switch::Gate, false);
        }
    }
}

fn flag_count(count: &AtomicUsize, on: bool) {
    if on {
        super::checks::install_hooks();
        count.fetch_add(1, Ordering::Relaxed);
    } else {
        count.fetch_sub(1, Ordering::Relaxed);
    }
}

/// [`flag_count`] for a switch of the scheduling point's hooks (`crate::runtime::hooks`),
/// which keeps those counts.
fn hook_count(switch: Switch, on: bool) {
    if on {
        super::checks::install_hooks();
    }
    crate::runtime::hooks::count_session(switch, on);
}

const NO_BOUND: u64 = u64::MAX;

/// Which variables a session tracks.
pub(super) enum Scope {
    /// These (by [`StaticVarId`] index), in every execution.
    Fixed(Vec<bool>),
    /// In each execution, the variables its strategy chose.
    FollowStrategy,
}

/// A tracking session.
pub(crate) struct Session {
    pub(super) id: u64,
    pub(super) scope: Scope,
    /// Sites this session armed ([`module_key`], site index); with the soundness check on,
    /// every site with hook code counts as armed too.
    pub(super) armed: HashSet<(usize, usize)>,
    /// Every static variable as a run's variable table names it (creation site and kind), by
    /// [`StaticVarId`] index, read without the registry's lock.
    pub(super) var_infos: Vec<VarInfo>,
    /// ([`module_key`], first [`StaticVarId`] index) of every registered item.
    pub(super) var_bases: Vec<(usize, usize)>,
    /// Armed hooks reached ([`Stats::hits`]), counted without the stats lock.
    pub(super) hits: AtomicU64,
    pub(super) soundness: AtomicBool,
    /// Whether data accesses of untracked static variables are not scheduling points.
    pub(super) gate: AtomicBool,
    /// Loop-iteration bound `l` ([`NO_BOUND`]: none).
    pub(super) loop_bound: AtomicU64,
    /// Statics that may be tracked: (start, end, variable, handle).
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

    /// Whether this session armed site `site` of `module` (a hook's check: no registry lookup).
    pub(super) fn arms(&self, module: &__rt::Module, site: usize) -> bool {
        let desc = &module.sites[site];
        let armed = match self.scope {
            // A session that follows the strategy armed every hooked site.
            Scope::FollowStrategy => desc.hooked,
            Scope::Fixed(_) => self.armed.contains(&(module_key(module), site)),
        };
        armed || (desc.emitted && self.soundness.load(Ordering::Relaxed))
    }

    /// The [`StaticVarId`] of local variable `local` of the item `module`.
    pub(super) fn var_of(&self, module: &__rt::Module, local: u32) -> Option<StaticVarId> {
        let key = module_key(module);
        let &(_, base) = self.var_bases.iter().find(|(m, _)| *m == key)?;
        Some(StaticVarId((base + local as usize) as u32))
    }

    /// Whether execution `gen` (running on this OS thread) tracks `var`.
    pub(super) fn tracks(&self, gen: u64, var: StaticVarId) -> bool {
        let i = var.0 as usize;
        match &self.scope {
            Scope::Fixed(tracked) => tracked.get(i).copied().unwrap_or(false),
            Scope::FollowStrategy => {
                let known = with_local(self.id, gen, |l| {
                    l.focus.as_ref().map(|f| f.get(i).copied().unwrap_or(false))
                });
                match known {
                    Some(tracked) => tracked,
                    None => {
                        // Asked once per execution, outside the record's borrow (reading the
                        // strategy borrows the execution's state).
                        let mut focus = vec![false; self.var_infos.len()];
                        for id in strategy_focus() {
                            if let Some(f) = focus.get_mut(id.0 as usize) {
                                *f = true;
                            }
                        }
                        let tracked = focus.get(i).copied().unwrap_or(false);
                        with_local(self.id, gen, |l| l.focus = Some(focus));
                        tracked
                    }
                }
            }
        }
    }
}

/// The static variables among the current execution's strategy's chosen variables; every
/// static variable when the strategy does not bound variables (the explorer a run
/// interleaves with its priority strategy).
fn strategy_focus() -> HashSet<StaticVarId> {
    let infos = with_execution("instrumented access", |ex| ex.chosen_vars());
    match infos {
        Some(infos) => infos.iter().filter_map(super::static_var_of).collect(),
        None => super::variables().iter().map(|v| v.id).collect(),
    }
}

thread_local! {
    /// This OS thread's session.
    static CURRENT: RefCell<Option<Arc<Session>>> = const { RefCell::new(None) };
}

static SESSION_IDS: AtomicU64 = AtomicU64::new(1);

/// This OS thread's session.
pub(super) fn session() -> Option<Arc<Session>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Runs `f` on this OS thread's session without taking a reference count (for the
/// per-access checks).
pub(super) fn with_session<R>(f: impl FnOnce(Option<&Session>) -> R) -> R {
    CURRENT.with(|c| f(c.borrow().as_deref()))
}

/// A registered item's identity in a session's armed set: its tables' address.
pub(super) fn module_key(module: &__rt::Module) -> usize {
    module as *const __rt::Module as usize
}

/// This OS thread's session, to hand to the worker threads of a run ([`enter`]).
pub(crate) fn current() -> Option<Arc<Session>> {
    session()
}

/// Makes `session` this OS thread's session until the guard drops (a run's worker threads see
/// the session of the thread that started the run).
pub(crate) fn enter(session: Option<Arc<Session>>) -> Entered {
    let previous = CURRENT.with(|c| std::mem::replace(&mut *c.borrow_mut(), session));
    Entered(previous)
}

/// Restores a worker thread's previous session when dropped.
pub(crate) struct Entered(Option<Arc<Session>>);

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

/// What the execution running on this OS thread did so far (an OS thread runs one execution
/// at a time): its tracked heap variables, the shadow stacks of its logical threads, and its
/// allocation counts per (site, call stack) and per site.
#[derive(Default)]
pub(super) struct Local {
    pub(super) session: u64,
    pub(super) gen: u64,
    /// Live heap variables: start -> (end, variable, handle). The handle (the runtime's name
    /// for the object) exists only for an allocation of a tracked variable; an untracked
    /// one's accesses are only counted ([`access`]).
    pub(super) heap: BTreeMap<usize, (usize, StaticVarId, Option<Box<Handle>>)>,
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
    /// The variables this execution tracks, by [`StaticVarId`] index, for a session that
    /// follows the strategy (read from the strategy on first use).
    pub(super) focus: Option<Vec<bool>>,
    /// The run's [`VarId`] of each static variable this execution counted an access of, by
    /// [`StaticVarId`] index, plus one (0: not looked up yet in this execution).
    pub(super) run_vars: Vec<u32>,
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

/// What an instrumented pointer access reached ([`access`]).
pub(super) enum Reached {
    /// A variable the execution tracks, the handle naming it and its kind (a heap variable or
    /// a static): a scheduling point.
    Tracked(StaticVarId, *const Handle, VarKind),
    /// A variable the execution does not track: counted, not scheduled.
    Counted(StaticVarId),
    /// No variable (memory of no instrumented allocation or static).
    Nothing,
}

/// The variable whose memory holds `addr`, for a pointer access in execution `gen`: a tracked
/// one is returned with its handle; an access of one the execution does not track is counted
/// here, towards the variable's sharing and `k_q` in the run's variable table, without a
/// scheduling point. The common cases take one borrow of this OS thread's execution record
/// and one of the execution's state: no lock, no hashing, no allocation (the first counted
/// access of a variable in an execution looks up its run id once).
pub(super) fn access(session: &Session, gen: u64, addr: usize) -> Reached {
    // A heap variable: its allocation recorded a handle exactly when the execution tracks it.
    let heap = with_local(session.id, gen, |l| {
        let (_, (end, var, handle)) = l.heap.range(..=addr).next_back()?;
        if addr >= *end {
            return None;
        }
        Some(match handle {
            Some(handle) => Ok((*var, &**handle as *const Handle)),
            None => Err((*var, l.run_vars.get(var.0 as usize).copied().unwrap_or(0))),
        })
    });
    let (var, known) = match heap {
        Some(Ok((var, handle))) => return Reached::Tracked(var, handle, VarKind::Heap),
        Some(Err(untracked)) => untracked,
        None => {
            let found = session.statics.iter().find(|(s, e, _, _)| (*s..*e).contains(&addr));
            let Some((_, _, var, handle)) = found else { return Reached::Nothing };
            if session.tracks(gen, *var) {
                return Reached::Tracked(*var, &**handle as *const Handle, VarKind::Static);
            }
            let i = var.0 as usize;
            (*var, with_local(session.id, gen, |l| l.run_vars.get(i).copied().unwrap_or(0)))
        }
    };
    let id = match known.checked_sub(1) {
        Some(id) => VarId(id),
        None => {
            let i = var.0 as usize;
            let Some(info) = session.var_infos.get(i) else { return Reached::Nothing };
            let id = with_execution("instrumented access", |ex| ex.var_id(info.site, info.kind));
            with_local(session.id, gen, |l| {
                if l.run_vars.len() <= i {
                    l.run_vars.resize(session.var_infos.len().max(i + 1), 0);
                }
                l.run_vars[i] = id.0 + 1;
            });
            id
        }
    };
    with_execution("instrumented access", |ex| ex.count_access(id));
    Reached::Counted(var)
}

/// Skipped data accesses after which one scheduling point is kept anyway.
pub(super) const GATE_FORCE_EVERY: u32 = 1000;

/// Sessions bounding loop iterations, process-wide: instrumented functions maintain the
/// shadow stack only while this is not 0.
pub(super) static LOOP_SESSIONS: AtomicUsize = AtomicUsize::new(0);
