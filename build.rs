//! Tells pctvb whether it is compiled without optimizations (`opt-level = 0`: the dev and test
//! profiles, which `cargo test` builds, unless the workspace's Cargo.toml raises pctvb's own
//! level). A long run in such a build then says how to make it several times faster
//! (`src/runner/speed_hint.rs`, docs/RESULTS-debug-build.md). Rust has no `cfg` for the
//! optimization level, and `debug_assertions` cannot stand in: it stays on when only the level
//! is raised. Cargo gives a build script the level of the package being built, per-package
//! overrides included, and reruns it when the level changes.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(pctvb_unoptimized)");
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var("OPT_LEVEL").as_deref() == Ok("0") {
        println!("cargo::rustc-cfg=pctvb_unoptimized");
    }
}
