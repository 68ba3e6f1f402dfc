# Shared by scripts/ab-runs.sh and scripts/vs-shuttle.sh (sourced, not run): the check run of
# the corpus example `strategy_instructions` and the core the timed runs are pinned to.

# Runs "$1" (the example's binary) on program $2 under strategy $3 for one execution, and
# stops the calling script with the example's own message if that fails (an unknown program
# or strategy, a failure): the timed runs hide their output.
check_run() {
    local out
    if ! out=$("$1" "$2" "$3" 1 1 2>&1); then
        echo "$out" >&2
        echo "the check run failed: $1 $2 $3 1 1" >&2
        exit 2
    fi
}

# The command prefix that pins a timed run to the last core, in the array `pin` (empty where
# `taskset` is missing).
pin=()
if command -v taskset >/dev/null; then
    pin=(taskset -c "$(($(nproc) - 1))")
fi
