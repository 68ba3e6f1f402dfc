//! Lock-order deadlock: two transfers lock the same two accounts in opposite orders.
//!
//! This is the obvious fix of `bank_transfer.rs`, done halfway: `transfer` now holds both
//! accounts' locks for the whole transfer, but it takes them in the transfer's direction,
//! source first. A transfer from checking to savings locks checking and then savings; a
//! transfer from savings to checking locks savings and then checking. If each takes its first
//! lock before the other takes its second, each waits forever for the lock the other holds.
//! pctvb reports the deadlock with both mutexes (by where they were created) and who holds
//! them.
//!
//! Fix: take the two locks in one global order whatever the direction, e.g. lower account id
//! first, or the lock of the account that comes first in a fixed list.
//!
//! Run with `cargo run --release --example lock_order_deadlock`. Measured with the default strategy
//! (SURW) over seeds 1 to 100 (`PCTVB_SEED=<s>`, `scripts/example-seeds.sh`): the
//! deadlock shows up after 1 to 16 executions (mean 3.3); the budget of 200 leaves a wide margin and
//! takes well under a second in release.

use pctvb::sync::{Arc, Mutex};
use pctvb::thread;

/// Executions the example runs; see the measurement in the header.
pub const ITERATIONS: u64 = 200;

/// Moves `amount` from `from` to `to` if `from` has enough, holding both locks throughout.
/// BUG: the locks are taken source first, so opposite transfers take them in opposite orders.
fn transfer(from: &Mutex<u64>, to: &Mutex<u64>, amount: u64) -> bool {
    let mut source = from.lock().unwrap();
    let mut destination = to.lock().unwrap();
    if *source < amount {
        return false;
    }
    *source -= amount;
    *destination += amount;
    true
}

/// Two opposite transfers between the same two accounts.
pub fn opposite_transfers() {
    let checking = Arc::new(Mutex::new(100u64));
    let savings = Arc::new(Mutex::new(100u64));

    let (c, s) = (checking.clone(), savings.clone());
    let pay_rent = thread::spawn(move || transfer(&c, &s, 30));
    let (c, s) = (checking.clone(), savings.clone());
    let top_up = thread::spawn(move || transfer(&s, &c, 50));

    assert!(pay_rent.join().unwrap());
    assert!(top_up.join().unwrap());
    assert_eq!(*checking.lock().unwrap() + *savings.lock().unwrap(), 200);
}

fn main() -> std::process::ExitCode {
    pctvb::Config::new()
        .name("lock_order_deadlock::opposite_transfers")
        .rerun_command("cargo run --release --example lock_order_deadlock")
        .iterations(ITERATIONS)
        .run(opposite_transfers)
        .print_expecting_bug()
}
