//! Snapshot tests of the failure report format, so changes to it are deliberate. Each report
//! (fixed seed, so the same every run) is compared with `tests/snapshots/<name>.txt`; run with
//! `PCTVB_UPDATE_SNAPSHOTS=1` to rewrite the files after an intended change, and review the
//! diff.

use pctvb::sync::atomic::{AtomicUsize, Ordering};
use pctvb::sync::{Arc, Mutex};
use pctvb::{thread, Config};

fn check(name: &str, actual: &str) {
    let path = format!("{}/tests/snapshots/{name}.txt", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("PCTVB_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}; run with PCTVB_UPDATE_SNAPSHOTS=1 to create it"));
    assert!(
        expected == actual,
        "the report format changed; if intended, run with PCTVB_UPDATE_SNAPSHOTS=1.\n\
         --- expected ({path})\n{expected}\n--- actual\n{actual}"
    );
}

fn config(name: &str) -> Config {
    Config::new().ignore_env().seed(42).iterations(1000).workers(1).name(name)
}

#[test]
fn lost_update_report() {
    let report = config("report_format::lost_update").run(|| {
        let balance = Arc::new(AtomicUsize::new(100));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let balance = balance.clone();
                thread::spawn(move || {
                    let v = balance.load(Ordering::SeqCst);
                    balance.store(v - 10, Ordering::SeqCst);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(balance.load(Ordering::SeqCst), 80, "both withdrawals must count");
    });
    check("lost_update", &report.failure().expect("found").to_string());
}

#[test]
fn deadlock_report() {
    let report = config("report_format::deadlock").run(|| {
        let accounts = Arc::new((Mutex::new(1), Mutex::new(2)));
        let a2 = accounts.clone();
        let t = thread::Builder::new()
            .name("transfer".into())
            .spawn(move || {
                let _to = a2.1.lock().unwrap();
                let _from = a2.0.lock().unwrap();
            })
            .unwrap();
        {
            let _from = accounts.0.lock().unwrap();
            let _to = accounts.1.lock().unwrap();
        }
        t.join().unwrap();
    });
    check("deadlock", &report.failure().expect("found").to_string());
}
