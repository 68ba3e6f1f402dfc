//! `Barrier`: threads wait until all `n` have arrived; one of them is the leader. The model
//! (and the outside behaviour, std's) is the engine's `RawBarrier`.

use std::fmt;
use std::panic::Location;

use crate::runtime::RawBarrier;

/// A barrier for `n` threads, as `std::sync::Barrier`.
pub struct Barrier {
    raw: RawBarrier,
}

/// What `Barrier::wait` returns.
#[derive(Clone, Copy, Debug)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// True for exactly one thread of each generation: the last to arrive.
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

impl Barrier {
    /// A barrier that releases its waiters when `n` threads have called `wait`.
    #[track_caller]
    pub const fn new(n: usize) -> Barrier {
        Barrier { raw: RawBarrier::new(n) }
    }

    /// Blocks until `n` threads have called `wait` in this generation.
    #[track_caller]
    pub fn wait(&self) -> BarrierWaitResult {
        BarrierWaitResult(self.raw.wait(Location::caller()))
    }
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Barrier@{} {{ n: {} }}", self.raw.site(), self.raw.n())
    }
}
