#!/usr/bin/env bash
# Compares the speed of two builds of pctvb on one bug-free corpus program: runs the corpus
# example `strategy_instructions` of each, alternately, ROUNDS times (pinned to one core when
# `taskset` exists), and prints each build's median and fastest wall time and their ratio.
#
# Usage: scripts/ab-runs.sh REV_A REV_B PROGRAM STRATEGY EXECUTIONS RUNS ROUNDS
#   REV_A, REV_B  git revisions (`HEAD` for the last commit; `.` for the working tree)
#   PROGRAM, STRATEGY, EXECUTIONS, RUNS  as for strategy_instructions (see its doc comment)
# Example: scripts/ab-runs.sh HEAD~1 HEAD prodcons combined 1000 100 21
#
# Alternating runs of the same binaries see the same machine: criterion measures one build
# after the other, and a shared machine's load moves between the two by as much as a small
# change is worth. Each revision is built in its own worktree and target directory under
# target/ab/, with the working tree's copy of the example (older revisions' copies may not
# take RUNS). Takes a few minutes for the two builds, then RUNS x ROUNDS x 2 runs.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 7 ]; then
    sed -n '6,9p' "$0" >&2
    exit 2
fi
rev_a=$1 rev_b=$2 program=$3 strategy=$4 executions=$5 runs=$6 rounds=$7
for n in "$executions" "$runs" "$rounds"; do
    case $n in
        '' | *[!0-9]*) echo "EXECUTIONS, RUNS and ROUNDS must be numbers, not '$n'" >&2; exit 2 ;;
    esac
done
root=$(pwd)
ab="$root/target/ab"
mkdir -p "$ab"
# The worktrees go when the script ends; their target directories stay, for the next build.
cleanup() {
    for t in "$ab"/tree-*; do
        [ -d "$t" ] && git worktree remove --force "$t" 2>/dev/null || true
    done
}
trap cleanup EXIT
example="$root/corpus/examples/strategy_instructions.rs"

# Builds revision $1 and prints its binary's path.
build() {
    local rev=$1 dir
    if [ "$rev" = . ]; then
        CARGO_TARGET_DIR="$ab/target-worktree" cargo build -q --release -p pctvb-corpus \
            --example strategy_instructions >&2
        echo "$ab/target-worktree/release/examples/strategy_instructions"
        return
    fi
    local sha
    sha=$(git rev-parse --verify -q "$rev^{commit}") || { echo "no revision '$rev'" >&2; exit 2; }
    dir="$ab/tree-$sha"
    if [ ! -d "$dir" ]; then
        git worktree add -q --detach "$dir" "$sha" >&2
    fi
    cp "$example" "$dir/corpus/examples/strategy_instructions.rs"
    (cd "$dir" && CARGO_TARGET_DIR="$ab/target-$sha" cargo build -q --release \
        -p pctvb-corpus --example strategy_instructions >&2)
    echo "$ab/target-$sha/release/examples/strategy_instructions"
}

bin_a=$(build "$rev_a")
bin_b=$(build "$rev_b")
# One short run of each first, its errors shown.
source scripts/timing-common.sh
for bin in "$bin_a" "$bin_b"; do
    check_run "$bin" "$program" "$strategy"
done
times="$ab/times.txt"
: >"$times"
for _ in $(seq "$rounds"); do
    for side in A B; do
        bin=$bin_a
        [ "$side" = B ] && bin=$bin_b
        start=$(date +%s%N)
        "${pin[@]}" "$bin" "$program" "$strategy" "$executions" "$runs" 2>/dev/null
        end=$(date +%s%N)
        echo "$side $(((end - start) / 1000000))" >>"$times"
    done
done
python3 - "$times" "$rev_a" "$rev_b" <<'PY'
import statistics, sys
times = {"A": [], "B": []}
for line in open(sys.argv[1]):
    side, ms = line.split()
    times[side].append(int(ms))
for side, rev in (("A", sys.argv[2]), ("B", sys.argv[3])):
    t = times[side]
    print(f"{side} ({rev}): median {statistics.median(t):.0f} ms, fastest {min(t)} ms, {len(t)} runs")
a, b = statistics.median(times["A"]), statistics.median(times["B"])
print(f"B / A, medians: {b / a:.3f}; fastest: {min(times['B']) / min(times['A']):.3f}")
PY
