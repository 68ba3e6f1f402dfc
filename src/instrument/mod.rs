//! Instrumented code: the run-time side of `#[pctvb::instrument]`.
//!
//! `#[pctvb::instrument]` on a module, impl block or function of the code under test:
//! 1. rewrites the std concurrency paths inside it (`std::sync::*`, `std::sync::atomic::*`,
//!    `std::thread::*`, `std::thread_local!`, `std::cell::UnsafeCell`) to pctvb's, so the code
//!    needs no import changes;
//! 2. runs a static alias pass over the item's syntax that finds its **variables** (every
//!    constructor call of a pctvb primitive, every `Box::new`/`Arc::new`/`Rc::new`, every
//!    `static`) and, for every **access site** (atomic operation, lock, condvar, channel and
//!    once operation, `UnsafeCell` access, raw-pointer dereference, `ptr::read`/`ptr::write`,
//!    heap allocation), the set of variables it may access;
//! 3. emits a **hook** carrying a static site id at every site whose may-access set is not
//!    empty, and registers the site and variable tables before `main`.
//!
//! At run time a hook is **armed** only while a variable it may access is tracked
//! ([`track`]); an unarmed hook costs one load and one branch. An armed hook at a raw-pointer
//! access checks that the address really belongs to a tracked variable (the PCTVB paper's
//! dynamic check) and only then becomes a scheduling point, an access of that variable that
//! strategies see like any other. Atomic, lock and cell operations are scheduling points of
//! their own; their hooks count hits and serve the soundness check. With
//! [`Tracking::gate_primitives`], atomic and cell operations on untracked variables stop being
//! scheduling points (synchronization operations always are), as accesses at unarmed sites.
//!
//! # When the instrumentation is on
//!
//! The attribute expands to the item unchanged under `cfg(not(pctvb))` and to the instrumented
//! item under `cfg(pctvb)`: build tests with `RUSTFLAGS="--cfg pctvb"`, the convention loom uses
//! with `--cfg loom` (declare it to the `unexpected_cfgs` lint with
//! `[lints.rust] unexpected_cfgs = { level = "warn", check-cfg = ["cfg(pctvb)"] }`).
//! `#[pctvb::instrument(force)]` instruments whatever the cfg; pctvb's own tests use it.
//! `#[pctvb::instrument(include = "path/file.rs")] mod m {}` splices a file's items (path
//! relative to the crate root) into the module and instruments them, for code that must stay
//! where it is (pctvb's examples); that code has no spans of its own, so its sites and
//! variables all carry the attribute's location.
//!
//! # What the alias pass cannot see
//!
//! The pass reads only the annotated item, without types. It is sound for that code (it
//! over-approximates), and where it cannot see it says "may access anything" (the site is armed
//! whenever any variable is tracked):
//! - calls of free functions defined outside the item return an unknown object (known std
//!   constructors and pointer functions excepted); methods defined outside the item are
//!   assumed to return only what their receiver and arguments reach (true of std containers and
//!   smart pointers, false of a getter that returns a reference to some other static);
//! - fields of structs declared outside the item, `pub` fields, and fields of structs that
//!   derive `Default` hold unknown objects;
//! - names that are not locals, statics or constants of the item (statics of other modules);
//! - parameters of functions outside code can call (`pub` functions, trait methods, and every
//!   function when the item is not a module), unless their type is a number, `bool` or
//!   `char`: operations on them may access anything (`self` apart: the fields of a struct of
//!   the item are known whoever holds it, since only the item can build it);
//! - calls through closures or function pointers held in variables, and trait objects;
//! - accesses in `const fn` bodies and `const`/`static` initializers get no hook (a hook cannot
//!   run there; closures written there do get them): the soundness check reports a primitive
//!   operation there on a tracked variable;
//! - macros other than std's expression macros (`assert!`, `println!`, `vec!`, ...) are a
//!   compile error if their arguments mention an access (never a silent skip), and so are
//!   `macro_rules!` definitions inside the item that do.
//!
//! Variables created outside annotated code (in the test body, say) are not in the static
//! table and are never tracked by this module; their primitive operations still schedule as
//! usual. Vec buffers are not variables (they move when they grow); the `Box`/`Arc` holding a
//! data structure's nodes are.
//!
//! # Soundness check
//!
//! [`Tracking::soundness_check`] makes every operation on a pctvb object whose variable is
//! tracked check that it arrived through an armed hook whose may-access set contains that
//! variable; an access at an unarmed or uninstrumented site fails the execution with a panic
//! naming the site and the variable. For raw-pointer accesses the check arms every hook
//! (dereferences get hook code even when the pass found they touch nothing), and one whose
//! address belongs to a tracked variable its may-access set does not list fails the same way
//! (a dereference outside instrumented code has no hook and cannot be checked).
//!
//! # Tracking sessions
//!
//! [`track`] starts a process-wide session (runs spread executions over worker threads): one
//! session at a time, seen by every run in the process while it lasts. Heap variables and
//! shadow stacks are per execution.
//!
//! How a runner or a search would drive it (the runner does not yet):
//! - before the first execution, enter every variable of [`variables`] into the run's variable
//!   table through [`StaticVar::var_info`] (the same identity the run gives the object: its
//!   creation site and kind), so `Q` counts the variables profiling never touches;
//! - for each variable set the search picks, and each loop-iteration bound `l` as it rises,
//!   run its executions inside `track(set).gate_primitives(true).loop_bound(Some(l))`;
//! - in the report, [`origin_counts`] says how many of the run's variables came from the
//!   static pass and how many only from profiling ([`static_var_of`] for each one).
//!
//! # Compile errors, never silent skips
//!
//! Constructs the pass cannot see are errors pointing at them, for example a macro whose
//! arguments may access shared state:
//!
//! ```compile_fail
//! #[pctvb::instrument]
//! mod m {
//!     use std::sync::atomic::{AtomicUsize, Ordering};
//!     pub fn f(a: &AtomicUsize) { my_log!(a.load(Ordering::SeqCst)); }
//! }
//! ```
//!
//! a glob import of `std` (it hides which paths to rewrite), or a std item pctvb does not
//! model:
//!
//! ```compile_fail
//! #[pctvb::instrument]
//! mod m { use std::*; }
//! ```
//!
//! ```compile_fail
//! #[pctvb::instrument]
//! mod m { pub fn f(_: std::sync::Exclusive<u8>) {} }
//! ```
//!
//! # Example
//!
//! ```
//! #[pctvb::instrument(force)]
//! mod counter {
//!     use std::sync::atomic::{AtomicUsize, Ordering};
//!     pub struct Counter { n: AtomicUsize }
//!     impl Counter {
//!         pub fn new() -> Counter { Counter { n: AtomicUsize::new(0) } }
//!         pub fn bump(&self) -> usize { self.n.fetch_add(1, Ordering::SeqCst) }
//!     }
//! }
//!
//! let vars = pctvb::instrument::variables();
//! let n = vars.iter().find(|v| v.name == "Counter.n").unwrap();
//! let tracking = pctvb::instrument::track([n.id]).soundness_check(true);
//! let report = pctvb::Config::new().iterations(10).run(|| {
//!     let c = std::sync::Arc::new(counter::Counter::new());
//!     let c2 = c.clone();
//!     let h = pctvb::thread::spawn(move || { c2.bump(); });
//!     c.bump();
//!     h.join().unwrap();
//! });
//! assert!(report.failure().is_none());
//! assert!(tracking.stats().hits > 0);
//! ```

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::panic::Location;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use once_cell::sync::Lazy;

use crate::runtime::{in_execution, with_execution, EventKind, Handle, ObjectId};
use crate::vars::{VarInfo, VarKind};

/// The kind of access a site performs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SiteKind {
    /// An atomic operation.
    Atomic,
    /// `Mutex::lock` / `try_lock`.
    Lock,
    /// `RwLock::read` / `write` (or a raw pointer's `read` / `write`).
    ReadWrite,
    /// `Condvar` and `Barrier` operations.
    Wait,
    /// `UnsafeCell::get` / `with` / `with_mut`.
    Cell,
    /// A channel operation.
    Channel,
    /// `Once` / `OnceLock` / `LazyLock` operations.
    Once,
    /// A raw-pointer dereference, `ptr::read`/`ptr::write`, or a pointer's `as_ref`/`replace`.
    Deref,
    /// A heap allocation (`Box::new`, `Arc::new`, `Rc::new`).
    Alloc,
}

/// The kind of a variable the static pass found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StaticVarKind {
    /// An atomic.
    Atomic,
    /// A `Mutex`.
    Mutex,
    /// An `RwLock`.
    RwLock,
    /// A `Condvar`.
    Condvar,
    /// A `Barrier`.
    Barrier,
    /// `Once`, `OnceLock` or `LazyLock`.
    Once,
    /// An `UnsafeCell`.
    Cell,
    /// A channel.
    Channel,
    /// A heap allocation (`Box::new`, `Arc::new`, `Rc::new`).
    Heap,
    /// A `static` item.
    Static,
}

/// Process-wide id of a variable found by the static pass (dense, in registration order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StaticVarId(pub u32);

/// Process-wide id of an instrumented access site.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SiteId(pub u32);

/// A variable found by the static pass.
#[derive(Clone, Debug)]
pub struct StaticVar {
    /// Its id.
    pub id: StaticVarId,
    /// A readable name: `Stack.head` (a field initialized with a constructor), `let a`,
    /// `static COUNTER`, `Box::new`.
    pub name: &'static str,
    /// What it is.
    pub kind: StaticVarKind,
    /// Where it is created (the constructor call; for a static, its name).
    pub file: &'static str,
    /// Line of the creation site.
    pub line: u32,
    /// Column of the creation site.
    pub column: u32,
    /// The creation site as a location (what the run time names the variable by).
    pub location: &'static Location<'static>,
    /// The instrumented item it belongs to.
    pub module: &'static str,
}

impl StaticVar {
    /// The variable as runs know it: a run's variable table identifies variables by creation
    /// site and kind, so a runner can enter every variable the static pass found before the
    /// first execution (`Q` then counts those profiling never touches) and a report can tell
    /// which of a run's variables came from the pass ([`static_var_of`]).
    pub fn var_info(&self) -> VarInfo {
        let kind = match self.kind {
            StaticVarKind::Atomic => VarKind::Atomic,
            StaticVarKind::Mutex => VarKind::Mutex,
            StaticVarKind::RwLock => VarKind::RwLock,
            StaticVarKind::Condvar => VarKind::Condvar,
            StaticVarKind::Barrier => VarKind::Barrier,
            StaticVarKind::Once => VarKind::Once,
            StaticVarKind::Cell => VarKind::Cell,
            StaticVarKind::Channel => VarKind::Channel,
            StaticVarKind::Heap | StaticVarKind::Static => VarKind::Heap,
        };
        VarInfo { site: self.location, kind }
    }
}

/// An access site of instrumented code.
#[derive(Clone, Debug)]
pub struct SiteInfo {
    /// Its id.
    pub id: SiteId,
    /// Source text of the access, e.g. `self.head.load`.
    pub label: &'static str,
    /// What it does.
    pub kind: SiteKind,
    /// Whether it writes (pointer writes).
    pub write: bool,
    /// Location.
    pub file: &'static str,
    /// Line.
    pub line: u32,
    /// Column.
    pub column: u32,
    /// Whether a hook was emitted (the may-access set is not empty).
    pub hooked: bool,
    /// The variables it may access; `None` for "anything" (the pass could not see).
    pub may_access: Option<Vec<StaticVarId>>,
    /// The instrumented item it belongs to.
    pub module: &'static str,
}

/// Which variables to track.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// None: every hook stays unarmed.
    Nothing,
    /// Every variable the static pass found.
    All,
    /// These variables.
    Vars(Vec<StaticVarId>),
}

impl<I: IntoIterator<Item = StaticVarId>> From<I> for Selection {
    fn from(ids: I) -> Selection {
        Selection::Vars(ids.into_iter().collect())
    }
}

/// Counters of one tracking session (see [`Tracking::stats`]).
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Sites with a hook, over all instrumented items.
    pub hooked_sites: usize,
    /// Sites armed by this session.
    pub armed_sites: usize,
    /// Armed hooks reached.
    pub hits: u64,
    /// Armed raw-pointer hooks whose address belonged to a tracked variable: the scheduling
    /// points they added.
    pub scheduled: u64,
    /// Sites at which the soundness check saw a tracked variable accessed (the precision
    /// measure: compare with `armed_sites`).
    pub touched_sites: BTreeSet<SiteId>,
    /// Accesses to tracked variables that did not come through an armed hook whose
    /// may-access set contains the variable (the soundness check's misses).
    pub misses: Vec<String>,
    /// Allocations of tracked heap variables whose address range was recorded.
    pub heap_instances: u64,
    /// Allocations of tracked heap variables left untracked by the loop-iteration bound.
    pub loop_skipped: u64,
}

/// The variables of every instrumented item linked into the program.
pub fn variables() -> Vec<StaticVar> {
    let reg = registry();
    let mut out = Vec::new();
    for (mi, m) in reg.modules.iter().enumerate() {
        for (i, v) in m.vars.iter().enumerate() {
            out.push(StaticVar {
                id: StaticVarId((reg.var_base[mi] + i) as u32),
                name: v.name,
                kind: v.kind,
                file: v.file,
                line: v.line,
                column: v.column,
                location: v.location,
                module: m.name,
            });
        }
    }
    out
}

/// The access sites of every instrumented item linked into the program.
pub fn sites() -> Vec<SiteInfo> {
    let reg = registry();
    let mut out = Vec::new();
    for (mi, m) in reg.modules.iter().enumerate() {
        for (i, s) in m.sites.iter().enumerate() {
            let base = reg.var_base[mi];
            out.push(SiteInfo {
                id: SiteId((reg.site_base[mi] + i) as u32),
                label: s.label,
                kind: s.kind,
                write: s.write,
                file: s.file,
                line: s.line,
                column: s.column,
                hooked: s.hooked,
                may_access: (!s.anything).then(|| {
                    s.may.iter().map(|&v| StaticVarId((base + v as usize) as u32)).collect()
                }),
                module: m.name,
            });
        }
    }
    out
}

/// How many variables the static pass registered (cheaper than `variables().len()`: no list
/// is built).
pub fn variable_count() -> usize {
    registry().var_count()
}

/// The static variable a run's variable is, if the static pass found it: variables found by
/// the pass and variables met at run time share one identity, their creation site.
pub fn static_var_of(info: &VarInfo) -> Option<StaticVarId> {
    let key = (info.site.file(), info.site.line(), info.site.column());
    registry().by_key.get(&key).copied()
}

/// How many of a run's variables the static pass found, and how many only the run met
/// (created outside instrumented code).
pub fn origin_counts(vars: &[VarInfo]) -> (usize, usize) {
    let found = vars.iter().filter(|v| static_var_of(v).is_some()).count();
    (found, vars.len() - found)
}

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
struct Session {
    id: u64,
    tracked: HashSet<StaticVarId>,
    soundness: AtomicBool,
    /// Whether data accesses of untracked static variables are not scheduling points.
    gate: AtomicBool,
    /// Loop-iteration bound `l` ([`NO_BOUND`]: none).
    loop_bound: AtomicU64,
    /// Tracked statics: (start, end, variable, handle).
    statics: Vec<(usize, usize, StaticVarId, Box<Handle>)>,
    stats: Mutex<Stats>,
}

impl Session {
    fn stats(&self) -> MutexGuard<'_, Stats> {
        self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn loop_bound(&self) -> Option<u32> {
        let l = self.loop_bound.load(Ordering::Relaxed);
        (l != NO_BOUND).then_some(l as u32)
    }
}

static SESSION: RwLock<Option<Arc<Session>>> = RwLock::new(None);
static SESSION_LOCK: Mutex<()> = Mutex::new(());
static SESSION_IDS: AtomicU64 = AtomicU64::new(1);

fn session() -> Option<Arc<Session>> {
    SESSION.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// What the execution running on this OS thread did so far (an OS thread runs one execution
/// at a time): its tracked heap variables, the shadow stacks of its logical threads, and its
/// allocation counts per (site, call stack) and per site.
#[derive(Default)]
struct Local {
    session: u64,
    gen: u64,
    /// Live tracked heap variables: start -> (end, variable, handle).
    heap: BTreeMap<usize, (usize, StaticVarId, Box<Handle>)>,
    /// Shadow call stack of each logical thread (function ids), by thread index.
    stacks: HashMap<usize, Vec<u64>>,
    /// (allocation site, call-stack hash) -> allocations so far: the next loop-iteration number.
    loop_counts: HashMap<(usize, u64), u32>,
    /// Allocation site -> allocations so far: the next instance number.
    instances: HashMap<usize, u32>,
    /// Gating decisions by object id: 0 not decided yet, 1 schedule, 2 skip.
    gate: Vec<u8>,
    /// Data accesses skipped by gating since the last forced scheduling point.
    skipped: u32,
}

thread_local! {
    static LOCAL: RefCell<Local> = RefCell::new(Local::default());
}

/// Runs `f` on this OS thread's record of execution `gen` of session `session`, starting a
/// fresh one when either changed.
fn with_local<R>(session: u64, gen: u64, f: impl FnOnce(&mut Local) -> R) -> R {
    LOCAL.with(|l| {
        let mut l = l.borrow_mut();
        if l.session != session || l.gen != gen {
            *l = Local { session, gen, ..Local::default() };
        }
        f(&mut l)
    })
}

/// The tracked variable whose memory holds `addr`, and the handle naming it.
fn find(session: &Session, gen: u64, addr: usize) -> Option<(StaticVarId, *const Handle)> {
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
static SOUNDNESS_SESSIONS: AtomicUsize = AtomicUsize::new(0);

/// Sessions gating primitive data accesses, process-wide: the gate in the scheduling point
/// costs one load while this is 0.
static GATE_SESSIONS: AtomicUsize = AtomicUsize::new(0);

/// Skipped data accesses after which one scheduling point is kept anyway.
const GATE_FORCE_EVERY: u32 = 1000;

/// Sessions bounding loop iterations, process-wide: instrumented functions maintain the
/// shadow stack only while this is not 0.
static LOOP_SESSIONS: AtomicUsize = AtomicUsize::new(0);

/// A source location: file, line, column.
type SourceKey = (&'static str, u32, u32);

/// The registry of instrumented items.
struct Registry {
    modules: Vec<&'static __rt::Module>,
    var_base: Vec<usize>,
    site_base: Vec<usize>,
    /// Creation site -> static variable (primitives and heap allocations).
    by_key: HashMap<SourceKey, StaticVarId>,
    /// Site location -> sites there.
    sites_at: HashMap<SourceKey, Vec<(usize, usize)>>,
}

impl Registry {
    fn var_count(&self) -> usize {
        self.modules.iter().map(|m| m.vars.len()).sum()
    }
}

static REGISTRY: Lazy<RwLock<Registry>> = Lazy::new(|| {
    RwLock::new(Registry {
        modules: Vec::new(),
        var_base: Vec::new(),
        site_base: Vec::new(),
        by_key: HashMap::new(),
        sites_at: HashMap::new(),
    })
});

fn registry() -> std::sync::RwLockReadGuard<'static, Registry> {
    REGISTRY.read().unwrap_or_else(|e| e.into_inner())
}

/// Event kinds the soundness check covers: operations with a syntactic site. Unlocks happen
/// when a guard drops, `Once` also when a `LazyLock` is dereferenced, and a condvar's relock
/// inside `wait`: none of them has a site of its own.
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

/// Whether some session gates primitive data accesses (one relaxed load).
#[inline]
pub(crate) fn gating_active() -> bool {
    GATE_SESSIONS.load(Ordering::Relaxed) != 0
}

/// Whether an operation of kind `kind` on object `object` of execution `gen`, created at
/// `var_site`, is a scheduling point under the gating session (see
/// [`Tracking::gate_primitives`]).
#[cold]
#[inline(never)]
pub(crate) fn gate(
    object: ObjectId,
    gen: u64,
    var_site: &'static Location<'static>,
    kind: EventKind,
) -> bool {
    if !matches!(
        kind,
        EventKind::AtomicLoad
            | EventKind::AtomicStore
            | EventKind::AtomicRmw
            | EventKind::CellRead
            | EventKind::CellWrite
    ) {
        return true;
    }
    let Some(s) = session() else { return true };
    if !s.gate.load(Ordering::Relaxed) {
        return true;
    }
    with_local(s.id, gen, |l| {
        let i = object.index();
        if l.gate.len() <= i {
            l.gate.resize(i + 1, 0);
        }
        if l.gate[i] == 0 {
            let key = (var_site.file(), var_site.line(), var_site.column());
            let skip = registry().by_key.get(&key).is_some_and(|v| !s.tracked.contains(v));
            l.gate[i] = if skip { 2 } else { 1 };
        }
        if l.gate[i] == 1 {
            return true;
        }
        l.skipped += 1;
        if l.skipped >= GATE_FORCE_EVERY {
            l.skipped = 0;
            return true;
        }
        false
    })
}

/// Whether some soundness session is active (one relaxed load).
#[inline]
pub(crate) fn soundness_active() -> bool {
    SOUNDNESS_SESSIONS.load(Ordering::Relaxed) != 0
}

/// The soundness check of one operation on a pctvb object created at `var_site`, performed at
/// `location`: if the object is a tracked variable, some armed site at `location` must list it.
#[cold]
#[inline(never)]
pub(crate) fn check_operation(
    var_site: &'static Location<'static>,
    kind: EventKind,
    location: &'static Location<'static>,
) {
    if !checked(kind) {
        return;
    }
    let reg = registry();
    let Some(&var) = reg.by_key.get(&(var_site.file(), var_site.line(), var_site.column())) else {
        return;
    };
    let failure = (|| {
        let s = session()?;
        if !s.soundness.load(Ordering::Relaxed) || !s.tracked.contains(&var) {
            return None;
        }
        let key = (location.file(), location.line(), location.column());
        let mut through = None;
        for &(mi, i) in reg.sites_at.get(&key).map(Vec::as_slice).unwrap_or(&[]) {
            let m = reg.modules[mi];
            let site = &m.sites[i];
            let listed = site.anything
                || site.may.iter().any(|&v| reg.var_base[mi] + v as usize == var.0 as usize);
            let relock = kind == EventKind::Lock && site.kind == SiteKind::Wait;
            // (With the check on every site with hook code is armed; a site listing the
            // variable was armed by the selection itself.)
            if site.hooked && (listed || relock) && m.armed[i].load(Ordering::Relaxed) != 0 {
                through = Some(SiteId((reg.site_base[mi] + i) as u32));
            }
        }
        match through {
            Some(site) => {
                s.stats().touched_sites.insert(site);
                None
            }
            None => {
                let name = describe_var(&reg, var);
                let message = format!(
                    "pctvb::instrument soundness check: {kind} of tracked variable {name} at \
                     {location} did not go through an armed hook (the site is not in \
                     instrumented code, or the alias pass missed that it may access this \
                     variable)"
                );
                s.stats().misses.push(message.clone());
                Some(message)
            }
        }
    })();
    drop(reg);
    if let Some(message) = failure {
        panic!("{message}");
    }
}

fn describe_var(reg: &Registry, var: StaticVarId) -> String {
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

/// Support for the code `#[pctvb::instrument]` generates; not a public API.
#[doc(hidden)]
pub mod __rt {
    use super::*;

    pub use super::{SiteKind, StaticVarKind};
    pub use ctor;

    /// A site of the static table.
    pub struct SiteDesc {
        pub(crate) file: &'static str,
        pub(crate) line: u32,
        pub(crate) column: u32,
        pub(crate) kind: SiteKind,
        pub(crate) write: bool,
        pub(crate) label: &'static str,
        pub(crate) hooked: bool,
        /// Whether hook code was emitted (also for dereferences with an empty may-access set,
        /// which only the soundness check arms).
        pub(crate) emitted: bool,
        pub(crate) anything: bool,
        pub(crate) may: &'static [u32],
    }

    impl SiteDesc {
        /// A table entry.
        #[allow(clippy::too_many_arguments)]
        pub const fn new(
            file: &'static str,
            line: u32,
            column: u32,
            kind: SiteKind,
            write: bool,
            label: &'static str,
            hooked: bool,
            emitted: bool,
            anything: bool,
            may: &'static [u32],
        ) -> SiteDesc {
            SiteDesc { file, line, column, kind, write, label, hooked, emitted, anything, may }
        }
    }

    /// A variable of the static table.
    pub struct VarDesc {
        pub(crate) file: &'static str,
        pub(crate) line: u32,
        pub(crate) column: u32,
        pub(crate) location: &'static Location<'static>,
        pub(crate) kind: StaticVarKind,
        pub(crate) name: &'static str,
    }

    impl VarDesc {
        /// A table entry; `location` is the creation site (from [`here`] called there).
        pub const fn new(
            location: &'static Location<'static>,
            kind: StaticVarKind,
            name: &'static str,
        ) -> VarDesc {
            VarDesc {
                file: location.file(),
                line: location.line(),
                column: location.column(),
                location,
                kind,
                name,
            }
        }
    }

    /// The location of the call: the generated tables call it with the span of each variable.
    #[track_caller]
    pub const fn here() -> &'static Location<'static> {
        Location::caller()
    }

    /// Gives a static's address, size and location.
    pub type StaticAddress = fn() -> (usize, usize, &'static Location<'static>);

    /// The tables of one instrumented item.
    pub struct Module {
        /// `module_path!()` and the item's name.
        pub name: &'static str,
        /// Its sites, by local id.
        pub sites: &'static [SiteDesc],
        /// Its variables, by local id.
        pub vars: &'static [VarDesc],
        /// Per-site arm counts (sessions that armed the site, process-wide).
        pub armed: &'static [AtomicU32],
        /// Statics of the item: local variable id and a function giving (address, size,
        /// location of the static).
        pub statics: &'static [(u32, StaticAddress)],
    }

    /// Registers an item's tables (called by a constructor before `main`).
    pub fn register(module: &'static Module) {
        let mut reg = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
        let mi = reg.modules.len();
        let var_base = reg.var_count();
        let site_base: usize = reg.modules.iter().map(|m| m.sites.len()).sum();
        reg.modules.push(module);
        reg.var_base.push(var_base);
        reg.site_base.push(site_base);
        for (i, v) in module.vars.iter().enumerate() {
            reg.by_key.insert((v.file, v.line, v.column), StaticVarId((var_base + i) as u32));
        }
        for (i, s) in module.sites.iter().enumerate() {
            reg.sites_at.entry((s.file, s.line, s.column)).or_default().push((mi, i));
        }
    }

    /// What a hook accesses: an address range, and whether it was reached through a pointer
    /// (a raw-pointer access the hook must schedule) or is the receiver object itself (a
    /// primitive whose operation schedules on its own).
    #[derive(Clone, Copy, Debug)]
    pub struct Probe {
        /// Start address.
        pub addr: usize,
        /// Size in bytes.
        pub size: usize,
        /// Whether the address is a pointee.
        pub pointer: bool,
        /// Whether that pointer is a raw pointer (`*const`, `*mut`, `NonNull`), not a reference.
        pub raw: bool,
    }

    /// Wraps a reference for the probe's method resolution: `ViaPtr` applies when the
    /// referent is a pointer (its pointee is accessed), `ViaAny` otherwise.
    pub struct Target<'a, T: ?Sized>(pub &'a T);

    /// The probe of a pointer: its pointee.
    pub trait ViaPtr {
        /// The probe.
        fn __pctvb_target(&self) -> Probe;
    }

    /// The probe of any other value: the value itself.
    pub trait ViaAny {
        /// The probe.
        fn __pctvb_target(&self) -> Probe;
    }

    impl<T> ViaPtr for Target<'_, *mut T> {
        fn __pctvb_target(&self) -> Probe {
            Probe {
                addr: *self.0 as *const u8 as usize,
                size: size_of::<T>(),
                pointer: true,
                raw: true,
            }
        }
    }

    impl<T> ViaPtr for Target<'_, *const T> {
        fn __pctvb_target(&self) -> Probe {
            Probe {
                addr: *self.0 as *const u8 as usize,
                size: size_of::<T>(),
                pointer: true,
                raw: true,
            }
        }
    }

    impl<T> ViaPtr for Target<'_, std::ptr::NonNull<T>> {
        fn __pctvb_target(&self) -> Probe {
            Probe {
                addr: self.0.as_ptr() as *const u8 as usize,
                size: size_of::<T>(),
                pointer: true,
                raw: true,
            }
        }
    }

    impl<T: ?Sized> ViaPtr for Target<'_, &T> {
        fn __pctvb_target(&self) -> Probe {
            let r: &T = self.0;
            Probe {
                addr: r as *const T as *const u8 as usize,
                size: size_of_val(r),
                pointer: true,
                raw: false,
            }
        }
    }

    impl<T: ?Sized> ViaPtr for Target<'_, &mut T> {
        fn __pctvb_target(&self) -> Probe {
            let r: &T = self.0;
            Probe {
                addr: r as *const T as *const u8 as usize,
                size: size_of_val(r),
                pointer: true,
                raw: false,
            }
        }
    }

    impl<T: ?Sized> ViaAny for &Target<'_, T> {
        fn __pctvb_target(&self) -> Probe {
            let r: &T = self.0;
            Probe {
                addr: r as *const T as *const u8 as usize,
                size: size_of_val(r),
                pointer: false,
                raw: false,
            }
        }
    }

    /// An armed hook was reached: count it and, for a raw-pointer access, run the dynamic
    /// check and schedule if the address belongs to a tracked variable.
    #[track_caller]
    #[inline(never)]
    #[cold]
    pub fn hit(module: &'static Module, site: usize, probe: Probe) {
        let location = Location::caller();
        let desc = &module.sites[site];
        // A dereference reads or writes its pointee (through a reference too, in unsafe code);
        // a method such as `read`, `write` or `swap` does only on a raw pointer (on a
        // reference it is the referent's own operation: an `RwLock`, an atomic).
        // (The macro labels dereferences `*operand` and pointer functions `ptr::f(..)`; a
        // method site's label is `receiver.method`.)
        let method = !(desc.label.starts_with('*') || desc.label.starts_with("ptr::"));
        let pointer = match desc.kind {
            SiteKind::Deref if !method => probe.pointer,
            SiteKind::Deref | SiteKind::ReadWrite | SiteKind::Atomic => probe.raw,
            _ => false,
        };
        if !in_execution() {
            return;
        }
        let Some(s) = session() else { return };
        s.stats().hits += 1;
        if !pointer {
            return;
        }
        let gen = with_execution("instrumented access", |ex| ex.generation());
        let Some((var, handle)) = find(&s, gen, probe.addr) else { return };
        if !s.tracked.contains(&var) {
            return;
        }
        s.stats().scheduled += 1;
        if s.soundness.load(Ordering::Relaxed) {
            let reg = registry();
            if let Some(mi) = reg.modules.iter().position(|m| std::ptr::eq(*m, module)) {
                let listed = desc.anything
                    || desc.may.iter().any(|&v| reg.var_base[mi] + v as usize == var.0 as usize);
                let id = SiteId((reg.site_base[mi] + site) as u32);
                if listed {
                    s.stats().touched_sites.insert(id);
                } else {
                    let message = format!(
                        "pctvb::instrument soundness check: {} at {location} accessed tracked \
                         variable {}, which the alias pass did not list for that site",
                        desc.label,
                        describe_var(&reg, var)
                    );
                    s.stats().misses.push(message.clone());
                    drop(reg);
                    panic!("{message}");
                }
            }
        }
        drop(s);
        let kind = if desc.write { EventKind::CellWrite } else { EventKind::CellRead };
        // SAFETY: the handle is boxed in this OS thread's execution record (or the session),
        // which is replaced only when another execution or session starts on this thread,
        // after this call returns.
        let handle = unsafe { &*handle };
        with_execution("instrumented access", |ex| {
            ex.point(handle, VarKind::Heap, kind, location);
        });
    }

    /// A heap allocation whose address range names a variable.
    pub trait Allocation {
        /// Start and size of the allocated value.
        fn range(&self) -> (usize, usize);
    }

    impl<T: ?Sized> Allocation for Box<T> {
        fn range(&self) -> (usize, usize) {
            let r: &T = self;
            (r as *const T as *const u8 as usize, size_of_val(r))
        }
    }

    impl<T: ?Sized> Allocation for std::sync::Arc<T> {
        fn range(&self) -> (usize, usize) {
            let r: &T = self;
            (r as *const T as *const u8 as usize, size_of_val(r))
        }
    }

    impl<T: ?Sized> Allocation for std::rc::Rc<T> {
        fn range(&self) -> (usize, usize) {
            let r: &T = self;
            (r as *const T as *const u8 as usize, size_of_val(r))
        }
    }

    /// An allocation site: when armed (its variable is tracked), records the new value's
    /// address range as that variable for the rest of the execution.
    #[track_caller]
    #[inline]
    pub fn alloc<A: Allocation>(
        armed: &AtomicU32,
        module: &'static Module,
        site: usize,
        value: A,
    ) -> A {
        if armed.load(Ordering::Relaxed) != 0 {
            alloc_slow(module, site, value.range());
        }
        value
    }

    #[track_caller]
    #[inline(never)]
    #[cold]
    fn alloc_slow(module: &'static Module, site: usize, (start, size): (usize, usize)) {
        if !in_execution() {
            return;
        }
        let Some(s) = session() else { return };
        let handle = Box::new(Handle::new());
        let (gen, thread) = with_execution("instrumented allocation", |ex| {
            (ex.generation(), ex.with_state(|st| st.current))
        });
        let reg = registry();
        let Some(mi) = reg.modules.iter().position(|m| std::ptr::eq(*m, module)) else { return };
        let Some(&local) = module.sites[site].may.first() else { return };
        let var = StaticVarId((reg.var_base[mi] + local as usize) as u32);
        drop(reg);
        if !s.tracked.contains(&var) {
            return;
        }
        let site_key = module as *const Module as usize ^ (site << 1);
        let bound = s.loop_bound();
        let tracked = with_local(s.id, gen, |l| {
            *l.instances.entry(site_key).or_insert(0) += 1;
            if let Some(bound) = bound {
                let stack = l.stacks.get(&thread.index()).map(Vec::as_slice).unwrap_or(&[]);
                let hash = stack
                    .iter()
                    .fold(0xcbf2_9ce4_8422_2325u64, |h, &f| (h ^ f).wrapping_mul(0x0100_0000_01b3));
                let count = l.loop_counts.entry((site_key, hash)).or_insert(0);
                let lin = *count;
                *count += 1;
                if lin > bound {
                    return false;
                }
            }
            l.heap.insert(start, (start + size.max(1), var, handle));
            true
        });
        let mut stats = s.stats();
        if tracked {
            stats.heap_instances += 1;
        } else {
            stats.loop_skipped += 1;
        }
    }

    /// A shadow-stack frame of an instrumented function (see [`Tracking::loop_bound`]).
    pub struct Frame(bool);

    impl Frame {
        /// Enters function `id` of `module`: one load and one branch unless some session
        /// bounds loop iterations.
        #[inline]
        pub fn enter(module: &'static Module, id: u32) -> Frame {
            if LOOP_SESSIONS.load(Ordering::Relaxed) == 0 {
                return Frame(false);
            }
            Frame(push_frame((module as *const Module as u64) ^ ((id as u64) << 48)))
        }
    }

    impl Drop for Frame {
        #[inline]
        fn drop(&mut self) {
            if self.0 {
                pop_frame();
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn push_frame(function: u64) -> bool {
        if !in_execution() {
            return false;
        }
        let Some(s) = session() else { return false };
        if s.loop_bound().is_none() {
            return false;
        }
        let (gen, thread) = with_execution("instrumented call", |ex| {
            (ex.generation(), ex.with_state(|st| st.current))
        });
        with_local(s.id, gen, |l| l.stacks.entry(thread.index()).or_default().push(function));
        true
    }

    #[cold]
    #[inline(never)]
    fn pop_frame() {
        if !in_execution() {
            return;
        }
        let Some(s) = session() else { return };
        let (gen, thread) = with_execution("instrumented call", |ex| {
            (ex.generation(), ex.with_state(|st| st.current))
        });
        with_local(s.id, gen, |l| {
            if let Some(stack) = l.stacks.get_mut(&thread.index()) {
                stack.pop();
            }
        });
    }
}
