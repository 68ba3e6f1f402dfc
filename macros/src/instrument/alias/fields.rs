//! Struct fields, and the struct types the syntax reveals.
//!
//! A field is a node per struct and field name when the struct of the receiver is evident from
//! the syntax (`self` in an impl, a parameter or `let` annotated with the struct, a struct
//! literal); otherwise a read of `x.f` reads the `f` of every struct of the item that has one,
//! plus everything written through receivers of unknown struct.

use syn::{Expr, Pat};

use super::graph::{Key, TOP};
use super::sites;
use super::syntax::type_name;
use super::Analyzer;

impl Analyzer {
    /// Puts ⊤ into the node of every open field (`pub`, or of a struct deriving
    /// `Default`): code outside the item may store anything there, so the sites reading them may
    /// access anything.
    pub(super) fn fields_top(&mut self) {
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
    pub(super) fn field_read(&mut self, ty: Option<String>, f: &str) -> usize {
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

    /// Whether the item's struct `ty` declares a named field `f`. A field access is
    /// keyed by struct only then; otherwise the guessed struct is wrong (a field reached through
    /// another type) and the access falls back to every struct's field of that name.
    pub(super) fn declares(&self, ty: &str, f: &str) -> bool {
        self.decls.structs.get(ty).is_some_and(|fs| fs.iter().any(|(g, _, _)| g == f))
    }

    /// The item's struct an expression's value is (or refers to), when syntax says so.
    pub(super) fn type_of(&self, e: &Expr) -> Option<String> {
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

    /// The item's struct a struct-literal path names (`Stack { .. }`, or `Self { .. }` inside an
    /// impl), or `None` for a struct declared outside the item, whose fields are not keyed by
    /// struct.
    pub(super) fn struct_name(&self, path: &syn::Path) -> Option<String> {
        let last = path.segments.last()?.ident.to_string();
        let name = if last == "Self" { self.impl_ty.clone()? } else { last };
        self.decls.structs.contains_key(&name).then_some(name)
    }

    /// Records the struct type of a local bound by a plain pattern.
    pub(super) fn note_type(&mut self, pat: &Pat, ty: Option<String>) {
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
}
