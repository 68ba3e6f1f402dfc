//! Rewriting of std concurrency paths to pctvb's inside an instrumented item.
//!
//! `std::sync::*`, `std::sync::atomic::*` (also `core::sync::atomic::*`), `std::thread::*`,
//! `std::thread_local!` (and the prelude's `thread_local!`), `std::cell::UnsafeCell` and
//! `std::hint::spin_loop` (also `core::hint::spin_loop`) become the `::pctvb` equivalents, in `use`
//! declarations, type and expression paths, and inside the token streams of macro invocations.
//! A path to an item pctvb does not model (for example `std::sync::Exclusive`) is a compile
//! error pointing at it, and so are imports that would hide which paths to rewrite
//! (`use std::*;`, `use std::cell;`).

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::visit_mut::{self, VisitMut};
use syn::{Ident, Item, ItemUse, Path, PathSegment, Token, UseTree};

/// Names `pctvb::sync` provides (mirroring `std::sync`).
pub(crate) const SYNC_NAMES: &[&str] = &[
    "Arc",
    "Weak",
    "Mutex",
    "MutexGuard",
    "RwLock",
    "RwLockReadGuard",
    "RwLockWriteGuard",
    "Condvar",
    "WaitTimeoutResult",
    "Barrier",
    "BarrierWaitResult",
    "Once",
    "OnceState",
    "OnceLock",
    "LazyLock",
    "LockResult",
    "PoisonError",
    "TryLockError",
    "TryLockResult",
    "mpsc",
    "atomic",
];

/// Names `pctvb::sync::atomic` provides.
pub(crate) const ATOMIC_NAMES: &[&str] = &[
    "AtomicBool",
    "AtomicU8",
    "AtomicU16",
    "AtomicU32",
    "AtomicU64",
    "AtomicUsize",
    "AtomicI8",
    "AtomicI16",
    "AtomicI32",
    "AtomicI64",
    "AtomicIsize",
    "AtomicPtr",
    "Ordering",
    "fence",
    "compiler_fence",
    "spin_loop_hint",
];

/// Names `pctvb::thread` provides.
pub(crate) const THREAD_NAMES: &[&str] = &[
    "spawn",
    "scope",
    "Builder",
    "JoinHandle",
    "current",
    "yield_now",
    "park",
    "park_timeout",
    "park_timeout_ms",
    "sleep",
    "sleep_ms",
    "panicking",
    "available_parallelism",
    "Thread",
    "ThreadId",
    "Scope",
    "ScopedJoinHandle",
    "LocalKey",
    "AccessError",
    "Result",
];

/// Rewrites every std concurrency path in `item`; errors carry the span of the offending path.
pub(crate) fn rewrite_item(item: &mut Item) -> syn::Result<()> {
    let mut rewriter = Rewriter { errors: Vec::new() };
    rewriter.visit_item_mut(item);
    combine(rewriter.errors)
}

/// All the errors as one (the compiler then reports every one of them), or `Ok` if there are
/// none.
fn combine(errors: Vec<syn::Error>) -> syn::Result<()> {
    let mut iter = errors.into_iter();
    match iter.next() {
        None => Ok(()),
        Some(mut first) => {
            for e in iter {
                first.combine(e);
            }
            Err(first)
        }
    }
}

/// The rewriting visitor; it collects errors instead of stopping at the first.
struct Rewriter {
    errors: Vec<syn::Error>,
}

/// What a std path becomes.
enum Rewrite {
    /// Not a concurrency path: leave it.
    Keep,
    /// Replace the first `n` segments with these (the rest of the path is kept).
    Replace { consumed: usize, with: &'static [&'static str] },
}

/// Classifies the segment names of a path that starts at a crate root.
fn classify(segments: &[String], span: Span) -> syn::Result<Rewrite> {
    let s: Vec<&str> = segments.iter().map(String::as_str).collect();
    let root_ok = matches!(s.first(), Some(&"std") | Some(&"core") | Some(&"alloc"));
    if !root_ok {
        return Ok(Rewrite::Keep);
    }
    let unsupported = |what: &str, list: &[&str]| {
        Err(syn::Error::new(
            span,
            format!(
                "pctvb::instrument: pctvb does not model `{}`, so it cannot control it inside \
                 instrumented code; supported here: {}. Move the code that needs it out of the \
                 instrumented item (a function defined outside it can be called from inside)",
                s.join("::"),
                what.to_string() + ": " + &list.join(", ")
            ),
        ))
    };
    match &s[1..] {
        ["sync"] => Ok(Rewrite::Replace { consumed: 2, with: &["pctvb", "sync"] }),
        ["sync", "atomic"] => {
            Ok(Rewrite::Replace { consumed: 3, with: &["pctvb", "sync", "atomic"] })
        }
        ["sync", "atomic", name, ..] => {
            if ATOMIC_NAMES.contains(name) {
                Ok(Rewrite::Replace { consumed: 3, with: &["pctvb", "sync", "atomic"] })
            } else {
                unsupported("std::sync::atomic", ATOMIC_NAMES)
            }
        }
        ["sync", name, ..] => {
            if SYNC_NAMES.contains(name) {
                Ok(Rewrite::Replace { consumed: 2, with: &["pctvb", "sync"] })
            } else {
                unsupported("std::sync", SYNC_NAMES)
            }
        }
        ["thread"] => Ok(Rewrite::Replace { consumed: 2, with: &["pctvb", "thread"] }),
        ["thread", name, ..] => {
            if THREAD_NAMES.contains(name) {
                Ok(Rewrite::Replace { consumed: 2, with: &["pctvb", "thread"] })
            } else {
                unsupported("std::thread", THREAD_NAMES)
            }
        }
        ["thread_local"] => Ok(Rewrite::Replace { consumed: 2, with: &["pctvb", "thread_local"] }),
        // Only `spin_loop`: the rest of `std::hint` does not schedule (so `use std::hint;`
        // followed by `hint::spin_loop()` keeps std's, which does not yield).
        ["hint", "spin_loop"] => {
            Ok(Rewrite::Replace { consumed: 3, with: &["pctvb", "hint", "spin_loop"] })
        }
        ["cell", "UnsafeCell", ..] => {
            Ok(Rewrite::Replace { consumed: 3, with: &["pctvb", "cell", "UnsafeCell"] })
        }
        _ => Ok(Rewrite::Keep),
    }
}

/// Builds `::a::b::...` segments spanned at `span`.
fn new_segments(names: &[&str], span: Span) -> Punctuated<PathSegment, Token![::]> {
    let mut p = Punctuated::new();
    for name in names {
        p.push(PathSegment::from(Ident::new(name, span)));
    }
    p
}

impl Rewriter {
    /// Rewrites one path in place if it starts with a std concurrency path: the consumed segments
    /// become pctvb's, with a leading `::` and the span of the original start (so errors and
    /// diagnostics still point at the user's code). An unmodelled std item records an error
    /// spanning the whole path.
    fn rewrite_path(&mut self, path: &mut Path) {
        let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let span = path.segments.first().map_or_else(Span::call_site, |s| s.ident.span());
        let span = path.leading_colon.map_or(span, |c| c.spans[0]);
        match classify(&names, span) {
            // Point at the whole path, not only its first segment.
            Err(e) => self.errors.push(syn::Error::new_spanned(&*path, e.to_string())),
            Ok(Rewrite::Keep) => {}
            Ok(Rewrite::Replace { consumed, with }) => {
                let rest: Vec<PathSegment> = path.segments.iter().skip(consumed).cloned().collect();
                let mut segments = new_segments(with, span);
                for seg in rest {
                    segments.push(seg);
                }
                path.leading_colon = Some(Token![::](span));
                path.segments = segments;
            }
        }
    }

    /// Rewrites one `use` item into one or more.
    fn rewrite_use(&mut self, item: &ItemUse) -> Vec<Item> {
        let mut leaves = Vec::new();
        flatten(&item.tree, &mut Vec::new(), &mut leaves);
        let touches = leaves.iter().any(|l| {
            matches!(l.prefix.first().map(|i| i.to_string()).as_deref(), Some("std" | "core"))
        });
        if !touches {
            return vec![Item::Use(item.clone())];
        }
        let mut out = Vec::new();
        for leaf in leaves {
            let mut names: Vec<String> = leaf.prefix.iter().map(|i| i.to_string()).collect();
            if let Leaf::Name(n) | Leaf::Rename(n, _) = &leaf.leaf {
                if n != "self" {
                    names.push(n.to_string());
                }
            }
            let span = leaf.prefix.first().map_or_else(Span::call_site, |i| i.span());
            let is_std = matches!(names.first().map(String::as_str), Some("std" | "core"));
            if is_std {
                let is_module_import = !matches!(leaf.leaf, Leaf::Glob);
                match names.as_slice() {
                    [root] if is_module_import || leaf.prefix.len() == 1 => {
                        if matches!(leaf.leaf, Leaf::Glob) {
                            self.errors.push(syn::Error::new(
                                span,
                                format!(
                                    "pctvb::instrument: `use {root}::*` hides which paths to \
                                     rewrite; import the items you use by path"
                                ),
                            ));
                            continue;
                        }
                    }
                    [_, cell] if cell == "cell" && is_module_import => {
                        self.errors.push(syn::Error::new(
                            span,
                            "pctvb::instrument: importing the `std::cell` module hides its \
                             `UnsafeCell`; import `std::cell::UnsafeCell` (or the other cell \
                             types) directly",
                        ));
                        continue;
                    }
                    _ => {}
                }
            }
            let mut full: Vec<Ident> = leaf.prefix.clone();
            let mut leaf_kind = leaf.leaf.clone();
            if let Leaf::Name(n) | Leaf::Rename(n, _) = &leaf.leaf {
                if n != "self" {
                    full.push(n.clone());
                }
            }
            let mut path = Path {
                leading_colon: leaf.leading_colon,
                segments: full.iter().cloned().map(PathSegment::from).collect(),
            };
            self.rewrite_path(&mut path);
            let glob_cell =
                is_std && matches!(leaf.leaf, Leaf::Glob) && names.len() == 2 && names[1] == "cell";
            // Re-split the rewritten path into prefix + leaf.
            let mut segs: Vec<Ident> = path.segments.iter().map(|s| s.ident.clone()).collect();
            let tree = match &mut leaf_kind {
                Leaf::Glob => {
                    build_tree(&segs, UseTree::Glob(syn::UseGlob { star_token: Token![*](span) }))
                }
                Leaf::Name(n) if n == "self" => {
                    let last = segs.pop().expect("a use path has a segment");
                    build_tree(&segs, UseTree::Name(syn::UseName { ident: last }))
                }
                Leaf::Name(_) => {
                    let last = segs.pop().expect("a use path has a segment");
                    build_tree(&segs, UseTree::Name(syn::UseName { ident: last }))
                }
                Leaf::Rename(_, alias) => {
                    let last = segs.pop().expect("a use path has a segment");
                    build_tree(
                        &segs,
                        UseTree::Rename(syn::UseRename {
                            ident: last,
                            as_token: Token![as](span),
                            rename: alias.clone(),
                        }),
                    )
                }
            };
            let mut new_item = item.clone();
            new_item.leading_colon = path.leading_colon;
            new_item.tree = tree;
            out.push(Item::Use(new_item));
            if glob_cell {
                // `use std::cell::*;` keeps std's cells but pctvb's `UnsafeCell` (an explicit
                // import shadows the glob).
                let mut extra = item.clone();
                extra.leading_colon = Some(Token![::](span));
                extra.tree = build_tree(
                    &[Ident::new("pctvb", span), Ident::new("cell", span)],
                    UseTree::Name(syn::UseName { ident: Ident::new("UnsafeCell", span) }),
                );
                out.push(Item::Use(extra));
            }
        }
        out
    }

    /// Replaces each `use` of an item list with its rewritten, split form
    /// ([`Rewriter::rewrite_use`]), in place; other items are kept (and visited afterwards).
    fn rewrite_items(&mut self, items: &mut Vec<Item>) {
        let old = std::mem::take(items);
        for item in old {
            match item {
                Item::Use(u) => items.extend(self.rewrite_use(&u)),
                other => items.push(other),
            }
        }
    }
}

/// The end of one flattened `use` path.
#[derive(Clone)]
enum Leaf {
    Name(Ident),
    Rename(Ident, Ident),
    Glob,
}

/// One leaf of a `use` tree with the full path leading to it.
struct FlatUse {
    leading_colon: Option<Token![::]>,
    prefix: Vec<Ident>,
    leaf: Leaf,
}

/// Flattens a use tree into its leaves, each with the whole prefix leading to it
/// (`use a::{b, c::d}` gives `a::b` and `a::c::d`), so every leaf can be classified on its own.
fn flatten(tree: &UseTree, prefix: &mut Vec<Ident>, out: &mut Vec<FlatUse>) {
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.clone());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) => out.push(FlatUse {
            leading_colon: None,
            prefix: prefix.clone(),
            leaf: Leaf::Name(n.ident.clone()),
        }),
        UseTree::Rename(r) => out.push(FlatUse {
            leading_colon: None,
            prefix: prefix.clone(),
            leaf: Leaf::Rename(r.ident.clone(), r.rename.clone()),
        }),
        UseTree::Glob(_) => {
            out.push(FlatUse { leading_colon: None, prefix: prefix.clone(), leaf: Leaf::Glob })
        }
        UseTree::Group(g) => {
            for t in &g.items {
                flatten(t, prefix, out);
            }
        }
    }
}

/// The use tree `prefix::leaf`: the inverse of [`flatten`] for one leaf.
fn build_tree(prefix: &[Ident], leaf: UseTree) -> UseTree {
    prefix.iter().rev().fold(leaf, |tree, ident| {
        UseTree::Path(syn::UsePath {
            ident: ident.clone(),
            colon2_token: Token![::](ident.span()),
            tree: Box::new(tree),
        })
    })
}

impl VisitMut for Rewriter {
    /// Rewrites every path of the item (types, expressions, patterns, bounds), then the paths
    /// in its generic arguments.
    fn visit_path_mut(&mut self, path: &mut Path) {
        self.rewrite_path(path);
        visit_mut::visit_path_mut(self, path);
    }

    /// Rewrites a module's `use` items before visiting its contents.
    fn visit_item_mod_mut(&mut self, m: &mut syn::ItemMod) {
        if let Some((_, items)) = &mut m.content {
            self.rewrite_items(items);
        }
        visit_mut::visit_item_mod_mut(self, m);
    }

    /// Rewrites the `use` statements of a block like a module's, then visits its statements.
    fn visit_block_mut(&mut self, block: &mut syn::Block) {
        let old = std::mem::take(&mut block.stmts);
        for stmt in old {
            match stmt {
                syn::Stmt::Item(Item::Use(u)) => {
                    block.stmts.extend(self.rewrite_use(&u).into_iter().map(syn::Stmt::Item))
                }
                other => block.stmts.push(other),
            }
        }
        visit_mut::visit_block_mut(self, block);
    }

    /// Leaves `use` items alone: the item list or block holding them already rewrote them.
    fn visit_item_use_mut(&mut self, _u: &mut ItemUse) {
        // Already rewritten by the enclosing item list.
    }

    /// A macro call: its path (`thread_local!`, `std::thread_local!`) and the std paths in its
    /// raw tokens are rewritten, since macro bodies cannot be parsed in general.
    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        rewrite_prelude_thread_local(&mut mac.path);
        self.rewrite_path(&mut mac.path);
        let tokens = std::mem::take(&mut mac.tokens);
        mac.tokens = rewrite_token_stream(tokens, &mut self.errors);
    }
}

/// The prelude's `thread_local!` (written without a path) becomes `::pctvb::thread_local!`.
///
/// std's thread-locals are per OS thread, and every logical thread of a pctvb run runs on the
/// same OS thread, from one execution to the next: a std thread-local would be one value shared
/// by all logical threads and carried across executions. pctvb's gives each logical thread of
/// each execution its own value. (`std::thread_local!` and `use std::thread_local;` are
/// rewritten by [`classify`] like the other std paths.)
fn rewrite_prelude_thread_local(path: &mut Path) {
    if path.leading_colon.is_none() && path.is_ident("thread_local") {
        let span = path.segments[0].ident.span();
        path.leading_colon = Some(Token![::](span));
        path.segments = new_segments(&["pctvb", "thread_local"], span);
    }
}

/// Rewrites `std::...` paths found in a raw token stream, recursing into groups.
fn rewrite_token_stream(tokens: TokenStream, errors: &mut Vec<syn::Error>) -> TokenStream {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out: Vec<TokenTree> = Vec::with_capacity(trees.len());
    let mut i = 0;
    while i < trees.len() {
        match &trees[i] {
            TokenTree::Group(g) => {
                let inner = rewrite_token_stream(g.stream(), errors);
                let mut ng = Group::new(g.delimiter(), inner);
                ng.set_span(g.span());
                out.push(TokenTree::Group(ng));
                i += 1;
            }
            TokenTree::Ident(id)
                if (id == "std" || id == "core")
                    && !preceded_by_path_sep(&out)
                    && is_path_sep(&trees, i + 1) =>
            {
                // Collect `ident (:: ident)*`.
                let mut names = vec![id.clone()];
                let mut j = i + 1;
                while is_path_sep(&trees, j) {
                    if let Some(TokenTree::Ident(next)) = trees.get(j + 2) {
                        names.push(next.clone());
                        j += 3;
                    } else {
                        break;
                    }
                }
                let consumed_end = j;
                let strings: Vec<String> = names.iter().map(|n| n.to_string()).collect();
                let leading = matches!(out.last(), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                match classify(&strings, id.span()) {
                    Err(e) => {
                        errors.push(e);
                        out.extend(trees[i..consumed_end].iter().cloned());
                    }
                    Ok(Rewrite::Keep) => out.extend(trees[i..consumed_end].iter().cloned()),
                    Ok(Rewrite::Replace { consumed, with }) => {
                        let span = id.span();
                        let mut path = Path {
                            leading_colon: (!leading).then(|| Token![::](span)),
                            segments: new_segments(with, span),
                        };
                        for n in names.iter().skip(consumed) {
                            path.segments.push(PathSegment::from(n.clone()));
                        }
                        out.extend(path.into_token_stream());
                    }
                }
                i = consumed_end;
            }
            other => {
                out.push(other.clone());
                i += 1;
            }
        }
    }
    out.into_iter().collect()
}

/// Whether the tokens at `i` and `i + 1` are the two `:` of a `::`.
fn is_path_sep(trees: &[TokenTree], i: usize) -> bool {
    matches!((trees.get(i), trees.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && b.as_char() == ':')
}

/// Whether the tokens so far end in `x ::` (so the next ident is not a path root), as opposed to
/// a leading `::`.
fn preceded_by_path_sep(out: &[TokenTree]) -> bool {
    let n = out.len();
    if n < 2 {
        return false;
    }
    let colons = matches!((&out[n - 2], &out[n - 1]),
        (TokenTree::Punct(a), TokenTree::Punct(b)) if a.as_char() == ':' && b.as_char() == ':');
    colons
        && n >= 3
        && (matches!(&out[n - 3], TokenTree::Ident(_) | TokenTree::Group(_))
            || matches!(&out[n - 3], TokenTree::Punct(p) if p.as_char() == '>'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    /// Rewrites an item; returns it printed.
    fn rw(tokens: TokenStream) -> String {
        let mut item: Item = syn::parse2(tokens).unwrap();
        rewrite_item(&mut item).unwrap();
        item.into_token_stream().to_string()
    }

    /// Rewrites an item that must fail; returns the error message.
    fn rw_err(tokens: TokenStream) -> String {
        let mut item: Item = syn::parse2(tokens).unwrap();
        rewrite_item(&mut item).unwrap_err().to_string()
    }

    /// Nested `use` trees touching std are split into one `use` per leaf, each rewritten or kept.
    #[test]
    fn use_trees_are_split_and_rewritten() {
        let out = rw(quote! {
            mod m {
                use std::sync::{Arc, Mutex, atomic::{AtomicUsize, Ordering}};
                use std::cell::{Cell, UnsafeCell};
                use std::collections::HashMap;
            }
        });
        assert!(out.contains("use :: pctvb :: sync :: Arc ;"), "{out}");
        assert!(out.contains("use :: pctvb :: sync :: Mutex ;"), "{out}");
        assert!(out.contains("use :: pctvb :: sync :: atomic :: AtomicUsize ;"), "{out}");
        assert!(out.contains("use :: pctvb :: sync :: atomic :: Ordering ;"), "{out}");
        assert!(out.contains("use std :: cell :: Cell ;"), "{out}");
        assert!(out.contains("use :: pctvb :: cell :: UnsafeCell ;"), "{out}");
        // Unrelated imports are untouched, not split.
        assert!(out.contains("use std :: collections :: HashMap ;"), "{out}");
    }

    /// Type and expression paths are rewritten, with or without a leading `::`, and `core` like
    /// `std`.
    #[test]
    fn expression_and_type_paths_are_rewritten() {
        let out = rw(quote! {
            fn f() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
                let h = ::std::thread::spawn(|| {});
                h.join().unwrap();
                std::sync::Arc::new(core::sync::atomic::AtomicBool::new(false))
            }
        });
        assert!(
            out.contains(":: pctvb :: sync :: Arc < :: pctvb :: sync :: atomic :: AtomicBool >"),
            "{out}"
        );
        assert!(out.contains(":: pctvb :: thread :: spawn"), "{out}");
        assert!(!out.contains("std"), "{out}");
    }

    /// `std::hint::spin_loop` (and `core`'s) becomes pctvb's, a yield; the rest of
    /// `std::hint` stays std's.
    #[test]
    fn spin_loop_hint_is_pctvbs() {
        let out = rw(quote! {
            mod m {
                use std::hint::spin_loop;
                use core::hint::{black_box, spin_loop as relax};
                fn f() {
                    std::hint::spin_loop();
                    ::core::hint::spin_loop();
                    std::hint::black_box(1);
                }
            }
        });
        assert!(out.contains("use :: pctvb :: hint :: spin_loop ;"), "{out}");
        assert!(out.contains("use :: pctvb :: hint :: spin_loop as relax ;"), "{out}");
        assert!(out.contains("use core :: hint :: black_box ;"), "{out}");
        assert_eq!(out.matches(":: pctvb :: hint :: spin_loop ()").count(), 2, "{out}");
        assert!(out.contains("std :: hint :: black_box (1)"), "{out}");
    }

    /// Paths inside macro calls' tokens are rewritten, and so is the macro path itself.
    #[test]
    fn macro_bodies_are_rewritten() {
        let out = rw(quote! {
            fn f() {
                assert!(std::thread::panicking() == false);
                std::thread_local!(static X: u8 = 0);
                println!("{}", std::mem::size_of::<std::sync::Mutex<u8>>());
            }
        });
        assert!(out.contains(":: pctvb :: thread :: panicking ()"), "{out}");
        assert!(out.contains(":: pctvb :: thread_local !"), "{out}");
        assert!(out.contains("std :: mem :: size_of :: < :: pctvb :: sync :: Mutex < u8"), "{out}");
    }

    /// The unqualified `thread_local!` becomes pctvb's, in item and statement position.
    #[test]
    fn prelude_thread_local_is_pctvbs() {
        let out = rw(quote! {
            mod m {
                thread_local! { static A: u8 = 0; pub static B: u8 = const { 1 }; }
                fn f() { thread_local!(static C: u8 = 0); }
                my::thread_local! { static D: u8 = 0; }
            }
        });
        assert_eq!(out.matches(":: pctvb :: thread_local !").count(), 2, "{out}");
        // Only the unqualified name is the prelude's; other paths are left alone.
        assert!(out.contains("my :: thread_local !"), "{out}");
        assert!(!out.contains("{ thread_local !"), "{out}");
    }

    /// Glob imports and renames keep their shape; `use std::cell::*` gains pctvb's `UnsafeCell`.
    #[test]
    fn globs_and_renames() {
        let out = rw(quote! {
            mod m {
                use std::sync::atomic::*;
                use std::cell::*;
                use std::sync::Mutex as Lock;
                use std::thread;
            }
        });
        assert!(out.contains("use :: pctvb :: sync :: atomic :: * ;"), "{out}");
        assert!(out.contains("use std :: cell :: * ;"), "{out}");
        assert!(out.contains("use :: pctvb :: cell :: UnsafeCell ;"), "{out}");
        assert!(out.contains("use :: pctvb :: sync :: Mutex as Lock ;"), "{out}");
        assert!(out.contains("use :: pctvb :: thread ;"), "{out}");
    }

    /// Unmodelled std items and imports that hide which paths to rewrite are errors.
    #[test]
    fn unsupported_paths_are_errors() {
        let e = rw_err(quote! { fn f() { let _x: std::sync::Exclusive<u8>; } });
        assert!(e.contains("does not model `std::sync::Exclusive`"), "{e}");
        let e = rw_err(quote! { mod m { use std::*; } });
        assert!(e.contains("hides which paths"), "{e}");
        let e = rw_err(quote! { mod m { use std::cell; } });
        assert!(e.contains("import `std::cell::UnsafeCell`"), "{e}");
    }

    /// Paths that do not start at `std` or `core` are kept, whatever segments follow.
    #[test]
    fn non_std_paths_are_kept() {
        let out = rw(
            quote! { fn f() { let _ = mycrate::sync::Mutex::new(0); let _ = a::std::sync::X; } },
        );
        assert!(out.contains("mycrate :: sync :: Mutex"), "{out}");
        assert!(out.contains("a :: std :: sync :: X"), "{out}");
    }
}
