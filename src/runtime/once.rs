//! The model of one-time initialization (`Once`, `OnceLock`, `LazyLock`): per execution, one
//! thread claims the initialization, the others block until it completes (and `wait`s block
//! until some thread completes it: with none left to, a deadlock); a `OnceLock`'s value
//! belongs to the execution (`ObjectState::Once::value`), so a static is initialized afresh in
//! every execution and no execution sees another's value.
//!
//! Per-execution values live in the execution's object table, which only the OS thread running
//! that execution reaches; they are dropped when the execution ends (leaked if it failed).
//!
//! Outside any execution the objects are std's (`std::sync::Once`, `std::sync::OnceLock`
//! embedded in [`RawOnce`] and [`OnceCell`]), with their own value: a value set outside is not
//! seen inside executions, and the other way round.
//!
//! This file owns the `ObjectState::Once` model; it does not know `LazyLock` (the facade builds
//! it on [`OnceCell`], telling it the variable kind to name it by).

use std::panic::Location;

use super::context::with_current;
use super::object::ErasedValue;
use super::state::State;
use super::{BlockedOn, EventKind, Execution, Handle, ObjectId, ObjectState};
use crate::vars::VarKind;

/// The engine's part of a `sync::Once`.
#[derive(Debug)]
pub(crate) struct RawOnce {
    handle: Handle,
    outside: std::sync::Once,
}

impl RawOnce {
    /// A `Once` created at the caller's location.
    #[track_caller]
    pub(crate) const fn new() -> RawOnce {
        RawOnce { handle: Handle::new(), outside: std::sync::Once::new() }
    }

    /// Where it was created.
    pub(crate) fn site(&self) -> &'static Location<'static> {
        self.handle.site()
    }

    /// Runs `f` unless a `call_once` completed (in this execution, or outside: std's). `f` gets
    /// whether an earlier initializer panicked (poisoning the `Once`); only with `force` (std's
    /// `call_once_force`) does it run then: without, the call panics as std's does.
    pub(crate) fn call_once<F: FnOnce(bool)>(
        &self,
        force: bool,
        f: F,
        location: &'static Location<'static>,
    ) {
        with_current(|ex| match ex {
            Some(ex) => {
                let object = claim_point(ex, &self.handle, VarKind::Once, location);
                match claim(ex, object, force, location) {
                    Claim::Done => {}
                    Claim::Poisoned => panic!("{POISONED}"),
                    Claim::Run { poisoned } => {
                        let guard = Running { ex, object, poison: true };
                        f(poisoned);
                        std::mem::forget(guard);
                        complete(ex, object, None);
                    }
                }
            }
            None if force => self.outside.call_once_force(|state| f(state.is_poisoned())),
            None => self.outside.call_once(|| f(false)),
        })
    }

    /// Blocks until a `call_once` completed (in this execution, or outside: std's
    /// `wait_force` or `wait`). Without `force` a poisoned `Once` (an initializer panicked and
    /// none runs now) makes the call panic, as std's `wait`.
    pub(crate) fn wait(&self, force: bool, location: &'static Location<'static>) {
        with_current(|ex| match ex {
            Some(ex) => {
                if wait(ex, &self.handle, VarKind::Once, !force, location).1 {
                    panic!("{POISONED}")
                }
            }
            None if force => self.outside.wait_force(),
            None => self.outside.wait(),
        })
    }

    /// Whether a `call_once` completed (in this execution, or outside).
    pub(crate) fn is_completed(&self, location: &'static Location<'static>) -> bool {
        with_current(|ex| match ex {
            Some(ex) => {
                let object = ex.point(&self.handle, VarKind::Once, EventKind::Once, location);
                ex.with_state(|st| {
                    let done = matches!(
                        st.objects[object.index()].state,
                        ObjectState::Once { done: true, .. }
                    );
                    if done {
                        let me = st.current;
                        st.races.acquire(me, object);
                    }
                    done
                })
            }
            None => self.outside.is_completed(),
        })
    }
}

/// The engine's part of a `sync::OnceLock<T>` (and so of a `LazyLock`): the per-execution
/// value's identity, and the value set outside executions.
pub(crate) struct OnceCell<T> {
    handle: Handle,
    /// What the user made (`OnceLock` or `LazyLock`): its variable's kind, so that schedules,
    /// reports and variable lists name the type the user wrote.
    kind: VarKind,
    outside: std::sync::OnceLock<T>,
}

impl<T> OnceCell<T> {
    /// An empty cell of kind `kind` created at the caller's location.
    #[track_caller]
    pub(crate) const fn new(kind: VarKind) -> OnceCell<T> {
        OnceCell { handle: Handle::new(), kind, outside: std::sync::OnceLock::new() }
    }

    /// Where it was created.
    pub(crate) fn site(&self) -> &'static Location<'static> {
        self.handle.site()
    }

    /// The value, if it was set (in this execution, or outside).
    pub(crate) fn get(&self, location: &'static Location<'static>) -> Option<&T> {
        with_current(|ex| match ex {
            Some(ex) => {
                let object = ex.point(&self.handle, self.kind, EventKind::Once, location);
                self.value(ex, object)
            }
            None => self.outside.get(),
        })
    }

    /// The value, initialized with `f` if it was not set yet.
    pub(crate) fn get_or_init<F: FnOnce() -> T>(
        &self,
        f: F,
        location: &'static Location<'static>,
    ) -> &T {
        with_current(|ex| match ex {
            Some(ex) => {
                let object = claim_point(ex, &self.handle, self.kind, location);
                if let Claim::Run { .. } = claim(ex, object, true, location) {
                    let guard = Running { ex, object, poison: false };
                    let value = f();
                    std::mem::forget(guard);
                    complete(ex, object, Some(ErasedValue::new(value)));
                }
                self.value(ex, object).expect("initialized above")
            }
            None => self.outside.get_or_init(f),
        })
    }

    /// The value, once some thread sets it (in this execution, or outside).
    pub(crate) fn wait(&self, location: &'static Location<'static>) -> &T {
        with_current(|ex| match ex {
            Some(ex) => {
                // A `OnceLock` is never poisoned (std's waits with `wait_force`).
                let (object, _) = wait(ex, &self.handle, self.kind, false, location);
                self.value(ex, object).expect("waited for the value")
            }
            None => self.outside.wait(),
        })
    }

    fn value(&self, ex: &Execution, object: ObjectId) -> Option<&T> {
        ex.with_state(|st| match &st.objects[object.index()].state {
            // SAFETY: values of this object are always created as `T` (`get_or_init`). The
            // value is boxed and owned by the execution, which only this OS thread runs; it
            // lives until the execution ends or the cell is dropped or taken from (`&mut`),
            // all after the borrow of `self` the caller holds within the execution.
            ObjectState::Once { value: Some(v), .. } => {
                let value = unsafe { &*(v.get::<T>() as *const T) };
                let me = st.current;
                st.races.acquire(me, object);
                Some(value)
            }
            _ => None,
        })
    }

    /// The value, mutably, if it was set (in this execution, or outside). No scheduling
    /// point: `&mut self` rules out any other thread's access.
    pub(crate) fn get_mut(&mut self) -> Option<&mut T> {
        with_current(|ex| match ex {
            Some(ex) => {
                let object = self.handle.cached(ex.generation())?;
                ex.with_state(|st| match &mut st.objects[object.index()].state {
                    // SAFETY: created as `T` in `get_or_init`; boxed and owned by the
                    // execution, it lives until the execution ends or the cell is dropped or
                    // taken from, all after the caller's `&mut self` borrow (see `value`).
                    ObjectState::Once { value: Some(v), .. } => {
                        Some(unsafe { &mut *(v.get_mut::<T>() as *mut T) })
                    }
                    _ => None,
                })
            }
            None => self.outside.get_mut(),
        })
    }

    /// The value, mutably, initialized with `f` if it was not set yet (in this execution, or
    /// outside), for `LazyLock::force_mut`. No scheduling point, as [`OnceCell::get_mut`]:
    /// `&mut self` rules out any other thread's access, so nothing waits and nothing is
    /// released. If `f` panics the cell stays empty.
    pub(crate) fn get_mut_or_init<F: FnOnce() -> T>(&mut self, f: F) -> &mut T {
        let inside = with_current(|ex| match ex {
            Some(ex) => {
                let object = ex.object(&self.handle, self.kind);
                let empty = ex.with_state(|st| {
                    matches!(
                        st.objects[object.index()].state,
                        ObjectState::Once { value: None, .. }
                    )
                });
                if empty {
                    // User code: run with no borrow of the execution's state held.
                    let value = ErasedValue::new(f());
                    ex.with_state(|st| {
                        if let ObjectState::Once { done, value: slot, .. } =
                            &mut st.objects[object.index()].state
                        {
                            *done = true;
                            *slot = Some(value);
                        }
                    });
                }
                true
            }
            None => {
                if self.outside.get().is_none() {
                    let _ = self.outside.set(f());
                }
                false
            }
        });
        if inside {
            self.get_mut().expect("initialized above")
        } else {
            self.outside.get_mut().expect("initialized above")
        }
    }

    /// Takes the value out (this execution's inside one, the outside one outside).
    pub(crate) fn take(&mut self) -> Option<T> {
        with_current(|ex| match ex {
            Some(ex) => {
                let object = self.handle.cached(ex.generation())?;
                let taken = ex.with_state(|st| match &mut st.objects[object.index()].state {
                    ObjectState::Once { value, done, .. } => {
                        *done = false;
                        value.take()
                    }
                    _ => None,
                });
                // SAFETY: created as `T` in `get_or_init`.
                taken.map(|v| unsafe { v.into_inner::<T>() })
            }
            None => self.outside.take(),
        })
    }
}

/// std's message for `call_once` on a poisoned `Once`.
const POISONED: &str = "Once instance has previously been poisoned";

/// What `claim` found.
enum Claim {
    /// Already initialized: nothing to run.
    Done,
    /// The caller runs the initializer; `poisoned` if an earlier one panicked.
    Run { poisoned: bool },
    /// An earlier initializer panicked and the caller did not force: it must panic.
    Poisoned,
}

/// The scheduling point of an operation that may claim the initialization: until the `Once`
/// is done the caller waits at this point (`State::wait_at_point`), a choice of the strategy
/// only while no other thread runs the initializer, so its claim then succeeds (or finds the
/// `Once` done) without a blocked step and a retry.
fn claim_point(
    ex: &Execution,
    handle: &Handle,
    kind: VarKind,
    location: &'static Location<'static>,
) -> ObjectId {
    ex.lock_point(handle, kind, EventKind::Once, location, |st, object| {
        match st.objects[object.index()].state {
            // Not the thread running the initializer (a recursive call is reported as the
            // deadlock it is).
            ObjectState::Once { done: false, running, .. } if running != Some(st.current) => {
                Some(BlockedOn::Once(object))
            }
            _ => None,
        }
    })
}

/// Claims the initialization (after waiting for a thread that is running it, if the caller did
/// not wait at its point: a point that variable bounding skips). A poisoned object is claimed
/// only with `force`.
fn claim(
    ex: &Execution,
    object: ObjectId,
    force: bool,
    location: &'static Location<'static>,
) -> Claim {
    loop {
        let state = ex.with_state(|st| {
            let me = st.current;
            match &mut st.objects[object.index()].state {
                ObjectState::Once { done: true, .. } => {
                    st.races.acquire(me, object);
                    Some(Claim::Done)
                }
                ObjectState::Once { running: None, poisoned: true, .. } if !force => {
                    st.races.acquire(me, object);
                    Some(Claim::Poisoned)
                }
                ObjectState::Once { running: running @ None, poisoned, .. } => {
                    *running = Some(me);
                    let poisoned = *poisoned;
                    st.races.acquire(me, object);
                    st.progress();
                    st.refresh_waiters(object);
                    Some(Claim::Run { poisoned })
                }
                _ => None,
            }
        });
        match state {
            Some(claim) => return claim,
            None => {
                ex.block(BlockedOn::Once(object), None, location);
            }
        }
    }
}

/// Blocks until the object is complete, for `wait`: at its scheduling point the caller waits
/// (`State::wait_at_point`, a choice of the strategy only once the object is complete, or with
/// `ends_on_poison` poisoned with no initializer running), so no retry follows; a thread that
/// waits for an initialization no thread will complete waits for good, a deadlock when nothing
/// else can run. Returns the object, and whether the wait ended on poison (then the caller
/// panics, as std's `Once::wait`); either way the caller acquires what the last initializer
/// released.
fn wait(
    ex: &Execution,
    handle: &Handle,
    kind: VarKind,
    ends_on_poison: bool,
    location: &'static Location<'static>,
) -> (ObjectId, bool) {
    let outcome = |st: &State, object: ObjectId| match st.objects[object.index()].state {
        ObjectState::Once { done: true, .. } => Some(false),
        ObjectState::Once { poisoned: true, running: None, .. } if ends_on_poison => Some(true),
        _ => None,
    };
    let object =
        ex.lock_point(handle, kind, EventKind::Once, location, |st, object| {
            match outcome(st, object) {
                Some(_) => None,
                None => Some(BlockedOn::OnceWait { object, ends_on_poison }),
            }
        });
    loop {
        // Chosen after waiting at the point, the object is complete (or poisoned): nothing ran
        // in between. A point that variable bounding skipped did not wait: block here.
        let poisoned = ex.with_state(|st| {
            let poisoned = outcome(st, object)?;
            let me = st.current;
            st.races.acquire(me, object);
            Some(poisoned)
        });
        match poisoned {
            Some(poisoned) => return (object, poisoned),
            None => {
                ex.block(BlockedOn::OnceWait { object, ends_on_poison }, None, location);
            }
        }
    }
}

/// Held while an initializer runs: if it panics, the object is released (and a `Once`
/// poisoned) and its waiters woken, as std's, instead of leaving them blocked for good.
struct Running<'a> {
    ex: &'a Execution,
    object: ObjectId,
    poison: bool,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let (object, poison) = (self.object, self.poison);
        self.ex.with_state(|st| {
            if let ObjectState::Once { running, poisoned, .. } =
                &mut st.objects[object.index()].state
            {
                *running = None;
                *poisoned |= poison;
            }
            let me = st.current;
            st.races.release(me, object);
            st.progress();
            st.refresh_waiters(object);
        })
    }
}

fn complete(ex: &Execution, object: ObjectId, value: Option<ErasedValue>) {
    ex.with_state(|st| {
        if let ObjectState::Once { running, done, poisoned, value: slot } =
            &mut st.objects[object.index()].state
        {
            *running = None;
            *done = true;
            *poisoned = false;
            *slot = value;
        }
        let me = st.current;
        st.races.release(me, object);
        st.progress();
        st.refresh_waiters(object);
    })
}
