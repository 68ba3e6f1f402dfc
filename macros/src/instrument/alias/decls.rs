//! The declarations collected before the walk: function names (calls are resolved by name),
//! struct fields and whether outside code may write them, statics and constants.
//!
//! The walk needs them up front because a use may come before the declaration in the source
//! (a function calling one defined below it, a struct declared after its impl).

use std::collections::{HashMap, HashSet};

use quote::ToTokens;
use syn::visit::{self, Visit};

use super::syntax::type_name;

/// Declarations collected before the analysis: functions by name, struct fields, statics.
#[derive(Default)]
pub(super) struct Decls {
    pub(super) fns: HashSet<String>,
    /// Field name -> whether some declaration of it is visible outside the item or its values
    /// come from code the pass cannot see (⊤).
    pub(super) fields: HashMap<String, bool>,
    /// Struct name -> its named fields: (field, open, the struct type the field holds if one
    /// of the item's, through references and smart pointers).
    pub(super) structs: HashMap<String, Vec<(String, bool, Option<String>)>>,
    pub(super) statics: HashSet<String>,
    pub(super) top_statics: HashSet<String>,
    pub(super) consts: HashSet<String>,
}

impl<'a> Visit<'a> for Decls {
    /// Records a free function's name: calls of that name reach its parameters and return.
    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        self.fns.insert(f.sig.ident.to_string());
        visit::visit_item_fn(self, f);
    }
    /// Records a method's name: method calls of that name reach its parameters and return
    /// (receiver first), whatever the receiver's type.
    fn visit_impl_item_fn(&mut self, f: &'a syn::ImplItemFn) {
        self.fns.insert(f.sig.ident.to_string());
        visit::visit_impl_item_fn(self, f);
    }
    /// Records a struct's named fields: whether each is open (`pub`, or the struct derives
    /// `Default`, so outside code may build it with any values), and the struct of the item each
    /// field holds, if its type says (for chains like `self.a.b`).
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
    /// Records a static's name: a path of that name reads the static's node.
    fn visit_item_static(&mut self, s: &'a syn::ItemStatic) {
        self.statics.insert(s.ident.to_string());
        visit::visit_item_static(self, s);
    }
    /// Records a const's name: a path of that name reads the const's node.
    fn visit_item_const(&mut self, c: &'a syn::ItemConst) {
        self.consts.insert(c.ident.to_string());
        visit::visit_item_const(self, c);
    }
}
