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
use pctvb::sync::{Arc, Condvar, Mutex};
use pctvb::{thread, Config, StrategyKind};

/// The hash of what the current run's operations saw.
static SEEN: AtomicU64 = AtomicU64::new(0);

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

/// The configurations: name and builder by seed.
fn configs() -> Vec<(&'static str, BySeed)> {
    let named = |kind: StrategyKind| {
        move |seed: u64| {
            Config::new()
                .ignore_env()
                .seed(seed)
                .strategy(kind.clone())
                .iterations(EXECUTIONS)
                .minimize_runs(0)
                .workers(1)
        }
    };
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
            0x14028d42550e3ed0,
            0xc7ad18968ad22ac0,
            0xcc965c71bf68bac8,
            0x5dc9c7ffb79a0592,
            0xdd170dc83c601023,
        ],
        [
            0x1a6de6fda6153b85,
            0xf99cf2445d72f9e3,
            0xa0c8462ccdf7b826,
            0xac26de75fb0f802f,
            0xd8cb6dc9ef7c0c43,
        ],
        [
            0xf8fa9669995ea18d,
            0xbdcd9f6446e0adfc,
            0xbea4dc783ddba7c6,
            0x0356d0e004dfe800,
            0x0aedf0281916c4ee,
        ],
        [
            0x51bfae92ec83dde0,
            0x2f2db9149958ac01,
            0x3bd18f3112b76930,
            0x5582aa8c37e2714d,
            0xfb3f696c16c8ba45,
        ],
    ],
    // surw
    [
        [
            0x3ed08fb9d578545d,
            0x1f6225c36b506b04,
            0xffed220785cdec7c,
            0xe76893e981045773,
            0x9a868f8ed5ca374c,
        ],
        [
            0x790ee65a5d8c5226,
            0x583aca18669df307,
            0x7590ecc68ff7ff72,
            0x78dca5e649437dc5,
            0x8bdd5011c5af9cb0,
        ],
        [
            0xbbda590e5b82c649,
            0xa51181d33192546d,
            0x721a1b4215c30000,
            0xf1ddeee1b2e68d53,
            0x5b05441170e679b9,
        ],
        [
            0xeaaeccae948b9a6b,
            0xede85a3fe7b2e972,
            0xdbae79c753ddda4f,
            0x84168209b2f8f1f5,
            0x3c238424007913ce,
        ],
    ],
    // greybox
    [
        [
            0xb483726cc7f8b610,
            0xa53c60b62890c6fa,
            0xc3293fd304c654d9,
            0x1505d56cdeb51e92,
            0xc47884f37f8eb3a9,
        ],
        [
            0x99a84bc2d209ddd4,
            0xe918152b016ae86a,
            0xbb69c128c346a0d8,
            0x9158139559f690db,
            0xd44124c30b561bb7,
        ],
        [
            0x626e7350f934397b,
            0x31c49fc5a6059dbc,
            0x1f1604529dd57c4f,
            0x0a82692240921aec,
            0x979222d48b4f3090,
        ],
        [
            0xca33c1455f89a96e,
            0x147af60d45fd70fd,
            0xf5c12b336f9d1b9f,
            0xc6b54eabc54c9496,
            0x0bc26aac15bb4c80,
        ],
    ],
    // revfuzz
    [
        [
            0xbc24a2a266164f75,
            0x9cd0d66f5c57a6b1,
            0x3b9652947b058f8d,
            0xbbb1bcf193b36fb5,
            0x9df0cfba2e16f103,
        ],
        [
            0x8dbf5e5931b4b0dc,
            0x87a4e761d472f14d,
            0x5106150e96ef7ffc,
            0x9346e3f72747e48d,
            0x9ef9b7c4e630df12,
        ],
        [
            0x20d68cbbdfbd4b2e,
            0xbefc76c8c5083912,
            0x761e1621e01894b9,
            0x8493d49aebe18256,
            0x7c280086646f6d04,
        ],
        [
            0x1fa5c50953124f21,
            0x5a80114ec2a8e87a,
            0xeac49081c5072013,
            0x94a6e4e3d2b6046f,
            0x14f8615fcccf55a1,
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
            0x6feb25068f56d131,
            0x475e220eb9dafe1f,
            0xe6749832634b3466,
            0x8c03110c448310d1,
            0xd54e12a418d01ecd,
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
            0x95dc0205cc3609d4,
            0x9815b731fc719ea0,
            0xaeae65e97c5feaef,
            0xb4b8c5eb0673731a,
            0x949ba3ce8c0cb526,
        ],
        [
            0x2e605ffb01f54db6,
            0x5f893e5335de8a65,
            0x978d698b88510e17,
            0x13ee473c6081c7c1,
            0x1514ab81d855e091,
        ],
        [
            0xb02109d97f5a8e55,
            0x04005b6f3308df6f,
            0x7f1cf85536945542,
            0x54ba41eaa7314700,
            0xf3c0e81f56be6d4c,
        ],
        [
            0xa391fe0ffb72b474,
            0x6ee80574efe331c6,
            0x50ed354fbde31605,
            0xe76eb93dace5afc6,
            0xebd40c9b0f273a05,
        ],
    ],
];

#[test]
fn schedules_are_pinned() {
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
