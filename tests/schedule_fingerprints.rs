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
            0x9d0a58ea461293b8,
            0x92054a74c6486177,
            0x37856207f2d1a6ac,
            0x99f2cffee6206fd6,
            0xf343c5511c0de3cd,
        ],
        [
            0xb8e49a81a1c43681,
            0xd7c6d69f07006730,
            0x393c5c29634f9791,
            0xed1aadd1434b5260,
            0x43c972e00812201b,
        ],
        [
            0x68a6402d34b08533,
            0xa9bd5ef950fb24cd,
            0x6558b5cab6243743,
            0x0acefaedfe072514,
            0x0c79882b431671e9,
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
            0x627df3042ecc841d,
            0x32e4b2381ccd82bf,
            0xf4e7ebbe0f291e67,
            0x243a5e0c5c88ab3f,
            0x0d35692cc96c519f,
        ],
        [
            0x309b38492e55e589,
            0xfebe1650cc52b93a,
            0x3faae967d572b1af,
            0x7f5b61b62e8620e8,
            0x59dd3187c4979fa2,
        ],
        [
            0x9ad681822c6dcc83,
            0x159091b1d0726b92,
            0x0aaa80780851af5b,
            0x3cc4278ac63c00a4,
            0xcdaeb49cc4437cda,
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
            0x30914360329cc70c,
            0x9d59669f2ae538b8,
            0x9849dd174b9e9cb7,
            0x756da7b7af9cb812,
            0x705467320b129af3,
        ],
        [
            0x810972879e5623d5,
            0xf370326ef33973b5,
            0x698df712e005dcca,
            0x4a501c60d8ad5a8b,
            0x9203559b2e97001e,
        ],
        [
            0xcae19c69ccb76996,
            0x294850dd2c301016,
            0xb4f2ee9688f51dc4,
            0x269a717857511dfd,
            0x78bbf4bfdf1a67b8,
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
            0x1299aff71b4d2ec2,
            0x9c1207c31a0b940b,
            0xbf6ae3613cf05d15,
            0x9deed2c03bd5929a,
            0x8a6f52bf7c2ae278,
        ],
        [
            0xfbf9cbb6b8dfcd40,
            0xb6ccebd9c9125a96,
            0x4acd4d489ba31a40,
            0xe2265084d3f06fb4,
            0xc7046af5ba0ae2ac,
        ],
        [
            0x9a219b9f81eedc92,
            0x9a0472be286b5060,
            0x1e33942c50f94076,
            0xee0c9dbd0def9d3e,
            0x5bff3c7116a0be95,
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
            0x26d883574946e8fd,
            0xec254cc8dc7aa3be,
            0x123e7c75dd8b4bbd,
            0xc0d33c34cf4752a6,
            0xbbfcc0373bcdc0c3,
        ],
        [
            0x0f7694824713ed1a,
            0xd9a1ab7ef5b0a006,
            0xe9e4978ec4d724b5,
            0xd3238a566fa08b1e,
            0x20e582825e729a5d,
        ],
        [
            0x224e5a5991455102,
            0xa661444657baea4f,
            0x38f40c26733318ad,
            0xdcdc42d070ce032a,
            0x988c3763c3b81791,
        ],
        [
            0x4e426ffbe49a3459,
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
