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
//!   error if their arguments contain an access (the site pass checks), otherwise opaque with
//!   an empty value; what the body of a macro defined outside the item does is not seen.
//!
//! The pass is split by concept:
//! - [`result`]: what the pass produces (variables, and what each site may access);
//! - [`decls`]: the declarations collected before the walk (functions, struct fields, statics,
//!   constants);
//! - [`graph`]: the constraint graph (nodes, points-to sets, subset constraints) and its solver;
//! - [`scopes`]: function scopes and the binding of pattern names to local nodes;
//! - [`fields`]: struct fields, and the struct types the syntax reveals;
//! - [`items`]: the walk over items, functions and statements;
//! - [`exprs`]: the walk over expressions and assignments;
//! - [`calls`]: calls, method calls, macros and marked sites, where variables are created;
//! - [`query`]: from the solved graph to each site's answer;
//! - [`syntax`]: facts about types and expressions read off the syntax alone.

mod calls;
mod decls;
mod exprs;
mod fields;
mod graph;
mod items;
mod query;
mod result;
mod scopes;
mod syntax;
#[cfg(test)]
mod tests;

use std::collections::{BTreeSet, HashMap, HashSet};

use syn::visit::Visit;
use syn::Item;

use super::sites::{self, Site};
use decls::Decls;
use graph::Key;
pub(crate) use result::{Analysis, May, Var, VarKind};

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

/// The state of the pass over one item: the declarations, the constraint graph being built,
/// the variables found, where each site accesses through, and the walk's current context.
struct Analyzer {
    /// The item's functions, struct fields, statics and constants, collected before the walk.
    decls: Decls,
    /// The node of each key ([`Analyzer::node`]); temporaries have keys too, never reused.
    keys: HashMap<Key, usize>,
    /// Per node, the objects it may point to: variable indices and [`graph::TOP`].
    pts: Vec<BTreeSet<usize>>,
    /// (from, to): to ⊇ from.
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
    /// The variables found so far; an index here is also the variable's object id.
    vars: Vec<Var>,
    /// Per site id, the node whose objects the site accesses (its receiver or pointer); `None`
    /// (a site the walk did not reach) makes the site may-access-anything.
    site_node: Vec<Option<usize>>,
    /// Per allocation site id, the heap variable it creates.
    site_var: Vec<Option<usize>>,
    /// The current function's scope number (locals are keyed by it).
    scope: usize,
    /// The scope number the next function gets.
    next_scope: usize,
    /// Names bound so far in the current function scope, one set per open block.
    bound: Vec<HashSet<String>>,
    /// The return node of the current function or closure (`return e` flows into it).
    ret: usize,
    /// How many temporaries were made (the key of the next one).
    temps: usize,
    /// The item's sites, as numbered by [`sites::number`].
    sites: Vec<Site>,
}
