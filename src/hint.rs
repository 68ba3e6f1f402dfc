//! `std::hint`, for spin loops: [`spin_loop`] is a yield, as loom's.
//!
//! A spin loop that calls `pctvb::hint::spin_loop()` (or `std::hint::spin_loop()` inside a
//! `#[pctvb::instrument]`ed item, which rewrites it to this) lets other threads run: the
//! spinning thread is not enabled again until another thread makes progress. Other items of
//! `std::hint` have nothing to do with scheduling; use std's.

/// A yield ([`crate::thread::yield_now`]): the calling thread waits until another thread
/// changes shared state, or until no other thread can run. Outside executions, std's
/// `spin_loop` hint.
#[track_caller]
pub fn spin_loop() {
    if crate::runtime::in_execution() {
        crate::thread::yield_now()
    } else {
        std::hint::spin_loop()
    }
}
