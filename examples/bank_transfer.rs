//! Bank transfer: money vanishes between two locks (an atomicity violation).
//!
//! Each account has its own `Mutex`. `transfer` locks the source account, checks the balance
//! and debits it, unlocks it, and only then locks the destination account and credits it.
//! Every access is locked, yet the transfer as a whole is not atomic: between the debit and the
//! credit the money is in neither account. An auditor that locks both accounts at once and
//! adds up the balances sees the bank's total drop below 200 if it runs in that window.
//!
//! Fix: hold both locks for the whole transfer, and take them in one global order (for example
//! by account id) so that two opposite transfers cannot deadlock; `lock_order_deadlock.rs`
//! shows what happens when the order follows the transfer's direction instead.
//!
//! Run with `cargo run --release --example bank_transfer`. Measured with the default strategy
//! (SURW) over seeds 1 to 100 (`PCTVB_SEED=<s>`, `scripts/example-seeds.sh`): the bug shows
//! up after 1 to 5 executions (mean 1.7); the budget of 200 leaves a wide margin and takes well
//! under a second in release.

use pctvb::sync::{Arc, Mutex};
use pctvb::thread;

/// Executions the example runs; see the measurement in the header.
pub const ITERATIONS: u64 = 200;

/// The bank's total, which no transfer should change.
const TOTAL: u64 = 200;

/// Moves `amount` from `from` to `to` if `from` has enough. BUG: the two accounts are never
/// locked together.
fn transfer(from: &Mutex<u64>, to: &Mutex<u64>, amount: u64) -> bool {
    {
        let mut balance = from.lock().unwrap();
        if *balance < amount {
            return false;
        }
        *balance -= amount;
    } // the source is unlocked here: the money is in neither account until the credit below
    *to.lock().unwrap() += amount;
    true
}

/// Two opposite transfers run while an auditor checks the bank's total.
pub fn transfer_and_audit() {
    let checking = Arc::new(Mutex::new(100u64));
    let savings = Arc::new(Mutex::new(100u64));

    let (c, s) = (checking.clone(), savings.clone());
    let pay_rent = thread::spawn(move || transfer(&c, &s, 30));
    let (c, s) = (checking.clone(), savings.clone());
    let top_up = thread::spawn(move || transfer(&s, &c, 50));
    let (c, s) = (checking.clone(), savings.clone());
    let auditor = thread::spawn(move || {
        // The auditor does it right: it holds both locks (always checking first) while it adds.
        let c = c.lock().unwrap();
        let s = s.lock().unwrap();
        assert_eq!(*c + *s, TOTAL, "the auditor saw money vanish");
    });

    assert!(pay_rent.join().unwrap());
    assert!(top_up.join().unwrap());
    auditor.join().unwrap();
    assert_eq!(*checking.lock().unwrap() + *savings.lock().unwrap(), TOTAL);
}

fn main() -> std::process::ExitCode {
    pctvb::Config::new()
        .name("bank_transfer::transfer_and_audit")
        .rerun_command("cargo run --release --example bank_transfer")
        .iterations(ITERATIONS)
        .run(transfer_and_audit)
        .print_expecting_bug()
}
