//! `std::hint`, as loom mocks it.

/// A spin-wait hint; under pctvb it is [`pctvb::thread::yield_now`], a scheduling point where
/// the spinning thread lets others run (priority strategies lower a thread that keeps
/// yielding, so spin-waits end).
#[track_caller]
pub fn spin_loop() {
    pctvb::thread::yield_now()
}

/// Marks code that is never reached. Reaching it fails the execution with a panic (as loom
/// does) instead of being undefined behaviour.
///
/// # Safety
/// As `std::hint::unreachable_unchecked`: the caller promises this is never called. Under
/// pctvb a broken promise is a test failure, not undefined behaviour.
#[track_caller]
pub unsafe fn unreachable_unchecked() -> ! {
    unreachable!("loom::hint::unreachable_unchecked was reached")
}
