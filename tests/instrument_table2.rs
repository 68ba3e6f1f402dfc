//! The PCTVB paper's Table 2 in Rust: time per execution of three access-heavy programs,
//! natively (std, OS threads) and instrumented under pctvb with 0, 1, 2 and all variables
//! tracked, plus the precision of the alias pass (sites hooked, armed, and seen touching a
//! tracked variable by the soundness check).
//!
//! The measurement is an ignored test (it prints the table; run it in release):
//!
//! ```sh
//! cargo test --release --test instrument_table2 -- --ignored --nocapture
//! ```
//!
//! The non-ignored tests run each program once natively and under pctvb with every variable
//! tracked and the soundness check on: same results, zero misses.

use std::time::Instant;

use pctvb::instrument::{self, Selection, SiteKind};

// The three programs are written twice, token for token (a test checks it): `native` as
// written, against std; `instrumented` through `#[pctvb::instrument(force)]`. (Stamping them
// with one `macro_rules!` would give every site and variable the macro call's location.)

#[allow(clippy::needless_range_loop)]
pub mod native {
    // BEGIN PROGRAM
    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier, Mutex};
    use std::thread;

    /// Raw pointers shared between threads on purpose.
    #[derive(Clone, Copy)]
    struct Shared(*mut f64);
    unsafe impl Send for Shared {}
    unsafe impl Sync for Shared {}

    /// Successive over-relaxation on a 1-D grid: two threads relax halves of the grid
    /// through raw pointers, a barrier between sweeps.
    pub fn sor(n: usize, sweeps: usize) -> f64 {
        let grid = Box::into_raw(Box::new([0.0f64; 256]));
        let scratch = Box::into_raw(Box::new([0.0f64; 256]));
        unsafe {
            (*grid)[0] = 1.0;
            (*grid)[n - 1] = 1.0;
        }
        let g = Shared(grid as *mut f64);
        let t = Shared(scratch as *mut f64);
        let barrier = Arc::new(Barrier::new(2));
        let half = n / 2;
        let mut handles = Vec::new();
        for part in 0..2 {
            let barrier = barrier.clone();
            handles.push(thread::spawn(move || {
                let (g, t) = (g, t);
                let (lo, hi) = if part == 0 { (1, half) } else { (half, n - 1) };
                for _ in 0..sweeps {
                    for i in lo..hi {
                        unsafe {
                            let v = (*g.0.add(i - 1) + *g.0.add(i + 1)) * 0.5;
                            *t.0.add(i) = v;
                        }
                    }
                    barrier.wait();
                    for i in lo..hi {
                        unsafe {
                            *g.0.add(i) = *t.0.add(i);
                        }
                    }
                    barrier.wait();
                }
            }));
        }
        for h in handles {
            h.join().unwrap();
        }
        let mut sum = 0.0;
        for i in 0..n {
            sum += unsafe { (*grid)[i] };
        }
        unsafe {
            drop(Box::from_raw(grid));
            drop(Box::from_raw(scratch));
        }
        sum
    }

    struct Bucket {
        lock: Mutex<()>,
        slots: *mut [u64; 64],
        len: AtomicUsize,
    }
    unsafe impl Send for Bucket {}
    unsafe impl Sync for Bucket {}

    /// A lock-striped hash set: each bucket's slots live behind a raw pointer and are
    /// read and written under the bucket's lock.
    pub fn hashset(keys: u64) -> usize {
        let mut buckets = Vec::new();
        for _ in 0..4 {
            buckets.push(Bucket {
                lock: Mutex::new(()),
                slots: Box::into_raw(Box::new([0u64; 64])),
                len: AtomicUsize::new(0),
            });
        }
        let buckets = Arc::new(buckets);
        let mut handles = Vec::new();
        for part in 0..2u64 {
            let buckets = buckets.clone();
            handles.push(thread::spawn(move || {
                for k in 0..keys {
                    let key = k * 2 + part + 1;
                    let b = &buckets[(key % 4) as usize];
                    let _guard = b.lock.lock().unwrap();
                    let len = b.len.load(Ordering::SeqCst);
                    let mut found = false;
                    for i in 0..len {
                        if unsafe { (*b.slots)[i] } == key {
                            found = true;
                        }
                    }
                    if !found && len < 64 {
                        unsafe {
                            (*b.slots)[len] = key;
                        }
                        b.len.store(len + 1, Ordering::SeqCst);
                    }
                }
            }));
        }
        for h in handles {
            h.join().unwrap();
        }
        let total = buckets.iter().map(|b| b.len.load(Ordering::SeqCst)).sum();
        for b in buckets.iter() {
            unsafe { drop(Box::from_raw(b.slots)) };
        }
        total
    }

    struct Node {
        value: u64,
        next: *mut Node,
    }

    struct Stack {
        head: AtomicPtr<Node>,
        pushed: AtomicUsize,
    }

    /// A Treiber stack: two threads push and pop, reading and writing nodes through
    /// raw pointers. Returns how many nodes were popped or are left (all pushed ones).
    pub fn stack(ops: u64) -> u64 {
        let s = Arc::new(Stack {
            head: AtomicPtr::new(std::ptr::null_mut()),
            pushed: AtomicUsize::new(0),
        });
        let mut handles = Vec::new();
        for _ in 0..2 {
            let s = s.clone();
            handles.push(thread::spawn(move || {
                let mut popped = 0;
                for v in 0..ops {
                    let node =
                        Box::into_raw(Box::new(Node { value: v, next: std::ptr::null_mut() }));
                    loop {
                        let head = s.head.load(Ordering::SeqCst);
                        unsafe {
                            (*node).next = head;
                        }
                        if s.head
                            .compare_exchange(head, node, Ordering::SeqCst, Ordering::SeqCst)
                            .is_ok()
                        {
                            break;
                        }
                    }
                    s.pushed.fetch_add(1, Ordering::SeqCst);
                    if v % 2 == 1 {
                        let head = s.head.load(Ordering::SeqCst);
                        if !head.is_null() {
                            let next = unsafe { (*head).next };
                            if s.head
                                .compare_exchange(head, next, Ordering::SeqCst, Ordering::SeqCst)
                                .is_ok()
                            {
                                // Leaked, not freed: no memory reclamation here.
                                std::hint::black_box(unsafe { (*head).value });
                                popped += 1;
                            }
                        }
                    }
                }
                popped
            }));
        }
        let mut total = 0;
        for h in handles {
            total += h.join().unwrap();
        }
        let mut left = 0;
        let mut p = s.head.load(Ordering::SeqCst);
        while !p.is_null() {
            left += 1;
            p = unsafe { (*p).next };
        }
        total + left
    }
    // END PROGRAM
}

#[pctvb::instrument(force)]
#[allow(clippy::needless_range_loop)]
pub mod instrumented {
    // BEGIN PROGRAM
    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier, Mutex};
    use std::thread;

    /// Raw pointers shared between threads on purpose.
    #[derive(Clone, Copy)]
    struct Shared(*mut f64);
    unsafe impl Send for Shared {}
    unsafe impl Sync for Shared {}

    /// Successive over-relaxation on a 1-D grid: two threads relax halves of the grid
    /// through raw pointers, a barrier between sweeps.
    pub fn sor(n: usize, sweeps: usize) -> f64 {
        let grid = Box::into_raw(Box::new([0.0f64; 256]));
        let scratch = Box::into_raw(Box::new([0.0f64; 256]));
        unsafe {
            (*grid)[0] = 1.0;
            (*grid)[n - 1] = 1.0;
        }
        let g = Shared(grid as *mut f64);
        let t = Shared(scratch as *mut f64);
        let barrier = Arc::new(Barrier::new(2));
        let half = n / 2;
        let mut handles = Vec::new();
        for part in 0..2 {
            let barrier = barrier.clone();
            handles.push(thread::spawn(move || {
                let (g, t) = (g, t);
                let (lo, hi) = if part == 0 { (1, half) } else { (half, n - 1) };
                for _ in 0..sweeps {
                    for i in lo..hi {
                        unsafe {
                            let v = (*g.0.add(i - 1) + *g.0.add(i + 1)) * 0.5;
                            *t.0.add(i) = v;
                        }
                    }
                    barrier.wait();
                    for i in lo..hi {
                        unsafe {
                            *g.0.add(i) = *t.0.add(i);
                        }
                    }
                    barrier.wait();
                }
            }));
        }
        for h in handles {
            h.join().unwrap();
        }
        let mut sum = 0.0;
        for i in 0..n {
            sum += unsafe { (*grid)[i] };
        }
        unsafe {
            drop(Box::from_raw(grid));
            drop(Box::from_raw(scratch));
        }
        sum
    }

    struct Bucket {
        lock: Mutex<()>,
        slots: *mut [u64; 64],
        len: AtomicUsize,
    }
    unsafe impl Send for Bucket {}
    unsafe impl Sync for Bucket {}

    /// A lock-striped hash set: each bucket's slots live behind a raw pointer and are
    /// read and written under the bucket's lock.
    pub fn hashset(keys: u64) -> usize {
        let mut buckets = Vec::new();
        for _ in 0..4 {
            buckets.push(Bucket {
                lock: Mutex::new(()),
                slots: Box::into_raw(Box::new([0u64; 64])),
                len: AtomicUsize::new(0),
            });
        }
        let buckets = Arc::new(buckets);
        let mut handles = Vec::new();
        for part in 0..2u64 {
            let buckets = buckets.clone();
            handles.push(thread::spawn(move || {
                for k in 0..keys {
                    let key = k * 2 + part + 1;
                    let b = &buckets[(key % 4) as usize];
                    let _guard = b.lock.lock().unwrap();
                    let len = b.len.load(Ordering::SeqCst);
                    let mut found = false;
                    for i in 0..len {
                        if unsafe { (*b.slots)[i] } == key {
                            found = true;
                        }
                    }
                    if !found && len < 64 {
                        unsafe {
                            (*b.slots)[len] = key;
                        }
                        b.len.store(len + 1, Ordering::SeqCst);
                    }
                }
            }));
        }
        for h in handles {
            h.join().unwrap();
        }
        let total = buckets.iter().map(|b| b.len.load(Ordering::SeqCst)).sum();
        for b in buckets.iter() {
            unsafe { drop(Box::from_raw(b.slots)) };
        }
        total
    }

    struct Node {
        value: u64,
        next: *mut Node,
    }

    struct Stack {
        head: AtomicPtr<Node>,
        pushed: AtomicUsize,
    }

    /// A Treiber stack: two threads push and pop, reading and writing nodes through
    /// raw pointers. Returns how many nodes were popped or are left (all pushed ones).
    pub fn stack(ops: u64) -> u64 {
        let s = Arc::new(Stack {
            head: AtomicPtr::new(std::ptr::null_mut()),
            pushed: AtomicUsize::new(0),
        });
        let mut handles = Vec::new();
        for _ in 0..2 {
            let s = s.clone();
            handles.push(thread::spawn(move || {
                let mut popped = 0;
                for v in 0..ops {
                    let node =
                        Box::into_raw(Box::new(Node { value: v, next: std::ptr::null_mut() }));
                    loop {
                        let head = s.head.load(Ordering::SeqCst);
                        unsafe {
                            (*node).next = head;
                        }
                        if s.head
                            .compare_exchange(head, node, Ordering::SeqCst, Ordering::SeqCst)
                            .is_ok()
                        {
                            break;
                        }
                    }
                    s.pushed.fetch_add(1, Ordering::SeqCst);
                    if v % 2 == 1 {
                        let head = s.head.load(Ordering::SeqCst);
                        if !head.is_null() {
                            let next = unsafe { (*head).next };
                            if s.head
                                .compare_exchange(head, next, Ordering::SeqCst, Ordering::SeqCst)
                                .is_ok()
                            {
                                // Leaked, not freed: no memory reclamation here.
                                std::hint::black_box(unsafe { (*head).value });
                                popped += 1;
                            }
                        }
                    }
                }
                popped
            }));
        }
        let mut total = 0;
        for h in handles {
            total += h.join().unwrap();
        }
        let mut left = 0;
        let mut p = s.head.load(Ordering::SeqCst);
        while !p.is_null() {
            left += 1;
            p = unsafe { (*p).next };
        }
        total + left
    }
    // END PROGRAM
}

#[test]
fn the_two_copies_are_the_same_program() {
    let source = include_str!("instrument_table2.rs");
    let copies: Vec<&str> = source
        .split("// BEGIN PROGRAM")
        .skip(1)
        .map(|rest| rest.split("// END PROGRAM").next().unwrap())
        .collect();
    assert_eq!(copies.len(), 2 + 1, "two copies, plus the text of this test");
    assert_eq!(copies[0], copies[1]);
}

/// Program sizes: (sor grid, sor sweeps), hashset keys, stack operations.
#[derive(Clone, Copy)]
struct Size {
    sor: (usize, usize),
    keys: u64,
    ops: u64,
}

const SMALL: Size = Size { sor: (16, 2), keys: 8, ops: 4 };
const LARGE: Size = Size { sor: (200, 20), keys: 200, ops: 100 };

type Program = (&'static str, fn(Size), fn(Size));

fn programs() -> Vec<Program> {
    vec![
        (
            "sor",
            |s| {
                native::sor(s.sor.0, s.sor.1);
            },
            |s| {
                instrumented::sor(s.sor.0, s.sor.1);
            },
        ),
        (
            "hashset",
            |s| {
                native::hashset(s.keys);
            },
            |s| {
                instrumented::hashset(s.keys);
            },
        ),
        (
            "stack",
            |s| {
                native::stack(s.ops);
            },
            |s| {
                instrumented::stack(s.ops);
            },
        ),
    ]
}

/// The instrumented module's variable called `name`.
fn var_named(name: &str) -> instrument::StaticVarId {
    instrument::variables()
        .into_iter()
        .find(|v| v.module.contains("instrumented") && v.name == name)
        .unwrap_or_else(|| panic!("no variable {name}"))
        .id
}

/// The variables tracked in the v1 and v2 columns: the heap data the program's raw pointers
/// reach most, then a second heap variable.
fn tracked_sets(program: &str) -> (Vec<instrument::StaticVarId>, Vec<instrument::StaticVarId>) {
    let (first, second) = match program {
        "sor" => ("Box::new(let grid)", "Box::new(let scratch)"),
        "hashset" => ("Box::new(Bucket.slots)", "Arc::new(let buckets)"),
        _ => ("Box::new(let node)", "Arc::new(let s)"),
    };
    (vec![var_named(first)], vec![var_named(first), var_named(second)])
}

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn each_program_agrees_with_native_and_the_soundness_check_sees_no_miss() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(native::hashset(SMALL.keys), 2 * SMALL.keys as usize);
    let tracking = instrument::track(Selection::All).soundness_check(true);
    let report = pctvb::Config::new().iterations(30).seed(1).run(|| {
        let (n, sweeps) = SMALL.sor;
        assert_eq!(instrumented::sor(n, sweeps), native::sor(n, sweeps));
        assert_eq!(instrumented::hashset(SMALL.keys), 2 * SMALL.keys as usize);
        // Every pushed node is either popped or still on the stack.
        assert_eq!(instrumented::stack(SMALL.ops), 2 * SMALL.ops);
        assert_eq!(native::stack(SMALL.ops), 2 * SMALL.ops);
    });
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());
    let stats = tracking.stats();
    assert!(stats.misses.is_empty(), "{:?}", stats.misses);
    assert!(stats.scheduled > 0);
}

/// Time per execution (the best of three runs) and raw-pointer scheduling points per
/// execution, with `selection` tracked.
fn per_execution(
    iterations: u64,
    f: impl Fn() + Sync + Copy,
    selection: Selection,
    gate: bool,
) -> (f64, u64) {
    per_execution_races(iterations, f, selection, gate, true)
}

/// [`per_execution`] with the data-race detector on or off (`races`): with it on, every
/// instrumented access is checked for races whatever is tracked, so every hook is armed.
fn per_execution_races(
    iterations: u64,
    f: impl Fn() + Sync + Copy,
    selection: Selection,
    gate: bool,
    races: bool,
) -> (f64, u64) {
    let mut best = f64::MAX;
    let mut scheduled = 0;
    for _ in 0..3 {
        let tracking = instrument::track(selection.clone()).gate_primitives(gate);
        let start = Instant::now();
        let report = pctvb::Config::new()
            .strategy(pctvb::StrategyKind::Random)
            .iterations(iterations)
            .seed(7)
            .workers(1)
            .race_detection(races)
            .run(f);
        let elapsed = start.elapsed().as_secs_f64();
        assert!(report.failure().is_none(), "{}", report.failure().unwrap());
        best = best.min(elapsed / iterations as f64);
        scheduled = tracking.stats().scheduled / iterations;
    }
    (best, scheduled)
}

/// Access sites (allocation sites excluded) armed when only `selection` is tracked, and those
/// the soundness check saw touching it in a small run of the program.
fn precision(run: fn(Size), vars: Vec<instrument::StaticVarId>) -> (usize, usize) {
    let tracking = instrument::track(Selection::Vars(vars.clone())).soundness_check(true);
    let report = pctvb::Config::new().iterations(5).seed(1).workers(1).run(move || run(SMALL));
    assert!(report.failure().is_none(), "{}", report.failure().unwrap());
    let stats = tracking.stats();
    assert!(stats.misses.is_empty(), "{:?}", stats.misses);
    let mut armed = 0;
    for site in instrument::sites() {
        let listed = site.may_access.as_ref().is_none_or(|m| m.iter().any(|v| vars.contains(v)));
        if site.hooked && listed && site.kind != SiteKind::Alloc {
            armed += 1;
            if !stats.touched_sites.contains(&site.id) {
                println!("  armed, not seen touching it: {} (line {})", site.label, site.line);
            }
        }
    }
    (armed, stats.touched_sites.len())
}

#[test]
#[ignore = "measurement: run in release with --ignored --nocapture"]
fn table2() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let iterations = 100;
    println!(
        "| program | raw accesses/exec (all tracked) | native | v0, detector off | v0, primitives \
         always points | v0 | v1 | v2 | v-all | v-all/v0 |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (name, native_run, instr_run) in programs() {
        let size = LARGE;
        let mut native = f64::MAX;
        for _ in 0..3 {
            let start = Instant::now();
            for _ in 0..iterations {
                native_run(size);
            }
            native = native.min(start.elapsed().as_secs_f64() / iterations as f64);
        }
        let (one, two) = tracked_sets(name);
        let run = move || instr_run(size);
        let (v0_unchecked, _) =
            per_execution_races(iterations, run, Selection::Nothing, true, false);
        let (v0_ungated, _) = per_execution(iterations, run, Selection::Nothing, false);
        let (v0, _) = per_execution(iterations, run, Selection::Nothing, true);
        let (v1, _) = per_execution(iterations, run, Selection::Vars(one), true);
        let (v2, _) = per_execution(iterations, run, Selection::Vars(two), true);
        let (vall, accesses) = per_execution(iterations, run, Selection::All, true);
        let ms = |t: f64| format!("{:.3} ms", t * 1e3);
        println!(
            "| {name} | {accesses} | {} | {} | {} | {} | {} | {} | {} | {:.0} |",
            ms(native),
            ms(v0_unchecked),
            ms(v0_ungated),
            ms(v0),
            ms(v1),
            ms(v2),
            ms(vall),
            vall / v0
        );
    }
    // The default of a guarantee run: the combined strategy tracks, in each execution, the
    // one variable it chose (profiling tracks all); against the same run with every variable
    // tracked in every execution (a session of the caller's takes precedence). The strategy
    // alone: the uniform walk a default run interleaves tracks every variable.
    println!(
        "\n| program | combined d=2 v=1, chosen variable tracked (default) | same, every variable \
         tracked | ratio |"
    );
    println!("|---|---|---|---|");
    for (name, _, instr_run) in programs() {
        let run = move || instr_run(LARGE);
        let combined = || {
            let config = pctvb::Config::new().depth(2).vars(1).explore_every(0);
            config.iterations(iterations).seed(7)
        };
        let mut chosen = f64::MAX;
        let mut all = f64::MAX;
        for _ in 0..3 {
            let start = Instant::now();
            let report = combined().run(run);
            assert!(report.failure().is_none(), "{}", report.failure().unwrap());
            chosen = chosen.min(start.elapsed().as_secs_f64() / iterations as f64);
            let _everything = instrument::track(Selection::All).gate_primitives(true);
            let start = Instant::now();
            let report = combined().run(run);
            assert!(report.failure().is_none(), "{}", report.failure().unwrap());
            all = all.min(start.elapsed().as_secs_f64() / iterations as f64);
        }
        let ms = |t: f64| format!("{:.3} ms", t * 1e3);
        println!("| {name} | {} | {} | {:.1} |", ms(chosen), ms(all), all / chosen);
    }
    println!("\n| program | tracked | access sites armed | sites seen touching it |");
    println!("|---|---|---|---|");
    for (name, _, instr_run) in programs() {
        let (one, _) = tracked_sets(name);
        let (armed, touched) = precision(instr_run, one);
        println!("| {name} | v1 | {armed} | {touched} |");
    }
    // Precision: sites with a hook, armed when everything is tracked, and seen touching a
    // tracked variable by the soundness check.
    let tracking = instrument::track(Selection::All).soundness_check(true);
    let report = pctvb::Config::new().iterations(10).seed(1).workers(1).run(|| {
        for (_, _, instr_run) in programs() {
            instr_run(SMALL);
        }
    });
    assert!(report.failure().is_none());
    let stats = tracking.stats();
    let sites: Vec<_> =
        instrument::sites().into_iter().filter(|s| s.module.contains("instrumented")).collect();
    let hooked: Vec<_> = sites.iter().filter(|s| s.hooked).collect();
    let accesses: Vec<_> = hooked.iter().filter(|s| s.kind != SiteKind::Alloc).collect();
    println!(
        "\nprecision: {} candidate sites, {} hooked ({} accesses, {} allocations), {} armed with \
         all variables tracked, {} seen touching a tracked variable, {} misses",
        sites.len(),
        hooked.len(),
        accesses.len(),
        hooked.len() - accesses.len(),
        stats.armed_sites,
        stats.touched_sites.len(),
        stats.misses.len()
    );
    for s in &accesses {
        if !stats.touched_sites.contains(&s.id) {
            println!(
                "  hooked, not seen touching a tracked variable: {} ({:?}) line {}",
                s.label, s.kind, s.line
            );
        }
    }
}
