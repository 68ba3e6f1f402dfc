//! The walk over items, functions and statements: where each function's parameters, locals
//! and return value get their nodes, and which parameters may hold anything because code
//! outside the item can call the function.

use std::collections::HashSet;

use syn::{Expr, Item, Pat};

use super::graph::{Key, TOP};
use super::syntax::{may_refer, type_name};
use super::{Analyzer, VarKind};

impl Analyzer {
    /// Walks one item: functions and methods (noting whether code outside the item can call them),
    /// impl blocks (which set the struct `self` and `Self` stand for), nested modules, statics (a
    /// `Static` object holding its initializer's value), consts (a node per const) and default
    /// methods of traits (always callable from outside).
    pub(super) fn item(&mut self, item: &Item) {
        match item {
            Item::Fn(f) => {
                let exposed = !self.root_is_mod || !matches!(f.vis, syn::Visibility::Inherited);
                self.function(&f.sig, &f.block, exposed)
            }
            Item::Impl(i) => {
                let saved = self.impl_ty.take();
                self.impl_ty = type_name(&i.self_ty, None);
                for it in &i.items {
                    match it {
                        syn::ImplItem::Fn(f) => {
                            let exposed = !self.root_is_mod
                                || i.trait_.is_some()
                                || !matches!(f.vis, syn::Visibility::Inherited);
                            self.function(&f.sig, &f.block, exposed)
                        }
                        syn::ImplItem::Const(c) => {
                            let n = self.node(Key::Const(c.ident.to_string()));
                            let v = self.expr(&c.expr);
                            self.copy(v, n);
                        }
                        _ => {}
                    }
                }
                self.impl_ty = saved;
            }
            Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    for it in items {
                        self.item(it);
                    }
                }
            }
            Item::Static(s) => {
                let name = s.ident.to_string();
                let var = self.new_var(VarKind::Static, s.ident.span(), format!("static {name}"));
                if self.decls.top_statics.contains(&name) {
                    self.vars[var].static_ident = Some(s.ident.clone());
                }
                let n = self.node(Key::Static(name.clone()));
                self.base(n, var);
                let saved = self.enter_fn(&format!("static {name}"));
                let v = self.expr_named(&s.expr, Some(format!("static {name}")));
                self.leave_fn(saved);
                self.copy(v, n);
                let c = self.content(var);
                self.copy(v, c);
                self.inline_direct.push((var, v));
            }
            Item::Const(c) => {
                let n = self.node(Key::Const(c.ident.to_string()));
                let saved = self.enter_fn(&format!("const {}", c.ident));
                let v = self.expr(&c.expr);
                self.leave_fn(saved);
                self.copy(v, n);
            }
            Item::Trait(t) => {
                for it in &t.items {
                    if let syn::TraitItem::Fn(f) = it {
                        if let Some(b) = &f.default {
                            self.function(&f.sig, b, true);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// A function's body; `exposed` when code outside the item can call it (its parameters,
    /// `self` apart, may then hold anything).
    pub(super) fn function(&mut self, sig: &syn::Signature, block: &syn::Block, exposed: bool) {
        let name = sig.ident.to_string();
        let saved = self.enter_fn(&name);
        for (i, input) in sig.inputs.iter().enumerate() {
            let p = self.node(Key::Param(name.clone(), i));
            if let (true, syn::FnArg::Typed(t)) = (exposed, input) {
                if may_refer(&t.ty) {
                    self.base(p, TOP);
                }
            }
            match input {
                syn::FnArg::Receiver(_) => {
                    let l = self.local("self");
                    self.copy(p, l);
                    self.bound.last_mut().unwrap().insert("self".into());
                }
                syn::FnArg::Typed(t) => {
                    let ty = type_name(&t.ty, self.impl_ty.as_deref());
                    if let Pat::Ident(_) = &*t.pat {
                        self.note_type(&t.pat, ty);
                    }
                    self.bind(&t.pat, p)
                }
            }
        }
        let v = self.block(block);
        let r = self.ret;
        self.copy(v, r);
        self.leave_fn(saved);
    }

    /// Walks a block's statements in order and returns the node of its value (its trailing
    /// expression, or an empty node). A `let` notes the struct type of the local it binds, names
    /// the objects its initializer creates after the binding (`let node` gives
    /// `Box::new(let node)`), and binds `let (a, b) = (x, y);` element-wise so that `a` and `b`
    /// stay apart.
    pub(super) fn block(&mut self, b: &syn::Block) -> usize {
        self.bound.push(HashSet::new());
        let mut last = None;
        for stmt in &b.stmts {
            last = None;
            match stmt {
                syn::Stmt::Local(l) => {
                    let name = match &l.pat {
                        Pat::Ident(p) => Some(format!("let {}", p.ident)),
                        Pat::Type(t) => match &*t.pat {
                            Pat::Ident(p) => Some(format!("let {}", p.ident)),
                            _ => None,
                        },
                        _ => None,
                    };
                    // `let (a, b) = (x, y);` binds element-wise.
                    if let (Pat::Tuple(pt), Some(init)) = (&l.pat, &l.init) {
                        if let Expr::Tuple(et) = &*init.expr {
                            let rest = pt.elems.iter().any(|p| matches!(p, Pat::Rest(_)));
                            if !rest && pt.elems.len() == et.elems.len() && init.diverge.is_none() {
                                for (p, e) in pt.elems.iter().zip(&et.elems) {
                                    let v = self.expr(e);
                                    self.bind(p, v);
                                }
                                continue;
                            }
                        }
                    }
                    let init_ty = l.init.as_ref().and_then(|i| self.type_of(&i.expr));
                    self.note_type(&l.pat, init_ty);
                    let v = match &l.init {
                        Some(init) => {
                            let v = self.expr_named(&init.expr, name);
                            if let Some((_, diverge)) = &init.diverge {
                                self.expr(diverge);
                            }
                            v
                        }
                        None => self.temp(),
                    };
                    self.bind(&l.pat, v);
                }
                syn::Stmt::Item(it) => self.item(it),
                syn::Stmt::Expr(e, semi) => {
                    let v = self.expr(e);
                    if semi.is_none() {
                        last = Some(v);
                    }
                }
                syn::Stmt::Macro(m) => {
                    self.mac(&m.mac, None);
                }
            }
        }
        self.bound.pop();
        last.unwrap_or_else(|| self.temp())
    }

    /// Evaluates a closure: its parameters receive `params` (plus whatever calls of unknown
    /// closures pass), its value is empty, and returns the node of its return values.
    pub(super) fn closure(&mut self, c: &syn::ExprClosure, params: Option<usize>) -> usize {
        let saved_ret = self.ret;
        self.ret = self.temp();
        self.bound.push(HashSet::new());
        let cp = self.node(Key::ClosureParams);
        for p in &c.inputs {
            self.bind(p, cp);
            if let Some(src) = params {
                self.bind(p, src);
            }
        }
        let v = self.expr(&c.body);
        let r = self.ret;
        self.copy(v, r);
        self.bound.pop();
        self.ret = saved_ret;
        r
    }
}
