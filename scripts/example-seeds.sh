#!/usr/bin/env bash
# Measures the executions each buggy example needs to find its bug over seeds 1 to 100, the
# figures quoted in the examples' headers.
# Usage: scripts/example-seeds.sh [example ...]   (default: every buggy example)
# Each example runs with the strategy it names (the default, or random for treiber_aba).
set -euo pipefail
cd "$(dirname "$0")/.."
examples=("$@")
if [ ${#examples[@]} -eq 0 ]; then
    examples=(async_lost_wakeup bank_transfer bounded_channel_lost_wakeup lazy_init_race
              lock_order_deadlock treiber_aba)
fi
cargo build --release -q --examples
target="${CARGO_TARGET_DIR:-target}"
for example in "${examples[@]}"; do
    counts=()
    for seed in $(seq 1 100); do
        n=$(PCTVB_SEED=$seed PCTVB_PROGRESS=0 "$target/release/examples/$example" 2>&1 \
            | grep -o "failing execution [0-9]*" | head -1 | awk '{print $3 + 1}')
        counts+=("${n:-none}")
    done
    printf '%s\n' "${counts[@]}" | awk -v name="$example" '
        $1 == "none" { missed++; next }
        { n++; sum += $1; if (min == "" || $1 < min) min = $1; if ($1 > max) max = $1 }
        END { printf "%s: found on %d of 100 seeds, after %d to %d executions (mean %.1f)\n",
              name, n, min, max, sum / n }'
done
