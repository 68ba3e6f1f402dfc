//! The static alias pass: for every access site, the set of variables it may access.
//!
//! An Andersen-style, flow-insensitive subset analysis over the syntax of one instrumented item
//! (no types, no other crates):
//! - **Abstract objects** are the item's variables: every call of a pctvb primitive constructor
//!   (`AtomicUsize::new`, `Mutex::new`, `UnsafeCell::new`, `mpsc::channel`, ...), every heap
//!   allocation `Box::new` / `Arc::new` / `Rc::new`, and every `static`; plus ⊤, "some object
//!   the pass cannot see".
//! - **Nodes** hold points-to sets: locals (one per name per function, closures included, so
//!   shadowed bindings merge and closure captures and `move` into `thread::spawn` are the same
//!   node), struct fields by struct and field (`self.head` in `impl Stack`, or `x.head` where
//!   `x` is a parameter or `let` annotated `&Stack` or bound to a `Stack { .. }`; when the
//!   struct is not evident from the syntax, `x.head` is the `head` of every struct of the
//!   item that has one, and a write through it reaches all their reads), statics, function
//!   parameters and returns (calls are resolved by name:
//!   a call of `push` flows into every `push` the item defines), and the contents of each object.
//! - **Values are transparent**: a reference, `Box`, `Arc`, raw pointer or guard points to what
//!   it refers to and to what that contains inline; `*p` reads the contents of what `p` points
//!   to, `*p = v` and `a.store(v)` write them.
//! - A **site** may access the objects its receiver (or dereferenced pointer) points to, of a
//!   kind the operation can touch (an atomic operation touches atomics, a dereference touches
//!   heap objects and statics, and also every object that may contain its target inline). ⊤ in
//!   that set makes the site may-access-anything.
//!
//! What the pass cannot see, and what it does then (sound for the code it sees):
//! - code outside the annotated item: a call of a free function not defined in the item
//!   returns ⊤ (constructors, `Some`/`Ok`, `Box::into_raw`, `ptr::null` and similar std
//!   functions are known); a method not defined in the item is assumed to return only what is
//!   reachable from its receiver and arguments (true of std containers and smart pointers);
//! - fields of structs declared outside the item, `pub` fields (outside code may store into
//!   them), and fields of structs that derive `Default`: ⊤;
//! - names that are not locals, statics or constants of the item (outside statics): ⊤;
//! - parameters of functions code outside the item can call (`pub` ones, trait methods, and
//!   every function when the item is not a module): ⊤ (`self` apart: its fields are read by
//!   struct);
//! - calls through closures or function pointers held in variables, and trait objects: the
//!   result is ⊤;
//! - macros other than the std expression macros (`assert!`, `println!`, `vec!`, ...): a compile
//!   error if their arguments mention an access, otherwise ignored.

use std::collections::{BTreeSet, HashMap, HashSet};

use proc_macro2::Span;
use quote::ToTokens;
use syn::visit::{self, Visit};
use syn::{Expr, Item, Pat};

use super::sites::{self, Site, SiteKind};

/// Kinds of variables the pass finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VarKind {
    Atomic,
    Mutex,
    RwLock,
    Condvar,
    Barrier,
    Once,
    Cell,
    Channel,
    /// A heap allocation (`Box::new`, `Arc::new`, `Rc::new`).
    Heap,
    /// A `static` item.
    Static,
}

impl VarKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            VarKind::Atomic => "Atomic",
            VarKind::Mutex => "Mutex",
            VarKind::RwLock => "RwLock",
            VarKind::Condvar => "Condvar",
            VarKind::Barrier => "Barrier",
            VarKind::Once => "Once",
            VarKind::Cell => "Cell",
            VarKind::Channel => "Channel",
            VarKind::Heap => "Heap",
            VarKind::Static => "Static",
        }
    }
}

/// A variable found by the pass.
#[derive(Clone, Debug)]
pub(crate) struct Var {
    pub(crate) kind: VarKind,
    /// The allocation expression (or the static's name): its start is the variable's location.
    pub(crate) span: Span,
    /// A readable name: `Stack.head`, `static COUNTER`, `Box::new`.
    pub(crate) name: String,
    /// For a heap variable, the site id of its allocation.
    pub(crate) alloc_site: Option<usize>,
    /// For a static declared directly in the annotated module: its name (so the run time can
    /// learn its address).
    pub(crate) static_ident: Option<syn::Ident>,
}

/// What a site may access.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum May {
    /// Some object the pass cannot see may reach the site.
    Anything,
    /// These variables (indices into [`Analysis::vars`]); empty means no hook is needed.
    Vars(BTreeSet<usize>),
}

/// The result of the pass.
#[derive(Debug)]
pub(crate) struct Analysis {
    pub(crate) vars: Vec<Var>,
    /// Per site id (as numbered by [`sites::number`]).
    pub(crate) may: Vec<May>,
}

const TOP: usize = usize::MAX;

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
    ("OnceLock", VarKind::Once),
    ("LazyLock", VarKind::Once),
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

/// Node keys.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Key {
    Local(usize, String),
    /// Field `f` of struct `S` (a struct of the item).
    SField(String, String),
    /// Writes to a field `f` through a receiver whose struct is unknown.
    Field(String),
    Static(String),
    Const(String),
    Param(String, usize),
    Ret(String),
    Content(usize),
    ClosureParams,
    Temp(usize),
}

/// Runs the pass over `item`, whose sites were numbered by [`sites::number`].
pub(crate) fn analyze(item: &Item, site_list: &[Site]) -> Analysis {
    let mut decls = Decls::default();
    decls.visit_item(item);
    if let Item::Mod(m) = item {
        if let Some((_, items)) = &m.content {
            for it in items {
                if let Item::Static(s) = it {
                    decls.top_statics.insert(s.ident.to_string());
                }
            }
        }
    }
    let mut a = Analyzer {
        decls,
        keys: HashMap::new(),
        pts: Vec::new(),
        copies: Vec::new(),
        loads: Vec::new(),
        stores: Vec::new(),
        tops: Vec::new(),
        inline_direct: Vec::new(),
        inline_stores: Vec::new(),
        rhs_constructs: false,
        impl_ty: None,
        root_is_mod: matches!(item, Item::Mod(_)),
        local_types: HashMap::new(),
        vars: Vec::new(),
        site_node: vec![None; site_list.len()],
        site_var: vec![None; site_list.len()],
        scope: 0,
        next_scope: 1,
        bound: Vec::new(),
        ret: 0,
        temps: 0,
        sites: site_list.to_vec(),
    };
    let closure_params = a.node(Key::ClosureParams);
    let _ = closure_params;
    a.fields_top();
    a.item(item);
    a.solve();
    let may = (0..site_list.len()).map(|i| a.may_of(i)).collect();
    Analysis { vars: a.vars, may }
}

/// Declarations collected before the analysis: functions by name, struct fields, statics.
#[derive(Default)]
struct Decls {
    fns: HashSet<String>,
    /// Field name -> whether some declaration of it is visible outside the item or its values
    /// come from code the pass cannot see (⊤).
    fields: HashMap<String, bool>,
    /// Struct name -> its named fields: (field, open, the struct type the field holds if one
    /// of the item's, through references and smart pointers).
    structs: HashMap<String, Vec<(String, bool, Option<String>)>>,
    statics: HashSet<String>,
    top_statics: HashSet<String>,
    consts: HashSet<String>,
}

impl<'a> Visit<'a> for Decls {
    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        self.fns.insert(f.sig.ident.to_string());
        visit::visit_item_fn(self, f);
    }
    fn visit_impl_item_fn(&mut self, f: &'a syn::ImplItemFn) {
        self.fns.insert(f.sig.ident.to_string());
        visit::visit_impl_item_fn(self, f);
    }
    fn visit_item_struct(&mut self, s: &'a syn::ItemStruct) {
        let derives_default = s.attrs.iter().any(|a| {
            a.path().is_ident("derive") && a.to_token_stream().to_string().contains("Default")
        });
        let mut named = Vec::new();
        for f in &s.fields {
            if let Some(id) = &f.ident {
                let open = derives_default || !matches!(f.vis, syn::Visibility::Inherited);
                *self.fields.entry(id.to_string()).or_insert(false) |= open;
                named.push((id.to_string(), open, type_name(&f.ty, None)));
            }
        }
        self.structs.insert(s.ident.to_string(), named);
        visit::visit_item_struct(self, s);
    }
    fn visit_item_static(&mut self, s: &'a syn::ItemStatic) {
        self.statics.insert(s.ident.to_string());
        visit::visit_item_static(self, s);
    }
    fn visit_item_const(&mut self, c: &'a syn::ItemConst) {
        self.consts.insert(c.ident.to_string());
        visit::visit_item_const(self, c);
    }
}

struct Analyzer {
    decls: Decls,
    keys: HashMap<Key, usize>,
    pts: Vec<BTreeSet<usize>>,
    copies: Vec<(usize, usize)>,
    /// (pointer, destination): destination ⊇ contents of what pointer points to.
    loads: Vec<(usize, usize)>,
    /// (pointer, source): contents of what pointer points to ⊇ source.
    stores: Vec<(usize, usize)>,
    /// (a, b): if ⊤ ∈ a then ⊤ ∈ b (a field of an object the pass cannot see).
    tops: Vec<(usize, usize)>,
    /// (object, source): what the object's own memory holds inline (a `Box::new` argument, a
    /// static's initializer), for the "may point into its container" rule.
    inline_direct: Vec<(usize, usize)>,
    /// (pointer, source): a constructed value stored through a pointer (`*p = Node { .. }`):
    /// also held inline by what the pointer points to.
    inline_stores: Vec<(usize, usize)>,
    /// Whether the right side of the assignment being analysed constructs a value.
    rhs_constructs: bool,
    /// The struct of the impl block being analysed (for `self` and `Self`).
    impl_ty: Option<String>,
    /// Whether the annotated item is a module (then its private functions are called only
    /// from code the pass sees).
    root_is_mod: bool,
    /// Known struct types of locals: (scope, name) -> Some(struct), or None once two
    /// bindings of the name disagree.
    local_types: HashMap<(usize, String), Option<String>>,
    vars: Vec<Var>,
    site_node: Vec<Option<usize>>,
    site_var: Vec<Option<usize>>,
    scope: usize,
    next_scope: usize,
    /// Names bound so far in the current function scope.
    bound: Vec<HashSet<String>>,
    ret: usize,
    temps: usize,
    sites: Vec<Site>,
}

fn is_all_caps(s: &str) -> bool {
    s.chars().any(|c| c.is_ascii_uppercase()) && !s.chars().any(|c| c.is_ascii_lowercase())
}

fn starts_upper(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_uppercase())
}

impl Analyzer {
    fn node(&mut self, key: Key) -> usize {
        if let Some(&n) = self.keys.get(&key) {
            return n;
        }
        let n = self.pts.len();
        self.pts.push(BTreeSet::new());
        self.keys.insert(key, n);
        n
    }

    fn temp(&mut self) -> usize {
        self.temps += 1;
        self.node(Key::Temp(self.temps))
    }

    fn base(&mut self, node: usize, obj: usize) {
        self.pts[node].insert(obj);
    }

    fn top(&mut self) -> usize {
        let t = self.temp();
        self.base(t, TOP);
        t
    }

    fn copy(&mut self, from: usize, to: usize) {
        if from != to {
            self.copies.push((from, to));
        }
    }

    /// A node for `node ∪ contents(node)`: what a dereference or auto-deref of it may yield.
    fn deref(&mut self, node: usize) -> usize {
        let t = self.temp();
        self.copy(node, t);
        self.loads.push((node, t));
        t
    }

    fn content(&mut self, obj: usize) -> usize {
        self.node(Key::Content(obj))
    }

    fn new_var(&mut self, kind: VarKind, span: Span, name: String) -> usize {
        self.vars.push(Var { kind, span, name, alloc_site: None, static_ident: None });
        self.vars.len() - 1
    }

    fn fields_top(&mut self) {
        let open: Vec<(String, String)> = self
            .decls
            .structs
            .iter()
            .flat_map(|(st, fs)| {
                fs.iter().filter(|(_, open, _)| *open).map(move |(f, _, _)| (st.clone(), f.clone()))
            })
            .collect();
        for (st, f) in open {
            let n = self.node(Key::SField(st, f));
            self.base(n, TOP);
        }
    }

    /// The node a read of field `f` of a value of struct `ty` (if known) yields: that struct's
    /// field (or every struct's field `f`), plus writes through receivers of unknown struct.
    fn field_read(&mut self, ty: Option<String>, f: &str) -> usize {
        let structs: Vec<String> = match ty.filter(|t| self.declares(t, f)) {
            Some(t) => vec![t],
            None => self
                .decls
                .structs
                .iter()
                .filter(|(_, fs)| fs.iter().any(|(g, _, _)| g == f))
                .map(|(st, _)| st.clone())
                .collect(),
        };
        let out = self.temp();
        for st in structs {
            let n = self.node(Key::SField(st, f.to_string()));
            self.copy(n, out);
        }
        let unknown = self.node(Key::Field(f.to_string()));
        self.copy(unknown, out);
        out
    }

    fn declares(&self, ty: &str, f: &str) -> bool {
        self.decls.structs.get(ty).is_some_and(|fs| fs.iter().any(|(g, _, _)| g == f))
    }

    /// The item's struct an expression's value is (or refers to), when syntax says so.
    fn type_of(&self, e: &Expr) -> Option<String> {
        match e {
            Expr::Path(p) if p.path.segments.len() == 1 => {
                let name = p.path.segments[0].ident.to_string();
                if name == "self" {
                    return self.impl_ty.clone();
                }
                self.local_types.get(&(self.scope, name)).cloned().flatten()
            }
            Expr::Paren(p) => self.type_of(&p.expr),
            Expr::Reference(r) => self.type_of(&r.expr),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => self.type_of(&u.expr),
            Expr::Macro(m) => match sites::parse_marker(&m.mac) {
                Some((_, inner)) => self.type_of(&inner),
                None => None,
            },
            Expr::Struct(s) => self.struct_name(&s.path),
            Expr::Field(f) => {
                let base = self.type_of(&f.base)?;
                let syn::Member::Named(name) = &f.member else { return None };
                let fields = self.decls.structs.get(&base)?;
                let (_, _, ty) = fields.iter().find(|(g, _, _)| name == g)?;
                ty.clone().filter(|t| self.decls.structs.contains_key(t))
            }
            _ => None,
        }
    }

    fn struct_name(&self, path: &syn::Path) -> Option<String> {
        let last = path.segments.last()?.ident.to_string();
        let name = if last == "Self" { self.impl_ty.clone()? } else { last };
        self.decls.structs.contains_key(&name).then_some(name)
    }

    /// Records the struct type of a local bound by a plain pattern.
    fn note_type(&mut self, pat: &Pat, ty: Option<String>) {
        let (name, annotated) = match pat {
            Pat::Ident(p) => (p.ident.to_string(), None),
            Pat::Type(t) => match &*t.pat {
                Pat::Ident(p) => (p.ident.to_string(), type_name(&t.ty, self.impl_ty.as_deref())),
                _ => return,
            },
            _ => return,
        };
        let ty = annotated.or(ty).filter(|t| self.decls.structs.contains_key(t));
        let key = (self.scope, name);
        match self.local_types.get(&key) {
            None => {
                self.local_types.insert(key, ty);
            }
            Some(old) if *old != ty => {
                self.local_types.insert(key, None);
            }
            Some(_) => {}
        }
    }

    fn enter_fn(&mut self, name: &str) -> (usize, usize, Vec<HashSet<String>>) {
        let saved = (self.scope, self.ret, std::mem::take(&mut self.bound));
        self.scope = self.next_scope;
        self.next_scope += 1;
        self.bound = vec![HashSet::new()];
        self.ret = self.node(Key::Ret(name.to_string()));
        saved
    }

    fn leave_fn(&mut self, saved: (usize, usize, Vec<HashSet<String>>)) {
        self.scope = saved.0;
        self.ret = saved.1;
        self.bound = saved.2;
    }

    fn local(&mut self, name: &str) -> usize {
        self.node(Key::Local(self.scope, name.to_string()))
    }

    fn is_bound(&self, name: &str) -> bool {
        self.bound.iter().any(|s| s.contains(name))
    }

    /// Binds every name in `pat` to `value`.
    fn bind(&mut self, pat: &Pat, value: usize) {
        struct Names(Vec<String>);
        impl<'a> Visit<'a> for Names {
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

    fn item(&mut self, item: &Item) {
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
    fn function(&mut self, sig: &syn::Signature, block: &syn::Block, exposed: bool) {
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

    fn block(&mut self, b: &syn::Block) -> usize {
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

    fn expr(&mut self, e: &Expr) -> usize {
        self.expr_named(e, None)
    }

    /// Evaluates a closure: its parameters receive `params` (plus whatever calls of unknown
    /// closures pass), its value is empty, and returns the node of its return values.
    fn closure(&mut self, c: &syn::ExprClosure, params: Option<usize>) -> usize {
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

    fn args_and_closures(
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

    fn union(&mut self, nodes: &[usize]) -> usize {
        let t = self.temp();
        for &n in nodes {
            self.copy(n, t);
        }
        t
    }

    fn path_value(&mut self, path: &syn::Path) -> usize {
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

    fn call(&mut self, call: &syn::ExprCall, hint: Option<String>) -> usize {
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

    fn method(&mut self, m: &syn::ExprMethodCall, site: Option<usize>) -> usize {
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

    fn mac(&mut self, mac: &syn::Macro, hint: Option<String>) -> usize {
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

    fn site(&mut self, id: usize, inner: &Expr, hint: Option<String>) -> usize {
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

    fn expr_named(&mut self, e: &Expr, hint: Option<String>) -> usize {
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
    fn assign(&mut self, left: &Expr, value: usize) {
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

    fn solve(&mut self) {
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

    fn flow(&mut self, from: usize, to: usize) -> bool {
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

    /// Heap objects and statics that may hold one of `objs` inline (transitively): a pointer
    /// into an object may point into its container's memory.
    fn containers(&mut self, objs: &BTreeSet<usize>) -> BTreeSet<usize> {
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

    fn may_of(&mut self, id: usize) -> May {
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
            match kind {
                SiteKind::Atomic => k == VarKind::Atomic || (memory && mem),
                SiteKind::Lock => k == VarKind::Mutex,
                SiteKind::ReadWrite => k == VarKind::RwLock || mem,
                SiteKind::Wait => matches!(k, VarKind::Condvar | VarKind::Barrier),
                SiteKind::Cell => matches!(k, VarKind::Cell | VarKind::Once),
                SiteKind::Channel => k == VarKind::Channel,
                SiteKind::Once => k == VarKind::Once,
                SiteKind::Deref => mem,
                SiteKind::Alloc => false,
            }
        };
        May::Vars(candidates.into_iter().filter(|&v| allowed(self.vars[v].kind)).collect())
    }
}

/// Whether a value of this type may refer to shared state (anything but numbers, `bool`,
/// `char` and tuples and arrays of them).
fn may_refer(ty: &syn::Type) -> bool {
    const SCALARS: &[&str] = &[
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "f32", "f64", "bool", "char",
    ];
    match ty {
        syn::Type::Path(p) => {
            !(p.qself.is_none() && p.path.segments.len() == 1 && {
                let s = &p.path.segments[0];
                s.arguments.is_none() && SCALARS.iter().any(|n| s.ident == n)
            })
        }
        syn::Type::Tuple(t) => t.elems.iter().any(may_refer),
        syn::Type::Array(a) => may_refer(&a.elem),
        syn::Type::Paren(p) => may_refer(&p.elem),
        syn::Type::Group(g) => may_refer(&g.elem),
        _ => true,
    }
}

/// The struct a type names, through references, raw pointers and the usual wrappers
/// (`Box`, `Arc`, `Rc`, `Pin`, `ManuallyDrop`, `NonNull`); `Self` is `self_ty`.
fn type_name(ty: &syn::Type, self_ty: Option<&str>) -> Option<String> {
    match ty {
        syn::Type::Reference(r) => type_name(&r.elem, self_ty),
        syn::Type::Ptr(p) => type_name(&p.elem, self_ty),
        syn::Type::Paren(p) => type_name(&p.elem, self_ty),
        syn::Type::Group(g) => type_name(&g.elem, self_ty),
        syn::Type::Path(p) => {
            let last = p.path.segments.last()?;
            let name = last.ident.to_string();
            if matches!(name.as_str(), "Box" | "Arc" | "Rc" | "Pin" | "ManuallyDrop" | "NonNull") {
                if let syn::PathArguments::AngleBracketed(args) = &last.arguments {
                    for arg in &args.args {
                        if let syn::GenericArgument::Type(t) = arg {
                            return type_name(t, self_ty);
                        }
                    }
                }
                return None;
            }
            if name == "Self" {
                return self_ty.map(str::to_string);
            }
            Some(name)
        }
        _ => None,
    }
}

/// Whether an expression builds a new value (which then lives inline where it is stored):
/// a struct literal, a call of a type's constructor (`Node::new(..)`, `Some(..)`), an
/// allocation, or a tuple or array of those.
fn constructs(e: &Expr) -> bool {
    match e {
        Expr::Struct(_) => true,
        Expr::Paren(p) => constructs(&p.expr),
        Expr::Group(g) => constructs(&g.expr),
        Expr::Tuple(t) => t.elems.iter().any(constructs),
        Expr::Array(a) => a.elems.iter().any(constructs),
        Expr::Macro(m) => sites::parse_marker(&m.mac).is_some_and(|(_, inner)| constructs(&inner)),
        Expr::Call(c) => match &*c.func {
            Expr::Path(p) => {
                let n = p.path.segments.len();
                let last = p.path.segments[n - 1].ident.to_string();
                starts_upper(&last)
                    || (n >= 2 && starts_upper(&p.path.segments[n - 2].ident.to_string()))
            }
            _ => false,
        },
        _ => false,
    }
}

trait FuncSpan {
    fn func_span(&self) -> Span;
}

impl FuncSpan for syn::ExprCall {
    fn func_span(&self) -> Span {
        use syn::spanned::Spanned;
        self.func.span()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    /// Runs numbering and the pass; returns `label -> sorted var names` (or `["*"]`).
    fn run(tokens: proc_macro2::TokenStream) -> (Vec<String>, Vec<(String, Vec<String>)>) {
        let mut item: Item = syn::parse2(tokens).unwrap();
        let sites = sites::number(&mut item).unwrap();
        let a = analyze(&item, &sites);
        let vars: Vec<String> =
            a.vars.iter().map(|v| format!("{}:{}", v.kind.name(), v.name)).collect();
        let may = sites
            .iter()
            .zip(&a.may)
            .map(|(s, m)| {
                let names = match m {
                    May::Anything => vec!["*".to_string()],
                    May::Vars(vs) => vs.iter().map(|&v| a.vars[v].name.clone()).collect(),
                };
                (s.label.clone(), names)
            })
            .collect();
        (vars, may)
    }

    fn may_of<'a>(may: &'a [(String, Vec<String>)], label: &str) -> &'a [String] {
        &may.iter()
            .find(|(l, _)| l == label)
            .unwrap_or_else(|| panic!("no site {label}: {may:?}"))
            .1
    }

    #[test]
    fn treiber_stack_fields_and_nodes() {
        let (vars, may) = run(quote! {
            mod stack {
                use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
                use std::sync::Mutex;
                struct Node { value: u64, next: *mut Node }
                pub struct Stack { head: AtomicPtr<Node>, len: AtomicUsize, log: Mutex<Vec<u64>> }
                impl Stack {
                    pub fn new() -> Stack {
                        Stack {
                            head: AtomicPtr::new(std::ptr::null_mut()),
                            len: AtomicUsize::new(0),
                            log: Mutex::new(Vec::new()),
                        }
                    }
                    pub fn push(&self, value: u64) {
                        let node = Box::into_raw(Box::new(Node { value, next: std::ptr::null_mut() }));
                        loop {
                            let head = self.head.load(Ordering::SeqCst);
                            unsafe { (*node).next = head; }
                            if self.head.compare_exchange(head, node, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                                break;
                            }
                        }
                        self.len.fetch_add(1, Ordering::SeqCst);
                        self.log.lock().unwrap().push(value);
                    }
                    pub fn pop(&self) -> Option<u64> {
                        let head = self.head.load(Ordering::SeqCst);
                        if head.is_null() { return None; }
                        let next = unsafe { (*head).next };
                        self.head.store(next, Ordering::SeqCst);
                        Some(unsafe { (*head).value })
                    }
                }
            }
        });
        assert_eq!(
            vars,
            vec![
                "Atomic:Stack.head",
                "Atomic:Stack.len",
                "Mutex:Stack.log",
                "Heap:Box::new(let node)"
            ]
        );
        assert_eq!(may_of(&may, "self.head.load"), ["Stack.head"]);
        assert_eq!(may_of(&may, "self.head.compare_exchange"), ["Stack.head"]);
        assert_eq!(may_of(&may, "self.len.fetch_add"), ["Stack.len"]);
        assert_eq!(may_of(&may, "self.log.lock"), ["Stack.log"]);
        assert_eq!(may_of(&may, "*node"), ["Box::new(let node)"]);
        // `head` was loaded from `Stack.head`, which holds node pointers.
        assert_eq!(may_of(&may, "*head"), ["Box::new(let node)"]);
        assert_eq!(may_of(&may, "Box::new"), ["Box::new(let node)"]);
    }

    #[test]
    fn flow_through_arcs_clones_closures_and_spawn() {
        let (_, may) = run(quote! {
            fn body() {
                let a = Arc::new(AtomicUsize::new(0));
                let b = Arc::new(AtomicUsize::new(0));
                let m = Arc::new(Mutex::new(0));
                let a2 = a.clone();
                let m2 = Arc::clone(&m);
                let h = thread::spawn(move || {
                    a2.fetch_add(1, Ordering::SeqCst);
                    *m2.lock().unwrap() += 1;
                });
                b.store(1, Ordering::SeqCst);
                h.join().unwrap();
                assert_eq!(a.load(Ordering::SeqCst), 1);
            }
        });
        assert_eq!(may_of(&may, "a2.fetch_add"), ["let a"]);
        assert_eq!(may_of(&may, "m2.lock"), ["let m"]);
        assert_eq!(may_of(&may, "b.store"), ["let b"]);
        assert_eq!(may_of(&may, "a.load"), ["let a"]);
    }

    #[test]
    fn statics_and_helper_functions() {
        let (_, may) = run(quote! {
            mod m {
                static COUNTER: AtomicUsize = AtomicUsize::new(0);
                static OTHER: AtomicUsize = AtomicUsize::new(0);
                fn bump(c: &AtomicUsize) { c.fetch_add(1, Ordering::SeqCst); }
                pub fn run() { bump(&COUNTER); OTHER.load(Ordering::SeqCst); }
            }
        });
        assert_eq!(may_of(&may, "c.fetch_add"), ["static COUNTER"]);
        assert_eq!(may_of(&may, "OTHER.load"), ["static OTHER"]);
    }

    #[test]
    fn what_the_pass_cannot_see_is_anything() {
        let (_, may) = run(quote! {
            mod m {
                pub struct Open { pub n: AtomicUsize }
                struct Closed { n2: AtomicUsize }
                pub fn f(o: &Open, x: &AtomicUsize) {
                    o.n.load(Ordering::SeqCst);          // pub field: outside code may store
                    x.load(Ordering::SeqCst);            // parameter of a pub function
                    outside::COUNTER.load(Ordering::SeqCst); // a static the pass cannot see
                    outside::get().load(Ordering::SeqCst);   // a function the pass cannot see
                    let c = Closed { n2: AtomicUsize::new(0) };
                    c.n2.load(Ordering::SeqCst);
                }
            }
        });
        assert_eq!(may_of(&may, "o.n.load"), ["*"]);
        assert_eq!(may_of(&may, "x.load"), ["*"], "a parameter of a pub function");
        assert_eq!(may_of(&may, "outside::COUNTER.load"), ["*"]);
        assert_eq!(may_of(&may, "outside::get().load"), ["*"]);
        assert_eq!(may_of(&may, "c.n2.load"), ["Closed.n2"]);
    }

    #[test]
    fn sites_of_unrelated_types_need_no_hook() {
        let (_, may) = run(quote! {
            fn f() {
                let v = vec![1, 2, 3];
                let _ = v.get(0);
                let a = AtomicUsize::new(0);
                a.load(Ordering::SeqCst);
            }
        });
        assert_eq!(may_of(&may, "v.get"), Vec::<String>::new().as_slice());
        assert_eq!(may_of(&may, "a.load"), ["let a"]);
    }

    #[test]
    fn copying_data_between_buffers_does_not_nest_them() {
        let (_, may) = run(quote! {
            fn f(i: usize) {
                let g = Box::into_raw(Box::new([0.0f64; 8]));
                let t = Box::into_raw(Box::new([0.0f64; 8]));
                unsafe {
                    *t = *g;
                    (*g)[i] = 1.0;
                }
            }
        });
        // `*t = *g` copies data: `g` does not end up inside `t`, nor `t` inside `g`.
        assert_eq!(may_of(&may, "*t"), ["Box::new(let t)"]);
        assert_eq!(may_of(&may, "*g"), ["Box::new(let g)"]);
    }

    #[test]
    fn constructed_values_stored_through_pointers_live_inline() {
        let (_, may) = run(quote! {
            mod m {
                struct Slot { cell: UnsafeCell<u64> }
                pub fn f() {
                    let b = Box::into_raw(Box::new(None));
                    unsafe {
                        *b = Some(Slot { cell: UnsafeCell::new(0) });
                        let p = (*b).as_ref().unwrap().cell.get();
                        *p = 1;
                    }
                }
            }
        });
        assert_eq!(may_of(&may, "*p"), ["Box::new(let b)"]);
    }

    #[test]
    fn fields_are_told_apart_by_struct_when_the_syntax_says() {
        let (_, may) = run(quote! {
            mod m {
                struct A { n: AtomicUsize }
                struct B { n: AtomicUsize }
                impl A {
                    fn new() -> A { A { n: AtomicUsize::new(0) } }
                    fn get(&self) -> usize { self.n.load(Ordering::SeqCst) }
                }
                impl B {
                    fn new() -> Self { Self { n: AtomicUsize::new(0) } }
                    fn get(&self) -> usize { self.n.load(Ordering::SeqCst) }
                }
                fn either(b: &B, x: &A, pair: (&A, &B)) {
                    b.n.store(1, Ordering::SeqCst);
                    let y: &A = x;
                    y.n.store(2, Ordering::SeqCst);
                    let z = pair.0;
                    z.n.store(3, Ordering::SeqCst);
                    let w = outside();
                    w.n.store(4, Ordering::SeqCst);
                }
            }
        });
        // The pass lists sites in source order: A::get's load, then B::get's.
        let loads: Vec<_> = may.iter().filter(|(l, _)| l == "self.n.load").collect();
        assert_eq!(loads[0].1, ["A.n"]);
        assert_eq!(loads[1].1, ["B.n"]);
        assert_eq!(may_of(&may, "b.n.store"), ["B.n"]);
        assert_eq!(may_of(&may, "y.n.store"), ["A.n"]);
        // `z`'s struct is not evident: both.
        assert_eq!(may_of(&may, "z.n.store"), ["A.n", "B.n"]);
        // `w` comes from code the pass cannot see: its struct may be another crate's.
        assert_eq!(may_of(&may, "w.n.store"), ["*"]);
    }

    #[test]
    fn tuple_lets_bind_element_wise() {
        let (_, may) = run(quote! {
            fn f() {
                let g = Box::into_raw(Box::new(0u64));
                let t = Box::into_raw(Box::new(0u64));
                let (a, b) = (g, t);
                unsafe { *a = 1; *b = 2; }
            }
        });
        assert_eq!(may_of(&may, "*a"), ["Box::new(let g)"]);
        assert_eq!(may_of(&may, "*b"), ["Box::new(let t)"]);
    }

    #[test]
    fn pointers_into_cells_reach_their_containers() {
        let (_, may) = run(quote! {
            mod m {
                struct Slot { cell: UnsafeCell<u64> }
                pub fn f() {
                    let s = Box::new(Slot { cell: UnsafeCell::new(0) });
                    let p = s.cell.get();
                    unsafe { *p = 1; }
                }
            }
        });
        assert_eq!(may_of(&may, "s.cell.get"), ["Slot.cell"]);
        // The pointer points into the cell, which lives inside the box.
        assert_eq!(may_of(&may, "*p"), ["Box::new(let s)"]);
    }
}
