//! The schedules each learning strategy picks, pinned: a change that is meant to make a
//! strategy faster (issue #18's throughput) must leave every choice it makes for a given seed
//! as it was, so docs/RESULTS.md stays valid.
//!
//! Each program notes what every operation saw (its thread and the value it read) into a hash
//! kept outside the execution (a std atomic: logical threads run one at a time on one OS
//! thread, `workers(1)`); a run's fingerprint is that hash over all its executions, with the
//! report's executions and its failure (execution, message, replay token). So two runs have
//! the same fingerprint when they ran the same interleavings in the same order, up to a 64-bit
//! hash collision. The strategies: race reversal, SURW, greybox and revfuzz (run past their
//! first 500 executions, so their fuzzing from kept schedules runs too), the combined strategy
//! with its profiling, and the default with a target (combined with revfuzz 1 in 2), on four
//! programs of different shapes x 5 seeds.
//!
//! When a change is meant to change schedules (a new estimate, a new rule), this test fails
//! and prints every new fingerprint: check that the change was meant, then paste them into
//! [`PINNED`].

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use pctvb::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use pctvb::sync::{mpsc, Arc, Condvar, Mutex, RwLock};
use pctvb::{thread, Config, StrategyKind};

/// The hash of what the current run's operations saw.
static SEEN: AtomicU64 = AtomicU64::new(0);

/// Held by each test while it runs: the tests share [`SEEN`], and the test harness runs them
/// on parallel threads.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn mix(h: u64, x: u64) -> u64 {
    let h = (h ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^ (h >> 29)
}

/// Notes that thread `who` saw `value`.
fn note(who: u64, value: u64) {
    SEEN.store(mix(SEEN.load(Relaxed), mix(who, value)), Relaxed);
}

/// Three threads increment a counter twice each under a mutex.
fn counter() {
    let n = Arc::new(Mutex::new(0u64));
    let hs: Vec<_> = (0..3)
        .map(|i| {
            let n = n.clone();
            thread::spawn(move || {
                for _ in 0..2 {
                    let mut g = n.lock().unwrap();
                    note(i, *g);
                    *g += 1;
                }
            })
        })
        .collect();
    hs.into_iter().for_each(|h| h.join().unwrap());
    assert_eq!(*n.lock().unwrap(), 6);
}

/// Three threads increment an atomic twice each with a compare-exchange loop.
fn cas_counter() {
    let n = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..3)
        .map(|i| {
            let n = n.clone();
            thread::spawn(move || {
                for _ in 0..2 {
                    loop {
                        let v = n.load(SeqCst);
                        note(i, v as u64);
                        if n.compare_exchange(v, v + 1, SeqCst, SeqCst).is_ok() {
                            break;
                        }
                    }
                }
            })
        })
        .collect();
    hs.into_iter().for_each(|h| h.join().unwrap());
    assert_eq!(n.load(SeqCst), 6);
}

/// Two producers and two consumers over a mutex and a condition variable.
fn prodcons() {
    let q = Arc::new((Mutex::new(Vec::<u64>::new()), Condvar::new()));
    let mut hs = Vec::new();
    for i in 0..2 {
        let q = q.clone();
        hs.push(thread::spawn(move || {
            let (m, cv) = &*q;
            m.lock().unwrap().push(i);
            cv.notify_all();
        }));
    }
    for i in 2..4 {
        let q = q.clone();
        hs.push(thread::spawn(move || {
            let (m, cv) = &*q;
            let mut buf = m.lock().unwrap();
            while buf.is_empty() {
                note(i, 99);
                buf = cv.wait(buf).unwrap();
            }
            note(i, buf.pop().expect("an item"));
        }));
    }
    hs.into_iter().for_each(|h| h.join().unwrap());
}

/// A flag set once and read by a thread that first writes a counter of its own in a loop (a
/// write loop), with a stale read as the bug: the reader must not see the flag before the
/// writer's two stores ran.
fn flag_and_loop() {
    let flag = Arc::new(AtomicUsize::new(0));
    let f2 = flag.clone();
    let writer = thread::spawn(move || {
        f2.store(1, SeqCst);
        for _ in 0..5 {
            note(0, f2.load(SeqCst) as u64);
        }
        f2.store(2, SeqCst);
    });
    let reader = thread::spawn(move || {
        let own = AtomicUsize::new(0);
        for _ in 0..6 {
            own.fetch_add(1, SeqCst);
        }
        let v = flag.load(SeqCst);
        note(1, v as u64);
        assert_ne!(v, 1, "the reader saw the flag between the writer's stores");
    });
    writer.join().unwrap();
    reader.join().unwrap();
}

const PROGRAMS: [(&str, fn()); 4] = [
    ("counter", counter),
    ("cas_counter", cas_counter),
    ("prodcons", prodcons),
    ("flag_and_loop", flag_and_loop),
];

/// Search executions per run: past revfuzz's and greybox's first 500 (their fuzzing phase).
const EXECUTIONS: u64 = 700;

/// A configuration by seed.
type BySeed = Box<dyn Fn(u64) -> Config>;

/// A run of `executions` executions of strategy `kind` with `seed`, on one worker, not
/// minimized.
fn run_of(kind: StrategyKind, seed: u64, executions: u64) -> Config {
    Config::new()
        .ignore_env()
        .seed(seed)
        .strategy(kind)
        .iterations(executions)
        .minimize_runs(0)
        .workers(1)
}

/// The configurations: name and builder by seed.
fn configs() -> Vec<(&'static str, BySeed)> {
    let named = |kind: StrategyKind| move |seed: u64| run_of(kind.clone(), seed, EXECUTIONS);
    let combined = StrategyKind::from_name("combined").expect("a registered strategy");
    let with_target = combined.clone();
    vec![
        ("reversal", Box::new(named(StrategyKind::Reversal))),
        ("surw", Box::new(named(StrategyKind::Surw))),
        ("greybox", Box::new(named(StrategyKind::Greybox))),
        ("revfuzz", Box::new(named(StrategyKind::Revfuzz))),
        ("combined", Box::new(named(combined))),
        (
            "default with a target",
            Box::new(move |seed| named(with_target.clone())(seed).explore_every(2)),
        ),
    ]
}

/// The fingerprint of one run (see the module docs).
fn fingerprint(config: Config, body: fn()) -> u64 {
    SEEN.store(0, Relaxed);
    let report = config.run(body);
    let mut h = mix(SEEN.load(Relaxed), report.executions);
    if let Some(f) = report.failure() {
        h = mix(h, f.execution);
        for text in [Some(&f.message), f.token.as_ref()].into_iter().flatten() {
            h = text.bytes().fold(h, |h, b| mix(h, b as u64));
        }
    }
    h
}

/// Per configuration (in [`configs`]' order), per program (in [`PROGRAMS`]' order): the
/// fingerprints of seeds 0 to 4.
const PINNED: [[[u64; 5]; 4]; 6] = [
    // reversal
    [
        [
            0x59842804f71b48c9,
            0x942c8c1fd93eeab9,
            0xbfc1b663372d827f,
            0x0635a2355444e2c7,
            0x5fc1d35e79fe765a,
        ],
        [
            0xfe56d8273909dabc,
            0x665bba4d886b1fc3,
            0x400b55cadd8a4f47,
            0x210e1a9e010b0616,
            0xe06d01831ee7cef8,
        ],
        [
            0x6e199a3841855ec8,
            0x6cab378066498ec3,
            0x0c9530bf827a0739,
            0x0c56ec447e11b905,
            0x2d2f9ae31fd28d1c,
        ],
        [
            0x51bfae92ec83dde0,
            0x2f2db9149958ac01,
            0x3bd18f3112b76930,
            0x5582aa8c37e2714d,
            0x4e2f340dee80c1f3,
        ],
    ],
    // surw
    [
        [
            0xa09bd9e897fb6c26,
            0x6d6ca0a562afb002,
            0xda7391bfe840f274,
            0xa02181723273af9e,
            0xe317e98a26f8db18,
        ],
        [
            0x80b48705a33ec158,
            0xf6931658c0cf1dd1,
            0x32b34a3756ff3f5f,
            0x299be591f8089fcb,
            0xbbc8a62f64aa7efd,
        ],
        [
            0x54c058e56f876f41,
            0xfd7336bfad3cdeb0,
            0x5f4e63a1035f6817,
            0xfef27ce0a8039b8f,
            0x3cd6a6d98d68d632,
        ],
        [
            0xeaaeccae948b9a6b,
            0xede85a3fe7b2e972,
            0xdbae79c753ddda4f,
            0x84168209b2f8f1f5,
            0x63b50ed794d7eacb,
        ],
    ],
    // greybox
    [
        [
            0x135fb5581d406324,
            0xd8fd5c40a630208b,
            0xefdb55d17d11d390,
            0xb8d2d5ff50473512,
            0x5185839a82041d6e,
        ],
        [
            0x2e2037c34421e90a,
            0x86917e8257484738,
            0x958d80a0024a3c30,
            0xdad71c0f1f64ec1d,
            0xc1394e506388d084,
        ],
        [
            0x204bb6ab3b112038,
            0x586b243848134894,
            0x04900f18b5a0528a,
            0xffffb9237d3972ca,
            0xe612ec1407a24969,
        ],
        [
            0xca33c1455f89a96e,
            0x147af60d45fd70fd,
            0xf5c12b336f9d1b9f,
            0xc6b54eabc54c9496,
            0x86b0c56c0fdb3af8,
        ],
    ],
    // revfuzz
    [
        [
            0x1b53b4c7573fd605,
            0x4d6ab827ded0a455,
            0xe6602fa22ea3ebb8,
            0xe9eaebf6a1284a6a,
            0xac64ab8cb9e3a64d,
        ],
        [
            0x66c556a45ada65a5,
            0xefcb947604c1d8f6,
            0x15dde435c649e2f3,
            0x1914fc9573f7f28d,
            0x200db71b8af1a364,
        ],
        [
            0x8dae8a532282bd15,
            0x2d528c5982a0aca0,
            0x67161e78afbc3343,
            0x16a69d3d22766e17,
            0x5d90d6032e229f91,
        ],
        [
            0x1fa5c50953124f21,
            0x5a80114ec2a8e87a,
            0xeac49081c5072013,
            0x94a6e4e3d2b6046f,
            0x9fd77fec4b32ae36,
        ],
    ],
    // combined
    [
        [
            0x76b445dc0bc04391,
            0x467892d416d70f83,
            0xc12b49bdd935b91f,
            0x66fc6e14e9eafdd8,
            0x883b6981cc85454e,
        ],
        [
            0x4c24063fa3198d93,
            0x339ee40ac54d14a9,
            0xb95083609299bca7,
            0xd7b4f1905e0542ac,
            0x67808f52b4768b1d,
        ],
        [
            0xa173855a0be18217,
            0x464868f58b6d7669,
            0x569a1b074731d802,
            0xa3e2aa261915f494,
            0xb28d5b0d92d3eb9e,
        ],
        [
            0x097a45e4591d3318,
            0x74ff40ce340cbfb6,
            0x52c44c6d7c815a18,
            0xb199593f36036d12,
            0xfc76c2848707a2ac,
        ],
    ],
    // default with a target
    [
        [
            0x2ed75fdc86b3d537,
            0x7830b75a22efc527,
            0x02493f5c046d9f02,
            0x58922773738a1d86,
            0xfa498bb383abaf1a,
        ],
        [
            0x3bc253bfff093c9b,
            0xb375cad3f0d047aa,
            0x2a954af1a8213905,
            0x5589c2affba2bdda,
            0xe1422b77ee949631,
        ],
        [
            0xc1d6d82983d7ac93,
            0x64b87b2131f5cfcf,
            0xc72a5d46754bee64,
            0x55fc20ec55a82dc2,
            0xcf2855847c20c20e,
        ],
        [
            0x8c56e45277b938ea,
            0x6ee80574efe331c6,
            0x50ed354fbde31605,
            0xe76eb93dace5afc6,
            0xebd40c9b0f273a05,
        ],
    ],
];

#[test]
fn schedules_are_pinned() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut got = Vec::new();
    for (name, config) in configs() {
        let per_program: Vec<Vec<u64>> = PROGRAMS
            .iter()
            .map(|&(_, body)| (0..5).map(|seed| fingerprint(config(seed), body)).collect())
            .collect();
        got.push((name, per_program));
    }
    let mut text = String::new();
    for (name, per_program) in &got {
        text += &format!("    // {name}\n    [\n");
        for seeds in per_program {
            let seeds: Vec<String> = seeds.iter().map(|h| format!("{h:#018x}")).collect();
            text += &format!("        [{}],\n", seeds.join(", "));
        }
        text += "    ],\n";
    }
    for (c, (name, per_program)) in got.iter().enumerate() {
        for (p, seeds) in per_program.iter().enumerate() {
            assert_eq!(
                seeds.as_slice(),
                PINNED[c][p].as_slice(),
                "{name} on {}: the schedules changed; every fingerprint now:\n{text}",
                PROGRAMS[p].0
            );
        }
    }
}

/// Forty threads each add to a counter under a mutex twice, waiting for their turn on a
/// condition variable the first time: a release enables every waiter at once, and more than
/// sixteen threads are enabled at most decisions, where the priority strategies choose from
/// their tournament tree instead of a pass over the enabled threads.
fn crowd() {
    let state = Arc::new((Mutex::new(0u64), Condvar::new()));
    let hs: Vec<_> = (0..40u64)
        .map(|i| {
            let state = state.clone();
            thread::spawn(move || {
                let (m, cv) = &*state;
                let mut g = m.lock().unwrap();
                while *g < i / 8 {
                    g = cv.wait(g).unwrap();
                }
                note(i, *g);
                *g += 1;
                cv.notify_all();
                drop(g);
                let mut g = m.lock().unwrap();
                note(i, *g);
                *g += 1;
            })
        })
        .collect();
    hs.into_iter().for_each(|h| h.join().unwrap());
    assert_eq!(*state.0.lock().unwrap(), 80);
}

/// Blocking of every kind partial order sampling tells apart, among twenty threads: readers and
/// writers of a read-write lock (a reader blocked behind a writer waits with a `Block`, which
/// modifies, where its announced read lock only reads), a channel's sends and receives, a
/// park and its unpark, joins, and a condition variable whose notified waiters wait for its
/// mutex without a step of their own (their pending operation moves from the condition
/// variable to the mutex).
fn blocking_mix() {
    let table = Arc::new(RwLock::new(0u64));
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let (tx, rx) = mpsc::channel::<u64>();
    let mut hs = Vec::new();
    for i in 0..8u64 {
        let (table, gate) = (table.clone(), gate.clone());
        hs.push(thread::spawn(move || {
            let (m, cv) = &*gate;
            let mut open = m.lock().unwrap();
            while !*open {
                open = cv.wait(open).unwrap();
            }
            drop(open);
            note(i, *table.read().unwrap());
        }));
    }
    for i in 8..11u64 {
        let (table, tx) = (table.clone(), tx.clone());
        hs.push(thread::spawn(move || {
            *table.write().unwrap() += i;
            tx.send(i).unwrap();
        }));
    }
    drop(tx);
    let parked = thread::spawn(move || {
        thread::park();
        let mut sum = 0;
        while let Ok(v) = rx.recv() {
            sum += v;
        }
        note(11, sum);
    });
    let opener = {
        let gate = gate.clone();
        thread::spawn(move || {
            *gate.0.lock().unwrap() = true;
            gate.1.notify_all();
        })
    };
    for i in 12..18u64 {
        let table = table.clone();
        hs.push(thread::spawn(move || note(i, *table.read().unwrap())));
    }
    parked.thread().unpark();
    opener.join().unwrap();
    hs.into_iter().for_each(|h| h.join().unwrap());
    parked.join().unwrap();
}

/// Partial order sampling on [`crowd`] and [`blocking_mix`], seeds 0 to 2, 200 executions
/// each: pinned at the values of its choice by a pass over every thread's pending operation
/// at each decision (the commit that added this test), so a faster way of finding the racing
/// threads must draw the same priorities for the same threads.
const POS_PINNED: [(&str, [u64; 3]); 2] = [
    ("crowd", [0x0deb4c8debd4e72c, 0x338cfda1f37124bd, 0x43b673db5eb5a622]),
    ("blocking_mix", [0x6e5ff3d370aabb43, 0x5357711193086b8b, 0x668dbc29be76909d]),
];

#[test]
fn partial_order_sampling_schedules_are_pinned() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let programs: [(&str, fn()); 2] = [("crowd", crowd), ("blocking_mix", blocking_mix)];
    let got: Vec<(&str, Vec<u64>)> = programs
        .iter()
        .map(|&(name, body)| {
            let seeds = (0..3)
                .map(|seed| fingerprint(run_of(StrategyKind::Pos, seed, 200), body))
                .collect();
            (name, seeds)
        })
        .collect();
    assert_pinned("partial order sampling", &got, &POS_PINNED);
}

/// The priority strategies on [`crowd`] (and the portfolio, whose PCT arms are told the
/// changes through it), seeds 0 to 2, 40 executions each: pinned at the
/// values of their choice by a pass over the enabled threads (before the tournament tree,
/// commit 4f39dc9), so the tree chooses as that pass did at every decision of these runs.
const CROWD_PINNED: [(&str, [u64; 3]); 5] = [
    ("pct", [0xe08dc3799a1eb2fb, 0xe9c7db35ace6b773, 0x2848fda86463238c]),
    ("pctvb", [0x00aa997e56e5c1dc, 0x87d5ddf3376efa40, 0xa1233bca600a4a79]),
    ("threadbound", [0x69f986347953a084, 0x7fb62d4ef6ed0867, 0x54445ab91903e97c]),
    ("combined", [0x52e10937c5332a9c, 0x91f49af47f463c6a, 0x11ed63fced32ea97]),
    ("portfolio", [0x20e4c4dcd2fef9cb, 0xe52e8a76c6ae8a98, 0x34b7bac93b06d337]),
];

#[test]
fn many_threads_schedules_are_pinned() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut got = Vec::new();
    for (name, _) in CROWD_PINNED {
        let kind = StrategyKind::from_name(name).expect("a registered strategy");
        let seeds: Vec<u64> =
            (0..3).map(|seed| fingerprint(run_of(kind.clone(), seed, 40), crowd)).collect();
        got.push((name, seeds));
    }
    assert_pinned("crowd", &got, &CROWD_PINNED);
}

/// Fails unless each configuration's fingerprints (`got`, by name) are the `pinned` ones of
/// `program`, printing every fingerprint to paste when a change of schedules was meant.
fn assert_pinned(program: &str, got: &[(&str, Vec<u64>)], pinned: &[(&str, [u64; 3])]) {
    let text: String = got
        .iter()
        .map(|(name, seeds)| {
            let seeds: Vec<String> = seeds.iter().map(|h| format!("{h:#018x}")).collect();
            format!("    (\"{name}\", [{}]),\n", seeds.join(", "))
        })
        .collect();
    for ((name, seeds), (_, pinned)) in got.iter().zip(pinned) {
        assert_eq!(
            seeds.as_slice(),
            pinned,
            "{name} on {program}: the schedules changed; now:\n{text}"
        );
    }
}

/// A thief takes one slot while an owner fills four slots, runs a write loop on a counter and
/// empties the slots, then raises a flag a waiter spins on (`yield_now`, noting the counter
/// each time it looks): once the thief is done, the owner runs alone while the waiter spins,
/// and most points have no choice (the corpus's work-stealing deque: two in three), but the
/// one after each write, which lets the waiter run again. The strategies that let the engine
/// pass over such points (`Strategy::skips_forced`: the walks, SURW, race reversal in the
/// executions that try no target, the priority strategies) read them from the trace at their
/// next decision, the write-loop rule's memory of the owner's last write and the change
/// points included; these runs hold them to the schedules of when they were asked at every
/// point.
fn owner_alone() {
    let slots: Arc<Vec<AtomicUsize>> = Arc::new((0..4).map(|_| AtomicUsize::new(0)).collect());
    let taken = Arc::new(AtomicUsize::new(0));
    let flag = Arc::new(AtomicUsize::new(0));
    let (s2, t2) = (slots.clone(), taken.clone());
    let thief = thread::spawn(move || {
        let v = s2[0].swap(0, SeqCst);
        note(1, v as u64);
        t2.fetch_add(v, SeqCst);
    });
    let own = Arc::new(AtomicUsize::new(0));
    let (f2, o2) = (flag.clone(), own.clone());
    let waiter = thread::spawn(move || {
        // What the owner's loop had done each time the waiter looked: where it interleaved.
        while f2.load(SeqCst) == 0 {
            note(2, o2.load(SeqCst) as u64);
            thread::yield_now();
        }
        note(2, f2.load(SeqCst) as u64);
    });
    let owner = thread::spawn(move || {
        for (i, s) in slots.iter().enumerate() {
            s.store(i + 1, SeqCst);
        }
        for _ in 0..6 {
            own.fetch_add(1, SeqCst);
        }
        for s in slots.iter() {
            let v = s.swap(0, SeqCst);
            note(0, v as u64);
            taken.fetch_add(v, SeqCst);
        }
        note(0, taken.load(SeqCst) as u64);
        flag.store(1, SeqCst);
    });
    thief.join().unwrap();
    owner.join().unwrap();
    waiter.join().unwrap();
}

/// [`owner_alone`] under the strategies that pass over points with no choice (the random and
/// uniform walks, SURW, race reversal, revfuzz, and the priority strategies with their
/// profiling) and the default with a target, seeds 0 to 2, 700
/// executions each (past revfuzz's first 500): pinned at the values of when every point was
/// asked (commit 867d4c6).
const ALONE_PINNED: [(&str, [u64; 3]); 9] = [
    ("random", [0xaf7ddc14e60a75eb, 0x767ea14aa685928e, 0x512a2bdf6fac5ad7]),
    ("uniform", [0xf63c1dede3a24ca5, 0xc2b8b06e5421988b, 0x10e26eb93c4c39e0]),
    ("surw", [0x33f6ba69bee36f18, 0x05b1b856ac37552d, 0x58b4ecf680a8edd7]),
    ("reversal", [0xb4ce78747a131d32, 0x188e2c4690fff8ce, 0x0c5ae8c3c641305b]),
    ("revfuzz", [0x47a397a7ad19d751, 0xd13f2adbbad825a1, 0x013dcb2b80cc556d]),
    ("pct", [0x3759c2cfdd68319e, 0x5433a9aaf9f6a9a1, 0x1639a0a1faddb872]),
    ("pctvb", [0x9ed62781c281b4c4, 0xd1306b5d089c8037, 0x9e152c1020567cd5]),
    ("combined", [0xa8a9f6491ee66c25, 0x24c6fe88cab8e284, 0x54e7caf96e51f2f2]),
    ("default with a target", [0xe91712c4bc364de1, 0x0b6672b5842c2f66, 0xa46b0a488ab77ad5]),
];

#[test]
fn schedules_of_threads_alone_are_pinned() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let combined = StrategyKind::from_name("combined").expect("a registered strategy");
    let mut got = Vec::new();
    for (name, _) in ALONE_PINNED {
        let seeds: Vec<u64> = (0..3)
            .map(|seed| {
                let config = match name {
                    "default with a target" => {
                        run_of(combined.clone(), seed, EXECUTIONS).explore_every(2)
                    }
                    _ => {
                        let kind = StrategyKind::from_name(name).expect("a registered strategy");
                        run_of(kind, seed, EXECUTIONS)
                    }
                };
                fingerprint(config, owner_alone)
            })
            .collect();
        got.push((name, seeds));
    }
    assert_pinned("owner_alone", &got, &ALONE_PINNED);
}
