//! Inside `loom::model`, `std::time::Instant::now()` reads the execution's virtual clock
//! (pctvb's interposed `clock_gettime`, Linux with glibc only; see pctvb's guide, "Time"), also
//! in a binary that links pctvb through pctvb-loom: the shape of oneshot's `recv_timeout` test
//! (issue #17) passes however long the OS thread really takes.
#![cfg(all(target_os = "linux", target_env = "gnu"))]
extern crate pctvb_loom as loom;

use std::time::{Duration, Instant};

use loom::sync::atomic::{AtomicBool, Ordering::*};
use loom::sync::Arc;
use loom::thread;

#[test]
fn reads_advance_by_one_microsecond() {
    loom::model(|| {
        let a = Instant::now();
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(Instant::now() - a, Duration::from_micros(1));
    });
}

/// A receiver with a 1 ms deadline from `Instant::now()` that yields until the message is
/// there, and a sender whose OS thread really sleeps 2 ms first. With the real clock every
/// execution in which the receiver takes its deadline before the sender's sleep times out
/// (both tests here fail against pctvb before the virtual clock, commit b232a01); with the
/// virtual clock none does (the same for every schedule).
#[test]
fn a_deadline_loop_does_not_see_real_delays() {
    loom::model(|| {
        let sent = Arc::new(AtomicBool::new(false));
        let receiver = {
            let sent = sent.clone();
            thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_millis(1);
                while !sent.load(Acquire) {
                    assert!(Instant::now() < deadline, "timed out");
                    thread::yield_now();
                }
            })
        };
        std::thread::sleep(Duration::from_millis(2));
        sent.store(true, Release);
        receiver.join().unwrap();
    });
}
