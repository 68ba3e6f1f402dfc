//! Support for the code `#[pctvb::instrument]` generates (`__rt`): the static tables, the
//! hooks at access sites, allocation and call-frame tracking. Not a public API: the generated
//! code is its only caller. It owns no session state; it asks `session` what is tracked.

use std::panic::Location;
use std::sync::atomic::{AtomicU32, Ordering};

use super::checks::describe_var;
use super::registry::{registry, REGISTRY};
use super::session::{access, session, with_local, with_session, Reached, LOOP_SESSIONS};
use super::{SiteId, StaticVarId};
use crate::runtime::{describe_object, in_execution, with_execution, EventKind, Handle};
use crate::vars::VarKind;

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

impl Probe {
    /// The pointee of a raw pointer: `size` bytes at `addr`.
    fn raw(addr: *const u8, size: usize) -> Probe {
        Probe { addr: addr as usize, size, pointer: true, raw: true }
    }
}

impl<T> ViaPtr for Target<'_, *mut T> {
    fn __pctvb_target(&self) -> Probe {
        Probe::raw(*self.0 as *const u8, size_of::<T>())
    }
}

impl<T> ViaPtr for Target<'_, *const T> {
    fn __pctvb_target(&self) -> Probe {
        Probe::raw(*self.0 as *const u8, size_of::<T>())
    }
}

impl<T> ViaPtr for Target<'_, std::ptr::NonNull<T>> {
    fn __pctvb_target(&self) -> Probe {
        Probe::raw(self.0.as_ptr() as *const u8, size_of::<T>())
    }
}

// A subslice (`(*p).slots[a..b]`, a probe of a range index) is its elements' bytes.
impl<T> ViaPtr for Target<'_, *mut [T]> {
    fn __pctvb_target(&self) -> Probe {
        Probe::raw(*self.0 as *const u8, self.0.len() * size_of::<T>())
    }
}

impl<T> ViaPtr for Target<'_, *const [T]> {
    fn __pctvb_target(&self) -> Probe {
        Probe::raw(*self.0 as *const u8, self.0.len() * size_of::<T>())
    }
}

// A substring (`(*p).name[a..b]`) is its bytes.
impl ViaPtr for Target<'_, *mut str> {
    fn __pctvb_target(&self) -> Probe {
        Probe::raw(*self.0 as *const u8, (*self.0 as *mut [u8]).len())
    }
}

impl ViaPtr for Target<'_, *const str> {
    fn __pctvb_target(&self) -> Probe {
        Probe::raw(*self.0 as *const u8, (*self.0 as *const [u8]).len())
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
/// check: an address that belongs to a tracked variable makes the access a scheduling point;
/// one that belongs to a variable the execution does not track is only counted (the accessing
/// thread and the access, towards the variable's sharing and `k_q`: see `session::access`),
/// without a lock, an allocation or a scheduling point. Every pointer access, of any address,
/// then goes to the data-race check: a run with the detector on arms the pointer sites itself
/// (`arm_pointer_checks`), with or without a session.
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
    // The common cases (not a pointer access, an address of no variable, a variable the
    // execution does not track) borrow the session without taking a reference.
    let reached = with_session(|s| {
        let s = s?;
        // The site may be armed by another thread's session, or by the race check only.
        if !s.arms(module, site) {
            return None;
        }
        s.hits.fetch_add(1, Ordering::Relaxed);
        if !pointer {
            return None;
        }
        let gen = with_execution("instrumented access", |ex| ex.generation());
        match access(s, gen, probe.addr) {
            Reached::Tracked(var, handle, kind) => Some((var, Some((handle, kind)))),
            Reached::Counted(var) => Some((var, None)),
            Reached::Nothing => None,
        }
    });
    let var = match reached {
        Some((var, handle)) => {
            if let Some((handle, kind)) = handle {
                schedule(module, site, location, var, handle, kind);
            }
            Some(var)
        }
        None => None,
    };
    if !pointer || probe.size == 0 {
        // Not a memory access of the pointee (a zero-sized one touches no byte).
        return;
    }
    // The race check: every pointer access, of a variable's memory (tracked or not: the
    // happens-before edges come from the synchronization, not from this access's scheduling)
    // or of any other memory.
    with_execution("instrumented access", |ex| {
        ex.pointer_access(probe.addr, probe.size, desc.write, location, || match var {
            Some(var) => race_name(var),
            None => memory_name(probe.addr, desc.label),
        })
    });
}

/// The start of an instrumented `Drop::drop`: `&mut self` proves the value is no longer
/// shared, so whatever ordered its last shared use before this drop happened, though the
/// detector may not see it (the last `std::sync::Arc` clone dropped on another thread orders
/// through the reference count, which is no pctvb atomic). Until the returned guard drops (at
/// the end of `drop`), the calling thread's accesses are recorded but not checked against
/// earlier ones: no false race between a destructor and the value's earlier users; a race of
/// the destructor with an earlier access of other memory goes unreported. Nothing else
/// changes: the thread's clock and what it releases stay its own.
#[inline(never)]
pub fn dropping() -> Dropping {
    if !in_execution() {
        return Dropping(false);
    }
    with_execution("instrumented drop", |ex| ex.dropping(true));
    Dropping(true)
}

/// Ends what [`dropping`] started, when dropped.
pub struct Dropping(bool);

impl Drop for Dropping {
    fn drop(&mut self) {
        if self.0 && in_execution() {
            with_execution("instrumented drop", |ex| ex.dropping(false));
        }
    }
}

/// How a data race names memory of no instrumented variable: its address and the access that
/// reached it, with the caveat about reused addresses unless every free is seen
/// ([`crate::alloc::WatchFrees`]).
#[cold]
fn memory_name(addr: usize, label: &str) -> String {
    // A static's memory is never freed: no caveat, and the report says what it is.
    if in_static_data(addr) {
        return format!("static memory at {addr:#x} reached through `{label}`");
    }
    let caveat = if crate::runtime::frees::all_seen() {
        ""
    } else {
        " (pctvb does not see every free: if this memory was freed and its address reused \
         during this execution, these can be accesses of the old and the new memory; install \
         pctvb::alloc::WatchFrees as the global allocator to rule that out)"
    };
    format!("memory at {addr:#x} reached through `{label}`{caveat}")
}

/// Whether `addr` lies in a file's mapping (the program's or a library's static data), read
/// off `/proc/self/maps` when a race is reported (Linux; elsewhere: not known, false), or in
/// the anonymous mapping right after one: the zero-initialized statics (`.bss`) past the
/// file's last page, which the loader maps without the file. Heap and stacks are other
/// anonymous mappings or `[heap]`/`[stack]`.
#[cold]
fn in_static_data(addr: usize) -> bool {
    if !cfg!(target_os = "linux") {
        return false;
    }
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else { return false };
    // The end of the previous line's mapping, if a file's (the lines are sorted by address).
    let mut file_end = None;
    for line in maps.lines() {
        let mut fields = line.split_whitespace();
        let range = fields.next().and_then(|r| r.split_once('-'));
        let Some((start, end)) = range else { continue };
        let (Ok(start), Ok(end)) =
            (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16))
        else {
            continue;
        };
        // perms, offset, device, inode, then the path (absent for anonymous memory).
        let path = fields.nth(4);
        let file = path.is_some_and(|p| p.starts_with('/'));
        if (start..end).contains(&addr) {
            return file || (path.is_none() && file_end == Some(start));
        }
        file_end = file.then_some(end);
    }
    false
}

/// Arms every pointer site (raw-pointer dereferences and pointer functions, `read`/`write`
/// methods that may be on a raw pointer) and every allocation site of the instrumented code,
/// for a run with the race detector on, until the guard drops: their hooks then check every
/// pointer access against the happens-before edges, and allocations forget the accesses of
/// the memory they return, with or without a tracking session. The hooks of other code
/// running meanwhile (other tests) see the sites armed too and return after finding no
/// execution, or one with the detector off.
pub(crate) fn arm_pointer_checks() -> PointerChecks {
    let reg = registry();
    let mut armed = Vec::new();
    for m in &reg.modules {
        for (i, s) in m.sites.iter().enumerate() {
            let pointer = matches!(s.kind, SiteKind::Deref | SiteKind::ReadWrite | SiteKind::Alloc);
            if pointer && s.emitted {
                m.armed[i].fetch_add(1, Ordering::Relaxed);
                armed.push(&m.armed[i]);
            }
        }
    }
    PointerChecks(armed)
}

/// The arming of [`arm_pointer_checks`], undone when dropped.
pub(crate) struct PointerChecks(Vec<&'static AtomicU32>);

impl Drop for PointerChecks {
    fn drop(&mut self) {
        for a in &self.0 {
            a.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// How a data race names the variable `var`: `Heap@src/lib.rs:10:5` (the allocation site) or
/// `static@src/lib.rs:3:12`, like a `pctvb::cell::UnsafeCell`'s `UnsafeCell@...`, and as the
/// schedule names the object of its accesses (the same kind, [`StaticVarKind::var_kind`]).
#[cold]
fn race_name(var: StaticVarId) -> String {
    let reg = registry();
    let mut i = var.0 as usize;
    for m in &reg.modules {
        if i < m.vars.len() {
            let v = &m.vars[i];
            return describe_object(v.kind.var_kind(), v.location);
        }
        i -= m.vars.len();
    }
    describe_var(&reg, var)
}

/// The scheduling point of an access of the tracked variable `var` (named by `handle`, of kind
/// `kind`: a heap variable or a static) at site `site` of `module`, after the soundness check
/// when it is on.
#[track_caller]
fn schedule(
    module: &'static Module,
    site: usize,
    location: &'static Location<'static>,
    var: StaticVarId,
    handle: *const Handle,
    kind: VarKind,
) {
    let desc = &module.sites[site];
    let Some(s) = session() else { return };
    s.stats().scheduled += 1;
    if s.soundness.load(Ordering::Relaxed) {
        let reg = registry();
        if let Some(mi) = reg.module_index(module) {
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
    let event = if desc.write { EventKind::CellWrite } else { EventKind::CellRead };
    // SAFETY: the handle is boxed in this OS thread's execution record (or the session),
    // which is replaced only when another execution or session starts on this thread,
    // after this call returns.
    let handle = unsafe { &*handle };
    with_execution("instrumented access", |ex| {
        ex.point(handle, kind, event, location);
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

/// An allocation site: when armed, records the new value's address range as its variable for
/// the rest of the execution, with a handle (the accesses are scheduling points) when the
/// execution tracks the variable, without one (the accesses are only counted) otherwise.
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
    // New memory: the race detector forgets the accesses of whatever was there before.
    with_execution("instrumented allocation", |ex| ex.forget_memory(start, size));
    let Some(s) = session() else { return };
    let Some(&local) = module.sites[site].may.first() else { return };
    let Some(var) = s.var_of(module, local) else { return };
    let (gen, thread) =
        with_execution("instrumented allocation", |ex| (ex.generation(), ex.current_thread()));
    if !s.tracks(gen, var) {
        // Not tracked by this execution: its address range is still recorded, so that its
        // accesses are counted (the variable's sharing and `k_q`) though not scheduled.
        with_local(s.id, gen, |l| l.heap.insert(start, (start + size.max(1), var, None)));
        return;
    }
    let handle = Box::new(Handle::new());
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
                // Left untracked by the bound: still counted, like any untracked variable.
                l.heap.insert(start, (start + size.max(1), var, None));
                return false;
            }
        }
        l.heap.insert(start, (start + size.max(1), var, Some(handle)));
        true
    });
    let mut stats = s.stats();
    if tracked {
        stats.heap_instances += 1;
    } else {
        stats.loop_skipped += 1;
    }
}

/// A shadow-stack frame of an instrumented function (see
/// [`Tracking::loop_bound`](super::Tracking::loop_bound)).
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
    let (gen, thread) =
        with_execution("instrumented call", |ex| (ex.generation(), ex.current_thread()));
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
    let (gen, thread) =
        with_execution("instrumented call", |ex| (ex.generation(), ex.current_thread()));
    with_local(s.id, gen, |l| {
        if let Some(stack) = l.stacks.get_mut(&thread.index()) {
            stack.pop();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 64 KiB of zeros: `.bss`, most of it past the file's last page, in the anonymous mapping
    /// after it.
    static mut ZEROS: [u8; 1 << 16] = [0; 1 << 16];
    /// Initialized: `.data`, in the file's mapping.
    static mut DATA: [u8; 4] = [1, 2, 3, 4];

    /// Zero-initialized statics are static data wherever the loader put them, initialized ones
    /// too; the heap and the stack are not.
    #[test]
    #[cfg(target_os = "linux")]
    fn statics_are_static_data_and_the_heap_is_not() {
        let zeros = &raw const ZEROS as usize;
        assert!(in_static_data(zeros), "{zeros:#x}");
        assert!(in_static_data(zeros + (1 << 16) - 1), "{zeros:#x}");
        assert!(in_static_data(&raw const DATA as usize));
        let heap = Box::new(0u64);
        assert!(!in_static_data(&*heap as *const u64 as usize));
        let local = 0u64;
        assert!(!in_static_data(&local as *const u64 as usize));
    }
}
