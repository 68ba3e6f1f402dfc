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
use std::hash::{BuildHasherDefault, Hasher};
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
    /// An `mpsc` channel.
    Channel,
    /// `Once`, `OnceLock` or `LazyLock`.
    Once,
    /// Heap data (a `Box`/`Arc`/`Rc` allocation) or a static, accessed through raw pointers by
    /// code instrumented with `#[pctvb::instrument]`.
    Heap,
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
            VarKind::Cell => "UnsafeCell",
            VarKind::Channel => "channel",
            VarKind::Once => "Once",
            VarKind::Heap => "Heap",
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

/// Per-run table of variables: site -> dense id, plus their profiles.
#[derive(Default)]
pub(crate) struct VarTable {
    /// The fast path of [`VarTable::intern`], which every object's first use in every
    /// execution calls: the site's address (one `Location` static per call site, so the same
    /// address is the same site) and kind, hashed with one multiplication per word.
    by_address: HashMap<(usize, VarKind), VarId, BuildHasherDefault<WordHasher>>,
    /// The site's contents: two `Location` statics of one site (a call site compiled into
    /// two codegen units) are one variable.
    by_site: HashMap<(&'static str, u32, u32, VarKind), VarId>,
    infos: Vec<VarInfo>,
    profiles: Vec<VarProfile>,
    // Per-execution counters, reset at the start of each execution.
    accesses: Vec<u64>,
    first_thread: Vec<u32>,
    shared_now: Vec<bool>,
}

const NO_THREAD: u32 = u32::MAX;

/// The hasher of [`VarTable`]'s address map: each word folded in with a multiplication (the
/// keys are addresses of statics and small enum tags, not chosen by an adversary, so SipHash's
/// protection buys nothing there, and its cost showed in `perf` profiles of loom suites that
/// create many objects per execution, such as sharded-slab's).
#[derive(Default)]
pub(crate) struct WordHasher(u64);

impl WordHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for WordHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.add(n as u64);
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(n as u64);
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline]
    fn write_isize(&mut self, n: isize) {
        self.add(n as u64);
    }
}

impl VarTable {
    /// The id of the variable created at `site`, registering it on first sight.
    #[inline]
    pub(crate) fn intern(&mut self, site: &'static Location<'static>, kind: VarKind) -> VarId {
        let address = (site as *const Location<'static> as usize, kind);
        if let Some(&id) = self.by_address.get(&address) {
            return id;
        }
        self.intern_site(address, site, kind)
    }

    /// [`VarTable::intern`] for a site address met for the first time in this run: by the
    /// site's contents (hashing its file name), then registered under its address too.
    #[cold]
    fn intern_site(
        &mut self,
        address: (usize, VarKind),
        site: &'static Location<'static>,
        kind: VarKind,
    ) -> VarId {
        let key = (site.file(), site.line(), site.column(), kind);
        if let Some(&id) = self.by_site.get(&key) {
            self.by_address.insert(address, id);
            return id;
        }
        let id = VarId(self.infos.len() as u32);
        self.by_site.insert(key, id);
        self.by_address.insert(address, id);
        self.infos.push(VarInfo { site, kind });
        self.profiles.push(VarProfile::default());
        self.accesses.push(0);
        self.first_thread.push(NO_THREAD);
        self.shared_now.push(false);
        id
    }

    /// Counts one access by `thread`; returns how many accesses this execution has made to the
    /// variable so far, this one included (the `j` of the paper's `(q, j)` change points).
    #[inline]
    pub(crate) fn record_access(&mut self, var: VarId, thread: u32) -> u64 {
        let i = var.index();
        self.accesses[i] += 1;
        let first = self.first_thread[i];
        if first == NO_THREAD {
            self.first_thread[i] = thread;
        } else if first != thread {
            self.shared_now[i] = true;
        }
        self.accesses[i]
    }

    /// Starts a new execution's counters.
    pub(crate) fn begin_execution(&mut self) {
        self.accesses.iter_mut().for_each(|a| *a = 0);
        self.first_thread.iter_mut().for_each(|t| *t = NO_THREAD);
        self.shared_now.iter_mut().for_each(|s| *s = false);
    }

    /// Folds the finished execution's counters into the profiles.
    pub(crate) fn end_execution(&mut self) {
        for (i, p) in self.profiles.iter_mut().enumerate() {
            p.max_accesses = p.max_accesses.max(self.accesses[i]);
            p.shared |= self.shared_now[i];
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

    /// The address map's hasher tells apart the words it is given (a poor hash would still be
    /// correct, only slower; this checks it is not constant).
    #[test]
    fn word_hasher_depends_on_every_word() {
        let hash = |words: &[u64]| {
            let mut h = WordHasher::default();
            words.iter().for_each(|&w| h.write_u64(w));
            h.finish()
        };
        assert_ne!(hash(&[1, 2]), hash(&[2, 1]));
        assert_ne!(hash(&[0x1000, 4]), hash(&[0x1008, 4]));
        assert_ne!(hash(&[0x1000, 4]), hash(&[0x1000, 5]));
    }
}
