//! The constraint graph: nodes with points-to sets, the subset constraints between them, and
//! the solver that propagates them to a fixpoint.
//!
//! A node's set holds object ids: indices of the item's variables, and [`TOP`] for "some
//! object the pass cannot see". The walk only records constraints; [`Analyzer::solve`] computes
//! the sets once the whole item has been walked, which is what makes the pass flow-insensitive.

use std::collections::BTreeSet;

use proc_macro2::Span;

use super::{Analyzer, Var, VarKind};

/// The object id of ⊤, "some object the pass cannot see", in points-to sets.
pub(super) const TOP: usize = usize::MAX;

/// Node keys: what a node stands for.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(super) enum Key {
    /// A local of a function (or closure inside it): (function scope, name).
    Local(usize, String),
    /// Field `f` of struct `S` (a struct of the item).
    SField(String, String),
    /// Writes to a field `f` through a receiver whose struct is unknown.
    Field(String),
    /// A static of the item, by name: holds the static's object.
    Static(String),
    /// A constant of the item (or an associated constant), by name: holds its value.
    Const(String),
    /// Parameter `i` of every function of the item named so (`self` is 0 for methods).
    Param(String, usize),
    /// The return values of every function of the item named so.
    Ret(String),
    /// What an object holds: the contents of variable `i`.
    Content(usize),
    /// What every closure's parameters may receive from calls the pass cannot resolve.
    ClosureParams,
    /// The value of one expression.
    Temp(usize),
}

impl Analyzer {
    /// The node of `key`, created with an empty set on first use. Keys are interned, so every
    /// mention of the same local, field, static, parameter or object contents in the item shares
    /// one points-to set.
    pub(super) fn node(&mut self, key: Key) -> usize {
        if let Some(&n) = self.keys.get(&key) {
            return n;
        }
        let n = self.pts.len();
        self.pts.push(BTreeSet::new());
        self.keys.insert(key, n);
        n
    }

    /// A fresh anonymous node, for the value of one expression. Giving intermediate values
    /// their own node keeps flows one-way: copying into a temporary never adds to its sources.
    pub(super) fn temp(&mut self) -> usize {
        self.temps += 1;
        self.node(Key::Temp(self.temps))
    }

    /// Puts object `obj` (a variable index, or [`TOP`]) straight into `node`'s set: the base
    /// facts the solver propagates along the constraints.
    pub(super) fn base(&mut self, node: usize, obj: usize) {
        self.pts[node].insert(obj);
    }

    /// A fresh node holding only ⊤: the value of something the pass cannot see through (a call
    /// of an unknown function, a name from outside the item).
    pub(super) fn top(&mut self) -> usize {
        let t = self.temp();
        self.base(t, TOP);
        t
    }

    /// Records the constraint `to ⊇ from`: whatever `from` may point to, `to` may too. A copy
    /// of a node into itself adds nothing and is dropped.
    pub(super) fn copy(&mut self, from: usize, to: usize) {
        if from != to {
            self.copies.push((from, to));
        }
    }

    /// A node for `node ∪ contents(node)`: what a dereference or auto-deref of it may yield.
    pub(super) fn deref(&mut self, node: usize) -> usize {
        let t = self.temp();
        self.copy(node, t);
        self.loads.push((node, t));
        t
    }

    /// The node of what object `obj` holds in its memory: loads through a pointer to `obj`
    /// read it, stores through one write it.
    pub(super) fn content(&mut self, obj: usize) -> usize {
        self.node(Key::Content(obj))
    }

    /// A fresh node receiving every node of `nodes`: the value of a tuple or an array, which
    /// may hold any of its elements.
    pub(super) fn union(&mut self, nodes: &[usize]) -> usize {
        let t = self.temp();
        for &n in nodes {
            self.copy(n, t);
        }
        t
    }

    /// Creates an abstract object: a variable of the result, of `kind`, located at `span`
    /// and named `name` in reports. Its index in [`Analyzer::vars`] is also its id in points-to
    /// sets.
    pub(super) fn new_var(&mut self, kind: VarKind, span: Span, name: String) -> usize {
        self.vars.push(Var { kind, span, name, alloc_site: None, static_ident: None });
        self.vars.len() - 1
    }

    /// Propagates the constraints to their least fixpoint: copies, loads (`dst ⊇` the contents of
    /// what `ptr` points to), stores (the contents of what `ptr` points to `⊇ src`) and the ⊤ rule
    /// of fields of unknown structs, all re-run until no set grows. Plain iteration is enough: an
    /// item has a few thousand nodes at most, and the fixpoint does not depend on the order.
    pub(super) fn solve(&mut self) {
        loop {
            let mut changed = false;
            for i in 0..self.copies.len() {
                let (from, to) = self.copies[i];
                changed |= self.flow(from, to);
            }
            for i in 0..self.loads.len() {
                let (ptr, dst) = self.loads[i];
                let objs: Vec<usize> = self.pts[ptr].iter().copied().collect();
                for o in objs {
                    if o == TOP {
                        changed |= self.pts[dst].insert(TOP);
                    } else {
                        let c = self.content(o);
                        changed |= self.flow(c, dst);
                    }
                }
            }
            for i in 0..self.stores.len() {
                let (ptr, src) = self.stores[i];
                let objs: Vec<usize> =
                    self.pts[ptr].iter().copied().filter(|&o| o != TOP).collect();
                for o in objs {
                    let c = self.content(o);
                    changed |= self.flow(src, c);
                }
            }
            for i in 0..self.tops.len() {
                let (a, b) = self.tops[i];
                if self.pts[a].contains(&TOP) {
                    changed |= self.pts[b].insert(TOP);
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Adds the objects of `from` to `to`, returning whether `to` grew (the solver's change
    /// flag).
    pub(super) fn flow(&mut self, from: usize, to: usize) -> bool {
        if from == to {
            return false;
        }
        let add: Vec<usize> = self.pts[from].difference(&self.pts[to]).copied().collect();
        if add.is_empty() {
            return false;
        }
        self.pts[to].extend(add);
        true
    }
}
