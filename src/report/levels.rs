//! What a systematic search covered: per `(v, t, c)` level, the executions run, the schedules
//! pruned, and whether the level was exhausted; and the statement of a passing search.

use std::fmt;

pub use crate::schedulers::{LevelStats, OrderSet};

/// The result of a systematic search ([`crate::StrategyKind::Systematic`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SystematicReport {
    /// Most preemptions searched (`c`).
    pub max_preemptions: u32,
    /// Most variables searched (`v`).
    pub max_vars: u32,
    /// Thread bound of the priority orders (`t`).
    pub max_threads: u32,
    /// Whether happens-before pruning was on.
    pub hb_pruning: bool,
    /// Threads measured by profiling (`n`), the ones the priority orders order.
    pub threads: usize,
    /// The shared variables in search order (`site#iteration`); `Q` is their number.
    pub variables: Vec<String>,
    /// The priority orders enumerated.
    pub orders: Option<OrderSet>,
    /// Every level started, in search order.
    pub levels: Vec<LevelStats>,
    /// The level `(v, t, c)` of the first failing execution.
    pub found_at: Option<(u32, u32, u32)>,
    /// Executions before and including the first failing one (profiling excluded).
    pub executions_to_bug: Option<u64>,
    /// Whether every level up to the bounds was exhausted.
    pub complete: bool,
    /// What stopped the search early (a budget), if anything.
    pub stopped_by: Option<String>,
    /// Profiling executions run before the search.
    pub profile_runs: u64,
    /// Remarks (variables that became shared late, more threads than profiled, ...).
    pub notes: Vec<String>,
    /// The shard of the search this run ran (`PCTVB_SHARD=k/m`, `Config::shard`), if any: it
    /// covered only the schedules that start from its share of the initial priority orders.
    pub shard: Option<SearchShard>,
}

/// The share of a systematic search one shard ran: the schedules that start from the initial
/// priority orders whose index is `index - 1` modulo `count`. The shards' schedules are
/// disjoint, and all `count` of them together are the whole search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchShard {
    /// This shard, from 1 (`k` of `PCTVB_SHARD=k/m`).
    pub index: u64,
    /// The shards (`m`).
    pub count: u64,
    /// The initial priority orders this shard searched from.
    pub orders: u64,
}

impl SystematicReport {
    /// `Q`, the number of shared variables searched.
    pub fn shared_variables(&self) -> usize {
        self.variables.len()
    }

    /// Executions of the search (profiling excluded).
    pub fn executions(&self) -> u64 {
        self.levels.iter().map(|l| l.executions).sum()
    }

    /// Work items not run again because the same schedule ran for another variable subset.
    pub fn reused(&self) -> u64 {
        self.levels.iter().map(|l| l.reused).sum()
    }

    /// Schedules pruned by happens-before pruning.
    pub fn pruned(&self) -> u64 {
        self.levels.iter().map(|l| l.pruned).sum()
    }

    /// The last level `(v, t, c)` that was exhausted, in search order.
    pub fn last_completed(&self) -> Option<(u32, u32, u32)> {
        self.levels.iter().rev().find(|l| l.exhausted).map(|l| (l.v, l.t, l.c))
    }

    fn orders_clause(&self) -> String {
        match &self.orders {
            Some(OrderSet::Exhaustive { threads, orders }) => format!(
                "for every priority order of all {threads} threads ({orders} initial orders and \
                 every placement of each preempted thread; exhaustive, no probability caveat)"
            ),
            Some(OrderSet::Random { threads, orders, needed, eps }) if orders >= needed => {
                format!(
                    "for all orders of <= {} threads among {threads} (with probability >= {} \
                     for the {orders} randomized thread-bounding orders, Lemma 4.1)",
                    self.max_threads,
                    1.0 - eps
                )
            }
            Some(OrderSet::Random { threads, orders, needed, .. }) => format!(
                "for {orders} random priority orders of {threads} threads (Lemma 4.1 needs \
                 {}{needed} for <= {} threads: no probability guarantee)",
                // Saturated (a bound near MAX_DEPTH): more than a u64 holds, not u64::MAX.
                if *needed == u64::MAX { "more than " } else { "" },
                self.max_threads
            ),
            None => "before any priority order was run".to_string(),
        }
    }

    /// The initial priority orders of the whole search (every shard's).
    fn all_orders(&self) -> u64 {
        match &self.orders {
            Some(OrderSet::Exhaustive { orders, .. } | OrderSet::Random { orders, .. }) => *orders,
            None => 0,
        }
    }

    /// A shard's share, for its statement: "the schedules that start from ..."
    fn share_clause(&self, shard: &SearchShard) -> String {
        let SearchShard { index: k, count: m, orders } = *shard;
        let all = self.all_orders();
        format!(
            "those that start from the {orders} of the {all} initial priority orders whose \
             index is {} modulo {m}",
            k - 1
        )
    }

    /// What every shard together covers, for a shard's statement.
    fn together_clause(&self, shard: &SearchShard, what: &str) -> String {
        format!(
            "this shard alone does not cover every such schedule: the {} shards together (each \
             run with the same bounds and seed) explore {what}, {}",
            shard.count,
            self.orders_clause()
        )
    }

    /// What the search established, in one sentence: the bug's level, the exhausted bounds,
    /// or the last level completed before a budget stopped it. A shard's statement says it
    /// covered its share, and that the shards together cover the whole search.
    pub fn statement(&self) -> String {
        let q = self.shared_variables();
        let prefix = match &self.shard {
            Some(s) => format!("shard {} of {}: ", s.index, s.count),
            None => String::new(),
        };
        if let Some((v, t, c)) = self.found_at {
            return format!(
                "{prefix}systematic search found the bug at level (v={v}, t={t}, c={c}) after {} \
                 executions: a schedule with {c} {} at accesses to {v} of Q={q} shared \
                 variables",
                self.executions_to_bug.unwrap_or(0),
                if c == 1 { "preemption" } else { "preemptions" }
            );
        }
        let v_reached = self.max_vars.min(q as u32);
        if let Some(shard) = self.shard.as_ref().filter(|s| s.orders == 0) {
            return format!(
                "{prefix}this shard's share of the systematic search is empty: the search starts \
                 from {} initial priority orders, and none has an index that is {} modulo {} \
                 (0 executions); the other shards explore the whole search, {} (use at most {} \
                 shards)",
                self.all_orders(),
                shard.index - 1,
                shard.count,
                self.orders_clause(),
                self.all_orders().max(1)
            );
        }
        if self.complete {
            let c = if v_reached == 0 { 0 } else { self.max_preemptions };
            let schedules = format!(
                "schedules with <= {c} preemptions at accesses to any <= {v_reached} of Q={q} \
                 shared variables"
            );
            // What "preemptions" means here: the search's priority changes, not the report's
            // switches (tests/differential.rs measured the difference; guide section 4).
            let counts = format!(
                "({} executions, {} schedules pruned by happens-before; a preemption is a \
                 priority change of strict-priority scheduling, and a schedule may need more \
                 of them than the switches a failure report counts as preemptions: guide \
                 section 4)",
                self.executions(),
                self.pruned()
            );
            return match &self.shard {
                Some(shard) => format!(
                    "{prefix}exhaustively explored its share of the {schedules}: {} {counts}; {}",
                    self.share_clause(shard),
                    self.together_clause(shard, &format!("all {schedules}"))
                ),
                None => format!(
                    "exhaustively explored all {schedules}, {} {counts}",
                    self.orders_clause()
                ),
            };
        }
        let why = self.stopped_by.as_deref().unwrap_or("the search stopped");
        match (self.last_completed(), &self.shard) {
            (Some((v, _, c)), None) => format!(
                "{why}: exhaustively explored every level up to (v={v}, c={c}): all schedules \
                 with <= {c} preemptions at accesses to any <= {v} of Q={q} shared variables \
                 (and those of every earlier level), {}; later levels were not finished ({} \
                 executions)",
                self.orders_clause(),
                self.executions()
            ),
            (Some((v, _, c)), Some(shard)) => format!(
                "{prefix}{why}: exhaustively explored its share of every level up to (v={v}, \
                 c={c}): of the schedules with <= {c} preemptions at accesses to any <= {v} of \
                 Q={q} shared variables (and those of every earlier level), {}; later levels \
                 were not finished ({} executions); {}",
                self.share_clause(shard),
                self.executions(),
                self.together_clause(shard, "every level all of them completed")
            ),
            (None, None) => format!(
                "{why} before the first level was exhausted (the search was to run {})",
                self.orders_clause()
            ),
            (None, Some(shard)) => format!(
                "{prefix}{why} before the first level of its share was exhausted (its share: {}; \
                 the whole search was to run {})",
                self.share_clause(shard),
                self.orders_clause()
            ),
        }
    }

    /// The per-level table, one line per level.
    pub fn level_table(&self) -> String {
        let mut out = format!(
            "  {:>3} {:>3} {:>3} {:>8} {:>11} {:>8} {:>8}  exhausted\n",
            "v", "t", "c", "subsets", "executions", "reused", "pruned"
        );
        for l in &self.levels {
            out += &format!(
                "  {:>3} {:>3} {:>3} {:>8} {:>11} {:>8} {:>8}  {}\n",
                l.v,
                l.t,
                l.c,
                l.subsets,
                l.executions,
                l.reused,
                l.pruned,
                if l.exhausted { "yes" } else { "no" }
            );
        }
        out.pop();
        out
    }
}

impl fmt::Display for SystematicReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.statement())?;
        write!(f, "{}", self.level_table())?;
        if !self.variables.is_empty() {
            write!(f, "\n  shared variables in search order: {}", self.variables.join(", "))?;
        }
        for note in &self.notes {
            write!(f, "\n  note: {note}")?;
        }
        Ok(())
    }
}
