//! What the pass produces: the variables it found and, per site, what the site may access.
//!
//! The rest of the macro (hook emission, the site and variable tables) reads only these types.

use std::collections::BTreeSet;

use proc_macro2::Span;

/// Kinds of variables the pass finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VarKind {
    Atomic,
    Mutex,
    RwLock,
    Condvar,
    Barrier,
    Once,
    OnceLock,
    LazyLock,
    Cell,
    Channel,
    /// A heap allocation (`Box::new`, `Arc::new`, `Rc::new`).
    Heap,
    /// A `static` item.
    Static,
}

impl VarKind {
    /// The kind's name, as the run time's `StaticVarKind` variant spells it: the emitted variable
    /// table names the variant with it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            VarKind::Atomic => "Atomic",
            VarKind::Mutex => "Mutex",
            VarKind::RwLock => "RwLock",
            VarKind::Condvar => "Condvar",
            VarKind::Barrier => "Barrier",
            VarKind::Once => "Once",
            VarKind::OnceLock => "OnceLock",
            VarKind::LazyLock => "LazyLock",
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
    /// Per site id (as numbered by [`sites::number`](super::sites::number)).
    pub(crate) may: Vec<May>,
}
