//! Finding access sites: the syntactic pass that gives every candidate site an id.
//!
//! A site is an expression that may access shared state at run time:
//! - a method call whose name is an operation of a pctvb primitive (`load`, `store`,
//!   `fetch_add`, `compare_exchange`, `lock`, `read`, `write`, `wait`, `notify_one`, `get`,
//!   `with`, `with_mut`, `send`, `recv`, `call_once`, ...) or a raw-pointer access method
//!   (`read`, `write`, `read_volatile`, `replace`, `swap`, `as_ref`, `as_mut`, ...);
//! - a dereference `*e` inside unsafe code (safe code cannot dereference raw pointers, and
//!   safe Rust has no data races);
//! - a call of `ptr::read`, `ptr::write` and their volatile/unaligned variants;
//! - a use of a `static mut` of the item (inside unsafe code);
//! - a heap allocation `Box::new`, `Arc::new`, `Rc::new` (an allocation site, hooked so the
//!   run time learns the address range of the variable it creates).
//!
//! Taking an address or a reference accesses nothing (as in Miri, where only reads and writes
//! through the reference do): the place of `&raw const place` / `&raw mut place`, `&place`
//! and `&mut place` (a dereference or a `static mut`, through fields and indices) is no site,
//! as the argument of `ptr::addr_of!` is not; the pointer and indices that compute it are
//! visited as usual, so a pointer read by value on the way (`&*(*p).next`) is a read. One
//! exception: a `&mut` reference handed on (a call's argument, the function's result, a field
//! of a value: anything but a local binding, a `match` or `if let` scrutinee, or a cast to a
//! raw pointer) is a write site where it is made. The code it goes to often writes through it
//! out of the hooks' sight (a lock's `DerefMut`, `mem::replace(&mut *p, v)`), and the
//! exclusive reference allows no other access of any of its bytes while it lives. A shared
//! reference handed on is not counted as a read: it allows writes inside the `UnsafeCell`s of
//! its referent (an `Arc`'s inner value), whose bytes the macro cannot tell apart.
//!
//! Each site is wrapped in a marker macro call `__pctvb_site!(id, expr)` that the alias pass
//! reads and the hook pass replaces, so both agree on ids whatever order they walk in. Method
//! names are matched without types: a `get` on a `Vec` is a candidate too; the alias pass then
//! finds it may access no variable of a matching kind, and no hook is emitted.

use std::collections::HashSet;

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, Item, Token};

/// The name of the marker macro.
pub(crate) const MARKER: &str = "__pctvb_site";

/// What kind of access a site performs; decides which variable kinds it may touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SiteKind {
    /// An atomic operation (`load`, `store`, `fetch_*`, `compare_exchange*`, `swap`).
    Atomic,
    /// `lock` / `try_lock` of a mutex.
    Lock,
    /// `read` / `write` / `try_read` / `try_write`: an `RwLock`, or a raw pointer.
    ReadWrite,
    /// `Condvar` or `Barrier` operations.
    Wait,
    /// `UnsafeCell::get` / `with` / `with_mut` (also `OnceLock::get`).
    Cell,
    /// Channel operations.
    Channel,
    /// `Once` / `OnceLock` / `LazyLock` operations.
    Once,
    /// A raw-pointer dereference or pointer read/write function or method.
    Deref,
    /// A heap allocation (`Box::new`, `Arc::new`, `Rc::new`).
    Alloc,
}

impl SiteKind {
    /// The kind's name, as the run time's `SiteKind` variant spells it: the site table names the
    /// variant with it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            SiteKind::Atomic => "Atomic",
            SiteKind::Lock => "Lock",
            SiteKind::ReadWrite => "ReadWrite",
            SiteKind::Wait => "Wait",
            SiteKind::Cell => "Cell",
            SiteKind::Channel => "Channel",
            SiteKind::Once => "Once",
            SiteKind::Deref => "Deref",
            SiteKind::Alloc => "Alloc",
        }
    }
}

/// One site found by the syntactic pass.
#[derive(Clone, Debug)]
pub(crate) struct Site {
    pub(crate) kind: SiteKind,
    /// Whether the access writes (dereference on the left of an assignment, pointer writes).
    pub(crate) write: bool,
    /// Where the access is (the method name, the `*`, or the call): the location the runtime
    /// reports and matches.
    pub(crate) span: Span,
    /// Source text, for site tables and tests (e.g. `self.head.load`).
    pub(crate) label: String,
}

const ATOMIC_METHODS: &[&str] = &[
    "load",
    "store",
    "compare_exchange",
    "compare_exchange_weak",
    "compare_and_swap",
    "fetch_add",
    "fetch_sub",
    "fetch_and",
    "fetch_nand",
    "fetch_or",
    "fetch_xor",
    "fetch_max",
    "fetch_min",
    "fetch_update",
    "fetch_not",
    // `fetch_update` by the names std 1.95 gives it (`try_update`) and its storing twin.
    "update",
    "try_update",
    // `AtomicPtr`'s pointer arithmetic (std 1.91).
    "fetch_ptr_add",
    "fetch_ptr_sub",
    "fetch_byte_add",
    "fetch_byte_sub",
];
const LOCK_METHODS: &[&str] = &["lock", "try_lock"];
const RW_METHODS: &[&str] = &[
    "read",
    "write",
    "try_read",
    "try_write",
    "read_volatile",
    "write_volatile",
    "read_unaligned",
    "write_unaligned",
];
const WAIT_METHODS: &[&str] =
    &["wait", "wait_while", "wait_timeout", "wait_timeout_while", "notify_one", "notify_all"];
const CELL_METHODS: &[&str] = &["get", "with", "with_mut"];
const CHANNEL_METHODS: &[&str] =
    &["send", "recv", "try_send", "try_recv", "recv_timeout", "send_timeout"];
const ONCE_METHODS: &[&str] = &["call_once", "call_once_force", "get_or_init", "set", "force"];
/// Raw-pointer methods that access the pointee (besides `read`/`write`, listed above).
const PTR_METHODS: &[&str] = &["replace", "swap", "as_ref", "as_mut"];
/// Free functions of `std::ptr` that access their first argument's pointee.
const PTR_FNS: &[&str] = &[
    "read",
    "write",
    "read_volatile",
    "write_volatile",
    "read_unaligned",
    "write_unaligned",
    "replace",
    "swap",
];
/// Heap allocations that create a variable.
pub(crate) const ALLOC_TYPES: &[&str] = &["Box", "Arc", "Rc"];

/// The site kind of a method name, if it is one.
pub(crate) fn method_kind(name: &str) -> Option<SiteKind> {
    if name == "swap" {
        return Some(SiteKind::Atomic); // atomic swap, or a raw-pointer swap (also Deref)
    }
    if ATOMIC_METHODS.contains(&name) {
        Some(SiteKind::Atomic)
    } else if LOCK_METHODS.contains(&name) {
        Some(SiteKind::Lock)
    } else if RW_METHODS.contains(&name) {
        Some(SiteKind::ReadWrite)
    } else if WAIT_METHODS.contains(&name) {
        Some(SiteKind::Wait)
    } else if CELL_METHODS.contains(&name) {
        Some(SiteKind::Cell)
    } else if CHANNEL_METHODS.contains(&name) {
        Some(SiteKind::Channel)
    } else if ONCE_METHODS.contains(&name) {
        Some(SiteKind::Once)
    } else if PTR_METHODS.contains(&name) {
        Some(SiteKind::Deref)
    } else {
        None
    }
}

/// Whether a method of this name writes through a raw pointer.
pub(crate) fn method_writes(name: &str) -> bool {
    name.starts_with("write") || matches!(name, "replace" | "swap" | "as_mut")
}

/// Whether a call's function path is `ptr::read` & co. (the last segment, with a `ptr` before).
fn ptr_fn(path: &syn::Path) -> Option<&'static str> {
    let n = path.segments.len();
    let last = path.segments.last()?.ident.to_string();
    let f = PTR_FNS.iter().find(|f| **f == last)?;
    (n >= 2 && path.segments[n - 2].ident == "ptr").then_some(*f)
}

/// Whether a call is `Box::new(..)`, `Arc::new(..)` or `Rc::new(..)`.
pub(crate) fn alloc_call(call: &syn::ExprCall) -> bool {
    let Expr::Path(p) = &*call.func else { return false };
    let n = p.path.segments.len();
    n >= 2
        && p.path.segments[n - 1].ident == "new"
        && ALLOC_TYPES.iter().any(|t| p.path.segments[n - 2].ident == t)
        && call.args.len() == 1
}

/// Parses a marker `__pctvb_site!(id, expr)` back into its id and expression.
pub(crate) fn parse_marker(mac: &syn::Macro) -> Option<(usize, Expr)> {
    if !mac.path.is_ident(MARKER) {
        return None;
    }
    let parser = |input: syn::parse::ParseStream| {
        let id: syn::LitInt = input.parse()?;
        input.parse::<Token![,]>()?;
        let e: Expr = input.parse()?;
        Ok((id.base10_parse::<usize>()?, e))
    };
    parser.parse2(mac.tokens.clone()).ok()
}

/// The marker of an expression, if it is one.
pub(crate) fn marker_of(e: &Expr) -> Option<(usize, Expr)> {
    match e {
        Expr::Macro(m) => parse_marker(&m.mac),
        _ => None,
    }
}

/// Splits a macro body into expression pieces (separated by `,` or `;`), for macros whose
/// arguments are expressions (`assert!`, `println!`, `vec!`, `format!`, ...). Pieces that do not
/// parse as expressions (format strings are literals and do parse; patterns in `matches!` do
/// not) come back as `Err(tokens)`.
pub(crate) fn split_macro(
    tokens: &TokenStream,
) -> Vec<(Result<Expr, TokenStream>, Option<TokenTree>)> {
    let mut out = Vec::new();
    let mut cur: Vec<TokenTree> = Vec::new();
    let flush = |cur: &mut Vec<TokenTree>, sep: Option<TokenTree>, out: &mut Vec<_>| {
        let ts: TokenStream = std::mem::take(cur).into_iter().collect();
        if ts.is_empty() && sep.is_none() {
            return;
        }
        let parsed = syn::parse2::<Expr>(ts.clone()).map_err(|_| ts);
        out.push((parsed, sep));
    };
    for tt in tokens.clone() {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' || p.as_char() == ';' => {
                // A comma inside an argument (`collect::<HashMap<u8, u8>>()`, `|a, b| a + b`)
                // is not a separator: split only where what came before parses.
                let piece: TokenStream = cur.iter().cloned().collect();
                if cur.is_empty() || syn::parse2::<Expr>(piece).is_ok() {
                    flush(&mut cur, Some(tt.clone()), &mut out);
                } else {
                    cur.push(tt);
                }
            }
            _ => cur.push(tt),
        }
    }
    flush(&mut cur, None, &mut out);
    out
}

/// The first thing in unparsed tokens that could be an access, with its span and what it is:
/// `unsafe`, a method named like an operation, a marker, a dereference (a `*` in prefix
/// position: [`deref_star`]), or the name of one of the item's `static mut`s (`static_muts`).
pub(crate) fn suspicious(
    tokens: &TokenStream,
    static_muts: &HashSet<String>,
) -> Option<(Span, String)> {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    for (i, tt) in trees.iter().enumerate() {
        match tt {
            TokenTree::Ident(id) => {
                let s = id.to_string();
                let what = if s == "unsafe" {
                    "`unsafe` code".to_string()
                } else if method_kind(&s).is_some() || s == MARKER {
                    format!("`{s}`, which may access shared state")
                } else if static_muts.contains(&s) {
                    format!("`{s}`, a `static mut` of the item")
                } else {
                    continue;
                };
                return Some((id.span(), what));
            }
            TokenTree::Punct(p) if p.as_char() == '*' && deref_star(&trees, i) => {
                return Some((p.span(), "`*`, a dereference".to_string()));
            }
            TokenTree::Group(g) => {
                if let Some(found) = suspicious(&g.stream(), static_muts) {
                    return Some(found);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether the `*` at `trees[i]` is a dereference: in prefix position (first, after an operator
/// or a block, or after a keyword an expression follows), and neither a raw-pointer type
/// (`*const`, `*mut`) nor a `macro_rules!` repetition (`$(..)*`, `$(..),*`). A `*` after an
/// operand (a name, a literal, a parenthesized or bracketed group, `?`) multiplies.
fn deref_star(trees: &[TokenTree], i: usize) -> bool {
    let repetition = |j: usize| {
        j >= 1
            && matches!(&trees[j], TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis)
            && matches!(&trees[j - 1], TokenTree::Punct(p) if p.as_char() == '$')
    };
    if matches!(trees.get(i + 1), Some(TokenTree::Ident(next)) if next == "const" || next == "mut")
    {
        return false;
    }
    if (i >= 1 && repetition(i - 1))
        || (i >= 2 && !matches!(&trees[i - 1], TokenTree::Group(_)) && repetition(i - 2))
    {
        return false;
    }
    match i.checked_sub(1).map(|j| &trees[j]) {
        None => true,
        Some(TokenTree::Punct(p)) => p.as_char() != '?',
        Some(TokenTree::Group(g)) => g.delimiter() == Delimiter::Brace,
        Some(TokenTree::Ident(id)) => {
            matches!(id.to_string().as_str(), "return" | "in" | "match" | "if" | "while" | "break")
        }
        Some(TokenTree::Literal(_)) => false,
    }
}

/// What a site found in an opaque macro's arguments is, for the error naming it.
fn describe(site: &Site) -> String {
    let label = &site.label;
    match site.kind {
        SiteKind::Deref if label.starts_with('*') => format!("`{label}`, a dereference"),
        SiteKind::Deref if label.starts_with("ptr::") => {
            format!("`{label}`, a read or write through a pointer")
        }
        SiteKind::Deref if !label.contains('.') => format!("`{label}`, a `static mut` of the item"),
        _ => format!("`{label}`, which may access shared state"),
    }
}

/// std macros whose arguments are no code that runs (`stringify!`, `concat!`, ...): nothing in
/// them is an access.
const INERT_MACROS: &[&str] = &[
    "stringify",
    "concat",
    "env",
    "option_env",
    "cfg",
    "line",
    "column",
    "file",
    "module_path",
    "compile_error",
    "include_str",
    "include_bytes",
];

/// std macros that take an expression and a pattern (`matches!(e, pat)`) and open no `unsafe`
/// block: their arguments are checked in the unsafety of the call.
const PATTERN_MACROS: &[&str] = &["matches", "assert_matches", "debug_assert_matches"];

/// std macros that take the address of a place (`ptr::addr_of!((*p).b)`): the place is no
/// access, as that of `&raw const` is not; what computes it is checked.
const ADDRESS_MACROS: &[&str] = &["addr_of", "addr_of_mut"];

/// Macros whose arguments are expressions (split at commas) and are safe to look inside.
const EXPR_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "println",
    "print",
    "eprintln",
    "eprint",
    "format",
    "write",
    "writeln",
    "panic",
    "vec",
    "dbg",
    "unreachable",
    "todo",
    "unimplemented",
    "format_args",
];

/// Whether a macro's tokens are looked into (its arguments are expressions).
pub(crate) fn is_expr_macro(mac: &syn::Macro) -> bool {
    mac.path.segments.last().is_some_and(|s| EXPR_MACROS.iter().any(|m| s.ident == m))
}

/// Numbers the sites of `item`, wrapping each in a marker. Errors: constructs the pass cannot
/// see into that contain an access (the arguments of a macro other than the expression macros,
/// the body of a `macro_rules!` definition).
pub(crate) fn number(item: &mut Item) -> syn::Result<Vec<Site>> {
    struct StaticMuts(std::collections::HashSet<String>);
    impl<'a> syn::visit::Visit<'a> for StaticMuts {
        /// Records the name of every `static mut`: using one inside unsafe code is an access.
        fn visit_item_static(&mut self, s: &'a syn::ItemStatic) {
            if matches!(s.mutability, syn::StaticMutability::Mut(_)) {
                self.0.insert(s.ident.to_string());
            }
        }
    }
    let mut muts = StaticMuts(Default::default());
    syn::visit::Visit::visit_item(&mut muts, item);
    let mut n = Numberer {
        sites: Vec::new(),
        unsafe_depth: 0,
        errors: Vec::new(),
        static_muts: muts.0,
        in_const: false,
        kept: false,
        reborrows: Vec::new(),
        receiver: false,
    };
    n.visit_item_mut(item);
    let mut errors = n.errors.into_iter();
    if let Some(mut first) = errors.next() {
        for e in errors {
            first.combine(e);
        }
        return Err(first);
    }
    Ok(n.sites)
}

struct Numberer {
    sites: Vec<Site>,
    unsafe_depth: u32,
    errors: Vec<syn::Error>,
    /// `static mut` items of the instrumented item: reading or writing one is an access.
    static_muts: std::collections::HashSet<String>,
    /// Inside a `const fn` body or a `const`/`static` initializer (outside closures): hooks
    /// cannot be called there, so nothing is marked.
    in_const: bool,
    /// Whether the value of the expression about to be visited stays with the item's own code
    /// (bound by a `let`, an `if let` or `match` scrutinee, cast to a raw pointer): a `&mut`
    /// reference it evaluates to is then no site. Read and cleared on entering
    /// [`Numberer::visit_expr_mut`], so it applies to that one expression.
    kept: bool,
    /// Names bound in each enclosing scope (a function, a block, a closure, a `match` arm, an
    /// `if let`, a loop), innermost last: `true` for a reference a `let`
    /// bound to a borrow of a dereference made in unsafe code (`let inner = unsafe { &*p };`),
    /// whose field reads and writes (`inner.count`, `inner.b = 1`) and dereferences are read
    /// and written through the pointer: they are marked as `(*inner).count` would be. Any other
    /// binding of the name shadows it.
    reborrows: Vec<std::collections::HashMap<String, bool>>,
    /// Whether the expression about to be visited is a method call's receiver (or the base of
    /// one's field chain): a method may only borrow it, so a reborrowed reference's field there
    /// is not marked, as `inner.count.fetch_sub(..)` through a reference never was. Read and
    /// cleared on entering [`Numberer::visit_expr_mut`].
    receiver: bool,
}

/// `tokens` with every marker `__pctvb_site!(id, expr)` replaced by its `expr`: a site's label
/// shows the source, not the markers of the sites inside it.
fn strip_markers(tokens: TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut iter = tokens.into_iter().peekable();
    while let Some(tt) = iter.next() {
        if let TokenTree::Ident(i) = &tt {
            if i == MARKER {
                if let Some(TokenTree::Punct(bang)) = iter.peek() {
                    if bang.as_char() == '!' {
                        iter.next();
                        if let Some(TokenTree::Group(g)) = iter.next() {
                            let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                            let comma = inner.iter().position(
                                |t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','),
                            );
                            let expr = inner[comma.map_or(0, |c| c + 1)..].iter().cloned();
                            out.extend(strip_markers(expr.collect()));
                        }
                        continue;
                    }
                }
            }
        }
        match tt {
            TokenTree::Group(g) => {
                let mut group = proc_macro2::Group::new(g.delimiter(), strip_markers(g.stream()));
                group.set_span(g.span());
                out.push(TokenTree::Group(group));
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}

/// A site's label: the source text of `tokens`, with the markers of inner sites stripped and the
/// spaces of token printing around `.`, `::`, `*` and `(` removed, cut to 60 characters.
fn text(tokens: impl ToTokens) -> String {
    let s = strip_markers(tokens.to_token_stream()).to_string();
    let s = s.replace(" . ", ".").replace(" :: ", "::").replace("* ", "*").replace(" (", "(");
    if s.len() > 60 {
        format!("{}...", &s[..s.char_indices().nth(57).map_or(s.len(), |(i, _)| i)])
    } else {
        s
    }
}

impl Numberer {
    /// Wraps `e` in a marker `__pctvb_site!(id, e)` for a new site: ids follow the order sites
    /// are found, and the marker carries the site's span, so hooks and errors point at the access.
    fn mark(&mut self, e: &mut Expr, kind: SiteKind, write: bool, span: Span, label: String) {
        let id = self.sites.len();
        self.sites.push(Site { kind, write, span, label });
        let inner = std::mem::replace(e, Expr::Verbatim(TokenStream::new()));
        let marker = syn::Ident::new(MARKER, span);
        *e = Expr::Macro(syn::ExprMacro {
            attrs: Vec::new(),
            mac: syn::Macro {
                path: marker.into(),
                bang_token: Token![!](span),
                delimiter: syn::MacroDelimiter::Paren(syn::token::Paren(span)),
                tokens: {
                    let lit = syn::LitInt::new(&id.to_string(), span);
                    quote!(#lit, #inner)
                },
            },
        });
    }

    /// Numbers the sites in a macro call's arguments. The arguments of an expression macro
    /// (`assert!`, `vec!`, ...) are split, visited as expressions and printed back. Any other
    /// macro's tokens are left as they are, and are a compile error if they contain an access
    /// ([`Numberer::opaque_access`]): no pass can see what the macro expands to, so such an
    /// access would go unhooked and unchecked.
    fn visit_macro_body(&mut self, mac: &mut syn::Macro) {
        if mac.path.is_ident(MARKER) {
            return;
        }
        if !is_expr_macro(mac) {
            if let Some((span, access)) = self.opaque_access(mac) {
                self.errors.push(syn::Error::new(
                    span,
                    format!(
                        "pctvb::instrument cannot see inside `{}!`, and its arguments contain \
                         {access}: the code the macro expands to would make that access \
                         without a hook, so no race check or scheduling point would see it; \
                         write the access out of the macro call (read the value into a local \
                         first, make a write an assignment of its own)",
                        mac.path.to_token_stream().to_string().replace(' ', "")
                    ),
                ));
            }
            return;
        }
        let mut out = TokenStream::new();
        for (piece, sep) in split_macro(&mac.tokens) {
            match piece {
                Ok(mut e) => {
                    self.visit_expr_mut(&mut e);
                    e.to_tokens(&mut out);
                }
                Err(tokens) => {
                    if let Some((span, access)) = suspicious(&tokens, &self.static_muts) {
                        self.errors.push(syn::Error::new(
                            span,
                            format!(
                                "pctvb::instrument cannot parse this macro argument as an \
                                 expression, and it contains {access}; bind the value to a \
                                 local first"
                            ),
                        ));
                    }
                    out.extend(tokens);
                }
            }
            if let Some(sep) = sep {
                out.extend(std::iter::once(sep));
            }
        }
        mac.tokens = out;
    }
}

impl Numberer {
    /// The first access among the arguments of a macro the pass cannot see into, with its span
    /// and what it is. An argument that parses as an expression is numbered by a copy of the
    /// pass (the same `static mut`s and reborrowed names) in unsafe code, since the macro may
    /// wrap it in an `unsafe` block (the std pattern macros, `matches!`, open none): any site
    /// but an allocation is an access, the place of `ptr::addr_of!` apart. Any other argument
    /// is scanned ([`suspicious`]). The arguments of std macros that run no code
    /// (`stringify!`, ...) contain none.
    fn opaque_access(&mut self, mac: &syn::Macro) -> Option<(Span, String)> {
        let name = mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        if INERT_MACROS.contains(&name.as_str()) {
            return None;
        }
        let unsafe_depth = if PATTERN_MACROS.contains(&name.as_str()) {
            self.unsafe_depth
        } else {
            self.unsafe_depth.max(1)
        };
        for (piece, _) in split_macro(&mac.tokens) {
            match piece {
                Ok(mut e) => {
                    let mut copy = Numberer {
                        sites: Vec::new(),
                        unsafe_depth,
                        errors: Vec::new(),
                        static_muts: self.static_muts.clone(),
                        in_const: false,
                        kept: false,
                        reborrows: self.reborrows.clone(),
                        receiver: false,
                    };
                    if ADDRESS_MACROS.contains(&name.as_str()) {
                        copy.visit_place_only(&mut e);
                    } else {
                        copy.visit_expr_mut(&mut e);
                    }
                    // An opaque macro nested in the argument: its own error.
                    self.errors.extend(copy.errors);
                    if let Some(site) = copy.sites.iter().find(|s| s.kind != SiteKind::Alloc) {
                        return Some((site.span, describe(site)));
                    }
                }
                Err(tokens) => {
                    if let Some(found) = suspicious(&tokens, &self.static_muts) {
                        return Some(found);
                    }
                }
            }
        }
        None
    }
}

impl Numberer {
    /// The place of `&raw const place`, `&raw mut place`, `&place` or a kept `&mut place`:
    /// taking its address or a reference to it reads and writes nothing, so the dereference or
    /// `static mut` it names (through field and index projections and parentheses) is not
    /// marked; the pointer it dereferences and its indices are evaluated as values, and their
    /// own sites are (`&*(*p).next` reads the pointer `next`).
    fn visit_place_only(&mut self, e: &mut Expr) {
        match e {
            Expr::Field(f) => self.visit_place_only(&mut f.base),
            Expr::Paren(p) => self.visit_place_only(&mut p.expr),
            Expr::Group(g) => self.visit_place_only(&mut g.expr),
            Expr::Index(i) => {
                self.visit_place_only(&mut i.expr);
                self.visit_expr_mut(&mut i.index);
            }
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                self.visit_expr_mut(&mut u.expr)
            }
            Expr::Path(p)
                if p.qself.is_none()
                    && p.path.segments.len() == 1
                    && self.static_muts.contains(&p.path.segments[0].ident.to_string()) => {}
            _ => self.visit_expr_mut(e),
        }
    }

    /// Visits `e`, whose value stays with the item's own code (see [`Numberer::kept`]).
    fn visit_kept(&mut self, e: &mut Expr) {
        self.kept = true;
        self.visit_expr_mut(e);
        self.kept = false;
    }

    /// Visits a block whose value (its tail expression) stays with the item's own code.
    fn visit_kept_block(&mut self, b: &mut syn::Block) {
        self.scoped(|n| {
            let count = b.stmts.len();
            for (i, stmt) in b.stmts.iter_mut().enumerate() {
                match stmt {
                    syn::Stmt::Expr(e, None) if i + 1 == count => n.visit_kept(e),
                    _ => n.visit_stmt_mut(stmt),
                }
            }
        });
    }

    /// Runs `f` in a new scope of names (see [`Numberer::reborrows`]).
    fn scoped(&mut self, f: impl FnOnce(&mut Self)) {
        self.reborrows.push(Default::default());
        f(self);
        self.reborrows.pop();
    }

    /// Visits an expression whose value stays with the item's own code: through parentheses,
    /// blocks, `if`/`match` branches and tuples to the references it may evaluate to, which
    /// are visited as places only; `false` if `e` is none of these (visit it as usual).
    fn visit_kept_value(&mut self, e: &mut Expr) -> bool {
        match e {
            Expr::Reference(r) => self.visit_place_only(&mut r.expr),
            Expr::Paren(p) => self.visit_kept(&mut p.expr),
            Expr::Group(g) => self.visit_kept(&mut g.expr),
            Expr::Block(b) if b.label.is_none() => self.visit_kept_block(&mut b.block),
            Expr::Unsafe(u) => {
                self.unsafe_depth += 1;
                self.visit_kept_block(&mut u.block);
                self.unsafe_depth -= 1;
            }
            Expr::Tuple(t) => t.elems.iter_mut().for_each(|e| self.visit_kept(e)),
            Expr::If(i) => {
                self.scoped(|n| {
                    n.visit_expr_mut(&mut i.cond);
                    n.visit_kept_block(&mut i.then_branch);
                });
                if let Some((_, e)) = &mut i.else_branch {
                    self.visit_kept(e);
                }
            }
            Expr::Match(m) => {
                self.visit_kept(&mut m.expr);
                for arm in &mut m.arms {
                    self.scoped(|n| {
                        n.visit_pat_mut(&mut arm.pat);
                        if let Some((_, guard)) = &mut arm.guard {
                            n.visit_expr_mut(guard);
                        }
                        n.visit_kept(&mut arm.body);
                    });
                }
            }
            _ => return false,
        }
        true
    }

    /// Whether `e` is a name bound to a reborrowed reference (see [`Numberer::reborrows`]).
    fn reborrowed(&self, e: &Expr) -> bool {
        let Expr::Path(p) = e else { return false };
        let Some(name) = p.path.get_ident().map(|i| i.to_string()) else { return false };
        p.qself.is_none()
            && self.reborrows.iter().rev().find_map(|scope| scope.get(&name)).copied() == Some(true)
    }

    /// Binds `name` in the innermost scope: as a reborrowed reference, or shadowing one.
    fn bind(&mut self, name: String, reborrow: bool) {
        if let Some(scope) = self.reborrows.last_mut() {
            scope.insert(name, reborrow);
        }
    }

    /// Whether a `let`'s initializer is a borrow of a dereference (through fields and indices)
    /// made in unsafe code, through parentheses and the tails of blocks.
    fn is_reborrow(&self, e: &Expr, in_unsafe: bool) -> bool {
        fn tail(b: &syn::Block) -> Option<&Expr> {
            match b.stmts.last() {
                Some(syn::Stmt::Expr(e, None)) => Some(e),
                _ => None,
            }
        }
        match e {
            Expr::Paren(p) => self.is_reborrow(&p.expr, in_unsafe),
            Expr::Group(g) => self.is_reborrow(&g.expr, in_unsafe),
            Expr::Block(b) => tail(&b.block).is_some_and(|e| self.is_reborrow(e, in_unsafe)),
            Expr::Unsafe(u) => tail(&u.block).is_some_and(|e| self.is_reborrow(e, true)),
            Expr::Reference(r) if in_unsafe => {
                let mut place = &*r.expr;
                loop {
                    match place {
                        Expr::Field(f) => place = &f.base,
                        Expr::Index(i) => place = &i.expr,
                        Expr::Paren(p) => place = &p.expr,
                        Expr::Unary(u) => return matches!(u.op, syn::UnOp::Deref(_)),
                        _ => return false,
                    }
                }
            }
            _ => false,
        }
    }
}

impl VisitMut for Numberer {
    /// A function: the body of an `unsafe fn` is unsafe code throughout (its dereferences are
    /// sites), and that of a `const fn` is a const context, where no hook can be called.
    fn visit_item_fn_mut(&mut self, f: &mut syn::ItemFn) {
        let saved = (self.unsafe_depth, self.in_const);
        self.unsafe_depth = u32::from(f.sig.unsafety.is_some());
        self.in_const = f.sig.constness.is_some();
        self.scoped(|n| visit_mut::visit_item_fn_mut(n, f));
        (self.unsafe_depth, self.in_const) = saved;
    }

    /// A method: as a function ([`Numberer::visit_item_fn_mut`]).
    fn visit_impl_item_fn_mut(&mut self, f: &mut syn::ImplItemFn) {
        let saved = (self.unsafe_depth, self.in_const);
        self.unsafe_depth = u32::from(f.sig.unsafety.is_some());
        self.in_const = f.sig.constness.is_some();
        self.scoped(|n| visit_mut::visit_impl_item_fn_mut(n, f));
        (self.unsafe_depth, self.in_const) = saved;
    }

    /// A `const` initializer runs at compile time: a const context.
    fn visit_item_const_mut(&mut self, c: &mut syn::ItemConst) {
        let saved = std::mem::replace(&mut self.in_const, true);
        visit_mut::visit_item_const_mut(self, c);
        self.in_const = saved;
    }

    /// A `static` initializer runs at compile time: a const context (its closures apart, such
    /// as a `LazyLock` initializer).
    fn visit_item_static_mut(&mut self, s: &mut syn::ItemStatic) {
        let saved = std::mem::replace(&mut self.in_const, true);
        visit_mut::visit_item_static_mut(self, s);
        self.in_const = saved;
    }

    /// An associated constant: a const context, like a `const` item.
    fn visit_impl_item_const_mut(&mut self, c: &mut syn::ImplItemConst) {
        let saved = std::mem::replace(&mut self.in_const, true);
        visit_mut::visit_impl_item_const_mut(self, c);
        self.in_const = saved;
    }

    /// A closure body runs at run time, even inside a const context: its sites are marked.
    fn visit_expr_closure_mut(&mut self, c: &mut syn::ExprClosure) {
        // A closure body runs at run time even when written in a const context.
        let saved = std::mem::replace(&mut self.in_const, false);
        self.scoped(|n| visit_mut::visit_expr_closure_mut(n, c));
        self.in_const = saved;
    }

    /// An `if`: the names an `if let` binds are in scope in its first branch only.
    fn visit_expr_if_mut(&mut self, i: &mut syn::ExprIf) {
        self.scoped(|n| {
            n.visit_expr_mut(&mut i.cond);
            n.visit_block_mut(&mut i.then_branch);
        });
        if let Some((_, e)) = &mut i.else_branch {
            self.visit_expr_mut(e);
        }
    }

    /// A `while`: the names a `while let` binds are in scope in its body.
    fn visit_expr_while_mut(&mut self, w: &mut syn::ExprWhile) {
        self.scoped(|n| visit_mut::visit_expr_while_mut(n, w));
    }

    /// A `for`: the names its pattern binds are in scope in its body.
    fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
        self.scoped(|n| visit_mut::visit_expr_for_loop_mut(n, f));
    }

    /// A `match` arm: the names its pattern binds are in scope in its guard and body.
    fn visit_arm_mut(&mut self, a: &mut syn::Arm) {
        self.scoped(|n| visit_mut::visit_arm_mut(n, a));
    }

    /// A macro call in item position. A `macro_rules!` definition is an error if its body may
    /// access shared state (its expansions would be invisible to the passes, as those of a
    /// macro defined outside the item are); other item macros (`thread_local!`, ...) go
    /// through [`Numberer::visit_macro_body`].
    fn visit_item_macro_mut(&mut self, m: &mut syn::ItemMacro) {
        if m.mac.path.is_ident("macro_rules") {
            if let Some((span, access)) = suspicious(&m.mac.tokens, &self.static_muts) {
                self.errors.push(syn::Error::new(
                    span,
                    format!(
                        "pctvb::instrument cannot see inside a `macro_rules!` definition, and \
                         this one's body contains {access}: its expansions would make that \
                         access without a hook, so no race check or scheduling point would \
                         see it; write the access out where the macro is called, or make the \
                         macro a function of the instrumented item (defining it outside the \
                         item would not help: the attribute checks only the arguments of a \
                         macro call, never the body it expands to)"
                    ),
                ));
            }
            return;
        }
        self.visit_macro_body(&mut m.mac);
    }

    /// A `let`: the value it binds stays with the item's code (a `&mut` there is no access),
    /// and the name it binds is a reborrowed reference when that value is a borrow of a
    /// dereference (see [`Numberer::reborrows`]). The initializer is visited first: it is
    /// evaluated before the name is in scope. A `let`-`else`'s `else` block is code like any
    /// other.
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        let mut reborrow = false;
        if let Some(init) = &mut l.init {
            reborrow =
                init.diverge.is_none() && self.is_reborrow(&init.expr, self.unsafe_depth > 0);
            self.visit_kept(&mut init.expr);
            if let Some((_, diverge)) = &mut init.diverge {
                self.visit_expr_mut(diverge);
            }
        }
        self.visit_pat_mut(&mut l.pat);
        let name = match &l.pat {
            syn::Pat::Ident(i) if i.subpat.is_none() => Some(&i.ident),
            syn::Pat::Type(t) => match &*t.pat {
                syn::Pat::Ident(i) if i.subpat.is_none() => Some(&i.ident),
                _ => None,
            },
            _ => None,
        };
        if let (Some(name), true) = (name, reborrow) {
            self.bind(name.to_string(), true);
        }
    }

    /// A block: a scope for the names its `let`s bind.
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        self.scoped(|n| visit_mut::visit_block_mut(n, b));
    }

    /// A name bound by any pattern (a parameter, a `match` arm, a `let`) shadows a reborrowed
    /// reference of that name in its scope.
    fn visit_pat_ident_mut(&mut self, i: &mut syn::PatIdent) {
        self.bind(i.ident.to_string(), false);
        visit_mut::visit_pat_ident_mut(self, i);
    }

    /// A macro call in expression or statement position: see [`Numberer::visit_macro_body`].
    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        self.visit_macro_body(mac);
    }

    /// Numbers the sites of an expression, inner ones first (so an outer marker contains the
    /// markers of its operands): method calls named like an operation, dereferences and uses of
    /// `static mut`s in unsafe code, `ptr::read`/`ptr::write` & co., and allocations. The left side
    /// of an assignment, and a `&mut` borrow handed on, make their dereference a write; the place of any other borrow is no site (module docs). Nothing is
    /// marked in const contexts.
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let receiver = std::mem::take(&mut self.receiver);
        if std::mem::take(&mut self.kept) && self.visit_kept_value(e) {
            return;
        }
        match e {
            // A field chain below a receiver is a receiver's too.
            Expr::Field(_) | Expr::Paren(_) | Expr::Index(_) if receiver => self.receiver = true,
            // The receiver is visited first.
            Expr::MethodCall(_) => self.receiver = true,
            // `inner.count` of a reborrowed `inner` reads `(*inner).count`: written so, the
            // dereference is marked as any other.
            Expr::Field(f) if self.reborrowed(&f.base) => {
                let base = std::mem::replace(&mut *f.base, Expr::Verbatim(TokenStream::new()));
                let span = base.span();
                *f.base = syn::parse_quote_spanned!(span=> (*#base));
            }
            _ => {}
        }
        match e {
            Expr::Unsafe(_) => {
                self.unsafe_depth += 1;
                visit_mut::visit_expr_mut(self, e);
                self.unsafe_depth -= 1;
                return;
            }
            // `&raw const place` / `&raw mut place` computes an address and accesses no
            // memory, like `ptr::addr_of!(place)`: the place is no site, only what computes it.
            Expr::RawAddr(r) => return self.visit_place_only(&mut r.expr),
            // A shared reference accesses nothing: only reads through it do (and a shared
            // reference allows other threads' writes inside the cells of its referent).
            Expr::Reference(r) if r.mutability.is_none() => {
                return self.visit_place_only(&mut r.expr)
            }
            // A binding's value, a scrutinee, and what a cast makes a raw pointer stay with the
            // item's code: a `&mut` among them is no access.
            Expr::Let(l) => {
                self.visit_kept(&mut l.expr);
                return self.visit_pat_mut(&mut l.pat);
            }
            Expr::Match(m) => {
                self.visit_kept(&mut m.expr);
                for arm in &mut m.arms {
                    self.visit_arm_mut(arm);
                }
                return;
            }
            Expr::Cast(c) if matches!(&*c.ty, syn::Type::Ptr(_)) => {
                self.visit_kept(&mut c.expr);
                return self.visit_type_mut(&mut c.ty);
            }
            _ => {}
        }
        visit_mut::visit_expr_mut(self, e);
        if self.in_const {
            return;
        }
        match e {
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                if let Some(kind) = method_kind(&name) {
                    let label = format!("{}.{}", text(&m.receiver), name);
                    let span = m.method.span();
                    let write = method_writes(&name);
                    self.mark(e, kind, write, span, label);
                }
            }
            Expr::Unary(u)
                if matches!(u.op, syn::UnOp::Deref(_))
                    && (self.unsafe_depth > 0 || self.reborrowed(&u.expr)) =>
            {
                let span = u.op.span();
                let label = format!("*{}", text(&u.expr));
                self.mark(e, SiteKind::Deref, false, span, label);
            }
            Expr::Call(c) => {
                if let Expr::Path(p) = &*c.func {
                    if let Some(f) = ptr_fn(&p.path) {
                        let label = format!("ptr::{f}({})", text(&c.args));
                        let write = f.starts_with("write") || f == "replace" || f == "swap";
                        let span = c.span();
                        self.mark(e, SiteKind::Deref, write, span, label);
                        return;
                    }
                }
                if alloc_call(c) {
                    let label = text(&c.func);
                    let span = c.func.span();
                    self.mark(e, SiteKind::Alloc, false, span, label);
                }
            }
            Expr::Path(p)
                if self.unsafe_depth > 0
                    && p.qself.is_none()
                    && p.path.segments.len() == 1
                    && self.static_muts.contains(&p.path.segments[0].ident.to_string()) =>
            {
                let span = p.path.segments[0].ident.span();
                let label = p.path.segments[0].ident.to_string();
                self.mark(e, SiteKind::Deref, false, span, label);
            }
            Expr::Assign(a) => mark_write(&mut self.sites, &a.left),
            // A `&mut *p` handed on (kept ones returned above) stands for the write the code it
            // goes to makes through it, often out of the hooks' sight, and claims the pointee
            // exclusively: a write, so it conflicts with any unordered access.
            Expr::Reference(r) if r.mutability.is_some() => mark_write(&mut self.sites, &r.expr),
            Expr::Binary(b) if is_compound_assign(&b.op) => mark_write(&mut self.sites, &b.left),
            _ => {}
        }
    }
}

/// Whether a binary operator is a compound assignment (`+=`, `|=`, ...), whose left side is
/// written as well as read.
fn is_compound_assign(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}

/// The left side of an assignment writes: a dereference there (directly, or under field and
/// index projections) is a write site.
fn mark_write(sites: &mut [Site], left: &Expr) {
    let mut e = left;
    loop {
        match e {
            Expr::Field(f) => e = &f.base,
            Expr::Index(i) => e = &i.expr,
            Expr::Paren(p) => e = &p.expr,
            Expr::Macro(_) => {
                if let Some((id, _)) = marker_of(e) {
                    if sites[id].kind == SiteKind::Deref {
                        sites[id].write = true;
                    }
                }
                return;
            }
            _ => return,
        }
    }
}

/// Whether `split_macro` would round-trip this macro (used by tests).
#[cfg(test)]
pub(crate) fn roundtrip(mac: &syn::Macro) -> TokenStream {
    let mut out = TokenStream::new();
    for (piece, sep) in split_macro(&mac.tokens) {
        match piece {
            Ok(e) => e.to_tokens(&mut out),
            Err(t) => out.extend(t),
        }
        if let Some(sep) = sep {
            out.extend(std::iter::once(sep));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers the sites of an item; returns each one's kind, whether it writes, and its label,
    /// in id order.
    fn sites(tokens: TokenStream) -> Vec<(SiteKind, bool, String)> {
        let mut item: Item = syn::parse2(tokens).unwrap();
        number(&mut item).unwrap().into_iter().map(|s| (s.kind, s.write, s.label)).collect()
    }

    /// Each site as `Kind(w):label`, `(w)` for a write.
    fn kinds_and_labels(found: &[(SiteKind, bool, String)]) -> Vec<String> {
        let write = |w: bool| if w { "(w)" } else { "" };
        found.iter().map(|(k, w, l)| format!("{}{}:{l}", k.name(), write(*w))).collect()
    }

    /// Every kind of site is found in source order; a dereference assigned to is a write, and a
    /// dereference in safe code is not a site.
    #[test]
    fn finds_method_deref_ptr_and_alloc_sites() {
        let found = sites(quote! {
            fn f(s: &S, p: *mut Node) {
                s.head.load(Ordering::SeqCst);
                let b = Box::new(Node::default());
                unsafe {
                    (*p).value = 1;
                    let _v = *p;
                    core::ptr::write(p, Node::default());
                }
                let _not_a_site = *s; // safe deref: not a site
                assert_eq!(s.n.fetch_add(1, Ordering::SeqCst), 0);
            }
        });
        let labels = kinds_and_labels(&found);
        assert_eq!(
            labels,
            vec![
                "Atomic:s.head.load",
                "Alloc:Box::new",
                "Deref(w):*p",
                "Deref:*p",
                "Deref(w):ptr::write(p , Node::default())",
                "Atomic:s.n.fetch_add",
            ],
            "{labels:?}"
        );
    }

    /// `&raw const`/`&raw mut` of a dereference or a `static mut` (through projections) is no
    /// site, as `addr_of!` is not; what computes the pointer and the indices still is.
    #[test]
    fn raw_addresses_are_not_accesses() {
        let found = sites(quote! {
            mod m {
                static mut COUNTER: u64 = 0;
                fn f(p: *mut Node, s: &S, i: usize) {
                    unsafe {
                        let _a = &raw mut (*p).b;
                        let _b = &raw const *p;
                        let _c = &raw const COUNTER;
                        let _d = &raw const (*s.head.load(Ordering::SeqCst)).next[i];
                        let _e = &raw const (*p).items[*p.add(i)];
                        (*p).b = 1;
                    }
                }
            }
        });
        let labels = kinds_and_labels(&found);
        assert_eq!(
            labels,
            vec!["Atomic:s.head.load", "Deref:*p.add(i)", "Deref(w):*p"],
            "{labels:?}"
        );
    }

    /// A reference to a dereference or a `static mut` (through projections) is no site, as a
    /// raw address is not: only what computes the pointer and the indices is, and a value read
    /// on the way (`(*p).next` read to be dereferenced, a method's receiver).
    #[test]
    fn reborrows_are_not_accesses() {
        let found = sites(quote! {
            mod m {
                static mut COUNTER: u64 = 0;
                fn f(p: *mut Node, s: &S, i: usize) {
                    unsafe {
                        let _a = &*p;
                        let _b = &(*p).b;
                        let _c = &COUNTER;
                        let _d = &(*s.head.load(Ordering::SeqCst)).next[i];
                        let _e = &(*p).items[*p.add(i)];
                        let _f = &*(*p).next;
                        let _g = &(*p).b.clone();
                        let _h = ((*p).b, &(*p).a);
                        (*p).b = 1;
                    }
                    let _i = unsafe { &*p };
                    let _j = unsafe { &(*p).items }.len();
                }
            }
        });
        let labels = kinds_and_labels(&found);
        assert_eq!(
            labels,
            vec![
                "Atomic:s.head.load",
                "Deref:*p.add(i)",
                "Deref:*p",
                "Deref:*p",
                "Deref:*p",
                "Deref(w):*p",
            ],
            "{labels:?}"
        );
    }

    /// A `&mut` kept by the item's code (bound by `let`, a scrutinee, cast to a raw pointer) is
    /// no site; one handed on (a call's argument, the function's result, a field of a value) is
    /// a write where it is made.
    #[test]
    fn a_mut_reborrow_is_a_write_only_when_handed_on() {
        let found = sites(quote! {
            mod m {
                fn kept(p: *mut Node, c: bool) -> u64 {
                    unsafe {
                        let _a = &mut *p;
                        let _b = &mut (*p).b;
                        let (_c, _d) = (&mut (*p).a, &mut (*p).b);
                        let _e = if c { &mut *p } else { &mut (*p).other };
                        let _f = { &mut *p };
                        let _g = &mut *p as *mut Node;
                        if let Some(x) = &mut (*p).opt { *x += 1; }
                        match &mut (*p).opt { Some(_) => 1, None => 0 }
                    }
                }
                fn handed_on(p: *mut Node, v: Node) -> &'static mut u64 {
                    unsafe {
                        f(&mut *p);
                        std::mem::replace(&mut (*p).b, 0);
                        let _w = Wrapper { r: &mut *p };
                        &mut (*p).b
                    }
                }
            }
        });
        let labels = kinds_and_labels(&found);
        assert_eq!(
            labels,
            vec!["Deref(w):*x", "Deref(w):*p", "Deref(w):*p", "Deref(w):*p", "Deref(w):*p"],
            "{labels:?}"
        );
    }

    /// A name a `let` bound to a reborrow made in unsafe code reads and writes through the
    /// pointer: its fields (not as a method's receiver, nor borrowed) and its dereferences are
    /// sites, in safe code too, until another binding shadows it.
    #[test]
    fn reads_and_writes_through_a_reborrowed_reference_are_accesses() {
        let found = sites(quote! {
            fn f(p: *mut Node, boxed: Box<Node>) -> u64 {
                let inner = unsafe { &*p };
                let _n = inner.count;
                inner.lock.lock();
                let _r = &inner.b;
                let m = unsafe { &mut (*p).pair };
                m.b = 1;
                m.b += 1;
                let _v = *m;
                if let Some(inner) = inner.next {
                    let _shadowed = inner.count;
                }
                {
                    let inner = 5;
                    let _shadowed = inner.count;
                }
                let safe = &*boxed;
                let _s = safe.x;
                inner.a.b
            }
        });
        let labels = kinds_and_labels(&found);
        assert_eq!(
            labels,
            vec![
                "Deref:*inner",
                "Lock:inner.lock.lock",
                "Deref(w):*m",
                "Deref(w):*m",
                "Deref:*m",
                "Deref:*inner",
                "Deref:*inner",
            ],
            "{labels:?}"
        );
    }

    /// Nothing is marked in a `const fn` or a static's initializer, except inside a closure
    /// there, which runs at run time.
    #[test]
    fn const_contexts_are_not_hooked_but_closures_in_them_are() {
        let found = sites(quote! {
            mod m {
                const fn get(p: *const u8) -> u8 { unsafe { *p } }
                static L: LazyLock<Box<u8>> = LazyLock::new(|| Box::new(0));
                static B: AtomicUsize = AtomicUsize::new(0);
            }
        });
        let labels: Vec<_> = found.iter().map(|(_, _, l)| l.clone()).collect();
        assert_eq!(labels, vec!["Box::new"], "{labels:?}");
    }

    /// An unknown macro whose arguments name an access method is a compile error naming it.
    #[test]
    fn unknown_macros_that_may_access_are_errors() {
        let mut item: Item = syn::parse2(quote! {
            fn f(s: &S) { my_macro!(s.n.load(Ordering::SeqCst)); other!(1 + 2); }
        })
        .unwrap();
        let e = number(&mut item).unwrap_err().to_string();
        assert!(e.contains("cannot see inside `my_macro!`"), "{e}");
    }

    /// The errors `number` gives an item, joined, or `None`.
    fn errors(tokens: TokenStream) -> Option<String> {
        let mut item: Item = syn::parse2(tokens).unwrap();
        number(&mut item).err().map(|e| e.into_iter().map(|e| e.to_string()).collect())
    }

    /// A dereference, a `static mut` or a read through a reborrowed reference in an opaque
    /// macro's arguments is an error naming it, in safe code too (the macro may wrap its
    /// arguments in `unsafe`); so are a `*` in prefix position and a `static mut` in arguments
    /// that are no expressions.
    #[test]
    fn accesses_in_an_opaque_macros_arguments_are_errors() {
        for (call, access) in [
            (quote!(unsafe { set!(*p.0, v) }), "`*p.0`, a dereference"),
            (quote!(set!(*p.0, v)), "`*p.0`, a dereference"),
            (quote!(log!(1 + (*p.0).b)), "`*p.0`, a dereference"),
            (quote!(unsafe { bump!(COUNTER) }), "`COUNTER`, a `static mut` of the item"),
            (quote!(log!(std::ptr::read(p.0))), "`ptr::read(p.0)`, a read or write through"),
            (quote!(log!(inner.count)), "`*inner`, a dereference"),
            (quote!(unsafe { log!(f(&mut *p.0)) }), "`*p.0`, a dereference"),
            (quote!(unsafe { matches!(*p.0, 0) }), "`*p.0`, a dereference"),
            (quote!(dsl!(x => *p.0)), "`*`, a dereference"),
            (quote!(unsafe { ptr::addr_of!((*p.0).slots[*q]) }), "`*q`, a dereference"),
            (quote!(dsl!(x => COUNTER)), "`COUNTER`, a `static mut` of the item"),
        ] {
            let e = errors(quote! {
                mod m {
                    static mut COUNTER: u64 = 0;
                    fn f(p: P, v: u64) {
                        let inner = unsafe { &*p.0 };
                        #call;
                    }
                }
            })
            .unwrap_or_else(|| panic!("no error for {call}"));
            assert!(e.contains("cannot see inside `"), "{call}: {e}");
            assert!(e.contains(&format!("its arguments contain {access}")), "{call}: {e}");
            assert!(e.contains("write the access out of the macro call"), "{call}: {e}");
        }
    }

    /// What accesses nothing is no error in an opaque macro's arguments: a borrow or an address
    /// of a dereference, a multiplication, a raw-pointer type, an allocation, a dereference of
    /// a reference in safe code under `matches!` (it opens no `unsafe`), and the arguments of
    /// macros that run no code.
    #[test]
    fn opaque_macro_arguments_without_accesses_are_no_errors() {
        for call in [
            quote!(unsafe { log!(&*p.0) }),
            quote!(unsafe { log!(&raw const (*p.0).b) }),
            quote!(log!(a * b, c as usize * 2)),
            quote!(log!(p.0 as *const u8)),
            quote!(log!(Box::new(1))),
            quote!(matches!(*r, 0 | 1)),
            quote!(stringify!(*p.0)),
            quote!(unsafe { std::ptr::addr_of!((*p.0).b) }),
            quote!(unsafe { ptr::addr_of_mut!((*p.0).slots[i + 1]) }),
            quote!(dsl!(x => a * b; y: *const u8)),
        ] {
            let e = errors(quote! {
                mod m {
                    static mut COUNTER: u64 = 0;
                    fn f(p: P, r: &u64, a: u64, b: u64, c: u8, i: usize) { #call; }
                }
            });
            assert!(e.is_none(), "{call}: {e:?}");
        }
    }

    /// A `macro_rules!` definition of the item whose body makes an access is an error naming
    /// it, which does not recommend defining the macro elsewhere (that is not checked at all);
    /// repetitions and raw-pointer types are no dereferences.
    #[test]
    fn macro_rules_definitions_that_access_are_errors() {
        for (body, access) in [
            (quote!(($p:expr, $v:expr) => { *$p = $v }), "`*`, a dereference"),
            (quote!(() => { unsafe { COUNTER += 1 } }), "`unsafe` code"),
            (quote!(($n:expr) => { $n.fetch_add(1, Ordering::SeqCst) }), "`fetch_add`"),
        ] {
            let e = errors(quote! {
                mod m {
                    static mut COUNTER: u64 = 0;
                    macro_rules! mac { #body }
                }
            })
            .unwrap_or_else(|| panic!("no error for {body}"));
            assert!(e.contains("cannot see inside a `macro_rules!` definition"), "{e}");
            assert!(e.contains(&format!("this one's body contains {access}")), "{body}: {e}");
            assert!(e.contains("make the macro a function of the instrumented item"), "{e}");
            assert!(e.contains("defining it outside the item would not help"), "{e}");
        }
        let e = errors(quote! {
            mod m {
                macro_rules! list { ($($x:expr),*) => { vec![$($x * 2),*] } }
                macro_rules! cast { ($p:expr) => { $p as *const u8 } }
                macro_rules! sum { ($($x:expr)*) => { 0 $(+ $x)* } }
            }
        });
        assert!(e.is_none(), "{e:?}");
    }

    /// Splitting an expression macro's arguments and printing them back gives the same tokens
    /// (format strings, named arguments, `vec![x; n]`).
    #[test]
    fn expr_macros_round_trip() {
        let mac: syn::Macro = syn::parse2(quote! { println!("{} {x}", a.b(), x = 3) }).unwrap();
        assert_eq!(roundtrip(&mac).to_string(), mac.tokens.to_string());
        let mac: syn::Macro = syn::parse2(quote! { vec![0u8; n] }).unwrap();
        assert_eq!(roundtrip(&mac).to_string(), mac.tokens.to_string());
    }
}
