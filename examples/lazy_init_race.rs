//! Lazy initialization race: the settings are loaded twice (check-then-act).
//!
//! `SettingsCache::get` locks the cache, sees that nothing is loaded yet, unlocks it, loads the
//! settings, and locks the cache again to store them. The check and the store are each locked,
//! but not together: two workers that both check before either stores both load the settings.
//! Loading is meant to happen once (it may be slow, open connections, or have side effects),
//! and the two workers end up with two different `Settings` objects.
//!
//! Fix: keep the lock held from the check to the store (load under the lock), or use
//! `OnceLock::get_or_init`, which runs the initializer exactly once.
//!
//! Run with `cargo run --release --example lazy_init_race`. Measured with the default strategy
//! (SURW) over seeds 1 to 100 (`PCTVB_SEED=<s>`, `scripts/example-seeds.sh`): the bug shows
//! up after 1 to 6 executions (mean 1.5); the budget of 200 leaves a wide margin and takes well
//! under a second in release.

use pctvb::sync::atomic::{AtomicUsize, Ordering};
use pctvb::sync::{Arc, Mutex};
use pctvb::thread;

/// Executions the example runs; see the measurement in the header.
pub const ITERATIONS: u64 = 200;

/// What the workers need, expensive to produce.
#[derive(Debug)]
struct Settings {
    workers: usize,
}

/// Settings loaded on first use and shared afterwards.
struct SettingsCache {
    slot: Mutex<Option<Arc<Settings>>>,
    /// How many times the settings were loaded.
    loads: AtomicUsize,
}

impl SettingsCache {
    fn new() -> SettingsCache {
        SettingsCache { slot: Mutex::new(None), loads: AtomicUsize::new(0) }
    }

    fn load(&self) -> Settings {
        self.loads.fetch_add(1, Ordering::SeqCst);
        Settings { workers: 4 }
    }

    /// The settings, loaded on the first call. BUG: the lock is released between the check
    /// and the store.
    fn get(&self) -> Arc<Settings> {
        let cached = self.slot.lock().unwrap().clone();
        if let Some(settings) = cached {
            return settings;
        }
        // Another thread can check the empty slot right now, too.
        let settings = Arc::new(self.load());
        *self.slot.lock().unwrap() = Some(settings.clone());
        settings
    }
}

/// Two workers fetch the shared settings at the same time.
pub fn two_workers_start() {
    let cache = Arc::new(SettingsCache::new());
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let cache = cache.clone();
            thread::spawn(move || cache.get().workers)
        })
        .collect();
    for w in workers {
        assert_eq!(w.join().unwrap(), 4);
    }
    assert_eq!(cache.loads.load(Ordering::SeqCst), 1, "the settings were loaded more than once");
}

fn main() -> std::process::ExitCode {
    pctvb::Config::new()
        .name("lazy_init_race::two_workers_start")
        .rerun_command("cargo run --release --example lazy_init_race")
        .iterations(ITERATIONS)
        .run(two_workers_start)
        .print_expecting_bug()
}
