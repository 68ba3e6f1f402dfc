//! Facts read off the syntax alone, independent of the analysis state: naming conventions,
//! which types may refer to shared state, the struct a type names, and which expressions build
//! new values.

use proc_macro2::Span;
use syn::Expr;

use super::sites;

/// Whether a name is written in upper case (an uppercase letter and no lowercase one): by
/// convention a static or a constant, not a type or an enum variant.
pub(super) fn is_all_caps(s: &str) -> bool {
    s.chars().any(|c| c.is_ascii_uppercase()) && !s.chars().any(|c| c.is_ascii_lowercase())
}

/// Whether a name starts with an uppercase letter: by convention a type, an enum variant or a
/// tuple-struct constructor, whose calls build values instead of running unknown code.
pub(super) fn starts_upper(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_uppercase())
}

/// Whether a value of this type may refer to shared state (anything but numbers, `bool`,
/// `char` and tuples and arrays of them).
pub(super) fn may_refer(ty: &syn::Type) -> bool {
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
pub(super) fn type_name(ty: &syn::Type, self_ty: Option<&str>) -> Option<String> {
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
pub(super) fn constructs(e: &Expr) -> bool {
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

pub(super) trait FuncSpan {
    /// The span of the called function's path: where a variable created by the call is located
    /// (and reported).
    fn func_span(&self) -> Span;
}

impl FuncSpan for syn::ExprCall {
    /// The span of `self.func`.
    fn func_span(&self) -> Span {
        use syn::spanned::Spanned;
        self.func.span()
    }
}
