//! Variables: the unit that variable bounding counts.
//!
//! A variable is an allocation site of a pctvb primitive (the source location of the `new`
//! call, captured with `#[track_caller]`), or a static, named by that site. For the randomized
//! algorithms all objects created at one site are one variable, as section 3 of the PCTVB paper
//! prescribes, so the number of variables is known before the search.
//!
//! This module owns the per-run table that gives each site a dense [`VarId`] in the order a
//! run first meets it (deterministic for a fixed seed, independent of other tests running in
//! the same process) and the per-execution access counters (count, first accessing thread,
//! shared flag, indexed by the dense id) that every execution updates, profiling or search,
//! including for accesses that are no scheduling point (an instrumented variable the execution
//! does not track): a search execution that shares a variable or raises a `k_q` is seen. It
//! does not schedule anything and knows nothing of threads beyond their ids.

use std::collections::HashMap;
use std::fmt;
use std::panic::Location;

/// Dense id of a variable within one run (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub(crate) u32);

impl VarId {
    /// The dense index of this variable.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What kind of primitive a variable's objects are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum VarKind {
    /// `sync::Mutex`.
    Mutex,
    /// `sync::RwLock`.
    RwLock,
    /// `sync::Condvar`.
    Condvar,
    /// `sync::Barrier`.
    Barrier,
    /// An atomic integer, bool or pointer.
    Atomic,
    /// `cell::UnsafeCell`.
    Cell,
    /// An `UnsafeCell` whose accesses are checked for data races but are no scheduling points
    /// (pctvb-loom's, as loom's): not a variable of the bounds, never shared, `k_q` 0. Its
    /// accesses' order follows from the synchronising operations' (docs/guide.md, section 3a,
    /// "pctvb-loom's cells are race checks, not variables").
    CheckedCell,
    /// An `mpsc` channel.
    Channel,
    /// `Once`.
    Once,
    /// `OnceLock`.
    OnceLock,
    /// `LazyLock`.
    LazyLock,
    /// Heap data (a `Box`/`Arc`/`Rc` allocation), accessed through raw pointers by code
    /// instrumented with `#[pctvb::instrument]`.
    Heap,
    /// A `static` of an item instrumented with `#[pctvb::instrument]`, accessed through raw
    /// pointers or by name (a `static mut`).
    Static,
}

impl VarKind {
    /// The type name shown in reports.
    pub fn name(self) -> &'static str {
        match self {
            VarKind::Mutex => "Mutex",
            VarKind::RwLock => "RwLock",
            VarKind::Condvar => "Condvar",
            VarKind::Barrier => "Barrier",
            VarKind::Atomic => "Atomic",
            VarKind::Cell | VarKind::CheckedCell => "UnsafeCell",
            VarKind::Channel => "channel",
            VarKind::Once => "Once",
            VarKind::OnceLock => "OnceLock",
            VarKind::LazyLock => "LazyLock",
            VarKind::Heap => "Heap",
            // Lowercase, as the item is declared: `static@src/lib.rs:3:12`.
            VarKind::Static => "static",
        }
    }
}

/// A variable as the user sees it: where it was created and what it is.
#[derive(Clone, Debug)]
pub struct VarInfo {
    /// The allocation site.
    pub site: &'static Location<'static>,
    /// The primitive kind.
    pub kind: VarKind,
}

impl fmt::Display for VarInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.kind.name(), self.site)
    }
}

/// Profile of one variable over the executions of a run.
#[derive(Clone, Debug, Default)]
pub struct VarProfile {
    /// Most accesses made to the variable in any one execution (the paper's k_q).
    pub max_accesses: u64,
    /// Whether two or more threads accessed it in some execution.
    pub shared: bool,
}

/// Hashes addresses (and small integers) for the engine's and this module's address-keyed
/// tables: one folded 64x64-bit multiplication per word, which spreads an address's middle
/// bits over both halves (aligned addresses have their low bits clear, so the product alone
/// would leave the low bits, where a table's buckets are picked, mostly clear too). Not for
/// keys an adversary chooses.
#[derive(Clone, Copy, Default)]
pub(crate) struct BuildAddressHasher;

impl std::hash::BuildHasher for BuildAddressHasher {
    type Hasher = AddressHasher;
    fn build_hasher(&self) -> AddressHasher {
        AddressHasher(0)
    }
}

/// The hasher [`BuildAddressHasher`] builds.
pub(crate) struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        let product = ((self.0 ^ n) as u128).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = (product as u64) ^ ((product >> 64) as u64);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.write_u64(n as u64);
    }

    #[inline]
    fn write_isize(&mut self, n: isize) {
        self.write_u64(n as u64);
    }
}

/// Per-run table of variables: site -> dense id, plus their profiles.
#[derive(Default)]
pub(crate) struct VarTable {
    by_site: HashMap<(&'static str, u32, u32, VarKind), VarId>,
    /// The same by the address of the site's `Location` and the kind, asked first: an object
    /// created in every execution interns its site every time, and hashing the file name
    /// (SipHash over the path) showed in profiles. Content stays the key of `by_site`: one site
    /// may have several `Location` statics (one per codegen unit that inlined the call).
    by_location: HashMap<(usize, VarKind), VarId, BuildAddressHasher>,
    /// In front of `by_location`: the latest site interned per slot, the slot picked by the
    /// `Location`'s address bits (direct-mapped, [`RECENT`] slots; empty until the first
    /// intern). Every object's first use in an execution interns its site (85 times per
    /// execution in sharded-slab's loom tests), and the hash lookup cost 70 instructions
    /// where this costs a handful. A slot holds an entry `by_location` has, so a hit is its
    /// answer.
    recent: Vec<(usize, VarKind, VarId)>,
    infos: Vec<VarInfo>,
    profiles: Vec<VarProfile>,
    /// Per-execution counters by variable, reset at the start of each execution: one entry
    /// per variable, so that the access counted at every scheduling point is one bounds
    /// check and one line of memory (three tables took three of each).
    now: Vec<Counters>,
}

/// A variable's counters in the current execution.
#[derive(Clone, Copy, Debug)]
struct Counters {
    /// Accesses so far.
    accesses: u64,
    /// The first thread that accessed it ([`NO_THREAD`]: none yet).
    first_thread: u32,
    /// Whether a second thread accessed it (or it counts as shared whoever accesses it).
    shared: bool,
}

impl Counters {
    const FRESH: Counters = Counters { accesses: 0, first_thread: NO_THREAD, shared: false };
}

const NO_THREAD: u32 = u32::MAX;

/// Slots of [`VarTable::recent`] (a power of two).
const RECENT: usize = 64;

/// The slot of [`VarTable::recent`] for the `Location` at `address`: its address in words
/// (a `Location` is word-aligned and three words long, so 64 consecutive ones take 64
/// distinct slots).
#[inline]
fn recent_slot(address: usize) -> usize {
    (address / std::mem::align_of::<Location<'static>>()) & (RECENT - 1)
}

impl VarTable {
    /// The id of the variable created at `site`, registering it on first sight.
    #[inline]
    pub(crate) fn intern(&mut self, site: &'static Location<'static>, kind: VarKind) -> VarId {
        let address = site as *const Location<'static> as usize;
        match self.recent.get(recent_slot(address)) {
            Some(&(a, k, id)) if a == address && k == kind => id,
            _ => self.intern_slow(site, kind),
        }
    }

    /// [`VarTable::intern`] of a site not in `recent`.
    #[inline(never)]
    fn intern_slow(&mut self, site: &'static Location<'static>, kind: VarKind) -> VarId {
        let address = site as *const Location<'static> as usize;
        let id = self.intern_by_location(site, kind);
        if self.recent.is_empty() {
            // Address 0 is no `Location`'s: an empty slot never matches.
            self.recent.resize(RECENT, (0, kind, id));
        }
        self.recent[recent_slot(address)] = (address, kind, id);
        id
    }

    /// [`VarTable::intern`] through the maps.
    fn intern_by_location(&mut self, site: &'static Location<'static>, kind: VarKind) -> VarId {
        let address = (site as *const Location<'static> as usize, kind);
        if let Some(&id) = self.by_location.get(&address) {
            return id;
        }
        let key = (site.file(), site.line(), site.column(), kind);
        if let Some(&id) = self.by_site.get(&key) {
            self.by_location.insert(address, id);
            return id;
        }
        let id = VarId(self.infos.len() as u32);
        self.by_site.insert(key, id);
        self.by_location.insert(address, id);
        self.infos.push(VarInfo { site, kind });
        self.profiles.push(VarProfile::default());
        self.now.push(Counters::FRESH);
        id
    }

    /// Counts one access by `thread`; returns how many accesses this execution has made to the
    /// variable so far, this one included (the `j` of the paper's `(q, j)` change points).
    #[inline]
    pub(crate) fn record_access(&mut self, var: VarId, thread: u32) -> u64 {
        let now = &mut self.now[var.index()];
        // Returned from a register: read back after the stores below (the compiler cannot
        // prove they touch other memory), it was reloaded at every scheduling point.
        let count = now.accesses + 1;
        now.accesses = count;
        if now.first_thread == NO_THREAD {
            now.first_thread = thread;
        } else if now.first_thread != thread {
            now.shared = true;
        }
        count
    }

    /// Counts the variable as shared in this execution whichever threads access it: its
    /// accesses do not commute with other threads' steps (a weak compare-exchange's
    /// store-conditional fails if another thread runs at it, whatever that thread touches), so
    /// variable bounding must be able to choose it.
    pub(crate) fn mark_shared(&mut self, var: VarId) {
        self.now[var.index()].shared = true;
    }

    /// Starts a new execution's counters.
    pub(crate) fn begin_execution(&mut self) {
        self.now.fill(Counters::FRESH);
    }

    /// Folds the finished execution's counters into the profiles.
    pub(crate) fn end_execution(&mut self) {
        for (p, now) in self.profiles.iter_mut().zip(&self.now) {
            p.max_accesses = p.max_accesses.max(now.accesses);
            p.shared |= now.shared;
        }
    }

    pub(crate) fn infos(&self) -> &[VarInfo] {
        &self.infos
    }

    pub(crate) fn profiles(&self) -> &[VarProfile] {
        &self.profiles
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hasher};

    #[track_caller]
    fn here() -> &'static Location<'static> {
        Location::caller()
    }

    /// The address fast path and the contents map agree: one site and kind is one id in every
    /// execution, in first-met order; another kind or another site is another variable.
    #[test]
    fn intern_gives_one_dense_id_per_site_and_kind() {
        let mut table = VarTable::default();
        let sites: Vec<&'static Location<'static>> = (0..3).map(|_| here()).collect();
        // One call site in a loop: one `Location` static.
        assert!(std::ptr::eq(sites[0], sites[1]));
        let other = here();
        let a = table.intern(sites[0], VarKind::Atomic);
        let b = table.intern(other, VarKind::Atomic);
        let c = table.intern(sites[0], VarKind::Cell);
        assert_eq!((a.index(), b.index(), c.index()), (0, 1, 2));
        for _ in 0..2 {
            table.begin_execution();
            assert_eq!(table.intern(sites[2], VarKind::Atomic), a);
            assert_eq!(table.intern(other, VarKind::Atomic), b);
            assert_eq!(table.intern(sites[1], VarKind::Cell), c);
            table.end_execution();
        }
        assert_eq!(table.infos().len(), 3);
        assert!(std::ptr::eq(table.infos()[1].site, other));
        assert_eq!(table.infos()[2].kind, VarKind::Cell);
    }

    /// The direct-mapped cache in front of the maps answers as they do: sites that share a
    /// slot evict each other and are still found, one site with two kinds is two variables,
    /// and a `Location` static of another codegen unit (same contents, another address)
    /// is the same variable.
    #[test]
    fn intern_cache_agrees_with_the_maps() {
        let mut table = VarTable::default();
        // 200 distinct `Location`s (more than RECENT, so slots are shared), each interned as
        // two kinds, in three rounds.
        let sites: Vec<&'static Location<'static>> = (0..200)
            .map(|i| {
                let leaked: &'static Location<'static> = Box::leak(Box::new(*here()));
                if i % 2 == 0 {
                    leaked
                } else {
                    here()
                }
            })
            .collect();
        let mut first = Vec::new();
        for round in 0..3 {
            for (i, &site) in sites.iter().enumerate() {
                for (j, kind) in [VarKind::Atomic, VarKind::Cell].into_iter().enumerate() {
                    let id = table.intern(site, kind);
                    if round == 0 {
                        first.push(id);
                    } else {
                        assert_eq!(id, first[2 * i + j], "site {i} kind {kind:?} round {round}");
                    }
                }
            }
        }
        // The leaked copies (even i) are copies of one site at 100 addresses, the odd ones
        // one `Location` of another site: two sites by contents, two kinds each.
        assert_eq!(table.infos().len(), 4);
        assert_ne!(first[0], first[1]);
        assert_ne!(first[0], first[2]);
        assert_eq!(
            (first[4], first[5], first[6], first[7]),
            (first[0], first[1], first[2], first[3])
        );
        // Collisions: addresses RECENT words apart share a slot.
        let w = std::mem::align_of::<Location<'static>>();
        assert_eq!(recent_slot(0x1000), recent_slot(0x1000 + RECENT * w));
        assert_ne!(recent_slot(0x1000), recent_slot(0x1000 + w));
    }

    /// The address hasher tells apart the words it is given, their order, and addresses 8
    /// bytes apart (a poor hash would still be correct, only slower; this checks it is not
    /// degenerate on aligned addresses).
    #[test]
    fn address_hasher_depends_on_every_word() {
        let hash = |words: &[u64]| {
            let mut h = BuildAddressHasher.build_hasher();
            words.iter().for_each(|&w| h.write_u64(w));
            h.finish()
        };
        assert_ne!(hash(&[1, 2]), hash(&[2, 1]));
        assert_ne!(hash(&[0x1000, 4]), hash(&[0x1008, 4]));
        assert_ne!(hash(&[0x1000, 4]), hash(&[0x1000, 5]));
        // Aligned addresses still differ in the low bits a table picks buckets by.
        assert_ne!(hash(&[0x1000]) & 0xff, hash(&[0x1008]) & 0xff);
    }
}
