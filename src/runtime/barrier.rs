//! The model of a barrier: threads wait until `n` have arrived in the current generation; the
//! last to arrive is the leader and releases the others.
//!
//! Outside any execution a barrier is std's (an embedded `std::sync::Barrier`), separate from
//! the per-execution model. This file owns the `ObjectState::Barrier` model only.

use std::panic::Location;

use super::context::with_current;
use super::{BlockedOn, EventKind, Handle, ObjectState};
use crate::vars::VarKind;

/// The engine's part of a `sync::Barrier`.
#[derive(Debug)]
pub(crate) struct RawBarrier {
    handle: Handle,
    n: usize,
    outside: std::sync::Barrier,
}

impl RawBarrier {
    /// A barrier for `n` threads created at the caller's location.
    #[track_caller]
    pub(crate) const fn new(n: usize) -> RawBarrier {
        RawBarrier { handle: Handle::new(), n, outside: std::sync::Barrier::new(n) }
    }

    /// Where it was created.
    pub(crate) fn site(&self) -> &'static Location<'static> {
        self.handle.site()
    }

    /// How many threads it waits for.
    pub(crate) fn n(&self) -> usize {
        self.n
    }

    /// Blocks until `n` threads have called `wait` in this generation; true for the leader.
    pub(crate) fn wait(&self, location: &'static Location<'static>) -> bool {
        let n = self.n;
        with_current(|ex| {
            let Some(ex) = ex else { return self.outside.wait().is_leader() };
            let object = ex.point(&self.handle, VarKind::Barrier, EventKind::BarrierWait, location);
            let (my_generation, leader) = ex.with_state(|st| {
                let me = st.current;
                st.races.release(me, object);
                st.progress();
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
                    st.races.barrier_release(object);
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
                    ex.block(BlockedOn::Barrier(object), None, location);
                }
            }
            ex.with_state(|st| {
                let me = st.current;
                st.races.barrier_leave(me, object)
            });
            leader
        })
    }
}
