//! Calls, method calls, macros and marked sites: where the pass creates variables (primitive
//! constructors, channels, allocations), resolves calls of the item's own functions by name,
//! and records the node each site accesses through.

use syn::Expr;

use super::graph::{Key, TOP};
use super::sites::{self, SiteKind};
use super::syntax::{constructs, starts_upper, FuncSpan};
use super::{Analyzer, VarKind};

/// pctvb primitive types and the variable kind of their `new`.
const PRIMS: &[(&str, VarKind)] = &[
    ("AtomicBool", VarKind::Atomic),
    ("AtomicU8", VarKind::Atomic),
    ("AtomicU16", VarKind::Atomic),
    ("AtomicU32", VarKind::Atomic),
    ("AtomicU64", VarKind::Atomic),
    ("AtomicUsize", VarKind::Atomic),
    ("AtomicI8", VarKind::Atomic),
    ("AtomicI16", VarKind::Atomic),
    ("AtomicI32", VarKind::Atomic),
    ("AtomicI64", VarKind::Atomic),
    ("AtomicIsize", VarKind::Atomic),
    ("AtomicPtr", VarKind::Atomic),
    ("Mutex", VarKind::Mutex),
    ("RwLock", VarKind::RwLock),
    ("Condvar", VarKind::Condvar),
    ("Barrier", VarKind::Barrier),
    ("Once", VarKind::Once),
    ("OnceLock", VarKind::OnceLock),
    ("LazyLock", VarKind::LazyLock),
    ("UnsafeCell", VarKind::Cell),
];

/// Free functions (by last path segment) known to return only what their arguments hold.
const PASSTHROUGH_FNS: &[&str] = &[
    "into_raw",
    "from_raw",
    "leak",
    "clone",
    "as_ptr",
    "as_mut_ptr",
    "new_unchecked",
    "from",
    "into",
    "from_ref",
    "from_mut",
    "addr_of",
    "addr_of_mut",
    "replace",
    "take",
    "identity",
    "black_box",
    "new",
    "with_capacity",
    "default",
    "null",
    "null_mut",
    "dangling",
    "drop",
    "forget",
    "swap",
    "spawn",
    "scope",
    "current",
    "yield_now",
    "sleep",
    "park",
    "size_of",
    "size_of_val",
    "align_of",
    "fence",
    "compiler_fence",
    "unreachable_unchecked",
    "transmute",
];

impl Analyzer {
    /// Evaluates the arguments of a call. A closure argument is walked in place: its parameters
    /// receive `closure_params` (for a method, what the receiver holds, as in
    /// `iter().map(|x| ..)`), its value is an empty node, and its return node is returned apart,
    /// since the call may return what the closure returns. Returns (argument values, closure
    /// return nodes).
    pub(super) fn args_and_closures(
        &mut self,
        args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>,
        closure_params: Option<usize>,
    ) -> (Vec<usize>, Vec<usize>) {
        let mut values = Vec::new();
        let mut rets = Vec::new();
        for a in args {
            if let Expr::Closure(c) = a {
                rets.push(self.closure(c, closure_params));
                values.push(self.temp());
            } else {
                values.push(self.expr(a));
            }
        }
        (values, rets)
    }

    /// A call `f(args)`. A constructor of a pctvb primitive or `channel()` creates a variable;
    /// a function of the item passes the arguments to its parameters and yields its return node;
    /// otherwise the result holds what the arguments hold, plus ⊤ unless the function is one whose
    /// result the pass knows (a type's constructor, [`PASSTHROUGH_FNS`]). A call through a value
    /// (closure, function pointer) yields ⊤ and passes its arguments to every closure's parameters.
    pub(super) fn call(&mut self, call: &syn::ExprCall, hint: Option<String>) -> usize {
        let Expr::Path(p) = &*call.func else {
            // A call through a closure or function pointer held in a value.
            self.expr(&call.func);
            let (args, _) = self.args_and_closures(&call.args, None);
            let cp = self.node(Key::ClosureParams);
            for a in args {
                self.copy(a, cp);
            }
            return self.top();
        };
        let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        let last = segs.last().cloned().unwrap_or_default();
        let ty = (segs.len() >= 2).then(|| segs[segs.len() - 2].clone());
        // A pctvb primitive constructor: a variable.
        if let Some(ty) = &ty {
            if last == "new" {
                if let Some((_, kind)) = PRIMS.iter().find(|(t, _)| t == ty) {
                    let (args, _) = self.args_and_closures(&call.args, None);
                    let name = hint.unwrap_or_else(|| format!("{ty}::new"));
                    let var = self.new_var(*kind, call.func_span(), name);
                    let t = self.temp();
                    self.base(t, var);
                    let c = self.content(var);
                    for a in args {
                        self.copy(a, c);
                        self.copy(a, t);
                    }
                    return t;
                }
            }
        }
        if last == "channel" || last == "sync_channel" {
            let (_, _) = self.args_and_closures(&call.args, None);
            let name = hint.unwrap_or_else(|| format!("{last}()"));
            let var = self.new_var(VarKind::Channel, call.func_span(), name);
            let t = self.temp();
            self.base(t, var);
            return t;
        }
        // Pointer conversions keep the name of what they convert (`Box::into_raw(Box::new(..))`).
        let (args, rets) = if call.args.len() == 1
            && matches!(last.as_str(), "into_raw" | "leak" | "new_unchecked" | "from")
        {
            (vec![self.expr_named(&call.args[0], hint)], Vec::new())
        } else {
            self.args_and_closures(&call.args, None)
        };
        let out = self.temp();
        for &r in &rets {
            self.copy(r, out);
        }
        if self.decls.fns.contains(&last) {
            for (i, &a) in args.iter().enumerate() {
                let param = self.node(Key::Param(last.clone(), i));
                self.copy(a, param);
            }
            let r = self.node(Key::Ret(last.clone()));
            self.copy(r, out);
            // Also the std function of that name, if the path is not the item's.
            if segs.len() == 1
                || segs
                    .first()
                    .is_some_and(|s| s == "Self" || s == "self" || s == "super" || s == "crate")
            {
                return out;
            }
        }
        for &a in &args {
            self.copy(a, out);
        }
        let known = starts_upper(&last) || PASSTHROUGH_FNS.contains(&last.as_str());
        if !known && !self.decls.fns.contains(&last) {
            self.base(out, TOP);
        }
        out
    }

    /// A method call `recv.m(args)`. The result may hold what the receiver refers to and what the
    /// arguments hold (std containers and smart pointers return parts of themselves), and the
    /// arguments may be stored into what the receiver points to (`store`, `push`, `insert`). A
    /// method the item defines also receives the receiver as parameter 0 and the arguments after
    /// it. For a site, the receiver's node is the node the site accesses through.
    pub(super) fn method(&mut self, m: &syn::ExprMethodCall, site: Option<usize>) -> usize {
        let recv = self.expr(&m.receiver);
        let recv_deref = self.deref(recv);
        if let Some(id) = site {
            self.site_node[id] = Some(recv);
        }
        let (args, rets) = self.args_and_closures(&m.args, Some(recv_deref));
        let name = m.method.to_string();
        let out = self.temp();
        self.copy(recv_deref, out);
        for &r in &rets {
            self.copy(r, out);
        }
        for &a in &args {
            self.copy(a, out);
            // What is passed in may be stored in the receiver (`store`, `push`, `insert`).
            self.stores.push((recv, a));
        }
        if self.decls.fns.contains(&name) {
            let p0 = self.node(Key::Param(name.clone(), 0));
            self.copy(recv, p0);
            for (i, &a) in args.iter().enumerate() {
                let p = self.node(Key::Param(name.clone(), i + 1));
                self.copy(a, p);
            }
            let r = self.node(Key::Ret(name));
            self.copy(r, out);
        }
        out
    }

    /// A macro call. A site marker is walked as its site; a std expression macro (`assert!`,
    /// `vec!`, `println!`, ...) evaluates its arguments and its value holds theirs; any other macro
    /// is opaque with an empty value (the site pass already rejected those whose arguments may
    /// access shared state).
    pub(super) fn mac(&mut self, mac: &syn::Macro, hint: Option<String>) -> usize {
        if let Some((id, inner)) = sites::parse_marker(mac) {
            return self.site(id, &inner, hint);
        }
        let out = self.temp();
        if sites::is_expr_macro(mac) {
            for (piece, _) in sites::split_macro(&mac.tokens) {
                if let Ok(e) = piece {
                    let v = self.expr(&e);
                    self.copy(v, out);
                }
            }
        }
        out
    }

    /// The site marked `__pctvb_site!(id, inner)`: records the node site `id` accesses through (the
    /// receiver of a method, the dereferenced pointer, the first argument of `ptr::read` & co., or
    /// the `static mut` itself). An allocation site creates its heap variable, whose contents and
    /// inline memory are the allocated value; a pointer write function stores its later arguments
    /// through the pointer.
    pub(super) fn site(&mut self, id: usize, inner: &Expr, hint: Option<String>) -> usize {
        match (self.sites[id].kind, inner) {
            (_, Expr::MethodCall(m)) => self.method(m, Some(id)),
            (SiteKind::Alloc, Expr::Call(c)) => {
                let ty = match &*c.func {
                    Expr::Path(p) => {
                        let n = p.path.segments.len();
                        p.path.segments[n.saturating_sub(2)].ident.to_string()
                    }
                    _ => "Box".into(),
                };
                let name = match &hint {
                    Some(h) => format!("{ty}::new({h})"),
                    None => format!("{ty}::new"),
                };
                let var = self.new_var(VarKind::Heap, self.sites[id].span, name);
                self.vars[var].alloc_site = Some(id);
                self.site_var[id] = Some(var);
                let args: Vec<usize> =
                    c.args.iter().map(|a| self.expr_named(a, hint.clone())).collect();
                let t = self.temp();
                self.base(t, var);
                let content = self.content(var);
                for a in args {
                    self.copy(a, content);
                    self.copy(a, t);
                    self.inline_direct.push((var, a));
                }
                t
            }
            (_, Expr::Call(c)) => {
                // ptr::read(p) / ptr::write(p, v) & co.
                let (args, _) = self.args_and_closures(&c.args, None);
                let p = args.first().copied().unwrap_or_else(|| self.top());
                self.site_node[id] = Some(p);
                for (i, &a) in args.iter().enumerate().skip(1) {
                    self.stores.push((p, a));
                    if constructs(&c.args[i]) {
                        self.inline_stores.push((p, a));
                    }
                }
                self.deref(p)
            }
            (_, Expr::Unary(u)) => {
                let p = self.expr(&u.expr);
                self.site_node[id] = Some(p);
                self.deref(p)
            }
            (_, Expr::Path(path)) => {
                // A `static mut`: the access is of the static itself.
                let v = self.path_value(&path.path);
                self.site_node[id] = Some(v);
                v
            }
            (_, other) => self.expr(other),
        }
    }
}
