#!/usr/bin/env bash
# Executions per second in the dev profile, what `cargo test` builds: pctvb's default with a
# target against shuttle's random, URW and PCT (depth 3) schedulers on the four bug-free corpus
# programs of `benches/runtime.rs`'s `executions/correct/*`, in three builds of the corpus
# example `strategy_instructions`:
#   - `dev`: the dev profile as it is (every crate at opt-level 0);
#   - `pctvb`: the same with `[profile.dev.package.pctvb] opt-level = 3`, the advice of the
#     guide's speed section (pctvb only);
#   - `deps`: the same with every dependency at opt-level 3 (`[profile.dev.package."*"]`, and
#     pctvb, a member of this workspace, named), for shuttle and pctvb alike.
# The test programs themselves, like a user's tests, stay at opt-level 0 in all three.
# Writes docs/RESULTS-debug-build.md. Each round runs every program, build and tool once, in an
# order that rotates from round to round, pinned to one core; the document gives the medians.
#
# Usage: scripts/debug-build-speed.sh [ROUNDS]   (default 5; about 20 s a round, plus three
# debug builds of about a minute each)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
case $rounds in
    '' | *[!0-9]* | 0) echo "ROUNDS must be a positive number, not '$rounds'" >&2; exit 2 ;;
esac
dir=target/debug-speed
CARGO_TARGET_DIR="$dir/dev" cargo build -q -p pctvb-corpus --example strategy_instructions
CARGO_TARGET_DIR="$dir/pctvb" cargo build -q -p pctvb-corpus --example strategy_instructions \
    --config 'profile.dev.package.pctvb.opt-level=3'
CARGO_TARGET_DIR="$dir/deps" cargo build -q -p pctvb-corpus --example strategy_instructions \
    --config 'profile.dev.package."*".opt-level=3' \
    --config 'profile.dev.package.pctvb.opt-level=3'
programs=(counter atomic prodcons ws)
shuttle=(shuttle-random shuttle-urw shuttle-pct)
source scripts/timing-common.sh
for build in dev pctvb deps; do
    check_run "$dir/$build/debug/examples/strategy_instructions" counter default
done
for build in dev deps; do
    for side in "${shuttle[@]}"; do
        check_run "$dir/$build/debug/examples/strategy_instructions" counter "$side"
    done
done
# The combinations, in a fixed order; each round starts at a different one. Shuttle runs in
# the builds that raise its level or none (`pctvb` raises only pctvb's).
combos=()
for program in "${programs[@]}"; do
    for build in dev pctvb deps; do
        combos+=("$program $build default")
    done
    for build in dev deps; do
        for side in "${shuttle[@]}"; do
            combos+=("$program $build $side")
        done
    done
done
# The pctvb functions compiled into the test crate (pctvb-corpus) in the `pctvb` build:
# generic ones and those inlined into them are compiled at the test crate's level, 0, whatever
# pctvb's own. The facade's are meant to be thin; the engine's must not be there.
objects="$dir/corpus-objects"
rm -rf "$objects" && mkdir -p "$objects"
(cd "$objects" && ar x "$(ls -t ../pctvb/debug/deps/libpctvb_corpus-*.rlib | head -1)")
nm --defined-only -C "$objects"/*.o | sed -n 's/^[0-9a-f]* [tTwW] //p' |
    grep -E '^<?pctvb::(runtime|schedulers|vars)::' | sort -u >"$dir/in-test-crate.txt"
rates="$dir/rates.txt"
: >"$rates"
n=${#combos[@]}
for round in $(seq "$rounds"); do
    for k in $(seq 0 $((n - 1))); do
        read -r program build side <<<"${combos[$(((round * 7 + k) % n))]}"
        # 1,000 executions a run, as the bench; 5 runs, so an invocation takes 0.2-0.6 s.
        out=$("${pin[@]}" "$dir/$build/debug/examples/strategy_instructions" \
            "$program" "$side" 1000 5 2>&1 >/dev/null)
        per_run=$(sed -n 's/^executions per run: //p' <<<"$out")
        ns=$(sed -n 's/^runs took: \([0-9]*\) ns$/\1/p' <<<"$out")
        echo "$program $build $side $per_run $ns" >>"$rates"
    done
done
python3 - "$rates" "$rounds" "$(rustc --version)" "$(uptime)" "$dir/in-test-crate.txt" \
    <<'PY' >docs/RESULTS-debug-build.md
import datetime, platform, statistics, sys
path, rounds, rustc, uptime, in_test = sys.argv[1:6]
rounds = int(rounds)
rates = {}
for line in open(path):
    program, build, side, per_run, ns = line.split()
    rates.setdefault((program, build, side), []).append(int(per_run) * 5 / (int(ns) / 1e9))
med = {k: statistics.median(v) for k, v in rates.items()}
programs = ["counter", "atomic", "prodcons", "ws"]
names = {"counter": "counter", "atomic": "atomic_counter", "prodcons": "prodcons_fixed",
         "ws": "ws_deque_fixed"}
shuttle = {"shuttle-random": "random", "shuttle-urw": "URW", "shuttle-pct": "PCT"}
def fastest(program, build):
    side = max(shuttle, key=lambda s: med[(program, build, s)])
    return med[(program, build, side)], shuttle[side]
load = uptime.split("load average:")[-1].strip()
print("# Speed in a debug build (what `cargo test` builds)\n")
print("Regenerate with `scripts/debug-build-speed.sh` (it writes this file). Measured",
      f"{datetime.date.today()} on {platform.machine()}, {rustc}; load average when it",
      f"finished: {load}. Medians of {rounds} rounds; each round runs every program, build",
      "and tool once (5 runs of 1,000 executions, on one core), in an order that rotates from",
      "round to round.\n")
print("`cargo test` compiles pctvb with the dev profile: no optimizations. One entry in the",
      "Cargo.toml of the test crate's workspace compiles pctvb alone with them, while the",
      "tests themselves stay unoptimized and debuggable:\n")
print("```toml\n[profile.dev.package.pctvb]\nopt-level = 3\n```\n")
print("The programs are the bug-free corpus programs of `benches/runtime.rs`",
      "(`executions/correct/*`), compiled at opt-level 0 in every build, as a user's tests",
      "are. pctvb runs its default with a target (the combined strategy and its explorer",
      "revfuzz, one execution in two, after 10 profiling executions). A release build of",
      "both tools is in RESULTS-runtime.md.\n")
print("## pctvb with and without the entry\n")
print("| program | dev profile | with the entry | speed-up |")
print("|---|---:|---:|---:|")
ups = []
for p in programs:
    dev, opt = med[(p, "dev", "default")], med[(p, "pctvb", "default")]
    ups.append(opt / dev)
    print(f"| {names[p]} | {dev:,.0f}/s | {opt:,.0f}/s | {opt / dev:.1f}x |")
print(f"\nThe entry multiplied pctvb's executions per second by {min(ups):.1f}x to",
      f"{max(ups):.1f}x.\n")
# Generic code of pctvb (and what it inlines) is compiled in the crate that uses it, at that
# crate's level: the engine must stay out of it for the entry to help.
found = [l.strip() for l in open(in_test) if l.strip()]
engine = ["Execution::point", "Execution::schedule", "execution::decide", "Execution::lock_point",
          "RawMutex::lock", "RawMutex::unlock", "Execution>::cell_access", "Execution>::atomic_done",
          "State::", "Races::", "VarTable::", "schedulers::"]
inside = [f for f in found if any(e in f for e in engine)]
print("What the entry cannot raise: pctvb's generic functions (a `Mutex<T>`'s, a spawn's,",
      "with the closures they take) and what they inline are compiled in the test crate, at",
      "its level. They are the facade's thin wrappers; the engine (the scheduling point, the",
      "strategies, the state) stays in pctvb's crate. In the corpus's test crate, the `pctvb::`",
      "functions of the runtime compiled there:",
      ", ".join(f"`{f}`" for f in found) + ".",
      "Of the engine's:", "none." if not inside else ", ".join(f"`{f}`" for f in inside) + ".")
print()
print("## Against shuttle\n")
print("shuttle's fastest of its random, URW and PCT (depth 3) schedulers, in the dev profile,",
      "and with every dependency at opt-level 3 (`[profile.dev.package.\"*\"] opt-level =",
      "3`, which raises shuttle's dependencies too, and pctvb's):\n")
print("| program | pctvb, dev | shuttle, dev | ratio | pctvb, deps at 3 | shuttle, deps at 3 |"
      " ratio |")
print("|---|---:|---:|---:|---:|---:|---:|")
for p in programs:
    dev, deps = med[(p, "dev", "default")], med[(p, "deps", "default")]
    (sdev, ndev), (sdeps, ndeps) = fastest(p, "dev"), fastest(p, "deps")
    print(f"| {names[p]} | {dev:,.0f}/s | {sdev:,.0f}/s ({ndev}) | {dev / sdev:.2f}x |"
          f" {deps:,.0f}/s | {sdeps:,.0f}/s ({ndeps}) | {deps / sdeps:.2f}x |")
PY
cat docs/RESULTS-debug-build.md
