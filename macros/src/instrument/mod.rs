//! `#[pctvb::instrument]`: path rewriting, the static alias pass, and hook emission.
//!
//! The expansion is two copies of the item:
//! - `#[cfg(not(pctvb))]`: the item exactly as written (production builds pay nothing);
//! - `#[cfg(pctvb)]`: the item with std concurrency paths rewritten to pctvb's
//!   ([`paths`]), every access site the alias pass ([`alias`]) found may touch a variable
//!   hooked with its static site id ([`hooks`]), and a generated module holding the site and
//!   variable tables, the per-site armed counters, and a constructor that registers them before
//!   `main`.
//!
//! `#[pctvb::instrument(force)]` emits only the instrumented copy, without the cfg (for tests
//! of the crate itself, which are not built with `--cfg pctvb`). `include = "path"` splices the
//! items of a file (relative to the crate root) into an annotated module, so code kept
//! elsewhere (the examples) can be instrumented as it is.

pub(crate) mod alias;
pub(crate) mod hooks;
pub(crate) mod paths;
pub(crate) mod sites;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use quote::{format_ident, quote, quote_spanned};
use syn::parse::Parser;
use syn::Item;

use alias::{Analysis, May, VarKind};
use sites::{Site, SiteKind};

/// Which copies to emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Both copies, selected by `cfg(pctvb)`.
    Cfg,
    /// Only the instrumented copy.
    Force,
}

/// The attribute's arguments: `force`, and `include = "path"` (repeatable).
struct Args {
    mode: Mode,
    /// Files (relative to the crate root) whose items are spliced into the module.
    includes: Vec<syn::LitStr>,
}

const ARGS_HELP: &str =
    "pctvb::instrument takes no arguments, or `force`, and `include = \"path\"` on a module";

/// Parses the attribute's arguments; anything but `force` and `include = "..."` is an error
/// spanning the offending argument.
fn parse_args(args: TokenStream) -> syn::Result<Args> {
    let mut out = Args { mode: Mode::Cfg, includes: Vec::new() };
    if args.is_empty() {
        return Ok(out);
    }
    let metas = syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated
        .parse2(args.clone())
        .map_err(|_| syn::Error::new_spanned(&args, ARGS_HELP))?;
    for meta in metas {
        match &meta {
            syn::Meta::Path(p) if p.is_ident("force") => out.mode = Mode::Force,
            syn::Meta::NameValue(nv) if nv.path.is_ident("include") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => {
                    out.includes.push(s.clone())
                }
                other => {
                    return Err(syn::Error::new_spanned(other, "`include` takes a string path"))
                }
            },
            other => {
                let name = other.path().to_token_stream().to_string().replace(' ', "");
                return Err(syn::Error::new_spanned(
                    other,
                    format!("unknown argument `{name}`: {ARGS_HELP}"),
                ));
            }
        }
    }
    Ok(out)
}

/// Splices the items of `include = "path"` files into the module, and returns tokens that make
/// the build depend on them (`include_bytes!`). Inner attributes of the files (`//!` docs) are
/// dropped. Their code has no spans of its own: its sites and variables all carry the
/// attribute's location.
fn splice_includes(item: &mut Item, includes: &[syn::LitStr]) -> syn::Result<TokenStream> {
    if includes.is_empty() {
        return Ok(TokenStream::new());
    }
    let Item::Mod(m) = item else {
        return Err(syn::Error::new_spanned(&includes[0], "`include` applies to a module"));
    };
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let mut deps = TokenStream::new();
    for lit in includes {
        let path = std::path::Path::new(&root).join(lit.value());
        let text = std::fs::read_to_string(&path).map_err(|e| {
            syn::Error::new_spanned(lit, format!("cannot read {}: {e}", path.display()))
        })?;
        let file: syn::File = syn::parse_str(&text).map_err(|e| {
            syn::Error::new_spanned(lit, format!("cannot parse {}: {e}", path.display()))
        })?;
        if let Some((_, items)) = &mut m.content {
            items.extend(file.items);
        }
        let full = path.display().to_string();
        deps.extend(quote! { const _: &[u8] = ::core::include_bytes!(#full); });
    }
    Ok(deps)
}

/// An instrument attribute inside an instrumented item (or a file it includes) would instrument
/// the generated hooks again and register every variable twice: an error at the inner one.
fn reject_nested(item: &Item) -> syn::Result<()> {
    struct Find(Option<syn::Attribute>);
    impl<'ast> syn::visit::Visit<'ast> for Find {
        /// Remembers the first `#[pctvb::instrument]` or `#[instrument]` attribute met.
        fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
            let segments: Vec<String> =
                attr.path().segments.iter().map(|s| s.ident.to_string()).collect();
            let nested = matches!(
                segments.iter().map(String::as_str).collect::<Vec<_>>().as_slice(),
                ["pctvb", "instrument"] | ["instrument"]
            );
            if nested && self.0.is_none() {
                self.0 = Some(attr.clone());
            }
        }
    }
    let mut find = Find(None);
    syn::visit::Visit::visit_item(&mut find, item);
    match find.0 {
        Some(attr) => Err(syn::Error::new_spanned(
            attr,
            "nested #[pctvb::instrument]: the enclosing #[pctvb::instrument] already \
             instruments this item; remove this one",
        )),
        None => Ok(()),
    }
}

/// The attribute on a method or an associated function (a function with a `self` receiver,
/// or whose signature or body names `Self` outside items nested in it): an error at the
/// attribute. The table module the attribute emits beside a function cannot be an item of an
/// impl or a trait; the impl block takes the attribute instead. An associated function that
/// names neither `self` nor `Self` cannot be told from a free function: rustc then reports
/// "module is not supported in traits or impls" at the attribute.
fn reject_method(f: &syn::ItemFn) -> syn::Result<()> {
    struct FindSelf(bool);
    impl<'ast> syn::visit::Visit<'ast> for FindSelf {
        /// Items nested in the body have a `Self` of their own.
        fn visit_item(&mut self, _: &'ast Item) {}
        fn visit_path_segment(&mut self, s: &'ast syn::PathSegment) {
            self.0 |= s.ident == "Self";
            syn::visit::visit_path_segment(self, s);
        }
        /// Macro arguments are not parsed: any `Self` token among them.
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            fn has_self(tokens: TokenStream) -> bool {
                tokens.into_iter().any(|t| match t {
                    proc_macro2::TokenTree::Ident(i) => i == "Self",
                    proc_macro2::TokenTree::Group(g) => has_self(g.stream()),
                    _ => false,
                })
            }
            self.0 |= has_self(m.tokens.clone());
            syn::visit::visit_macro(self, m);
        }
    }
    let mut find = FindSelf(false);
    syn::visit::Visit::visit_signature(&mut find, &f.sig);
    syn::visit::Visit::visit_block(&mut find, &f.block);
    if f.sig.receiver().is_some() || find.0 {
        return Err(syn::Error::new(
            Span::call_site(),
            format!(
                "pctvb::instrument cannot go on a method or an associated function (`{}`): put \
                 #[pctvb::instrument] on the impl block or trait impl, or on a module-level \
                 item",
                f.sig.ident
            ),
        ));
    }
    Ok(())
}

/// The attribute's expansion: checks the arguments and the item (a module with inline
/// contents, an impl block or a function that is no method, without nested instrument
/// attributes), splices the
/// included files, and emits the instrumented copy, next to the original under
/// `cfg(not(pctvb))` unless `force`.
pub(crate) fn expand(args: TokenStream, input: TokenStream) -> syn::Result<TokenStream> {
    let Args { mode, includes } = parse_args(args)?;
    let mut original: Item = syn::parse2(input.clone())?;
    let deps = splice_includes(&mut original, &includes)?;
    let input = if includes.is_empty() { input } else { quote!(#original) };
    match &original {
        Item::Mod(m) if m.content.is_none() => {
            return Err(syn::Error::new_spanned(
                m,
                "pctvb::instrument needs the module's contents inline (`mod m { ... }`): \
                 it cannot see into another file",
            ))
        }
        Item::Mod(_) | Item::Fn(_) | Item::Impl(_) => {}
        other => {
            return Err(syn::Error::new_spanned(
                other,
                "pctvb::instrument applies to a module, an impl block or a function",
            ))
        }
    }
    if let Item::Fn(f) = &original {
        if let Err(e) = reject_method(f) {
            // The method as written too, so its callers get no second error.
            let e = e.to_compile_error();
            return Ok(quote!(#e #input));
        }
    }
    reject_nested(&original)?;
    let instrumented = instrument(original)?;
    match mode {
        Mode::Force => Ok(quote!(#instrumented #deps)),
        Mode::Cfg => {
            let file: syn::File = syn::parse2(instrumented)?;
            let items = file.items.iter().map(|i| quote!(#[cfg(pctvb)] #i));
            Ok(quote! {
                #[cfg(not(pctvb))]
                #input
                #(#items)*
                #deps
            })
        }
    }
}

/// The instrumented copy of `item`: rewritten, analysed, hooked, plus its table module.
pub(crate) fn instrument(mut item: Item) -> syn::Result<TokenStream> {
    paths::rewrite_item(&mut item)?;
    let site_list = sites::number(&mut item)?;
    let analysis = alias::analyze(&item, &site_list);
    let (table_name, base_depth, inside) = match &item {
        Item::Mod(_) => (format_ident!("__pctvb_instrument"), 0usize, true),
        _ => {
            let text = quote!(#item).to_string();
            let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
            });
            (format_ident!("__pctvb_instrument_{:016x}", hash), 0usize, false)
        }
    };
    let module_path = {
        let table_name = table_name.clone();
        move |depth: usize| -> TokenStream {
            // The table module is a child of the annotated module (depth 1) or a sibling of the
            // annotated fn/impl (depth 0). A sibling is named without `self::`: a function
            // declared in a function body has its table in that body's block, which `self::`
            // (the enclosing module) does not reach.
            let ups = if inside { depth.saturating_sub(1) } else { depth };
            if !inside && ups == 0 {
                return quote!(#table_name);
            }
            let supers = (0..ups).map(|_| quote!(super::));
            quote!(self:: #(#supers)* #table_name)
        }
    };
    hooks::instrument(&mut item, &site_list, &analysis, &module_path, base_depth);
    let table = table_module(&table_name, &item, &site_list, &analysis, inside);
    Ok(match item {
        Item::Mod(mut m) => {
            if let Some((_, items)) = &mut m.content {
                items.push(syn::parse2(table)?);
            }
            quote!(#m)
        }
        other => quote!(#other #table),
    })
}

/// The run time's `SiteKind` variant for a site kind, as a path.
fn kind_tokens(kind: SiteKind) -> TokenStream {
    let name = format_ident!("{}", kind.name());
    quote!(::pctvb::instrument::SiteKind::#name)
}

/// The run time's `StaticVarKind` variant for a variable kind, as a path.
fn var_kind_tokens(kind: VarKind) -> TokenStream {
    let name = format_ident!("{}", kind.name());
    quote!(::pctvb::instrument::StaticVarKind::#name)
}

/// `file!()`, `line!()`, `column!()` of a span, as tokens evaluated at compile time.
fn location(span: Span) -> TokenStream {
    quote_spanned!(span=> ::core::file!(), ::core::line!(), ::core::column!())
}

/// The generated table module: the armed counter of every site, the site and variable
/// tables (with what the alias pass found each site may access), the address functions of the
/// annotated module's statics (`inside`: the table is a child of the annotated module), and a
/// constructor registering it all with the run time before `main`.
fn table_module(
    name: &syn::Ident,
    item: &Item,
    site_list: &[Site],
    analysis: &Analysis,
    inside: bool,
) -> TokenStream {
    let n = site_list.len();
    let item_name = match item {
        Item::Mod(m) => m.ident.to_string(),
        Item::Fn(f) => f.sig.ident.to_string(),
        Item::Impl(i) => {
            let ty = &i.self_ty;
            format!("impl {}", quote!(#ty).to_string().replace(' ', ""))
        }
        _ => String::new(),
    };
    let sites = site_list.iter().zip(&analysis.may).map(|(s, may)| {
        let loc = location(s.span);
        let kind = kind_tokens(s.kind);
        let write = s.write;
        let label = &s.label;
        let (anything, vars): (bool, Vec<u32>) = match may {
            May::Anything => (true, Vec::new()),
            May::Vars(v) => (false, v.iter().map(|&i| i as u32).collect()),
        };
        let hooked = anything || !vars.is_empty();
        let emitted = hooks::emits_hook(s.kind, may);
        quote! {
            ::pctvb::instrument::__rt::SiteDesc::new(
                #loc, #kind, #write, #label, #hooked, #emitted, #anything, &[#(#vars),*],
            )
        }
    });
    let vars = analysis.vars.iter().map(|v| {
        let here = quote_spanned!(v.span=> ::pctvb::instrument::__rt::here());
        let kind = var_kind_tokens(v.kind);
        let vname = &v.name;
        quote!(::pctvb::instrument::__rt::VarDesc::new(#here, #kind, #vname))
    });
    let statics = analysis.vars.iter().enumerate().filter_map(|(i, v)| {
        let ident = v.static_ident.as_ref()?;
        let i = i as u32;
        // The table module is a child of the annotated module: its statics are `super::X`.
        let call_here = quote_spanned!(v.span=> here());
        inside.then(|| {
            quote! {
                (#i, {
                    fn address() -> (usize, usize, &'static ::core::panic::Location<'static>) {
                        #[track_caller]
                        fn here() -> &'static ::core::panic::Location<'static> {
                            ::core::panic::Location::caller()
                        }
                        let r = ::core::ptr::addr_of!(super::#ident);
                        let size = ::core::mem::size_of_val(unsafe { &*r });
                        (r as *const u8 as usize, size, #call_here)
                    }
                    address
                })
            }
        })
    });
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, dead_code, clippy::all)]
        mod #name {
            pub(super) static ARMED: [::core::sync::atomic::AtomicU32; #n] =
                [const { ::core::sync::atomic::AtomicU32::new(0) }; #n];
            pub(super) static MODULE: ::pctvb::instrument::__rt::Module =
                ::pctvb::instrument::__rt::Module {
                    name: ::core::concat!(::core::module_path!(), "::", #item_name),
                    sites: &[#(#sites),*],
                    vars: &[#(#vars),*],
                    armed: &ARMED,
                    statics: &[#(#statics),*],
                };
            #[::pctvb::instrument::__rt::ctor::ctor(unsafe, crate_path = ::pctvb::instrument::__rt::ctor)]
            fn register() {
                ::pctvb::instrument::__rt::register(&MODULE);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without `force`, the first item is the original, token for token, under
    /// `cfg(not(pctvb))`; every other item is under `cfg(pctvb)`.
    #[test]
    fn without_the_cfg_the_item_is_unchanged() {
        let input = quote! {
            mod stack {
                use std::sync::atomic::{AtomicUsize, Ordering};
                pub struct S { n: AtomicUsize }
                impl S { pub fn get(&self) -> usize { self.n.load(Ordering::SeqCst) } }
            }
        };
        let out = expand(TokenStream::new(), input.clone()).unwrap();
        let file: syn::File = syn::parse2(out).unwrap();
        // The first item is the original, under `cfg(not(pctvb))`, token for token.
        let first = &file.items[0];
        let Item::Mod(m) = first else { panic!("expected the module") };
        assert_eq!(quote!(#[cfg(not(pctvb))]).to_string(), {
            let a = &m.attrs[0];
            quote!(#a).to_string()
        });
        let mut without_cfg = m.clone();
        without_cfg.attrs.remove(0);
        assert_eq!(quote!(#without_cfg).to_string(), input.to_string());
        // Every other item is under `cfg(pctvb)`.
        for item in &file.items[1..] {
            let s = quote!(#item).to_string();
            assert!(s.starts_with("# [cfg (pctvb)]"), "{s}");
        }
    }

    /// `force` emits only the instrumented copy, with no cfg: paths rewritten, hooks and the
    /// registration constructor present.
    #[test]
    fn force_emits_only_the_instrumented_copy() {
        let input = quote! {
            mod m {
                use std::sync::atomic::{AtomicUsize, Ordering};
                static N: AtomicUsize = AtomicUsize::new(0);
                pub fn bump() { N.fetch_add(1, Ordering::SeqCst); }
            }
        };
        let out = expand(quote!(force), input).unwrap().to_string();
        assert!(!out.contains("cfg"), "{out}");
        assert!(out.contains(":: pctvb :: sync :: atomic :: AtomicUsize"), "{out}");
        assert!(out.contains("__pctvb_instrument :: ARMED [0]"), "{out}");
        assert!(out.contains("fn register"), "{out}");
    }

    /// Unknown arguments, items other than modules, impls and functions, and modules kept in
    /// another file are errors.
    #[test]
    fn bad_arguments_and_items_are_errors() {
        let e = expand(
            quote!(fast),
            quote!(
                fn f() {}
            ),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown argument `fast`"), "{e}");
        let e = expand(
            TokenStream::new(),
            quote!(
                struct S;
            ),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("applies to a module"), "{e}");
        let e = expand(
            TokenStream::new(),
            quote!(
                mod m;
            ),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("contents inline"), "{e}");
    }

    /// A function with a `self` receiver, or naming `Self` outside items nested in it, is a
    /// method or associated function: an error at the attribute. A `Self` of a nested item is
    /// not.
    #[test]
    fn methods_and_associated_functions_are_errors() {
        for method in [
            quote!(
                fn get(&self) -> u32 {
                    self.0
                }
            ),
            quote!(
                fn new() -> Self {
                    S(0)
                }
            ),
            quote!(
                fn zero() -> u32 {
                    Self::ZERO
                }
            ),
            quote!(
                fn make() -> u32 {
                    vec![Self::ZERO].len() as u32
                }
            ),
        ] {
            // The error, and the method as written (its callers get no second error).
            let e = expand(TokenStream::new(), method.clone()).unwrap().to_string();
            assert!(e.starts_with(":: core :: compile_error !"), "{e}");
            assert!(e.contains("cannot go on a method or an associated function"), "{e}");
            assert!(e.contains("on the impl block"), "{e}");
            assert!(e.ends_with(&method.to_string()), "{e}");
        }
        let free = quote! {
            fn f() -> u32 {
                struct X;
                impl X {
                    fn new() -> Self { X }
                }
                let _ = X::new();
                0
            }
        };
        expand(TokenStream::new(), free).unwrap();
    }

    /// The tokens printed without spaces, for substring checks.
    fn norm(ts: TokenStream) -> String {
        ts.to_string().replace(' ', "")
    }

    /// Probes of plain places go before the statement, leaving the access as written; a
    /// computed pointer is evaluated once, probed, then dereferenced; allocations go through the
    /// allocation hook, and functions get a frame.
    #[test]
    fn probes_go_before_the_statement_or_around_the_value() {
        let out = norm(
            expand(
                quote!(force),
                quote! {
                    mod m {
                        struct S { n: AtomicUsize }
                        fn mk() -> S { S { n: AtomicUsize::new(0) } }
                        fn f(s: &S, make: fn() -> *mut u64) {
                            let p = Box::into_raw(Box::new(0u64));
                            let v = s.n.load(Ordering::SeqCst);
                            unsafe { *p = 1; *make() = 2; }
                        }
                    }
                },
            )
            .unwrap(),
        );
        // A plain-place receiver: the probe is a statement before `let v = ...`, and the
        // method call itself is unchanged.
        let load = out.find("letv=s.n.load(Ordering::SeqCst);").expect(&out);
        let probe = out.find("Target(&(s.n))").expect(&out);
        assert!(probe < load, "{out}");
        // A plain-place pointer: probe before, dereference unchanged.
        assert!(out.contains("Target(&(p))"), "{out}");
        assert!(out.contains("*p=1;"), "{out}");
        // A computed pointer: evaluated once, probed, then dereferenced.
        assert!(out.contains("*{let__pctvb_p=make();"), "{out}");
        // The allocation goes through the allocation hook, and the function keeps a frame.
        assert!(out.contains("__rt::alloc(&self::__pctvb_instrument::ARMED["), "{out}");
        assert!(out.contains("let__pctvb_frame=::pctvb::instrument::__rt::Frame::enter"), "{out}");
    }

    /// A temporary receiver is moved through the probe's binding (its method may take `self`
    /// or `&mut self`), a place behind a computed pointer is borrowed, and a field behind a
    /// plain pointer is probed before the statement and left as written.
    #[test]
    fn receivers_keep_their_value_category() {
        let out = norm(
            expand(
                quote!(force),
                quote! {
                    mod m {
                        pub fn f(m: &Mutex<Option<u32>>, p: *mut S, q: fn() -> *mut S) {
                            m.lock().unwrap().replace(7);
                            unsafe {
                                (*p).items.swap(0, 1);
                                (*q()).v.load(Ordering::SeqCst);
                            }
                        }
                    }
                },
            )
            .unwrap(),
        );
        assert!(out.contains("(matchm.lock().unwrap(){__pctvb_r=>"), "{out}");
        assert!(out.contains("(*p).items.swap(0,1);"), "{out}");
        assert!(out.contains("unsafe{&((*p).items)}"), "{out}");
        assert!(out.contains("(match&((*{let__pctvb_p=q();"), "{out}");
    }

    /// An element indexed by an expression that is no literal or path is probed at its own
    /// address: the index is evaluated once, where the access evaluates it, bound by a `match`
    /// (its temporaries live as long as they did) and probed with its value. Earlier index
    /// expressions and a computed pointer are stashed in locals declared before the statement.
    /// A literal or path index keeps its probe before the statement.
    #[test]
    fn an_index_expression_is_evaluated_once_where_the_access_evaluates_it() {
        let out = norm(
            expand(
                quote!(force),
                quote! {
                    mod m {
                        static mut TABLE: [u64; 4] = [0; 4];
                        fn f(p: *mut S, q: fn() -> *mut S, i: usize) {
                            unsafe {
                                (*p).slots[i + 1] = 1;
                                TABLE[i % 4] += 1;
                                (*p).slots[K { k: i }.k] = 2;
                                (*q()).grid[i + 2][i * 3].x = 3;
                                (*p).slots[i] = 4;
                            }
                        }
                    }
                },
            )
            .unwrap(),
        );
        let element = |base: &str| {
            format!("::core::ptr::addr_of!({base}[::core::clone::Clone::clone(&__pctvb_i)])")
        };
        // Bound where the access evaluates it, probed with its value, handed on.
        assert!(out.contains("(*p).slots[matchi+1{__pctvb_i=>{"), "{out}");
        assert!(out.contains(&element("(*(p)).slots")), "{out}");
        assert!(out.contains("__pctvb_i}}]=1;"), "{out}");
        assert_eq!(out.matches("i+1").count(), 1, "{out}");
        assert!(out.contains("TABLE[matchi%4{__pctvb_i=>{"), "{out}");
        assert!(out.contains(&element("TABLE")), "{out}");
        // A struct literal cannot begin a scrutinee unparenthesized.
        assert!(out.contains("[match(K{k:i}.k){__pctvb_i=>{"), "{out}");
        // The computed pointer and the first index are stashed, declared before the statement.
        let declared = out.find("letmut__pctvb_s0;#[allow(unused_mut)]letmut__pctvb_s1;");
        let statement = out.find("(*(matchq(){__pctvb_p=>{__pctvb_s0=");
        assert!(declared.expect(&out) < statement.expect(&out), "{out}");
        assert!(out.contains(".grid[matchi+2{__pctvb_v=>{__pctvb_s1="), "{out}");
        assert!(
            out.contains(
                "addr_of!((*__pctvb_s0).grid[::core::clone::Clone::clone(&__pctvb_s1)]\
                 [::core::clone::Clone::clone(&__pctvb_i)].x)"
            ),
            "{out}"
        );
        // A path index: the probe before the statement, the place as written.
        let probe = out.find("addr_of!((*(p)).slots[::core::clone::Clone::clone(&i)])");
        assert!(probe.expect(&out) < out.find("(*p).slots[i]=4;").expect(&out), "{out}");
    }

    /// A site that may access no variable gets no hook.
    #[test]
    fn sites_without_variables_get_no_hook() {
        let out = expand(quote!(force), quote! { fn f() { let v = vec![1]; let _ = v.get(0); } })
            .unwrap()
            .to_string();
        assert!(!out.contains("ARMED ["), "{out}");
    }
}
