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
            0xfc79ad08b41e4891,
            0x30622e2380f01b86,
            0xefd581a2ed7bbf69,
            0x00331c3c3f2e03c6,
            0x833675f73669e29f,
        ],
        [
            0x7c4fc7f10deff14f,
            0x6744a68b15dba52b,
            0xc643d82e7d18dacd,
            0x83d6e79a1ecd2b81,
            0xf94f9f1b99d73523,
        ],
        [
            0x2df03563d95016cb,
            0xc870d37311da154d,
            0x9f4b2ebf26927431,
            0xae68bb76c57bb6c9,
            0xffdd558da7d60f19,
        ],
        [
            0x9194d4d721edf16d,
            0x6721cf01d629a7ee,
            0x8a6746dfa4efad41,
            0xf0c197b62e588b30,
            0x2e1a5ea36724869a,
        ],
    ],
    // surw
    [
        [
            0xf86e361ab3d6f0d4,
            0x63b5018440b8f260,
            0xa5559aa4346bd0ed,
            0x8f18d487a18561b3,
            0x5859240b905e5587,
        ],
        [
            0x521928b8b9a736f5,
            0xa92f1300e514d486,
            0xc320b634fd0e051b,
            0x763d20018cdd0b98,
            0xbd01b144dea55fd4,
        ],
        [
            0xd7d2e2b2c9c7381d,
            0xb18e2cef5665631f,
            0x5c564c7b0a1a206b,
            0x58c5bb12d25401f7,
            0x2d7431ec2f6c374f,
        ],
        [
            0x422c8ffb98dd911d,
            0x9f1cac797b05bc40,
            0xd743e378d9949f8d,
            0xa9bdd76619665fdb,
            0x744ed68e367ed847,
        ],
    ],
    // greybox
    [
        [
            0x98ce9b892f8bf4ed,
            0x35b7d8737b3921c4,
            0xb5be501acaf222a8,
            0x35129576915e71c5,
            0xc027319e2e9cf382,
        ],
        [
            0x9a8b62c9c944554d,
            0xec33a570566da5bd,
            0x2ec2703442379d6c,
            0x96561b4526d5d7c2,
            0x61ab9f7ffdd17ddd,
        ],
        [
            0x4d6863af768dc9ca,
            0x3a4c464767e8294e,
            0xd777756570a7caed,
            0xaf6b2d76e7090ed4,
            0x4b5ef94e0c63d923,
        ],
        [
            0xebe457b1a3805951,
            0x7d68bb3c205ace06,
            0x31a47d2cc6cdd941,
            0x01cf3c7adcc10893,
            0xadf2eca33d5d99ec,
        ],
    ],
    // revfuzz
    [
        [
            0x4fd2010fdf621860,
            0x0f19fe0cb42d8473,
            0x79407476067cb7a8,
            0xc6d8db69eb750cb2,
            0x2969a8244251bb36,
        ],
        [
            0xe559fb4274d05c73,
            0xf5b821219a746718,
            0x74f7be513ab4018a,
            0x038e301bace96249,
            0xbdbc82338f61535a,
        ],
        [
            0xa00e487a6e8a9905,
            0xb48a68c7378a2ba9,
            0x5534b6a3a8448816,
            0x62e46ad04de91f64,
            0xa98e4158324a2fbc,
        ],
        [
            0x6cb40b024aa0316b,
            0x9ee43ea61b39c908,
            0xacec5d5dd3951753,
            0xea89f193817c5b35,
            0x9ed897a957ce2789,
        ],
    ],
    // combined
    [
        [
            0x5cf0ec0e34367a73,
            0xee43a17f264e9402,
            0xab0cb19c1e4c9d60,
            0x5bde152ada3afe40,
            0xa8903b9e04397c36,
        ],
        [
            0x38a3ff78fcc1d4cb,
            0xb27ffe89ff9812b2,
            0xebfa8120bb7a3ffa,
            0xf8d062349d7e95b5,
            0xb362971017f3e547,
        ],
        [
            0x2f022483e4665368,
            0x0b1966dbf49e5f8b,
            0xe0a1ad24bf6d6183,
            0x43a4c3476104627b,
            0x36e2fdfd189a8afb,
        ],
        [
            0xae5613e384aca73c,
            0xa34d58bb8a9b6c2f,
            0x69c74a19b7b9b24e,
            0x84d009a3f585b497,
            0x618d242d16ccf5e1,
        ],
    ],
    // default with a target
    [
        [
            0xc730f8b00ff94c78,
            0xa1637769194dbf3c,
            0xe548e9ac7a91cc7c,
            0xdf6738ce8a9550f8,
            0x1636f7ae2d848444,
        ],
        [
            0x73aeb2d6a9e4a0fe,
            0xd145505e283ceb88,
            0x9dda9a156a364110,
            0x3327841be3394bf7,
            0x50aecaa8a0315464,
        ],
        [
            0x7603654a2531c421,
            0xe10931348466c16e,
            0x8020b6faf7c91b54,
            0xc6fc55a862094cfd,
            0x749ee676e38cdf95,
        ],
        [
            0x70b061df95e240fd,
            0xf80b44345eefeca3,
            0xc5f166027b2bcbae,
            0xe07af3a6934104e0,
            0xb6f93e9fbc29f919,
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
