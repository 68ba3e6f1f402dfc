//! `Barrier`: threads wait until all `n` have arrived; one of them is the leader.

use std::fmt;
use std::panic::Location;

use crate::runtime::{with_execution, BlockedOn, EventKind, Handle, ObjectState};
use crate::vars::VarKind;

/// A barrier for `n` threads, as `std::sync::Barrier`.
pub struct Barrier {
    handle: Handle,
    n: usize,
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
        Barrier { handle: Handle::new(), n }
    }

    /// Blocks until `n` threads have called `wait` in this generation.
    #[track_caller]
    pub fn wait(&self) -> BarrierWaitResult {
        let location = Location::caller();
        let n = self.n;
        with_execution("Barrier::wait", |ex| {
            let object = ex.point(&self.handle, VarKind::Barrier, EventKind::BarrierWait, location);
            let (my_generation, leader) = ex.with_state(|st| {
                let ObjectState::Barrier { arrived, generation } =
                    &mut st.objects[object.index()].state
                else {
                    unreachable!("barrier object with non-barrier state")
                };
                *arrived += 1;
                let mine = *generation;
                if *arrived >= n {
                    *arrived = 0;
                    *generation += 1;
                    st.wake_waiters(object);
                    (mine, true)
                } else {
                    (mine, false)
                }
            });
            if !leader {
                loop {
                    let released = ex.with_state(|st| match st.objects[object.index()].state {
                        ObjectState::Barrier { generation, .. } => generation != my_generation,
                        _ => true,
                    });
                    if released {
                        break;
                    }
                    ex.block(BlockedOn::Barrier(object), false, location);
                }
            }
            BarrierWaitResult(leader)
        })
    }
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Barrier@{} {{ n: {} }}", self.handle.site(), self.n)
    }
}
