//! `std::hint`, as loom mocks it.

/// A spin-wait hint: [`pctvb::hint::spin_loop`], a yield (the spinning thread waits until
/// another thread makes progress, so spin-waits end and the guarantees stay true).
#[track_caller]
pub fn spin_loop() {
    pctvb::hint::spin_loop()
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
