#!/usr/bin/env bash
# Executions per second of pctvb's default with a target (the combined strategy and its
# explorer revfuzz, one in two, after 10 profiling executions) against shuttle's random, URW
# and PCT (depth 3) schedulers on one bug-free corpus program, in alternating runs on one
# core: the programs and configurations of `benches/runtime.rs`'s `executions/correct/*`, run
# by the corpus example `strategy_instructions`, which times its runs itself. Beside the
# default, the same rounds time pctvb's default without a target (SURW) and its random
# strategy: the engine with the cheapest choice there is, one draw at every point, which
# switches threads about as often as a walk does, so what it reaches bounds what a strategy
# that draws at every point and switches as often can reach on that program with this engine.
#
# Usage: scripts/vs-shuttle.sh PROGRAM EXECUTIONS RUNS ROUNDS
#   PROGRAM     counter | atomic | prodcons | ws | twostage (see strategy_instructions)
#   EXECUTIONS  executions per run (pctvb runs its 10 profiling executions on top)
#   RUNS        runs per invocation; ROUNDS  invocations of each of the six, interleaved
# Example: scripts/vs-shuttle.sh prodcons 1000 60 15
#
# Criterion (scripts/bench-results.sh) measures pctvb and then shuttle, one after the other;
# on a shared machine the load moves between the two by as much as 10%. Here each round runs
# all six, in an order that rotates from round to round, and the ratio is taken per round
# (pctvb's rate over the fastest of shuttle's three in the same round) as well as over the
# medians, against shuttle's fastest and against its URW. The numbers also go to
# vs-shuttle/PROGRAM.json in the target directory ($CARGO_TARGET_DIR, or target/), which
# scripts/bench-results.sh reads into docs/RESULTS-runtime.md.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 4 ]; then
    sed -n '12,16p' "$0" >&2
    exit 2
fi
program=$1 executions=$2 runs=$3 rounds=$4
for n in "$executions" "$runs" "$rounds"; do
    case $n in
        '' | *[!0-9]* | 0) echo "EXECUTIONS, RUNS and ROUNDS must be positive numbers, not '$n'" >&2; exit 2 ;;
    esac
done
cargo build -q --release -p pctvb-corpus --example strategy_instructions
target=${CARGO_TARGET_DIR:-target}
bin=$target/release/examples/strategy_instructions
sides=(default surw random shuttle-random shuttle-urw shuttle-pct)
# One short run of each first, its errors shown.
source scripts/timing-common.sh
for side in "${sides[@]}"; do
    check_run "$bin" "$program" "$side"
done
mkdir -p "$target/vs-shuttle"
rates=$target/vs-shuttle/rates.txt
: >"$rates"
for round in $(seq "$rounds"); do
    for k in "${!sides[@]}"; do
        side=${sides[$(((round + k) % ${#sides[@]}))]}
        out=$("${pin[@]}" "$bin" "$program" "$side" "$executions" "$runs" 2>&1 >/dev/null)
        per_run=$(sed -n 's/^executions per run: //p' <<<"$out")
        ns=$(sed -n 's/^runs took: \([0-9]*\) ns$/\1/p' <<<"$out")
        echo "$round $side $per_run $ns" >>"$rates"
    done
done
python3 - "$rates" "$program" "$runs" "$executions" "$rounds" "$target" <<'PY'
import json, statistics, sys
path, program, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
executions, rounds, target = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
by_side, by_round = {}, {}
for line in open(path):
    rnd, side, per_run, ns = line.split()
    rate = int(per_run) * runs / (int(ns) / 1e9)
    by_side.setdefault(side, []).append(rate)
    by_round.setdefault(rnd, {})[side] = rate
names = {"default": "pctvb default", "surw": "pctvb SURW", "random": "pctvb random",
         "shuttle-random": "shuttle random",
         "shuttle-urw": "shuttle URW", "shuttle-pct": "shuttle PCT (depth 3)"}
for side, rates in by_side.items():
    print(f"{names[side]:>22}: median {statistics.median(rates):>10,.0f} executions/s "
          f"(slowest {min(rates):,.0f}, fastest {max(rates):,.0f}), {len(rates)} rounds")
shuttle = [s for s in by_side if s.startswith("shuttle-")]
fastest = max(shuttle, key=lambda s: statistics.median(by_side[s]))
over_medians = statistics.median(by_side["default"]) / statistics.median(by_side[fastest])
per_round = sorted(r["default"] / max(r[s] for s in shuttle) for r in by_round.values())
print(f"{program}: pctvb default / shuttle's fastest ({names[fastest]}), medians: "
      f"{over_medians:.2f}x; per round (against the fastest of the three in that round): "
      f"median {statistics.median(per_round):.2f}x, range {per_round[0]:.2f}x-{per_round[-1]:.2f}x")
# Against URW alone: the baseline issue #18's title names.
urw_rounds = sorted(r["default"] / r["shuttle-urw"] for r in by_round.values())
over_urw = statistics.median(by_side["default"]) / statistics.median(by_side["shuttle-urw"])
print(f"{program}: pctvb default / shuttle URW, medians: {over_urw:.2f}x; per round: median "
      f"{statistics.median(urw_rounds):.2f}x, range {urw_rounds[0]:.2f}x-{urw_rounds[-1]:.2f}x")
# The default without a target, and the engine's floor (pctvb's random strategy), against
# shuttle's fastest in the same round.
others = {}
for side in ("surw", "random"):
    rounds_ratio = sorted(r[side] / max(r[s] for s in shuttle) for r in by_round.values())
    over = statistics.median(by_side[side]) / statistics.median(by_side[fastest])
    others[side] = {"medians": over, "per_round": rounds_ratio}
    print(f"{program}: {names[side]} / shuttle's fastest, medians: {over:.2f}x; per round: "
          f"median {statistics.median(rounds_ratio):.2f}x, range {rounds_ratio[0]:.2f}x-"
          f"{rounds_ratio[-1]:.2f}x")
summary = {
    "program": program, "executions": executions, "runs": runs, "rounds": rounds,
    "medians": {side: statistics.median(rates) for side, rates in by_side.items()},
    "fastest": fastest,
    "vs_fastest": {"medians": over_medians, "per_round": per_round},
    "vs_urw": {"medians": over_urw, "per_round": urw_rounds},
    "others_vs_fastest": others,
}
with open(f"{target}/vs-shuttle/{program}.json", "w") as f:
    json.dump(summary, f, indent=1)
PY
