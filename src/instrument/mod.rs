//! Instrumented code: the run-time side of `#[pctvb::instrument]`.
//!
//! `#[pctvb::instrument]` on a module, impl block or function of the code under test:
//! 1. rewrites the std concurrency paths inside it (`std::sync::*`, `std::sync::atomic::*`,
//!    `std::thread::*`, `thread_local!` and `std::thread_local!`, `std::cell::UnsafeCell`) to
//!    pctvb's, so the code needs no import changes (a thread-local then has one value per
//!    logical thread and per execution, instead of one shared by all of them);
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
//! strategies see like any other. Independently of sessions, a run with the race detector on
//! arms every pointer and allocation hook for its duration, so that every pointer access of
//! instrumented code, of any address, is checked for data races (the guide's section 5a).
//! Atomic, lock and cell operations are scheduling points of
//! their own; their hooks count hits and serve the soundness check. With
//! [`Tracking::gate_primitives`], atomic and cell operations on untracked variables stop being
//! scheduling points (synchronization operations always are), as accesses at unarmed sites.
//!
//! # What every execution measures
//!
//! An access that is no scheduling point because its variable is not tracked (a raw-pointer
//! access whose address belongs to an untracked heap variable or static, or a gated atomic or
//! cell operation) is still **counted** in the run's variable table: the accessing thread (a
//! variable two threads accessed in one execution is shared) and the access (its count in the
//! execution; the largest over executions is the variable's `k_q`). For that, an armed
//! allocation site records the allocation's address range whether or not its variable is
//! tracked (with a handle, the runtime's name for the object, only when it is), and the
//! counting is a few writes to per-variable arrays indexed by dense ids: the execution
//! record's map from the static variable to the run's variable id (looked up once per
//! variable and execution), then the variable table's count, first-thread and shared entries.
//! It takes no lock, allocates nothing and yields nowhere. Measured on a loop of
//! dereferences of a heap variable the execution does not track (release build, best of 7,
//! noisy shared machine): about 50 ns per access against about 30 ns before counting (when
//! the address was not even recorded), and 0.4-0.8 ns with tracking off; a gated atomic
//! operation costs about 4 ns more than before. A run with tracking off measures nothing
//! beyond what pctvb's own primitives see.
//!
//! # Where the attribute goes
//!
//! On a module with inline contents, an impl block (inherent or of a trait), or a function,
//! at module level or declared in a function body. Not on a method or an associated function
//! inside an impl or a trait: the attribute emits a table module beside the item, which an
//! impl cannot hold; it says so at the attribute ("put `#[pctvb::instrument]` on the impl block
//! or trait impl, or on a module-level item") when the function has a `self` receiver or names
//! `Self`. An associated function with neither cannot be told from a free function: rustc's
//! "module is not supported in traits or impls" at the attribute means the same. Not on a
//! struct, enum, trait or other item either (an error), nor inside an item already
//! instrumented (an error: the outer attribute instruments it).
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
//! - macros other than std's expression macros (`assert!`, `println!`, `vec!`, ...): an
//!   argument that contains an access the pass would hook (a dereference, in safe code too,
//!   since the macro may wrap its arguments in `unsafe`; a `static mut` of the item; a method
//!   named like an operation) is a compile error naming it, and so is a `macro_rules!`
//!   definition inside the item whose body contains one;
//! - the body of a macro defined outside the item (a `macro_rules!` elsewhere in the crate,
//!   another crate's macro): the attribute sees the call's tokens, never what the macro
//!   expands to, so an access the expansion makes that is not written in the arguments
//!   (`bump!()` expanding to `unsafe { COUNTER += 1 }`, `*$p = $v` applied to an argument
//!   `p`) gets no hook: no race check, no scheduling point, no soundness check. No proc macro
//!   can close this gap; it is the one construct that is not a compile error below.
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
//! [`track`] starts a session on the calling OS thread: the runs it makes (and the worker
//! threads they spread executions over) see it; tests running at the same time on other
//! threads do not. Heap variables and shadow stacks are per execution.
//!
//! # How runs use it
//!
//! A run of PCTVB or the combined strategy drives the instrumentation itself (unless the
//! calling thread has a session of its own, or
//! [`Config::instrument_tracking(false)`](crate::Config::instrument_tracking)):
//! - before the first execution, every variable of [`variables`] enters the run's variable
//!   table ([`StaticVar::var_info`]: the identity the run gives the object, its creation site
//!   and kind), so the report's table lists the variables no execution met, and a note counts
//!   them ([`origin_counts`]);
//! - the profiling executions track every variable without gating, so heap data reached
//!   through raw pointers is measured (its `k_q`, whether it is shared) like any primitive;
//! - each search execution tracks exactly the variables its strategy chose, with
//!   [`Tracking::gate_primitives`] on: only the chosen variables' accesses are scheduling
//!   points, the paper's variable bounding with instrumentation; the others' accesses are
//!   counted all the same ("What every execution measures"), so a search execution that
//!   shares a variable profiling saw private, or accesses one more often than any execution
//!   before, **exceeds** the counts it was drawn with, as an execution that meets a new shared
//!   primitive does: the variable enters `Q` with its `k_q`, the bound is recomputed, and the
//!   covered executions are counted again from the next one;
//! - a failure's replay token names the session its execution ran under (the tracked
//!   variables by creation site), and its replay and minimization run under the same one.
//!
//! `Q`, the variables the guarantee counts, is one registry's: the variables profiling saw
//! shared (by two or more threads), and the variables the static pass found in an instrumented
//! item the profiling executions entered that none of them accessed (profiling tracked every
//! variable, so these are ones the profiled executions never reached). Such a variable has
//! `k_q = 0`: no change point can be placed on it, and the strategy draws its variables from
//! the shared ones, so counting it only makes the bound's `1/C(Q,v)` factor smaller (a bound
//! that stays true); the statement says how many of `Q` came from where. A search execution
//! that then shares one, or shares a variable profiling saw accessed by one thread only,
//! exceeds the counts it was drawn with: the guarantee does not cover it, and the bound is
//! recomputed. Items the run never entered (other tests' code in the same
//! binary) are not counted.
//!
//! The systematic search tracks every variable, without gating, for its whole run (a work
//! item's execution must have the same scheduling points whichever variable subset it runs
//! for, or its record could not serve other subsets); each subset still preempts only at its
//! own variables' accesses. Loop-iteration bounding is a search of its own
//! ([`search_loop_bounds`]).
//!
//! # Compile errors, never silent skips
//!
//! Constructs the pass cannot see are errors pointing at them (the body of a macro defined
//! outside the item apart: above), for example a macro whose arguments may access shared
//! state:
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
//! an instrument attribute inside an instrumented item (it would instrument the hooks again):
//!
//! ```compile_fail
//! #[pctvb::instrument(force)]
//! mod outer {
//!     #[pctvb::instrument(force)]
//!     pub mod inner {}
//! }
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

#[doc(hidden)]
#[path = "hooks.rs"]
pub mod __rt;
mod checks;
mod registry;
mod runs;
mod session;

use std::collections::BTreeSet;
use std::panic::Location;

use crate::vars::{VarInfo, VarKind};

pub(crate) use __rt::arm_pointer_checks;
use registry::registry;
pub(crate) use runs::{
    profiling_session, session_for_token, static_ids, static_var_infos, token_suffix,
    unmet_in_entered_items,
};
pub(crate) use session::{current as current_session, enter as enter_session, follow_strategy};
pub use session::{search_loop_bounds, track, LoopSearch, Tracking};

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
    /// A `Once`.
    Once,
    /// A `OnceLock`.
    OnceLock,
    /// A `LazyLock`.
    LazyLock,
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
    /// first execution (`Q` then counts those profiling never touches: the module's "How runs
    /// use it") and a report can tell which of a run's variables came from the pass
    /// ([`static_var_of`]).
    pub fn var_info(&self) -> VarInfo {
        VarInfo { site: self.location, kind: self.kind.var_kind() }
    }
}

impl StaticVarKind {
    /// The kind of variable a run's variable table, and its reports, know this one as.
    pub(crate) fn var_kind(self) -> VarKind {
        match self {
            StaticVarKind::Atomic => VarKind::Atomic,
            StaticVarKind::Mutex => VarKind::Mutex,
            StaticVarKind::RwLock => VarKind::RwLock,
            StaticVarKind::Condvar => VarKind::Condvar,
            StaticVarKind::Barrier => VarKind::Barrier,
            StaticVarKind::Once => VarKind::Once,
            StaticVarKind::OnceLock => VarKind::OnceLock,
            StaticVarKind::LazyLock => VarKind::LazyLock,
            StaticVarKind::Cell => VarKind::Cell,
            StaticVarKind::Channel => VarKind::Channel,
            StaticVarKind::Heap => VarKind::Heap,
            StaticVarKind::Static => VarKind::Static,
        }
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
pub(crate) fn variable_count() -> usize {
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
