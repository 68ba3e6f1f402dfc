//! The walk over expressions and assignments: the node of each expression's value, and the
//! copy, load and store constraints its evaluation implies.
//!
//! Values are transparent: a reference, `Box`, `Arc`, raw pointer or guard is the same node as
//! what it refers to, and a dereference or projection yields the node plus its contents.

use std::collections::HashSet;

use syn::visit::{self, Visit};
use syn::Expr;

use super::graph::Key;
use super::sites;
use super::syntax::{constructs, is_all_caps, starts_upper};
use super::Analyzer;

impl Analyzer {
    /// The node of `e`'s value, without a name for the objects it creates (see
    /// [`Analyzer::expr_named`]).
    pub(super) fn expr(&mut self, e: &Expr) -> usize {
        self.expr_named(e, None)
    }

    /// The node of `e`'s value, recording the constraints of everything `e` evaluates. `hint` names
    /// the binding or field the value goes to (`let node`, `Stack.head`), and variables created
    /// directly in `e` take it as their name. Expressions the pass does not model evaluate their
    /// sub-expressions and yield ⊤.
    pub(super) fn expr_named(&mut self, e: &Expr, hint: Option<String>) -> usize {
        match e {
            Expr::Macro(m) => self.mac(&m.mac, hint),
            Expr::Path(p) => self.path_value(&p.path),
            Expr::Call(c) => self.call(c, hint),
            Expr::MethodCall(m) => self.method(m, None),
            Expr::Field(f) => {
                let base = self.expr(&f.base);
                match &f.member {
                    syn::Member::Named(name) => {
                        let name = name.to_string();
                        if self.decls.fields.contains_key(&name) {
                            // A receiver of a known struct of the item has its fields
                            // covered; one of unknown struct that may come from outside may be
                            // another crate's struct with a field of that name.
                            let ty = self.type_of(&f.base).filter(|t| self.declares(t, &name));
                            let known = ty.is_some();
                            let out = self.field_read(ty, &name);
                            if !known {
                                self.tops.push((base, out));
                            }
                            out
                        } else {
                            self.top()
                        }
                    }
                    syn::Member::Unnamed(_) => self.deref(base),
                }
            }
            Expr::Struct(s) => {
                let known = self.struct_name(&s.path);
                let ty = known.clone().unwrap_or_else(|| {
                    s.path.segments.last().map(|x| x.ident.to_string()).unwrap_or_default()
                });
                let out = self.temp();
                for fv in &s.fields {
                    if let syn::Member::Named(name) = &fv.member {
                        let v = self.expr_named(&fv.expr, Some(format!("{ty}.{name}")));
                        let fnode = match &known {
                            Some(st) => self.node(Key::SField(st.clone(), name.to_string())),
                            None => self.node(Key::Field(name.to_string())),
                        };
                        self.copy(v, fnode);
                        self.copy(v, out);
                    } else {
                        let v = self.expr(&fv.expr);
                        self.copy(v, out);
                    }
                }
                if let Some(rest) = &s.rest {
                    let v = self.expr(rest);
                    self.copy(v, out);
                }
                out
            }
            Expr::Assign(a) => {
                let v = self.expr(&a.right);
                self.rhs_constructs = constructs(&a.right);
                self.assign(&a.left, v);
                self.rhs_constructs = false;
                self.temp()
            }
            Expr::Binary(b) => {
                let l = self.expr(&b.left);
                let r = self.expr(&b.right);
                if matches!(b.op, syn::BinOp::AddAssign(_) | syn::BinOp::SubAssign(_)) {
                    let _ = l;
                    self.assign(&b.left, r);
                }
                self.temp()
            }
            Expr::Unary(u) => {
                let v = self.expr(&u.expr);
                match u.op {
                    syn::UnOp::Deref(_) => self.deref(v),
                    _ => self.temp(),
                }
            }
            Expr::Reference(r) => self.expr(&r.expr),
            Expr::RawAddr(r) => self.expr(&r.expr),
            Expr::Paren(p) => self.expr_named(&p.expr, hint),
            Expr::Group(g) => self.expr_named(&g.expr, hint),
            Expr::Cast(c) => self.expr(&c.expr),
            Expr::Try(t) => self.expr(&t.expr),
            Expr::Await(a) => self.expr(&a.base),
            Expr::Index(i) => {
                let b = self.expr(&i.expr);
                self.expr(&i.index);
                self.deref(b)
            }
            Expr::Block(b) => self.block(&b.block),
            Expr::Unsafe(u) => self.block(&u.block),
            Expr::Const(c) => self.block(&c.block),
            Expr::Async(a) => self.block(&a.block),
            Expr::TryBlock(t) => self.block(&t.block),
            Expr::Loop(l) => {
                self.block(&l.body);
                self.temp()
            }
            Expr::While(w) => {
                self.bound.push(HashSet::new());
                self.expr(&w.cond);
                self.block(&w.body);
                self.bound.pop();
                self.temp()
            }
            Expr::ForLoop(f) => {
                let it = self.expr(&f.expr);
                self.bound.push(HashSet::new());
                let elems = self.deref(it);
                self.bind(&f.pat, elems);
                self.block(&f.body);
                self.bound.pop();
                self.temp()
            }
            Expr::If(i) => {
                self.bound.push(HashSet::new());
                self.expr(&i.cond);
                let t = self.block(&i.then_branch);
                self.bound.pop();
                let out = self.temp();
                self.copy(t, out);
                if let Some((_, e)) = &i.else_branch {
                    let v = self.expr(e);
                    self.copy(v, out);
                }
                out
            }
            Expr::Let(l) => {
                let v = self.expr(&l.expr);
                self.bind(&l.pat, v);
                self.temp()
            }
            Expr::Match(m) => {
                let v = self.expr(&m.expr);
                let out = self.temp();
                for arm in &m.arms {
                    self.bound.push(HashSet::new());
                    self.bind(&arm.pat, v);
                    if let Some((_, g)) = &arm.guard {
                        self.expr(g);
                    }
                    let b = self.expr(&arm.body);
                    self.copy(b, out);
                    self.bound.pop();
                }
                out
            }
            Expr::Closure(c) => {
                self.closure(c, None);
                self.temp()
            }
            Expr::Return(r) => {
                if let Some(e) = &r.expr {
                    let v = self.expr(e);
                    let ret = self.ret;
                    self.copy(v, ret);
                }
                self.temp()
            }
            Expr::Break(b) => {
                if let Some(e) = &b.expr {
                    self.expr(e);
                }
                self.temp()
            }
            Expr::Tuple(t) => {
                let vs: Vec<usize> = t.elems.iter().map(|e| self.expr(e)).collect();
                self.union(&vs)
            }
            Expr::Array(a) => {
                let vs: Vec<usize> = a.elems.iter().map(|e| self.expr(e)).collect();
                self.union(&vs)
            }
            Expr::Repeat(r) => {
                self.expr(&r.len);
                self.expr(&r.expr)
            }
            Expr::Range(r) => {
                if let Some(s) = &r.start {
                    self.expr(s);
                }
                if let Some(e) = &r.end {
                    self.expr(e);
                }
                self.temp()
            }
            Expr::Lit(_) => self.temp(),
            other => {
                // Any other expression: evaluate its sub-expressions, value ⊤.
                struct Children<'b>(Vec<&'b Expr>);
                impl<'b> Visit<'b> for Children<'b> {
                    /// Collects a direct sub-expression without descending into it: the walk then
                    /// evaluates each one itself, through [`Analyzer::expr`].
                    fn visit_expr(&mut self, e: &'b Expr) {
                        self.0.push(e);
                    }
                }
                let mut ch = Children(Vec::new());
                visit::visit_expr(&mut ch, other);
                for c in ch.0 {
                    self.expr(c);
                }
                self.top()
            }
        }
    }

    /// `left = value`.
    pub(super) fn assign(&mut self, left: &Expr, value: usize) {
        match left {
            Expr::Path(p) if p.path.segments.len() == 1 => {
                let name = p.path.segments[0].ident.to_string();
                if self.is_bound(&name) {
                    let l = self.local(&name);
                    self.copy(value, l);
                } else if self.decls.statics.contains(&name) {
                    let s = self.node(Key::Static(name));
                    self.copy(value, s);
                }
            }
            Expr::Field(f) => {
                self.expr(&f.base);
                if let syn::Member::Named(name) = &f.member {
                    let name = name.to_string();
                    let n = match self.type_of(&f.base).filter(|t| self.declares(t, &name)) {
                        Some(st) => self.node(Key::SField(st, name)),
                        None => self.node(Key::Field(name)),
                    };
                    self.copy(value, n);
                }
            }
            Expr::Paren(p) => self.assign(&p.expr, value),
            Expr::Macro(m) => {
                // `*p = v` (a write site) and `*p.add(i) = v`.
                if let Some((id, inner)) = sites::parse_marker(&m.mac) {
                    if let Expr::Path(p) = &inner {
                        let v = self.path_value(&p.path);
                        self.site_node[id] = Some(v);
                        self.assign(&inner, value);
                        return;
                    }
                    if let Expr::Unary(u) = &inner {
                        let p = self.expr(&u.expr);
                        self.site_node[id] = Some(p);
                        self.stores.push((p, value));
                        if self.rhs_constructs {
                            self.inline_stores.push((p, value));
                        }
                        return;
                    }
                    self.site(id, &inner, None);
                }
            }
            Expr::Unary(u) => {
                let p = self.expr(&u.expr);
                self.stores.push((p, value));
            }
            Expr::Index(i) => {
                let b = self.expr(&i.expr);
                self.expr(&i.index);
                self.stores.push((b, value));
            }
            other => {
                self.expr(other);
            }
        }
    }

    /// The node a path expression reads: a bound local or `self`, a static or a const of the item;
    /// an empty node for functions, types and enum variants used as values; ⊤ for any other name (a
    /// static or constant from outside the item).
    pub(super) fn path_value(&mut self, path: &syn::Path) -> usize {
        let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let last = segs.last().cloned().unwrap_or_default();
        if segs.len() == 1 && self.is_bound(&last) {
            return self.local(&last);
        }
        if segs.len() == 1 && last == "self" {
            return self.local("self");
        }
        if self.decls.statics.contains(&last) {
            return self.node(Key::Static(last));
        }
        if self.decls.consts.contains(&last) {
            return self.node(Key::Const(last));
        }
        if self.decls.fns.contains(&last) || (starts_upper(&last) && !is_all_caps(&last)) {
            return self.temp();
        }
        if segs.len() >= 2 && starts_upper(&segs[segs.len() - 2]) && !is_all_caps(&last) {
            // Enum variants and associated functions used as values.
            return self.temp();
        }
        self.top()
    }
}
