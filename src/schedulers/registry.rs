//! What pctvb knows about each strategy, in one place: a [`StrategyInfo`] per strategy, defined
//! in the strategy's own file as its `INFO` constant.
//!
//! The runner, the configuration checks, the guarantee maths and `#[pctvb::test]` ask the
//! description instead of matching on [`StrategyKind`](crate::StrategyKind): its name, the
//! parameters it takes and their defaults, the bound its executions carry, whether it profiles
//! first (a priority strategy), whether it learns from execution 0, whether its executions may
//! run in parallel, and how to build it. `StrategyKind` (the public enum users construct, in
//! `runner/kind.rs`) maps each of its variants to one description and back; that mapping is
//! generated from the one list of strategies there, which also gives the registry's order.
//!
//! # Strategy names at compile time
//!
//! `#[pctvb::test(strategy = "...")]` is expanded by the `pctvb-macros` crate, which cannot
//! depend on pctvb (pctvb depends on it). Instead of a copy of the names in the macro crate,
//! the macro passes the name through and emits a `const` item that calls
//! [`StrategyKind::__named`](crate::StrategyKind::__named), a `const fn` over this registry;
//! for an unknown name the `const` panics with [`UnknownStrategy`]'s message, which names the
//! bad strategy and lists the valid names, and a panic in a `const` is a compile error spanned
//! on the name. So the names exist once, here, and a new strategy is accepted by the attribute
//! without touching the macro crate. (The alternative, a data-only crate both depend on, would
//! hold the names apart from the rest of each strategy's description.)

use std::time::Duration;

use super::Strategy;
use crate::guarantee::BoundKind;

/// Default bug depth of the priority strategies: one preemption (`c = 1`).
pub const DEFAULT_DEPTH: u32 = 2;
/// The largest bug depth a run accepts: `d - 1 = 99` priority changes per execution (the
/// systematic search's preemption bound, at most 99, is checked against it as `c + 1`).
///
/// Real bugs need depth 2 or 3 (the paper's survey), and a depth far beyond that describes no
/// class a run can say anything about: a bug of depth `d` needs its `d - 1` changes at `d - 1`
/// distinct scheduling points (two at one point leave only the last), so every priority
/// strategy's per-execution bound at depth 100 is below `1/99! < 1e-155` (PCT's `1/k^c` with
/// `k >= c`, thread bounding's `1/(t+c)!`), and no number of executions reaches a confidence
/// that rounds above 0. The cost, on the other hand, grows with `d`: each execution of a
/// priority strategy draws `d - 1` change points and priorities, and the systematic search
/// keeps `n + c` priorities for each of up to [`MAX_RANDOM_ORDERS`](super::MAX_RANDOM_ORDERS)
/// random orders and ranks them at every scheduling point. Unchecked, `depth = 4294967295`
/// asked 34 GB of every execution and ended the test binary, and a systematic bound of
/// 100,000 spent 20 s walking empty levels past a 3 s budget. The runner also refuses a
/// depth whose `d - 1` changes exceed [`Config::max_steps`](crate::Config::max_steps), the
/// scheduling points an execution may have.
pub const MAX_DEPTH: u32 = 100;
/// Default variable bound of PCTVB and the combined strategy.
pub const DEFAULT_VARS: u32 = 1;
/// Default thread bound of thread bounding and the combined strategy: two threads and the
/// thread that spawns them (the test body's, usually), which counts (see [`Config::threads`](crate::Config::threads)).
pub const DEFAULT_THREADS: u32 = 3;

/// A numeric parameter a strategy may take; [`Config::depth`](crate::Config::depth),
/// [`Config::vars`](crate::Config::vars) and [`Config::threads`](crate::Config::threads) (and
/// the attribute arguments of the same names) set the ones the strategy takes and are refused
/// by the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Param {
    /// Bug depth `d` (`d - 1` change points), at least 1; set by `depth`.
    Depth,
    /// Preemptions `c`; set by `depth` as `d - 1`.
    Preemptions,
    /// Variable bound `v`; set by `vars`.
    Vars,
    /// Thread bound `t`; set by `threads`.
    Threads,
}

/// A parameter a strategy takes and its default (what `strategy = "name"` starts from).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ParamSpec {
    pub(crate) param: Param,
    pub(crate) default: u32,
}

/// The values of every parameter any strategy takes, named as `StrategyKind`'s fields; a
/// strategy reads those it takes and ignores the others.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct StrategyParams {
    pub(crate) depth: u32,
    pub(crate) preemptions: u32,
    pub(crate) vars: u32,
    pub(crate) threads: u32,
    /// The systematic search's happens-before pruning (not a [`Param`]: on unless a
    /// `StrategyKind` says otherwise).
    pub(crate) hb_pruning: bool,
    /// The systematic search's wall-time budget (not a [`Param`]: none unless a
    /// `StrategyKind` gives one).
    pub(crate) max_time: Option<Duration>,
}

impl StrategyParams {
    /// Before a strategy's defaults are applied: zero bounds, pruning on, no time budget.
    pub(crate) const BASE: StrategyParams = StrategyParams {
        depth: 0,
        preemptions: 0,
        vars: 0,
        threads: 0,
        hb_pruning: true,
        max_time: None,
    };
}

/// Everything pctvb knows about one strategy. Each strategy file defines one as `INFO`.
pub(crate) struct StrategyInfo {
    /// The name of `strategy = "..."` in `#[pctvb::test]` and of reports' strategy kinds.
    pub(crate) name: &'static str,
    /// What a sentence calls it ("the uniform random walk"): the runner's notes name the
    /// strategy that explores beside a priority strategy by it.
    pub(crate) title: &'static str,
    /// The parameters it takes, with defaults.
    pub(crate) params: &'static [ParamSpec],
    /// The per-execution lower bound its executions carry (which formula of
    /// [`crate::guarantee`]), or `None`: no guarantee (the random strategies), or a coverage
    /// statement of its own (the systematic search).
    pub(crate) bound: Option<BoundKind>,
    /// A priority strategy: it profiles first and draws each execution from the counts
    /// measured so far, so its executions run serially, a confidence target is allowed, and
    /// it needs at least one profiling execution.
    pub(crate) priority: bool,
    /// Every execution after the first depends only on execution 0 (the uniform walk learns
    /// its estimates there), so every run, shard and parallel worker runs execution 0 first.
    pub(crate) learns_from_execution_0: bool,
    /// Its executions are independent given the seed (and execution 0), so a run may spread
    /// them over OS threads.
    pub(crate) parallel: bool,
    /// The strategy for these parameter values.
    pub(crate) build: fn(&StrategyParams) -> Box<dyn Strategy>,
}

impl StrategyInfo {
    /// Whether the strategy takes `param`.
    pub(crate) const fn takes(&self, param: Param) -> bool {
        let mut i = 0;
        while i < self.params.len() {
            if self.params[i].param as u8 == param as u8 {
                return true;
            }
            i += 1;
        }
        false
    }

    /// The strategy's default parameter values.
    pub(crate) const fn defaults(&self) -> StrategyParams {
        let mut values = StrategyParams::BASE;
        let mut i = 0;
        while i < self.params.len() {
            let ParamSpec { param, default } = self.params[i];
            match param {
                Param::Depth => values.depth = default,
                Param::Preemptions => values.preemptions = default,
                Param::Vars => values.vars = default,
                Param::Threads => values.threads = default,
            }
            i += 1;
        }
        values
    }

    /// The bug depth `d` searched for with `values`: `depth`, or `preemptions + 1`, or `None`
    /// for a strategy that takes neither.
    pub(crate) fn depth(&self, values: &StrategyParams) -> Option<u32> {
        if self.takes(Param::Depth) {
            Some(values.depth)
        } else if self.takes(Param::Preemptions) {
            // Saturating: `StrategyKind::ThreadBound { preemptions: u32::MAX, .. }` is a value
            // a caller can build, whose depth a u32 does not hold; the runner asks its depth
            // before it refuses it (above MAX_DEPTH).
            Some(values.preemptions.saturating_add(1))
        } else {
            None
        }
    }

    /// Sets `param` to `value` (`Param::Depth` sets `preemptions` to `value - 1` for a strategy
    /// that counts preemptions); false when the strategy does not take it.
    pub(crate) fn set(&self, values: &mut StrategyParams, param: Param, value: u32) -> bool {
        match param {
            Param::Depth if self.takes(Param::Depth) => values.depth = value,
            Param::Depth if self.takes(Param::Preemptions) => {
                values.preemptions = value.saturating_sub(1)
            }
            Param::Vars if self.takes(Param::Vars) => values.vars = value,
            Param::Threads if self.takes(Param::Threads) => values.threads = value,
            _ => return false,
        }
        true
    }
}

/// Whether two strings are equal, in a `const fn`.
pub(crate) const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The message for a strategy name that is not in the registry, built at compile time: it
/// names the bad strategy and lists the valid ones (see the module documentation).
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct UnknownStrategy {
    bytes: [u8; UnknownStrategy::CAPACITY],
    len: usize,
}

impl std::fmt::Debug for UnknownStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl UnknownStrategy {
    const CAPACITY: usize = 512;

    /// `unknown strategy "<name>"; expected one of: <names>`. A name too long to quote whole
    /// is left out.
    pub(crate) const fn new(name: &str, names: &[&StrategyInfo]) -> UnknownStrategy {
        let mut message = UnknownStrategy { bytes: [0; Self::CAPACITY], len: 0 };
        if name.len() <= Self::CAPACITY / 2 {
            message.push("unknown strategy \"");
            message.push(name);
            message.push("\"; expected one of: ");
        } else {
            message.push("unknown strategy; expected one of: ");
        }
        let mut i = 0;
        while i < names.len() {
            if i > 0 {
                message.push(", ");
            }
            message.push(names[i].name);
            i += 1;
        }
        message
    }

    /// Appends whole strings only, so the message stays UTF-8.
    const fn push(&mut self, s: &str) {
        let s = s.as_bytes();
        if self.len + s.len() > Self::CAPACITY {
            return;
        }
        let mut i = 0;
        while i < s.len() {
            self.bytes[self.len + i] = s[i];
            i += 1;
        }
        self.len += s.len();
    }

    /// The message.
    pub const fn as_str(&self) -> &str {
        let (message, _) = self.bytes.split_at(self.len);
        match std::str::from_utf8(message) {
            Ok(message) => message,
            Err(_) => "unknown strategy",
        }
    }
}
