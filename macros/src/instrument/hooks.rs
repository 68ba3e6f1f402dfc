//! The hook pass: replaces every site marker with the original expression plus, when the alias
//! pass found the site may access some variable, a hook carrying the site's static id.
//!
//! A hook is `if ARMED[id].load(Relaxed) != 0 { __rt::hit(&MODULE, id, target) }`: one load
//! and one branch while the site is unarmed. Where the hook goes:
//! - a method call whose receiver is a plain place (`self.head`, `x`, `self.slots[i]`) and a
//!   dereference or `ptr::read`/`ptr::write` of a plain place: a statement before the statement
//!   that contains the access (evaluating `&place` early changes nothing and moves nothing);
//!   closure bodies, match arms and guards, and `while` conditions count as statements (a
//!   `while let` condition cannot be wrapped: its probes go before the loop);
//! - otherwise around the receiver or pointer value, evaluated once: a receiver that is a value
//!   (a temporary: `m.lock().unwrap()`, `tx.unwrap()`) is moved through a binding,
//!   `(match recv { r => { hook(&r); r } })`, so a `&mut self` or `self` method still gets it;
//!   a place through dereferences of plain places (`(*p).items`) is probed before the
//!   statement, as a plain place is; any other place (`self.slots[i + 1]`) is borrowed,
//!   `(match &(recv) { r => { hook(r); r } })`, since moving would move out of the place; a
//!   pointer is `*{ let p = ptr; hook; p }`;
//! - a dereference or `static mut` under fields and indices (`(*p).a`, `(*p).slots[i]`,
//!   `TABLE[i % 4]`): the probe is the address of that field or element (`addr_of!`), so the
//!   race check tells fields and slots apart; the place stays as written (a method may borrow
//!   it mutably). With literal and path indices it goes where the dereference's would. Any
//!   other index expression is evaluated once, where the access evaluates it: the last one as
//!   `[match index { i => { hook(addr_of!(place[i])); i } }]` (a `match`, so its temporaries,
//!   a lock guard say, live to the end of the statement as they did); earlier ones (a clone)
//!   and a computed pointer (its pointee's address) are also kept in locals declared before
//!   the statement, which that hook reads;
//! - allocation sites: `__rt::alloc(&ARMED[id], &MODULE, id, Box::new(..))`, which records the
//!   new variable's address range when armed.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, Item};

use super::alias::{Analysis, May};
use super::sites::{self, Site, SiteKind};

/// Replaces the markers in `item`. `module` gives, for a module nesting depth inside the item,
/// the path of the generated site-table module.
pub(crate) fn instrument(
    item: &mut Item,
    sites: &[Site],
    analysis: &Analysis,
    module: &dyn Fn(usize) -> TokenStream,
    base_depth: usize,
) {
    let mut h = Hooker {
        sites,
        analysis,
        module,
        depth: base_depth,
        frames: Vec::new(),
        functions: 0,
        projection: None,
        in_drop: false,
        stashes: 0,
    };
    h.visit_item_mut(item);
}

/// The hook pass's visitor: the analysis to read, and where probes wait to be placed.
struct Hooker<'a> {
    sites: &'a [Site],
    analysis: &'a Analysis,
    module: &'a dyn Fn(usize) -> TokenStream,
    depth: usize,
    /// Probes waiting to be placed before the current statement.
    frames: Vec<Vec<TokenStream>>,
    /// Functions given a shadow-stack frame so far (their local ids).
    functions: u32,
    /// The projection (`.a[1]`) applied to the dereference or `static mut` whose marker is being
    /// replaced: its probe gives the field's address, so the race check tells fields apart.
    projection: Option<TokenStream>,
    /// Whether the impl block being visited implements `Drop`.
    in_drop: bool,
    /// Stash locals declared so far ([`Hooker::stash`]): the next one's number.
    stashes: usize,
}

/// Whether a site gets hook code: when the alias pass found it may access some variable, and
/// always for a raw-pointer dereference or a `read`/`write` method (which may be a raw
/// pointer's): the race detector checks pointer accesses of any address, and the soundness
/// check arms them too, so a dereference the pass wrongly found touches nothing is caught
/// instead of missed.
pub(crate) fn emits_hook(kind: SiteKind, may: &May) -> bool {
    match may {
        May::Anything => true,
        May::Vars(v) => !v.is_empty() || matches!(kind, SiteKind::Deref | SiteKind::ReadWrite),
    }
}

/// One projection of a place's chain, as the probe repeats it.
enum Step<'e> {
    /// A field (`.a`), or an index that is a literal or a path (`[1]`, `[i]`, the path cloned:
    /// the probe must not move it before the access): the probe writes it again.
    Fixed(TokenStream),
    /// Any other index expression (`[i + 1]`, `[self.idx]`, `[next()]`): evaluated once, where
    /// the access evaluates it, and its value is what the probe indexes with.
    Index(&'e mut Expr),
}

/// The base of a chain of field projections and indexing (through parentheses), and the
/// chain's projections, innermost first (`(*p).a[i + 1].b`: `*p`, then `.a`, `[i + 1]`, `.b`).
fn projection_chain<'e>(e: &'e mut Expr, out: &mut Vec<Step<'e>>) -> &'e mut Expr {
    if !matches!(e, Expr::Field(_) | Expr::Paren(_) | Expr::Index(_)) {
        return e;
    }
    match e {
        Expr::Field(f) => {
            let member = &f.member;
            let step = Step::Fixed(quote!(. #member));
            let base = projection_chain(&mut f.base, out);
            out.push(step);
            base
        }
        Expr::Index(syn::ExprIndex { expr, index, .. }) => {
            let step = match &**index {
                Expr::Lit(_) => Some(quote!([#index])),
                Expr::Path(_) => Some(quote!([::core::clone::Clone::clone(&#index)])),
                _ => None,
            };
            let base = projection_chain(expr, out);
            out.push(match step {
                Some(step) => Step::Fixed(step),
                None => Step::Index(index),
            });
            base
        }
        Expr::Paren(p) => projection_chain(&mut p.expr, out),
        _ => unreachable!("checked above"),
    }
}

/// Whether a condition is a `let` (or a chain with one): it cannot be wrapped in a block.
fn has_let(e: &Expr) -> bool {
    match e {
        Expr::Let(_) => true,
        Expr::Binary(b) => has_let(&b.left) || has_let(&b.right),
        Expr::Paren(p) => has_let(&p.expr),
        _ => false,
    }
}

/// `e` without its outer parentheses: `*(p as *mut u32) = 1` binds `p as *mut u32`, which
/// in parentheses would draw `unused_parens` on the user's code.
fn unparenthesized(mut e: Expr) -> Expr {
    while let Expr::Paren(p) = e {
        e = *p.expr;
    }
    e
}

/// `e` as a `match` scrutinee: parenthesized when a struct literal begins it (`S { a }.a`),
/// which a scrutinee cannot (and only then: parentheses elsewhere draw `unused_parens`).
fn scrutinee(e: Expr) -> TokenStream {
    fn struct_first(e: &Expr) -> bool {
        match e {
            Expr::Struct(_) => true,
            Expr::Field(f) => struct_first(&f.base),
            Expr::MethodCall(m) => struct_first(&m.receiver),
            Expr::Index(i) => struct_first(&i.expr),
            Expr::Try(t) => struct_first(&t.expr),
            Expr::Await(a) => struct_first(&a.base),
            Expr::Cast(c) => struct_first(&c.expr),
            Expr::Binary(b) => struct_first(&b.left),
            Expr::Range(r) => r.start.as_deref().is_some_and(struct_first),
            _ => false,
        }
    }
    if struct_first(&e) {
        quote!((#e))
    } else {
        quote!(#e)
    }
}

/// A place expression that can be borrowed again without side effects or moves.
fn simple_place(e: &Expr) -> bool {
    match e {
        Expr::Path(_) => true,
        Expr::Field(f) => simple_place(&f.base),
        Expr::Paren(p) => simple_place(&p.expr),
        Expr::Index(i) => {
            simple_place(&i.expr) && matches!(&*i.index, Expr::Path(_) | Expr::Lit(_))
        }
        _ => false,
    }
}

/// A place reached through at least one dereference of a place made of paths, fields,
/// dereferences and indexing by a literal or a path (`(*p).items`, `*self.head`, `(**pp)[0]`):
/// it can be borrowed again without side effects or moves.
fn deref_place(e: &Expr) -> bool {
    fn place(e: &Expr, deref: &mut bool) -> bool {
        match e {
            Expr::Path(_) => true,
            Expr::Field(f) => place(&f.base, deref),
            Expr::Paren(p) => place(&p.expr, deref),
            Expr::Index(i) => {
                place(&i.expr, deref) && matches!(&*i.index, Expr::Path(_) | Expr::Lit(_))
            }
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                *deref = true;
                place(&u.expr, deref)
            }
            _ => false,
        }
    }
    let mut deref = false;
    place(e, &mut deref) && deref
}

/// Whether `e` is a value expression (a call, a method call, a block, a literal, ...), whose
/// result is a temporary that can be moved without moving out of a place. Paths, fields,
/// indexing and dereferences are places; macro calls may expand to either, and count as
/// places.
fn value_expr(e: &Expr) -> bool {
    match e {
        Expr::Path(_) | Expr::Field(_) | Expr::Index(_) | Expr::Macro(_) | Expr::Verbatim(_) => {
            false
        }
        Expr::Unary(u) => !matches!(u.op, syn::UnOp::Deref(_)),
        Expr::Paren(p) => value_expr(&p.expr),
        Expr::Group(g) => value_expr(&g.expr),
        _ => true,
    }
}

impl Hooker<'_> {
    /// Whether site `id` gets hook code (see [`emits_hook`]).
    fn needs_hook(&self, id: usize) -> bool {
        emits_hook(self.sites[id].kind, &self.analysis.may[id])
    }

    /// `if ARMED[id] != 0 { hit(&MODULE, id, target(&place)) }`, spanned at the site.
    fn probe(&self, id: usize, place: TokenStream) -> TokenStream {
        let span = self.sites[id].span;
        let m = (self.module)(self.depth);
        let idx = syn::Index::from(id);
        quote_spanned! {span=>
            if #m::ARMED[#idx].load(::core::sync::atomic::Ordering::Relaxed) != 0 {
                #[allow(unused_imports)]
                use ::pctvb::instrument::__rt::{ViaAny as _, ViaPtr as _};
                ::pctvb::instrument::__rt::hit(
                    &#m::MODULE,
                    #idx,
                    (&::pctvb::instrument::__rt::Target(#place)).__pctvb_target(),
                );
            }
        }
    }

    /// Places a probe before the current statement, or returns it if there is none.
    fn defer(&mut self, probe: TokenStream) -> Option<TokenStream> {
        match self.frames.last_mut() {
            Some(frame) => {
                frame.push(probe);
                None
            }
            None => Some(probe),
        }
    }

    /// The code replacing the marker of site `id` around `inner`: `inner` itself (its own inner
    /// sites replaced) when the site needs no hook; otherwise the allocation call through
    /// `__rt::alloc`, or `inner` with a probe deferred before the statement (a plain-place receiver
    /// or pointer) or wrapped around the receiver or pointer value.
    fn replace_marker(&mut self, id: usize, mut inner: Expr) -> Expr {
        let projection = self.projection.take().unwrap_or_default();
        // Inner sites first.
        self.visit_expr_mut(&mut inner);
        if !self.needs_hook(id) {
            return inner;
        }
        let span = self.sites[id].span;
        match (self.sites[id].kind, inner) {
            (SiteKind::Alloc, call) => {
                let m = (self.module)(self.depth);
                let idx = syn::Index::from(id);
                syn::parse_quote_spanned! {span=>
                    ::pctvb::instrument::__rt::alloc(&#m::ARMED[#idx], &#m::MODULE, #idx, #call)
                }
            }
            (_, Expr::MethodCall(mut mc)) => {
                let recv = (*mc.receiver).clone();
                if deref_place(&recv) && !self.frames.is_empty() {
                    // `(*p).items`: borrowed again in the probe before the statement (unsafe
                    // code already dereferences `p` there), so the method borrows the place
                    // itself, mutably if it needs to.
                    let place = quote!({
                        #[allow(unused_unsafe)]
                        unsafe {
                            &(#recv)
                        }
                    });
                    let probe = self.probe(id, place);
                    let _placed = self.defer(probe);
                } else if simple_place(&recv) {
                    let probe = self.probe(id, quote!(&(#recv)));
                    if let Some(probe) = self.defer(probe) {
                        *mc.receiver = syn::parse_quote_spanned! {span=>
                            { #probe #recv }
                        };
                    }
                } else if value_expr(&recv) {
                    // A temporary (`m.lock().unwrap()`, `tx.unwrap()`): moved into the binding
                    // and out again, so the method still gets its value, or a `&mut` of it.
                    let probe = self.probe(id, quote!(&__pctvb_r));
                    *mc.receiver = syn::parse_quote_spanned! {span=>
                        (match #recv { __pctvb_r => { #probe __pctvb_r } })
                    };
                } else {
                    let probe = self.probe(id, quote!(__pctvb_r));
                    *mc.receiver = syn::parse_quote_spanned! {span=>
                        (match &(#recv) { __pctvb_r => { #probe __pctvb_r } })
                    };
                }
                Expr::MethodCall(mc)
            }
            (_, Expr::Unary(mut u)) => {
                // With a field projection (`(*p).a.b`), the probe is the field's address
                // (`addr_of!`, no read); the dereference is in unsafe code already.
                let operand = (*u.expr).clone();
                let target = |p: TokenStream| {
                    if projection.is_empty() {
                        quote!(&(#p))
                    } else {
                        quote!(&{
                            #[allow(unused_unsafe)]
                            unsafe {
                                ::core::ptr::addr_of!((*(#p)) #projection)
                            }
                        })
                    }
                };
                if simple_place(&operand) {
                    let probe = self.probe(id, target(quote!(#operand)));
                    if let Some(probe) = self.defer(probe) {
                        *u.expr = syn::parse_quote_spanned! {span=> { #probe #operand } };
                    }
                } else {
                    let probe = if projection.is_empty() {
                        self.probe(id, quote!(&__pctvb_p))
                    } else {
                        self.probe(id, target(quote!(__pctvb_p)))
                    };
                    let operand = unparenthesized(operand);
                    *u.expr = syn::parse_quote_spanned! {span=>
                        { let __pctvb_p = #operand; #probe __pctvb_p }
                    };
                }
                Expr::Unary(u)
            }
            (_, Expr::Call(mut c)) => {
                if let Some(first) = c.args.first_mut() {
                    let operand = first.clone();
                    if simple_place(&operand) {
                        let probe = self.probe(id, quote!(&(#operand)));
                        if let Some(probe) = self.defer(probe) {
                            *first = syn::parse_quote_spanned! {span=> { #probe #operand } };
                        }
                    } else {
                        let probe = self.probe(id, quote!(&__pctvb_p));
                        *first = syn::parse_quote_spanned! {span=>
                            { let __pctvb_p = #operand; #probe __pctvb_p }
                        };
                    }
                }
                Expr::Call(c)
            }
            (_, Expr::Path(path)) => {
                // A `static mut`: probe its address before the statement (as a place it
                // cannot be wrapped in a block).
                let probe = self.probe(
                    id,
                    quote!(&{
                        #[allow(unused_unsafe)]
                        unsafe {
                            ::core::ptr::addr_of!(#path #projection)
                        }
                    }),
                );
                let _unplaced = self.defer(probe);
                Expr::Path(path)
            }
            (_, other) => other,
        }
    }

    /// Replaces the marker of the dereference or `static mut` site `id` (`inner`, at `base`)
    /// under the projections `steps`: the probe gives the address of the projected place, and
    /// the place stays as written (a method may borrow it mutably). With fields and literal or
    /// path indices only, that is [`Hooker::replace_marker`]'s probe, before the statement or
    /// in the pointer's block. An index expression (`[i + 1]`, `[self.idx]`, `[next()]`) is
    /// evaluated where the access evaluates it, exactly once: the last one is bound by a
    /// `match` (its temporaries, a lock guard say, live as long as they did), probed with its
    /// value and handed on; an earlier one, and a computed pointer, are also stashed in a
    /// local declared before the statement, for that probe to read.
    fn replace_projected(&mut self, id: usize, inner: Expr, base: &mut Expr, steps: Vec<Step<'_>>) {
        let indices = steps.iter().filter(|s| matches!(s, Step::Index(_))).count();
        let computed = matches!(&inner, Expr::Unary(u) if !simple_place(&u.expr));
        // Without a statement there is nowhere to declare a stash: sites are only marked in
        // function and closure bodies, whose statements all have frames, so this is a guard.
        // The probe then covers the place up to the first index expression, whose evaluation
        // it cannot see: coarser (a slot's access conflicts with its neighbours'), never
        // missed.
        let no_stash = self.frames.is_empty() && (indices > 1 || computed);
        if indices == 0 || !self.needs_hook(id) || no_stash {
            let fixed = steps.iter().map_while(|s| match s {
                Step::Fixed(t) => Some(t.clone()),
                Step::Index(_) => None,
            });
            self.projection = Some(fixed.collect());
            *base = self.replace_marker(id, inner);
            for step in steps {
                if let Step::Index(index) = step {
                    self.visit_expr_mut(index);
                }
            }
            return;
        }
        let span = self.sites[id].span;
        // The projected place's base, as the probe writes it.
        let probe_base = match inner {
            Expr::Unary(mut u) => {
                self.visit_expr_mut(&mut u.expr);
                let operand = (*u.expr).clone();
                let probe_base = if computed {
                    // The pointer is evaluated once, where it was; the probe reads the address
                    // of its pointee (`addr_of!`, no reference: the pointee may be racy).
                    let stash = self.stash();
                    let operand = scrutinee(unparenthesized(operand));
                    *u.expr = syn::parse_quote_spanned! {span=>
                        (match #operand {
                            __pctvb_p => {
                                #stash = {
                                    #[allow(unused_unsafe)]
                                    unsafe {
                                        ::core::ptr::addr_of!(*__pctvb_p)
                                    }
                                };
                                __pctvb_p
                            }
                        })
                    };
                    quote!((*#stash))
                } else {
                    quote!((*(#operand)))
                };
                *base = Expr::Unary(u);
                probe_base
            }
            other => {
                let probe_base = quote!(#other);
                *base = other;
                probe_base
            }
        };
        let last = steps.iter().rposition(|s| matches!(s, Step::Index(_)));
        let mut probe_steps = Vec::new();
        let mut last_index = None;
        for (n, step) in steps.into_iter().enumerate() {
            match step {
                Step::Fixed(t) => probe_steps.push(t),
                Step::Index(index) => {
                    // Its own sites first.
                    self.visit_expr_mut(index);
                    if Some(n) == last {
                        probe_steps.push(quote!([::core::clone::Clone::clone(&__pctvb_i)]));
                        last_index = Some(index);
                    } else {
                        let stash = self.stash();
                        let value = scrutinee(unparenthesized(index.clone()));
                        *index = syn::parse_quote_spanned! {span=>
                            match #value {
                                __pctvb_v => {
                                    #stash = ::core::clone::Clone::clone(&__pctvb_v);
                                    __pctvb_v
                                }
                            }
                        };
                        probe_steps.push(quote!([::core::clone::Clone::clone(&#stash)]));
                    }
                }
            }
        }
        let probe = self.probe(
            id,
            quote!(&{
                #[allow(unused_unsafe)]
                unsafe {
                    ::core::ptr::addr_of!(#probe_base #(#probe_steps)*)
                }
            }),
        );
        if let Some(index) = last_index {
            let value = scrutinee(unparenthesized(index.clone()));
            *index = syn::parse_quote_spanned! {span=>
                match #value { __pctvb_i => { #probe __pctvb_i } }
            };
        }
    }

    /// A fresh local declared (uninitialized, assigned by the access's evaluation) before the
    /// current statement: a value the place evaluates, which a probe later in the same place
    /// reads. `mut`: a `while let` condition's statement is the loop, whose every test assigns
    /// it again.
    fn stash(&mut self) -> syn::Ident {
        let name = quote::format_ident!("__pctvb_s{}", self.stashes);
        self.stashes += 1;
        let declaration = quote! {
            #[allow(unused_mut)]
            let mut #name;
        };
        let _placed = self.defer(declaration);
        name
    }

    /// Runs `f` in a new statement frame; returns the probes it produced.
    fn in_frame(&mut self, f: impl FnOnce(&mut Self)) -> Vec<TokenStream> {
        self.frames.push(Vec::new());
        f(self);
        self.frames.pop().unwrap_or_default()
    }

    /// Wraps `e` as `{ probes; e }` if there are probes.
    fn scoped_expr(&mut self, e: &mut Expr) {
        let probes = self.in_frame(|h| h.visit_expr_mut(e));
        if !probes.is_empty() {
            let inner = e.clone();
            *e = syn::parse_quote!({ #(#probes)* #inner });
        }
    }
}

impl Hooker<'_> {
    /// Prepends the shadow-stack frame guard to a function body (not to `const` or `async`
    /// functions): `let _frame = Frame::enter(&MODULE, id);`, one load and one branch while no
    /// session bounds loop iterations.
    fn frame(&mut self, sig: &syn::Signature, block: &mut syn::Block) {
        if sig.constness.is_some() || sig.asyncness.is_some() {
            return;
        }
        let m = (self.module)(self.depth);
        let id = self.functions;
        self.functions += 1;
        let stmt: syn::Stmt = syn::parse_quote! {
            let __pctvb_frame = ::pctvb::instrument::__rt::Frame::enter(&#m::MODULE, #id);
        };
        block.stmts.insert(0, stmt);
    }
}

impl VisitMut for Hooker<'_> {
    /// A function: its sites, then its shadow-stack frame ([`Hooker::frame`]).
    fn visit_item_fn_mut(&mut self, f: &mut syn::ItemFn) {
        visit_mut::visit_item_fn_mut(self, f);
        self.frame(&f.sig, &mut f.block);
    }

    /// A method: as a function. `Drop::drop` also starts with `__rt::dropping()`: the race
    /// detector records its accesses without checking them (see there).
    fn visit_impl_item_fn_mut(&mut self, f: &mut syn::ImplItemFn) {
        visit_mut::visit_impl_item_fn_mut(self, f);
        self.frame(&f.sig, &mut f.block);
        if self.in_drop && f.sig.ident == "drop" {
            let stmt: syn::Stmt = syn::parse_quote! {
                let __pctvb_dropping = ::pctvb::instrument::__rt::dropping();
            };
            f.block.stmts.insert(0, stmt);
        }
    }

    /// An impl block: whether it implements `Drop`, for its methods.
    fn visit_item_impl_mut(&mut self, i: &mut syn::ItemImpl) {
        let drop = i
            .trait_
            .as_ref()
            .and_then(|(_, path, _)| path.segments.last())
            .is_some_and(|s| s.ident == "Drop");
        let saved = std::mem::replace(&mut self.in_drop, drop);
        visit_mut::visit_item_impl_mut(self, i);
        self.in_drop = saved;
    }

    /// A nested module: one level deeper (paths to the table module gain a `super::`); the
    /// statement frames of the enclosing code do not reach into its items.
    fn visit_item_mod_mut(&mut self, m: &mut syn::ItemMod) {
        self.depth += 1;
        let saved = std::mem::take(&mut self.frames);
        visit_mut::visit_item_mod_mut(self, m);
        self.frames = saved;
        self.depth -= 1;
    }

    /// A block: each statement in its own frame, the probes deferred by its sites placed as
    /// statements just before it.
    fn visit_block_mut(&mut self, block: &mut syn::Block) {
        let old = std::mem::take(&mut block.stmts);
        for mut stmt in old {
            let probes = self.in_frame(|h| h.visit_stmt_mut(&mut stmt));
            for p in probes {
                // A probe, or a stash's declaration.
                block.stmts.push(syn::parse_quote!(#p));
            }
            block.stmts.push(stmt);
        }
    }

    /// Replaces markers. Closure bodies, match guards and arms, and `while` conditions are
    /// statement-like (evaluated apart from the enclosing statement, maybe repeatedly): their
    /// probes are wrapped with them instead of going before the enclosing statement (except a
    /// `while let` condition, which cannot be wrapped: its probes go before the loop).
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Some((id, inner)) = sites::marker_of(e) {
            *e = self.replace_marker(id, inner);
            return;
        }
        if let Expr::Field(_) | Expr::Index(_) = e {
            // A field or element of a dereference or `static mut` (`(*p).a`, `(*p)[i]`,
            // `TABLE[1]`, `(*p).slots[i + 1]`): the site's probe gives that place's address, so
            // the race check tells fields and slots apart.
            let mut steps = Vec::new();
            let base = projection_chain(e, &mut steps);
            if !steps.is_empty() {
                if let Some((id, inner @ (Expr::Unary(_) | Expr::Path(_)))) = sites::marker_of(base)
                {
                    if self.sites[id].kind == SiteKind::Deref {
                        self.replace_projected(id, inner, base, steps);
                        return;
                    }
                }
            }
        }
        match e {
            Expr::Closure(c) => {
                for p in &mut c.inputs {
                    self.visit_pat_mut(p);
                }
                self.scoped_expr(&mut c.body);
            }
            Expr::Match(m) => {
                self.visit_expr_mut(&mut m.expr);
                for arm in &mut m.arms {
                    if let Some((_, guard)) = &mut arm.guard {
                        self.scoped_expr(guard);
                    }
                    self.scoped_expr(&mut arm.body);
                }
            }
            Expr::While(w) => {
                if has_let(&w.cond) {
                    // `while let` conditions cannot be wrapped in a block: their probes go
                    // before the loop (they run before the first test only).
                    self.visit_expr_mut(&mut w.cond);
                } else {
                    self.scoped_expr(&mut w.cond);
                }
                self.visit_block_mut(&mut w.body);
            }
            Expr::Macro(m) => self.visit_macro_mut(&mut m.mac),
            _ => visit_mut::visit_expr_mut(self, e),
        }
    }

    /// Replaces the markers in the arguments of an expression macro; the site pass numbered
    /// nothing inside other macros.
    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        if !sites::is_expr_macro(mac) {
            return;
        }
        let mut out = TokenStream::new();
        for (piece, sep) in sites::split_macro(&mac.tokens) {
            match piece {
                Ok(mut e) => {
                    self.visit_expr_mut(&mut e);
                    e.to_tokens(&mut out);
                }
                Err(tokens) => out.extend(tokens),
            }
            if let Some(sep) = sep {
                out.extend(std::iter::once(sep));
            }
        }
        mac.tokens = out;
    }

    /// A marker in statement position (`__pctvb_site!(..);`) becomes an expression statement.
    fn visit_stmt_mut(&mut self, s: &mut syn::Stmt) {
        if let syn::Stmt::Macro(m) = s {
            if let Some((id, inner)) = sites::parse_marker(&m.mac) {
                let e = self.replace_marker(id, inner);
                *s = syn::Stmt::Expr(e, m.semi_token);
                return;
            }
        }
        visit_mut::visit_stmt_mut(self, s);
    }
}
