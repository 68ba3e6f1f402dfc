//! `#[pctvb::instrument]` without `force`: under `cfg(not(pctvb))` (how this test target is
//! built) the item is the code as written, with std's types, and works outside any pctvb run;
//! under `RUSTFLAGS="--cfg pctvb"` the same module is pctvb's.

// `pctvb` is a custom cfg (the `--cfg pctvb` convention); this crate does not declare it to
// the `unexpected_cfgs` lint in Cargo.toml, so the test allows it.
#![allow(unexpected_cfgs)]

#[pctvb::instrument]
mod plain {
    use std::sync::atomic::{AtomicUsize, Ordering};

    pub struct Counter {
        pub n: AtomicUsize,
    }

    pub fn make() -> Counter {
        Counter { n: AtomicUsize::new(0) }
    }

    pub fn bump(c: &Counter) -> usize {
        c.n.fetch_add(1, Ordering::SeqCst)
    }
}

#[cfg(not(pctvb))]
#[test]
fn without_the_cfg_the_module_is_the_std_code() {
    let c = plain::make();
    // The field is std's atomic: the original item, not the rewritten one.
    let n: &std::sync::atomic::AtomicUsize = &c.n;
    assert_eq!(plain::bump(&c), 0);
    assert_eq!(n.load(std::sync::atomic::Ordering::SeqCst), 1);
    // No table was registered for it.
    assert!(pctvb::instrument::variables().iter().all(|v| !v.module.contains("plain")));
}

#[cfg(pctvb)]
#[test]
fn with_the_cfg_the_module_is_instrumented() {
    let report = pctvb::Config::new().iterations(20).run(|| {
        let c = plain::make();
        let n: &pctvb::sync::atomic::AtomicUsize = &c.n;
        plain::bump(&c);
        assert_eq!(n.load(pctvb::sync::atomic::Ordering::SeqCst), 1);
    });
    assert!(report.failure().is_none());
    assert!(pctvb::instrument::variables().iter().any(|v| v.name == "Counter.n"));
}
