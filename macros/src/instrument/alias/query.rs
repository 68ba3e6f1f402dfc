//! From the solved graph to each site's answer: which of the objects a site's node points to
//! the operation can touch, and the containers a pointer into an object may also reach.

use std::collections::BTreeSet;

use super::graph::TOP;
use super::sites::SiteKind;
use super::{Analyzer, May, VarKind};

impl Analyzer {
    /// Heap objects and statics that may hold one of `objs` inline (transitively): a pointer
    /// into an object may point into its container's memory.
    pub(super) fn containers(&mut self, objs: &BTreeSet<usize>) -> BTreeSet<usize> {
        let mut inline: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); self.vars.len()];
        for &(var, src) in &self.inline_direct {
            inline[var].extend(self.pts[src].iter().copied().filter(|&o| o != TOP));
        }
        for &(ptr, src) in &self.inline_stores {
            for &o in &self.pts[ptr] {
                if o != TOP {
                    inline[o].extend(self.pts[src].iter().copied().filter(|&x| x != TOP));
                }
            }
        }
        let mut out = BTreeSet::new();
        let mut frontier: Vec<usize> = objs.iter().copied().filter(|&o| o != TOP).collect();
        while let Some(o) = frontier.pop() {
            for (h, held) in inline.iter().enumerate() {
                if matches!(self.vars[h].kind, VarKind::Heap | VarKind::Static)
                    && held.contains(&o)
                    && out.insert(h)
                {
                    frontier.push(h);
                }
            }
        }
        out
    }

    /// The answer for site `id`, after solving. An allocation site may access only the variable it
    /// creates. A site with no recorded node, or whose node holds ⊤, may access anything.
    /// Otherwise: the objects its node points to (for memory accesses, also the heap objects and
    /// statics holding them inline), kept only if the operation can touch their kind.
    pub(super) fn may_of(&mut self, id: usize) -> May {
        let site = &self.sites[id];
        let kind = site.kind;
        if kind == SiteKind::Alloc {
            return match self.site_var[id] {
                Some(v) => May::Vars(BTreeSet::from([v])),
                None => May::Anything,
            };
        }
        let Some(node) = self.site_node[id] else { return May::Anything };
        let pts = self.pts[node].clone();
        if pts.contains(&TOP) {
            return May::Anything;
        }
        let memory = matches!(kind, SiteKind::Deref | SiteKind::ReadWrite)
            || (kind == SiteKind::Atomic && site.label.ends_with(".swap"));
        let mut candidates = pts.clone();
        if memory {
            candidates.extend(self.containers(&pts));
        }
        let allowed = |k: VarKind| -> bool {
            let mem = matches!(k, VarKind::Heap | VarKind::Static);
            let once = matches!(k, VarKind::Once | VarKind::OnceLock | VarKind::LazyLock);
            match kind {
                SiteKind::Atomic => k == VarKind::Atomic || (memory && mem),
                SiteKind::Lock => k == VarKind::Mutex,
                SiteKind::ReadWrite => k == VarKind::RwLock || mem,
                SiteKind::Wait => matches!(k, VarKind::Condvar | VarKind::Barrier),
                SiteKind::Cell => k == VarKind::Cell || once,
                SiteKind::Channel => k == VarKind::Channel,
                SiteKind::Once => once,
                SiteKind::Deref => mem,
                SiteKind::Alloc => false,
            }
        };
        May::Vars(candidates.into_iter().filter(|&v| allowed(self.vars[v].kind)).collect())
    }
}
