//! `#[pctvb::test(...)]`: argument parsing and the expansion into a `#[test]` function.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ItemFn, Lit, ReturnType, Token};

/// One accepted argument: its name, the kind of literal it takes, and the `Config` method it
/// sets.
struct ArgSpec {
    name: &'static str,
    kind: ArgKind,
    method: &'static str,
}

#[derive(Clone, Copy, PartialEq)]
enum ArgKind {
    /// An integer literal, range-checked against the type of the `Config` method's parameter
    /// and emitted with that type, so a value never wraps into another.
    Int(IntTy),
    Float,
    Strategy,
    Regressions,
    Duration,
    Bool,
}

/// The parameter type of an integer argument's `Config` method.
#[derive(Clone, Copy, PartialEq, Debug)]
enum IntTy {
    U32,
    U64,
    Usize,
}

impl IntTy {
    fn name(self) -> &'static str {
        match self {
            IntTy::U32 => "u32",
            IntTy::U64 => "u64",
            IntTy::Usize => "usize",
        }
    }

    /// The largest value of the type; for `usize`, the largest on any target (64-bit): the
    /// expansion checks a value above `u32::MAX` against the target's `usize` at compile time.
    fn max(self) -> u128 {
        match self {
            IntTy::U32 => u32::MAX.into(),
            IntTy::U64 | IntTy::Usize => u64::MAX.into(),
        }
    }
}

const ARGS: &[ArgSpec] = &[
    ArgSpec { name: "iterations", kind: ArgKind::Int(IntTy::U64), method: "iterations" },
    ArgSpec { name: "seed", kind: ArgKind::Int(IntTy::U64), method: "seed" },
    ArgSpec { name: "strategy", kind: ArgKind::Strategy, method: "strategy" },
    ArgSpec { name: "max_steps", kind: ArgKind::Int(IntTy::U64), method: "max_steps" },
    ArgSpec { name: "max_threads", kind: ArgKind::Int(IntTy::Usize), method: "max_threads" },
    ArgSpec { name: "stack_size", kind: ArgKind::Int(IntTy::Usize), method: "stack_size" },
    ArgSpec { name: "confidence", kind: ArgKind::Float, method: "confidence" },
    ArgSpec { name: "depth", kind: ArgKind::Int(IntTy::U32), method: "depth" },
    ArgSpec { name: "vars", kind: ArgKind::Int(IntTy::U32), method: "vars" },
    ArgSpec { name: "threads", kind: ArgKind::Int(IntTy::U32), method: "threads" },
    ArgSpec { name: "profile_runs", kind: ArgKind::Int(IntTy::U64), method: "profile_runs" },
    ArgSpec { name: "explore_every", kind: ArgKind::Int(IntTy::U64), method: "explore_every" },
    ArgSpec { name: "explorer", kind: ArgKind::Strategy, method: "explorer" },
    ArgSpec { name: "minimize_runs", kind: ArgKind::Int(IntTy::U64), method: "minimize_runs" },
    ArgSpec { name: "regressions", kind: ArgKind::Regressions, method: "regressions" },
    ArgSpec { name: "time", kind: ArgKind::Duration, method: "time_budget" },
    ArgSpec { name: "enumerate", kind: ArgKind::Bool, method: "enumerate" },
    ArgSpec { name: "weak_cas_failures", kind: ArgKind::Bool, method: "weak_cas_failures" },
    // The former name of `explore_every`, from when the uniform walk was the only explorer;
    // still accepted (after the others, so the list of valid names leads with the new one).
    ArgSpec { name: "walk_every", kind: ArgKind::Int(IntTy::U64), method: "explore_every" },
];

/// Arguments accepted under a former name, which an error listing the valid ones leaves out.
const FORMER_NAMES: &[&str] = &["walk_every"];

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let function: ItemFn = syn::parse2(item)?;
    check_signature(&function)?;
    let (settings, mut checks) = parse_args(args)?;
    // The return type's check stands beside the function too (the function's own use of it
    // is compiled only under `cfg(test)`), so another type fails every build with a message
    // saying what a test may return.
    if let ReturnType::Type(_, ty) = &function.sig.output {
        checks.push(quote_spanned! { ty.span() =>
            const _: fn() = || {
                fn returns<T: ::pctvb::__private::TestOutput>() {}
                returns::<#ty>();
            };
        });
    }

    let ItemFn { attrs, vis, sig, block } = function;
    // The compile-time checks stand beside the function, not in it: a `#[test]` function is
    // compiled only under `cfg(test)`, and a misspelt name must fail every build that sees it.
    let cfgs = attrs.iter().filter(|a| a.path().is_ident("cfg"));
    let cfgs = quote! { #(#cfgs)* };
    let name = &sig.ident;
    // An async body runs under `pctvb::future::block_on` on the test body's logical thread.
    let body = match (&sig.output, sig.asyncness.is_some()) {
        (ReturnType::Default, false) => quote! { || #block },
        (ReturnType::Default, true) => quote! {
            || {
                async fn body() #block
                ::pctvb::future::block_on(body())
            }
        },
        (ReturnType::Type(_, ty), asyncness) => {
            let (asyncness, call) = if asyncness {
                (quote! { async }, quote! { ::pctvb::future::block_on(body()) })
            } else {
                (quote! {}, quote! { body() })
            };
            quote_spanned! { ty.span() =>
                || {
                    #asyncness fn body() -> #ty #block
                    ::pctvb::__private::TestOutput::check(#call);
                }
            }
        }
    };
    let target = CargoTarget::from_build(
        |name| std::env::var(name).ok(),
        &std::env::args().collect::<Vec<_>>(),
    );
    let CargoTarget { package, target, features, rustflags } = target;
    Ok(quote! {
        #(#cfgs #checks)*
        #[::core::prelude::v1::test]
        #(#attrs)*
        #vis fn #name() {
            let config = ::pctvb::Config::new()
                .name(::core::concat!(::core::module_path!(), "::", ::core::stringify!(#name)))
                .__cargo_target(::pctvb::__private::CargoTarget {
                    package: #package,
                    target: #target,
                    features: #features,
                    rustflags: #rustflags,
                    release: !::core::cfg!(debug_assertions),
                    manifest_dir: ::core::env!("CARGO_MANIFEST_DIR"),
                })
                .default_regressions()
                #(#settings)*;
            ::pctvb::__private::run_test(config, #body);
        }
    })
}

/// How the crate being compiled is built, as the replay line needs it (`pctvb::replay::
/// CargoTarget`): read at expansion time from what cargo hands rustc (a proc macro runs inside
/// rustc, so it sees rustc's environment and arguments). Cargo sets `CARGO_PKG_NAME`,
/// `CARGO_CRATE_NAME`, `CARGO_BIN_NAME` (binaries) and `CARGO_TARGET_TMPDIR` (integration
/// tests and benches) for rustc; the enabled features are rustc's `--cfg feature="..."`
/// arguments; `RUSTFLAGS` is cargo's environment, which rustc inherits (flags from
/// `.cargo/config.toml` are not in it, and need not be: they apply again). A target's name,
/// which cargo does not hand rustc, is its manifest entry's when `CARGO_MANIFEST_DIR/Cargo.toml`
/// declares it ([`declared_target`]), else its file's stem. Whatever is
/// unknown (outside cargo, in an IDE's macro server) is left empty.
#[derive(Debug, Default, PartialEq)]
struct CargoTarget {
    package: String,
    target: String,
    features: String,
    rustflags: String,
}

impl CargoTarget {
    fn from_build(env: impl Fn(&str) -> Option<String>, rustc_args: &[String]) -> CargoTarget {
        let package = env("CARGO_PKG_NAME").unwrap_or_default();
        if package.is_empty() {
            return CargoTarget::default();
        }
        let crate_name = env("CARGO_CRATE_NAME").unwrap_or_default();
        let source = rustc_args.iter().skip(1).find(|a| a.ends_with(".rs")).map(String::as_str);
        // A target's name is its file's stem (its directory's, for `name/main.rs`) unless
        // the manifest renames it; rustc only sees the crate name (`-` made `_`).
        let target_name = || {
            let path = std::path::Path::new(source.unwrap_or(""));
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            let stem = match stem {
                "main" => path.parent().and_then(|p| p.file_name()).and_then(|s| s.to_str()),
                other => Some(other),
            };
            match stem {
                Some(s) if s.replace('-', "_") == crate_name => s.to_string(),
                _ => crate_name.clone(),
            }
        };
        let in_dir = |dir: &str| {
            source.is_some_and(|s| {
                s.starts_with(&format!("{dir}/")) || s.contains(&format!("/{dir}/"))
            })
        };
        let guess = if in_dir("examples") {
            Some("example")
        } else if in_dir("benches") {
            Some("bench")
        } else if env("CARGO_TARGET_TMPDIR").is_some() {
            Some("test")
        } else {
            None
        };
        // A `[[test]]`, `[[bench]]` or `[[example]]` entry of the manifest may rename the
        // target (`name = "my-test"`, `path = "tests/other/x.rs"`): rustc then sees neither
        // the name nor a file stem that gives it, so the manifest says which it is. Read
        // here, at compile time: a change of the entry renames the crate or moves its
        // source, so cargo compiles it again.
        let declared = env("CARGO_MANIFEST_DIR").filter(|d| !d.is_empty()).and_then(|dir| {
            let dir = std::path::Path::new(&dir);
            let text = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
            let source = std::path::absolute(source?).ok()?;
            let is_source = |path: &str| same_path(&dir.join(path), &source);
            declared_target(&text, &crate_name, guess, is_source)
        });
        let target = if let Some(bin) = env("CARGO_BIN_NAME") {
            format!("--bin {bin}")
        } else if let Some((kind, name)) = declared {
            format!("--{kind} {name}")
        } else if let Some(kind) = guess {
            format!("--{kind} {}", target_name())
        } else {
            "--lib".to_string()
        };
        let mut features: Vec<String> = rustc_args
            .windows(2)
            .filter(|w| w[0] == "--cfg")
            .filter_map(|w| w[1].strip_prefix("feature=\"")?.strip_suffix('"').map(String::from))
            .collect();
        features.sort();
        features.dedup();
        let features = match features.iter().position(|f| f == "default") {
            _ if features.is_empty() => String::new(),
            Some(i) => {
                features.remove(i);
                match features.is_empty() {
                    true => String::new(),
                    false => format!("--features {}", features.join(",")),
                }
            }
            None => format!("--no-default-features --features {}", features.join(",")),
        };
        let rustflags = match env("CARGO_ENCODED_RUSTFLAGS") {
            Some(encoded) if !encoded.is_empty() => {
                encoded.split('\x1f').collect::<Vec<_>>().join(" ")
            }
            _ => env("RUSTFLAGS").unwrap_or_default().trim().to_string(),
        };
        CargoTarget { package, target, features, rustflags }
    }
}

/// The target a package manifest (`text`) declares for the crate being compiled: the
/// `[[test]]`, `[[bench]]` or `[[example]]` entry whose `path` is the crate's source file
/// (`is_source`), else the one whose `name`, with `-` as `_`, is the crate name (rustc's
/// `--crate-name`), of the kind the source's place suggests (`guess`) when there are several;
/// as `(kind, name)`. `None` when no entry matches (a target cargo found by itself, named
/// after its file): the caller's file-stem rule then applies.
///
/// A small scan, not a TOML parser (pctvb's macros depend on none): it reads the entries'
/// headers and their `name` and `path` strings, and nothing else of the file; an entry
/// written as an inline table (`test = [{ ... }]`) is not seen.
fn declared_target(
    text: &str,
    crate_name: &str,
    guess: Option<&'static str>,
    is_source: impl Fn(&str) -> bool,
) -> Option<(&'static str, String)> {
    let entries = manifest_targets(text);
    let by_path = entries.iter().find(|e| e.path.as_deref().is_some_and(&is_source));
    if let Some(ManifestTarget { kind, name: Some(name), .. }) = by_path {
        return Some((kind, name.clone()));
    }
    // By name only where the source's place says the crate is a target of these kinds: a
    // library's unit tests are never a `[[test]]` entry of the same name.
    guess?;
    let named: Vec<&ManifestTarget> = entries
        .iter()
        .filter(|e| e.name.as_deref().is_some_and(|n| n.replace('-', "_") == crate_name))
        .collect();
    let best = named.iter().find(|e| Some(e.kind) == guess).or(named.first())?;
    Some((best.kind, best.name.clone()?))
}

/// One `[[test]]`, `[[bench]]` or `[[example]]` entry of a manifest.
#[derive(Debug, PartialEq)]
struct ManifestTarget {
    /// `test`, `bench` or `example`, as cargo's `--test` etc. spell it.
    kind: &'static str,
    name: Option<String>,
    path: Option<String>,
}

/// The `[[test]]`, `[[bench]]` and `[[example]]` entries of manifest `text`, with the `name`
/// and `path` keys given in them, line by line: a header starts an entry (another table's
/// ends it), and a `key = "string"` line inside one sets the key (basic or literal string;
/// comments and other values skipped; multi-line strings stepped over).
fn manifest_targets(text: &str) -> Vec<ManifestTarget> {
    let mut entries: Vec<ManifestTarget> = Vec::new();
    let mut current = false;
    let mut in_multiline: Option<&str> = None;
    for line in text.lines() {
        if let Some(delimiter) = in_multiline {
            if line.contains(delimiter) {
                in_multiline = None;
            }
            continue;
        }
        let line = line.trim();
        if let Some(header) = line.strip_prefix("[[") {
            let header = header.split("]]").next().unwrap_or("").trim();
            let kind = match header.trim_matches('"') {
                "test" => Some("test"),
                "bench" => Some("bench"),
                "example" => Some("example"),
                _ => None,
            };
            current = kind.is_some();
            if let Some(kind) = kind {
                entries.push(ManifestTarget { kind, name: None, path: None });
            }
            continue;
        }
        if line.starts_with('[') {
            current = false;
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        let value = value.trim();
        for delimiter in ["\"\"\"", "'''"] {
            if let Some(rest) = value.strip_prefix(delimiter) {
                if !rest.contains(delimiter) {
                    in_multiline = Some(delimiter);
                }
            }
        }
        if !current || in_multiline.is_some() {
            continue;
        }
        let key = key.trim().trim_matches(|c| c == '"' || c == '\'');
        let (Some(entry), Some(value)) = (entries.last_mut(), toml_string(value)) else {
            continue;
        };
        match key {
            "name" => entry.name = Some(value),
            "path" => entry.path = Some(value),
            _ => {}
        }
    }
    entries
}

/// The string a TOML value starts with: `"basic"` (with its one-letter escapes; a `\u`
/// escape is kept as written, so such a value matches nothing) or `'literal'`.
fn toml_string(value: &str) -> Option<String> {
    if let Some(rest) = value.strip_prefix('\'') {
        return rest.split_once('\'').map(|(s, _)| s.to_string());
    }
    let rest = value.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'u' | 'U' => out.push_str("\\u"),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

/// Whether two absolute paths name the same file: the same after resolving `.` and `..`
/// lexically (both come from cargo, which spells the package's directory one way), or the
/// same file on disk.
fn same_path(a: &std::path::Path, b: &std::path::Path) -> bool {
    fn lexical(p: &std::path::Path) -> std::path::PathBuf {
        let mut out = std::path::PathBuf::new();
        for part in p.components() {
            match part {
                std::path::Component::CurDir => {}
                std::path::Component::ParentDir => {
                    out.pop();
                }
                other => out.push(other),
            }
        }
        out
    }
    lexical(a) == lexical(b)
        || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

fn check_signature(function: &ItemFn) -> syn::Result<()> {
    let sig = &function.sig;
    if !sig.inputs.is_empty() {
        return Err(syn::Error::new(
            sig.inputs.span(),
            "#[pctvb::test] functions take no arguments",
        ));
    }
    if !sig.generics.params.is_empty() {
        return Err(syn::Error::new(
            sig.generics.span(),
            "#[pctvb::test] functions cannot be generic",
        ));
    }
    Ok(())
}

/// Parses `name = literal, ...` into `Config` builder calls, rejecting unknown names, wrong
/// literal types, duplicates and bad values with errors spanned on the offending tokens; also
/// returns the items that check, at compile time, what only pctvb can (the strategy name).
fn parse_args(args: TokenStream) -> syn::Result<(Vec<TokenStream>, Vec<TokenStream>)> {
    let metas = Punctuated::<syn::Meta, Token![,]>::parse_terminated.parse2(args)?;
    let mut parsed = Vec::new();
    for meta in metas {
        match meta {
            syn::Meta::NameValue(nv) => parsed.push(nv),
            other => {
                let name = other.path().to_token_stream().to_string().replace(' ', "");
                let example = match name.as_str() {
                    "regressions" => "regressions = false",
                    "strategy" => "strategy = \"pct\"",
                    "confidence" => "confidence = 0.99",
                    _ => "iterations = 1000",
                };
                return Err(syn::Error::new_spanned(
                    other,
                    format!("`{name}` needs a value, as in `{example}`"),
                ));
            }
        }
    }
    let mut seen: Vec<String> = Vec::new();
    let mut calls = Vec::new();
    let mut checks = Vec::new();
    for arg in parsed {
        let key = arg.path.get_ident().map(|i| i.to_string()).ok_or_else(|| {
            syn::Error::new_spanned(&arg.path, "expected an argument name such as `iterations`")
        })?;
        let spec = ARGS.iter().find(|s| s.name == key).ok_or_else(|| {
            // Former names stay accepted but are not suggested.
            let names: Vec<&str> =
                ARGS.iter().map(|s| s.name).filter(|n| !FORMER_NAMES.contains(n)).collect();
            syn::Error::new(
                arg.path.span(),
                format!(
                    "unknown #[pctvb::test] argument `{key}`; expected one of: {}",
                    names.join(", ")
                ),
            )
        })?;
        if seen.contains(&key) {
            return Err(syn::Error::new(arg.path.span(), format!("`{key}` is given twice")));
        }
        let same =
            seen.iter().find(|k| ARGS.iter().any(|s| s.name == **k && s.method == spec.method));
        if let Some(other) = same {
            return Err(syn::Error::new(
                arg.path.span(),
                format!("`{key}` and `{other}` are the same setting; give one (`{}`)", spec.method),
            ));
        }
        if (key == "confidence" && seen.iter().any(|k| k == "iterations"))
            || (key == "iterations" && seen.iter().any(|k| k == "confidence"))
        {
            return Err(syn::Error::new(
                arg.path.span(),
                "give either `iterations` (the report says which confidence they reach) or \
                 `confidence` (pctvb computes the iterations), not both",
            ));
        }
        seen.push(key);
        calls.push(setting(spec, &arg.value, &mut checks)?);
    }
    Ok((calls, checks))
}

/// The builder call for one argument; pushes to `checks` the compile-time checks it needs.
fn setting(
    spec: &ArgSpec,
    value: &Expr,
    checks: &mut Vec<TokenStream>,
) -> syn::Result<TokenStream> {
    let method = syn::Ident::new(spec.method, Span::call_site());
    let lit = match value {
        Expr::Lit(ExprLit { lit, .. }) => lit,
        Expr::Path(_) if spec.kind == ArgKind::Strategy => {
            return Err(syn::Error::new_spanned(
                value,
                format!(
                    "`{0}` takes a string, e.g. `{0} = \"{1}\"`",
                    spec.name,
                    example_name(spec, "pct")
                ),
            ))
        }
        Expr::Unary(u)
            if matches!(u.op, syn::UnOp::Neg(_)) && matches!(spec.kind, ArgKind::Int(_)) =>
        {
            return Err(syn::Error::new_spanned(
                value,
                format!("`{}` takes a non-negative integer", spec.name),
            ))
        }
        other => {
            return Err(syn::Error::new_spanned(
                other,
                format!("`{}` takes a literal, not an expression or a constant", spec.name),
            ))
        }
    };
    match (spec.kind, lit) {
        (ArgKind::Int(ty), Lit::Int(i)) => {
            let min = u128::from(min_value(spec.name));
            let range = || {
                let ty_name = match ty {
                    IntTy::Usize => format!("usize; at most {} on 32-bit targets", u32::MAX),
                    _ => ty.name().to_string(),
                };
                syn::Error::new(
                    i.span(),
                    format!(
                        "`{}` takes an integer from {min} to {} ({ty_name})",
                        spec.name,
                        ty.max()
                    ),
                )
            };
            // Parsed wider than any parameter, then checked against the parameter's own type:
            // a value that does not fit is an error here, never a wrapped one at run time.
            let v: u128 = i.base10_parse().map_err(|_| range())?;
            if v > ty.max() {
                return Err(range());
            }
            if let Some((max, why)) = max_value(spec.name).filter(|&(max, _)| v > max) {
                let error = format!("`{}` must be at most {max}{why}", spec.name);
                return Err(syn::Error::new(i.span(), error));
            }
            if v < min {
                let why = match spec.name {
                    "stack_size" => {
                        " bytes (64 KiB, pctvb's minimum stack: its own start of a logical thread \
                         needs about 12 KiB, and a smaller stack would end the test process with a \
                         stack overflow)"
                    }
                    _ => "",
                };
                let error = format!("`{}` must be at least {min}{why}", spec.name);
                return Err(syn::Error::new(i.span(), error));
            }
            let v = v as u64;
            Ok(match ty {
                IntTy::U32 => {
                    let v = proc_macro2::Literal::u32_suffixed(v as u32);
                    quote! { .#method(#v) }
                }
                IntTy::U64 => {
                    let v = proc_macro2::Literal::u64_suffixed(v);
                    quote! { .#method(#v) }
                }
                // A stack size above i32::MAX may be above a 32-bit target's isize::MAX, the
                // largest stack (pctvb's MAX_STACK_SIZE): the target decides, as below.
                IntTy::Usize if spec.name == "stack_size" && v > i32::MAX as u64 => {
                    let wide = proc_macro2::Literal::u64_suffixed(v);
                    let message = format!(
                        "`stack_size` = {v} is larger than any stack can be on this target: it \
                         takes at most isize::MAX bytes ({} on 32-bit targets)",
                        i32::MAX
                    );
                    checks.push(quote_spanned! { i.span() =>
                        const _: () = if #wide as u128 > ::core::primitive::isize::MAX as u128 {
                            ::core::panic!(#message)
                        };
                    });
                    quote! { .#method(#wide as ::core::primitive::usize) }
                }
                IntTy::Usize if v <= u64::from(u32::MAX) => {
                    let v = proc_macro2::Literal::usize_suffixed(v as usize);
                    quote! { .#method(#v) }
                }
                IntTy::Usize => {
                    // Above u32::MAX the target's usize decides (this macro runs on the host,
                    // whose width may differ): a `const` beside the test fails the build, at
                    // the value, on a target where it does not fit.
                    let wide = proc_macro2::Literal::u64_suffixed(v);
                    let message = format!(
                        "`{}` = {v} does not fit this target's usize: it takes an integer \
                         from {min} to usize::MAX ({} on 32-bit targets)",
                        spec.name,
                        u32::MAX
                    );
                    checks.push(quote_spanned! { i.span() =>
                        const _: () = if #wide as u128 > ::core::primitive::usize::MAX as u128 {
                            ::core::panic!(#message)
                        };
                    });
                    quote! { .#method(#wide as ::core::primitive::usize) }
                }
            })
        }
        (ArgKind::Strategy, Lit::Str(s)) => {
            // The name is checked by pctvb, which owns the list of strategies (this crate
            // cannot depend on it, so it keeps no copy): a `const` beside the test function
            // panics at compile time with pctvb's message for an unknown name (naming it and
            // listing the valid ones), which is a compile error spanned on the string.
            checks.push(quote_spanned! { s.span() =>
                const _: () = if let ::core::result::Result::Err(unknown) =
                    ::pctvb::StrategyKind::__named(#s)
                {
                    ::core::panic!("{}", unknown.as_str())
                };
            });
            Ok(quote_spanned! { s.span() =>
                .#method(::core::option::Option::expect(
                    ::pctvb::StrategyKind::from_name(#s),
                    "a strategy name checked at compile time",
                ))
            })
        }
        (ArgKind::Float, Lit::Float(f)) => {
            let v: f64 = f.base10_parse()?;
            if !(v > 0.0 && v < 1.0) {
                return Err(syn::Error::new(
                    f.span(),
                    format!("`{}` must be strictly between 0 and 1, e.g. 0.99", spec.name),
                ));
            }
            let v = proc_macro2::Literal::f64_unsuffixed(v);
            Ok(quote! { .#method(#v) })
        }
        (ArgKind::Regressions, Lit::Bool(b)) => Ok(if b.value {
            quote! { .default_regressions() }
        } else {
            quote! { .no_regressions() }
        }),
        (ArgKind::Regressions, Lit::Str(path)) => Ok(quote! { .regressions(#path) }),
        (ArgKind::Bool, Lit::Bool(b)) => Ok(quote! { .#method(#b) }),
        (ArgKind::Bool, other) => Err(syn::Error::new(
            other.span(),
            format!("`{}` takes `true` or `false`, e.g. `{} = false`", spec.name, spec.name),
        )),
        (ArgKind::Duration, Lit::Str(text)) => {
            let seconds = parse_duration(&text.value()).map_err(|why| {
                syn::Error::new(
                    text.span(),
                    format!(
                        "`time = {:?}` {why}: use e.g. \"30s\", \"500ms\", \"2m\"",
                        text.value()
                    ),
                )
            })?;
            Ok(quote! { .#method(::core::time::Duration::from_secs_f64(#seconds)) })
        }
        (ArgKind::Duration, other) => Err(syn::Error::new(
            other.span(),
            "`time` takes a duration string, e.g. `time = \"30s\"`",
        )),
        (ArgKind::Regressions, other) => Err(syn::Error::new(
            other.span(),
            "`regressions` takes `false` (no regression file), `true` (the default file) or a \
             path string",
        )),
        (ArgKind::Float, other) => Err(syn::Error::new(
            other.span(),
            format!("`{}` takes a number between 0 and 1, e.g. `{} = 0.99`", spec.name, spec.name),
        )),
        (ArgKind::Int(_), other) => Err(syn::Error::new(
            other.span(),
            format!("`{}` takes an integer, e.g. `{} = 1000`", spec.name, spec.name),
        )),
        (ArgKind::Strategy, other) => Err(syn::Error::new(
            other.span(),
            format!(
                "`{0}` takes a string, e.g. `{0} = \"{1}\"`",
                spec.name,
                example_name(spec, "random")
            ),
        )),
    }
}

/// The smallest value integer argument `name` takes: 0 for those where it means "none" or
/// "off" (the seed is any number), pctvb's `MIN_STACK_SIZE` for `stack_size` (this crate
/// cannot depend on pctvb; `tests/attribute.rs` checks the two agree), 1 for the others.
fn min_value(name: &str) -> u64 {
    match name {
        "seed" | "minimize_runs" | "explore_every" | "walk_every" => 0,
        "stack_size" => 64 * 1024,
        _ => 1,
    }
}

/// The largest value integer argument `name` takes below its type's, with why: pctvb's
/// `MAX_DEPTH` for `depth` and its `MAX_STACK_SIZE` (`isize::MAX`, on a 64-bit target; the
/// expansion checks the target's) for `stack_size` (this crate cannot depend on pctvb;
/// `tests/attribute.rs` checks they agree). Both were taken up to the type's maximum, and a
/// depth of 4294967295 ended the test binary out of memory, a stack size of usize::MAX failed
/// the test without a message.
fn max_value(name: &str) -> Option<(u128, &'static str)> {
    match name {
        "depth" => Some((
            100,
            " (pctvb's largest depth: real bugs need depth 2 or 3; beyond 100 no run reaches any \
             confidence, and each execution's draws grow with the depth)",
        )),
        "stack_size" => Some((
            i64::MAX as u128,
            " bytes (isize::MAX on a 64-bit target: no stack, as no mapping, can be larger)",
        )),
        _ => None,
    }
}

/// A strategy name to show in an error about argument `spec`: `strategy`'s `example`, and
/// for `explorer` one that explores.
fn example_name(spec: &ArgSpec, example: &'static str) -> &'static str {
    match spec.name {
        "explorer" => "uniform",
        _ => example,
    }
}

/// A duration as `PCTVB_TIME` takes it (pctvb's `runner::env::parse_duration`; this crate
/// cannot depend on pctvb): a positive number with a unit `ms`, `s`, `m` or `h` (no unit:
/// seconds), in seconds.
fn parse_duration(text: &str) -> Result<f64, &'static str> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().map_err(|_| "is not a duration")?;
    let seconds = match unit.trim() {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err("has an unknown unit"),
    };
    if !(seconds > 0.0 && seconds.is_finite() && seconds < 1e9) {
        return Err("must be a positive duration");
    }
    Ok(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(args: &str) -> String {
        let args: TokenStream = args.parse().unwrap();
        let item: TokenStream = "fn t() {}".parse().unwrap();
        expand(args, item).unwrap_err().to_string()
    }

    #[test]
    fn unknown_argument_lists_the_valid_ones() {
        let e = error("iteratons = 5");
        assert!(e.contains("unknown #[pctvb::test] argument `iteratons`"), "{e}");
        assert!(e.contains("iterations, seed"), "{e}");
        assert!(e.contains("explore_every, explorer") && !e.contains("walk_every"), "{e}");
    }

    #[test]
    fn wrong_literal_types_are_rejected() {
        assert!(error("iterations = \"many\"").contains("`iterations` takes an integer"));
        assert!(error("strategy = 3").contains("`strategy` takes a string"));
        assert!(error("seed = x").contains("`seed` takes a literal"));
    }

    #[test]
    fn bad_values_and_duplicates_are_rejected() {
        assert!(error("iterations = 0").contains("at least 1"));
        assert!(error("seed = 1, seed = 2").contains("given twice"));
    }

    #[test]
    fn valid_arguments_expand_to_config_calls() {
        let args: TokenStream =
            "iterations = 10, seed = 0x2a, strategy = \"random\"".parse().unwrap();
        let item: TokenStream = "fn my_test() { assert!(true) }".parse().unwrap();
        let out = expand(args, item).unwrap().to_string();
        assert!(out.contains(". iterations (10u64)"), "{out}");
        assert!(out.contains(". seed (42u64)"), "{out}");
        assert!(out.contains("StrategyKind :: from_name (\"random\")"), "{out}");
        assert!(out.contains("run_test"), "{out}");
    }

    #[test]
    fn enumerate_takes_a_bool() {
        let args: TokenStream = "confidence = 0.99, enumerate = false".parse().unwrap();
        let out = expand(args, "fn t() {}".parse().unwrap()).unwrap().to_string();
        assert!(out.contains(". enumerate (false)"), "{out}");
        let e = error("enumerate = 0");
        assert!(e.contains("`enumerate` takes `true` or `false`"), "{e}");
    }

    #[test]
    fn guarantee_arguments_expand_to_config_calls() {
        let args: TokenStream =
            "confidence = 0.99, depth = 3, vars = 2, threads = 2, profile_runs = 5, \
             explore_every = 0, explorer = \"uniform\""
                .parse()
                .unwrap();
        let out = expand(args, "fn t() {}".parse().unwrap()).unwrap().to_string();
        assert!(out.contains(". confidence (0.99)"), "{out}");
        assert!(out.contains(". depth (3u32)"), "{out}");
        assert!(out.contains(". vars (2u32)"), "{out}");
        assert!(out.contains(". threads (2u32)"), "{out}");
        assert!(out.contains(". profile_runs (5u64)"), "{out}");
        assert!(out.contains(". explore_every (0u64)"), "{out}");
        assert!(out.contains(". explorer (:: core :: option :: Option :: expect"), "{out}");
        assert!(out.contains("StrategyKind :: __named (\"uniform\")"), "{out}");
    }

    #[test]
    fn walk_every_is_still_accepted_as_explore_every() {
        let args: TokenStream = "depth = 2, walk_every = 3".parse().unwrap();
        let out = expand(args, "fn t() {}".parse().unwrap()).unwrap().to_string();
        assert!(out.contains(". explore_every (3u64)"), "{out}");
        let e = error("walk_every = 3, explore_every = 2");
        assert!(e.contains("`explore_every` and `walk_every` are the same setting"), "{e}");
    }

    #[test]
    fn a_strategy_name_is_checked_by_pctvb_at_compile_time() {
        // Any string passes the macro; the `const` it emits beside the test asks pctvb's
        // registry, whose message for an unknown name fails the build (compile-tests/).
        for name in ["pct", "combined", "fastest"] {
            let args: TokenStream = format!("strategy = \"{name}\"").parse().unwrap();
            let out = expand(args, "fn t() {}".parse().unwrap()).unwrap().to_string();
            let named = format!("StrategyKind :: __named (\"{name}\")");
            let check = out.find(&named).unwrap_or_else(|| panic!("{out}"));
            assert!(check < out.find("fn t").unwrap(), "the check stands beside the test: {out}");
            assert!(out.contains(&format!("StrategyKind :: from_name (\"{name}\")")), "{out}");
        }
        let args: TokenStream = "strategy = \"pct\"".parse().unwrap();
        let out = expand(args, "#[cfg(unix)] fn t() {}".parse().unwrap()).unwrap().to_string();
        assert!(out.starts_with("# [cfg (unix)] const _"), "the check keeps the cfg: {out}");
    }

    #[test]
    fn integers_are_checked_against_their_parameter_type() {
        // u32 parameters: 2^32 + 1 used to become 1 through `as _`.
        for name in ["depth", "vars", "threads"] {
            let e = error(&format!("{name} = 4294967297"));
            assert!(
                e.contains(&format!("`{name}` takes an integer from 1 to 4294967295 (u32)")),
                "{e}"
            );
            if name == "depth" {
                continue; // at most pctvb's MAX_DEPTH: `limits_below_the_type_are_checked`
            }
            let args: TokenStream = format!("{name} = 4294967295").parse().unwrap();
            let out = expand(args, "fn t() {}".parse().unwrap()).unwrap().to_string();
            assert!(out.contains(&format!(". {name} (4294967295u32)")), "{out}");
        }
        // u64 parameters.
        for name in ["iterations", "max_steps", "profile_runs"] {
            let e = error(&format!("{name} = 18446744073709551616"));
            assert!(
                e.contains(&format!(
                    "`{name}` takes an integer from 1 to 18446744073709551615 (u64)"
                )),
                "{e}"
            );
        }
        let e = error("minimize_runs = 0x1_0000_0000_0000_0000");
        assert!(e.contains("from 0 to 18446744073709551615 (u64)"), "{e}");
        // Past u128 too: the same message, not a parse error.
        let e = error("seed = 999999999999999999999999999999999999999999");
        assert!(e.contains("`seed` takes an integer from 0 to"), "{e}");
        // usize parameters: at most u64::MAX anywhere; above u32::MAX the target decides.
        for name in ["max_threads", "stack_size"] {
            let e = error(&format!("{name} = 18446744073709551616"));
            assert!(e.contains(&format!("`{name}` takes an integer from")), "{e}");
            assert!(
                e.contains("to 18446744073709551615 (usize; at most 4294967295 on 32-bit targets)"),
                "{e}"
            );
        }
        let e = error("stack_size = 1");
        assert!(e.contains("`stack_size` must be at least 65536 bytes (64 KiB"), "{e}");
        assert!(error("stack_size = 65535").contains("at least 65536"));
        let out = expand("stack_size = 65536".parse().unwrap(), "fn t() {}".parse().unwrap())
            .unwrap()
            .to_string();
        assert!(out.contains(". stack_size (65536usize)"), "{out}");
        let out = expand("max_threads = 64".parse().unwrap(), "fn t() {}".parse().unwrap())
            .unwrap()
            .to_string();
        assert!(out.contains(". max_threads (64usize)"), "{out}");
        assert!(!out.contains("usize :: MAX"), "no target check for a value every usize holds");
        let out = expand("max_threads = 4294967296".parse().unwrap(), "fn t() {}".parse().unwrap())
            .unwrap()
            .to_string();
        let check = out.find("4294967296u64 as u128 > :: core :: primitive :: usize :: MAX");
        assert!(check.is_some_and(|c| c < out.find("fn t").unwrap()), "{out}");
        assert!(out.contains("does not fit this target's usize"), "{out}");
        assert!(
            out.contains(". max_threads (4294967296u64 as :: core :: primitive :: usize)"),
            "{out}"
        );
    }

    /// `depth` above pctvb's `MAX_DEPTH` (4294967295 aborted the test binary, allocating 34 GB
    /// per execution) and `stack_size` above `isize::MAX` (usize::MAX failed the test with no
    /// message) are compile errors; a stack size a 32-bit target's isize may not hold is
    /// checked against the target's.
    #[test]
    fn limits_below_the_type_are_checked() {
        let e = error("depth = 4294967295");
        assert!(e.contains("`depth` must be at most 100 (pctvb's largest depth"), "{e}");
        assert!(error("depth = 101").contains("must be at most 100"));
        let out = expand("depth = 100".parse().unwrap(), "fn t() {}".parse().unwrap())
            .unwrap()
            .to_string();
        assert!(out.contains(". depth (100u32)"), "{out}");
        let e = error("stack_size = 18446744073709551615");
        assert!(e.contains("`stack_size` must be at most 9223372036854775807 bytes"), "{e}");
        assert!(error("stack_size = 9223372036854775808").contains("must be at most"));
        let expanded = |args: &str| {
            expand(args.parse().unwrap(), "fn t() {}".parse().unwrap()).unwrap().to_string()
        };
        let out = expanded("stack_size = 9223372036854775807");
        let check = "9223372036854775807u64 as u128 > :: core :: primitive :: isize :: MAX";
        assert!(out.find(check).is_some_and(|c| c < out.find("fn t").unwrap()), "{out}");
        assert!(out.contains("larger than any stack can be on this target"), "{out}");
        assert!(out.contains(". stack_size (9223372036854775807u64 as :: core :: primitive"));
        // Above i32::MAX only (a 32-bit target's isize::MAX); 2 MiB needs no check.
        assert!(expanded("stack_size = 2147483648").contains("isize :: MAX"));
        assert!(!expanded("stack_size = 2147483647").contains("isize :: MAX"));
        assert!(!expanded("stack_size = 2097152").contains(":: MAX"));
    }

    #[test]
    fn bad_guarantee_arguments_are_rejected() {
        assert!(error("confidence = 1.5").contains("strictly between 0 and 1"));
        assert!(error("confidence = 99").contains("takes a number between 0 and 1"));
        assert!(error("depth = 0").contains("at least 1"));
        assert!(error("iterations = 10, confidence = 0.9").contains("not both"));
    }

    #[test]
    fn the_build_is_captured_for_the_replay_line() {
        let args = |text: &str| text.split(' ').map(String::from).collect::<Vec<_>>();
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        // An integration test with a dash in its name, features and RUSTFLAGS.
        let t = CargoTarget::from_build(
            env(&[
                ("CARGO_PKG_NAME", "bank"),
                ("CARGO_CRATE_NAME", "lost_update"),
                ("CARGO_TARGET_TMPDIR", "/t"),
                ("RUSTFLAGS", " --cfg pctvb "),
            ]),
            &args("rustc --crate-name lost_update --edition=2021 tests/lost-update.rs --cfg feature=\"fast\" --cfg feature=\"default\" --test"),
        );
        assert_eq!(
            t,
            CargoTarget {
                package: "bank".into(),
                target: "--test lost-update".into(),
                features: "--features fast".into(),
                rustflags: "--cfg pctvb".into(),
            }
        );
        // Unit tests of a library built with --no-default-features --features x.
        let t = CargoTarget::from_build(
            env(&[("CARGO_PKG_NAME", "bank"), ("CARGO_CRATE_NAME", "bank")]),
            &args("rustc --crate-name bank bank/src/lib.rs --cfg feature=\"x\" --test"),
        );
        assert_eq!(
            (t.target.as_str(), t.features.as_str()),
            ("--lib", "--no-default-features --features x")
        );
        assert_eq!(t.rustflags, "");
        // A binary; an example; a test in a directory; flags from CARGO_ENCODED_RUSTFLAGS.
        let t = CargoTarget::from_build(
            env(&[("CARGO_PKG_NAME", "p"), ("CARGO_BIN_NAME", "my-server")]),
            &args("rustc src/main.rs --test"),
        );
        assert_eq!(t.target, "--bin my-server");
        let t = CargoTarget::from_build(
            env(&[("CARGO_PKG_NAME", "p"), ("CARGO_CRATE_NAME", "demo")]),
            &args("rustc p/examples/demo.rs --test"),
        );
        assert_eq!(t.target, "--example demo");
        let t = CargoTarget::from_build(
            env(&[
                ("CARGO_PKG_NAME", "p"),
                ("CARGO_CRATE_NAME", "suite"),
                ("CARGO_TARGET_TMPDIR", "/t"),
                ("CARGO_ENCODED_RUSTFLAGS", "--cfg\x1fpctvb"),
            ]),
            &args("rustc tests/suite/main.rs --test"),
        );
        assert_eq!((t.target.as_str(), t.rustflags.as_str()), ("--test suite", "--cfg pctvb"));
        // Outside cargo nothing is known.
        assert_eq!(CargoTarget::from_build(|_| None, &args("x")), CargoTarget::default());
    }

    /// A manifest with renamed, hyphenated and several targets, comments, literal strings,
    /// other tables between the entries and a multi-line string that looks like an entry.
    const MANIFEST: &str = r#"
[package]
name = "probe-front"
description = """
[[test]]
name = "not-an-entry"
"""

[[test]]
name = "my-renamed"   # renamed: the file says nothing of it
path = "tests/other/renamed.rs"
harness = true

[dependencies]
name = "a-dependency-key"

[[test]]
# no path: cargo finds tests/lost-update.rs
name = 'lost-update'

[[bench]]
name = "my-renamed"
path = 'benches/renamed.rs'

[[example]]
path = "demos/walk.rs"
name = "walk-demo"
required-features = [
    "x",
]

[[ "test" ]]
name = "quoted\"name"
"#;

    #[test]
    fn the_manifest_scan_reads_the_target_entries() {
        let entries = manifest_targets(MANIFEST);
        let seen: Vec<(&str, Option<&str>, Option<&str>)> =
            entries.iter().map(|e| (e.kind, e.name.as_deref(), e.path.as_deref())).collect();
        assert_eq!(
            seen,
            [
                ("test", Some("my-renamed"), Some("tests/other/renamed.rs")),
                ("test", Some("lost-update"), None),
                ("bench", Some("my-renamed"), Some("benches/renamed.rs")),
                ("example", Some("walk-demo"), Some("demos/walk.rs")),
                ("test", Some("quoted\"name"), None),
            ]
        );
        assert_eq!(toml_string(r#""a\\b" # c"#).as_deref(), Some("a\\b"));
        assert_eq!(toml_string("'C:\\x'").as_deref(), Some("C:\\x"));
        assert_eq!(toml_string("true"), None);
        assert_eq!(toml_string("\"unterminated"), None);
    }

    #[test]
    fn a_renamed_target_is_found_by_its_path_then_by_its_name() {
        let no_path = |_: &str| false;
        let path_is = |want: &'static str| move |p: &str| p == want;
        // Renamed with a path: rustc's crate name is `my_renamed`, cargo's target
        // `my-renamed`.
        assert_eq!(
            declared_target(MANIFEST, "my_renamed", Some("test"), no_path),
            Some(("test", "my-renamed".to_string()))
        );
        // The same name for a test and a bench: the source's place decides, then its path.
        assert_eq!(
            declared_target(MANIFEST, "my_renamed", Some("bench"), no_path),
            Some(("bench", "my-renamed".to_string()))
        );
        assert_eq!(
            declared_target(MANIFEST, "my_renamed", Some("test"), path_is("benches/renamed.rs")),
            Some(("bench", "my-renamed".to_string()))
        );
        // Hyphenated, without a path.
        assert_eq!(
            declared_target(MANIFEST, "lost_update", Some("test"), no_path),
            Some(("test", "lost-update".to_string()))
        );
        // An example outside examples/: only its path tells (cargo sets no tmpdir for it).
        assert_eq!(
            declared_target(MANIFEST, "walk_demo", None, path_is("demos/walk.rs")),
            Some(("example", "walk-demo".to_string()))
        );
        assert_eq!(declared_target(MANIFEST, "walk_demo", None, no_path), None);
        // Not declared, or a library: the file-stem rule applies.
        assert_eq!(declared_target(MANIFEST, "other", Some("test"), no_path), None);
        assert_eq!(declared_target("[package]\nname = \"x\"\n", "x", Some("test"), no_path), None);
        assert_eq!(declared_target(MANIFEST, "my_renamed", None, no_path), None);
    }

    /// The replay line's target for the probe's `[[test]] name = "my-renamed", path =
    /// "tests/other/renamed.rs"`, from a manifest on disk as cargo hands it: `--test
    /// my-renamed`, which cargo accepts, not `--test my_renamed`.
    #[test]
    fn a_renamed_test_target_is_named_as_the_manifest_names_it() {
        let dir =
            std::env::temp_dir().join(format!("pctvb-macros-manifest-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("tests/other")).unwrap();
        std::fs::write(dir.join("Cargo.toml"), MANIFEST).unwrap();
        let source = dir.join("tests/other/../other/renamed.rs");
        let manifest_dir = dir.to_str().unwrap().to_string();
        let build = |crate_name: &str, source: &std::path::Path| {
            let env = |name: &str| match name {
                "CARGO_PKG_NAME" => Some("probe-front".to_string()),
                "CARGO_CRATE_NAME" => Some(crate_name.to_string()),
                "CARGO_TARGET_TMPDIR" => Some("/t".to_string()),
                "CARGO_MANIFEST_DIR" => Some(manifest_dir.clone()),
                _ => None,
            };
            let args = ["rustc".to_string(), source.to_str().unwrap().to_string()];
            CargoTarget::from_build(env, &args).target
        };
        assert_eq!(build("my_renamed", &source), "--test my-renamed");
        // A test cargo found by itself keeps the file-stem rule.
        assert_eq!(build("plain", &dir.join("tests/plain.rs")), "--test plain");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn time_budgets_are_parsed_at_compile_time() {
        let out = expand("time = \"30s\"".parse().unwrap(), "fn t() {}".parse().unwrap())
            .unwrap()
            .to_string();
        assert!(
            out.contains(". time_budget (:: core :: time :: Duration :: from_secs_f64 (30f64))"),
            "{out}"
        );
        assert!(error("time = \"soon\"").contains("is not a duration"));
        assert!(error("time = \"0s\"").contains("positive"));
        assert!(error("time = \"3 weeks\"").contains("unknown unit"));
        assert!(error("time = 30").contains("takes a duration string"));
        assert_eq!(parse_duration("500ms"), Ok(0.5));
        assert_eq!(parse_duration("2m"), Ok(120.0));
    }

    #[test]
    fn signatures_that_cannot_be_tests_are_rejected() {
        let none = TokenStream::new();
        assert!(expand(none.clone(), "async fn t() {}".parse().unwrap()).is_ok());
        let e =
            expand(none.clone(), "async fn t(x: u8) {}".parse().unwrap()).unwrap_err().to_string();
        assert!(e.contains("take no arguments"));
        let e = expand(none, "fn t(x: u8) {}".parse().unwrap()).unwrap_err().to_string();
        assert!(e.contains("take no arguments"));
    }
}
