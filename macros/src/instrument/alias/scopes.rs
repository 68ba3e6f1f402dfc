//! Function scopes and the binding of pattern names to local nodes.
//!
//! Locals are keyed by (function scope, name), not by binding: shadowed bindings of a name share
//! one node, and so do a function's locals and the captures of its closures.

use std::collections::HashSet;

use syn::visit::{self, Visit};
use syn::Pat;

use super::graph::Key;
use super::Analyzer;

impl Analyzer {
    /// Starts the body of function (or initializer) `name`: a new scope number for its
    /// locals, an empty set of bound names and its return node. Returns what
    /// [`Analyzer::leave_fn`] restores, since functions nest (items inside blocks).
    pub(super) fn enter_fn(&mut self, name: &str) -> (usize, usize, Vec<HashSet<String>>) {
        let saved = (self.scope, self.ret, std::mem::take(&mut self.bound));
        self.scope = self.next_scope;
        self.next_scope += 1;
        self.bound = vec![HashSet::new()];
        self.ret = self.node(Key::Ret(name.to_string()));
        saved
    }

    /// Restores the enclosing function's scope, return node and bound names, as saved by
    /// [`Analyzer::enter_fn`].
    pub(super) fn leave_fn(&mut self, saved: (usize, usize, Vec<HashSet<String>>)) {
        self.scope = saved.0;
        self.ret = saved.1;
        self.bound = saved.2;
    }

    /// The node of local `name` in the current function: one per name and function, so shadowed
    /// bindings share a node and a closure's captures are the function's own locals (closures open
    /// no scope of their own; a `move` into `thread::spawn` is the same node).
    pub(super) fn local(&mut self, name: &str) -> usize {
        self.node(Key::Local(self.scope, name.to_string()))
    }

    /// Whether `name` was bound by a pattern in one of the current function's open blocks. A
    /// single-segment path that is not names a static, a const, a function or something outside the
    /// item.
    pub(super) fn is_bound(&self, name: &str) -> bool {
        self.bound.iter().any(|s| s.contains(name))
    }

    /// Binds every name in `pat` to `value`.
    pub(super) fn bind(&mut self, pat: &Pat, value: usize) {
        struct Names(Vec<String>);
        impl<'a> Visit<'a> for Names {
            /// Collects a name the pattern binds, including those under `name @ subpattern`.
            fn visit_pat_ident(&mut self, p: &'a syn::PatIdent) {
                self.0.push(p.ident.to_string());
                visit::visit_pat_ident(self, p);
            }
        }
        let mut names = Names(Vec::new());
        names.visit_pat(pat);
        // A plain name binds the value; a destructuring pattern (tuple, struct, reference,
        // slice) may also bind what the value holds.
        let plain = match pat {
            Pat::Ident(p) => p.subpat.is_none(),
            Pat::Type(t) => matches!(&*t.pat, Pat::Ident(p) if p.subpat.is_none()),
            _ => false,
        };
        let v = if plain { value } else { self.deref(value) };
        for name in names.0 {
            let l = self.local(&name);
            self.copy(v, l);
            if let Some(b) = self.bound.last_mut() {
                b.insert(name);
            }
        }
    }
}
