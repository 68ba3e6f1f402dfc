//! The registry of instrumented items: every item's site and variable tables, registered
//! before `main`, with the global ids they get.

use std::collections::HashMap;
use std::sync::RwLock;

use once_cell::sync::Lazy;

use super::{__rt, StaticVarId};

/// A source location: file, line, column.
pub(super) type SourceKey = (&'static str, u32, u32);

/// The registry of instrumented items.
pub(super) struct Registry {
    pub(super) modules: Vec<&'static __rt::Module>,
    pub(super) var_base: Vec<usize>,
    pub(super) site_base: Vec<usize>,
    /// Creation site -> static variable (primitives and heap allocations).
    pub(super) by_key: HashMap<SourceKey, StaticVarId>,
    /// Site location -> sites there.
    pub(super) sites_at: HashMap<SourceKey, Vec<(usize, usize)>>,
}

impl Registry {
    /// The index of `module` among the registered items.
    pub(super) fn module_index(&self, module: &__rt::Module) -> Option<usize> {
        self.modules.iter().position(|m| std::ptr::eq(*m, module))
    }

    pub(super) fn var_count(&self) -> usize {
        self.modules.iter().map(|m| m.vars.len()).sum()
    }
}

pub(super) static REGISTRY: Lazy<RwLock<Registry>> = Lazy::new(|| {
    RwLock::new(Registry {
        modules: Vec::new(),
        var_base: Vec::new(),
        site_base: Vec::new(),
        by_key: HashMap::new(),
        sites_at: HashMap::new(),
    })
});

pub(super) fn registry() -> std::sync::RwLockReadGuard<'static, Registry> {
    REGISTRY.read().unwrap_or_else(|e| e.into_inner())
}
