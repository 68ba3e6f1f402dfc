#!/usr/bin/env bash
# Runs real crates' loom suites under pctvb (through pctvb-loom) and under loom, and writes
# docs/RESULTS-loom-suites.md (issue #17).
#
# The crates' published sources are fetched from the registry at run time, through cargo
# (a scratch crate that depends on them; `cargo metadata` says where cargo unpacked them),
# into target/loom-suites/, which is never committed. Each crate is copied twice: once with
# the one-line switch `loom = { package = "pctvb-loom", path = ... }` in place of its loom
# dependency, once as published (loom itself). Nothing in the crates' sources is edited,
# except in the injected-bug copies: each scripts/loom-patches/<name>-<version>-<bug>.patch
# (applied with `patch -p1`) gives one more pair of copies, run under pctvb (default mode)
# and under loom; a failing suite means the tool found the bug.
#
# Rows of crates not run this time are kept from the existing results document, so crates can
# be run one at a time; the "Failures" section quotes the logs present in target/loom-suites/.
#
# Usage: scripts/loom-suites.sh [crate-name ...]   (default: every crate in SUITES)
# Environment: LOOM_TIMEOUT (seconds per loom run, default 900), PCTVB_TIMEOUT (default 900).
# The timeouts used are printed in the document (a timed-out run is "timeout (N s)").
# Builds run under `nice -n 10` (they are the heavy part on a shared machine); the measured
# runs do not, since a test that reads the real clock (oneshot's 1 ms `recv_timeout`) can
# time out when its process is descheduled for longer than that.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/target/loom-suites"
RESULTS="$ROOT/docs/RESULTS-loom-suites.md"
LOOM_TIMEOUT="${LOOM_TIMEOUT:-900}"
PCTVB_TIMEOUT="${PCTVB_TIMEOUT:-900}"

# name | version | RUSTFLAGS | cargo test arguments (after --release) | loom's environment in the
# crate's CI | where that command comes from. The environment is given to the pctvb runs too, so
# a suite runs exactly as its CI runs it (pctvb-loom says once which LOOM_* it does not honour).
SUITES=(
  "oneshot|0.1.13|--cfg oneshot_loom|--features loom --test loom|LOOM_MAX_BRANCHES=100000|.github/workflows (loom job)"
  "concurrent-queue|2.5.0|--cfg loom|--features loom --test loom|LOOM_MAX_PREEMPTIONS=4|.github/workflows (loom job)"
  "sharded-slab|0.1.7|--cfg loom -C debug-assertions=on|--lib|LOOM_MAX_PREEMPTIONS=2 LOOM_CHECKPOINT_INTERVAL=1 LOOM_LOG=1 LOOM_LOCATION=1|bin/loom.sh, run by .github/workflows/ci.yml"
  "bytes|1.12.2|--cfg loom|--lib||.github/workflows/ci.yml (loom job; it builds in debug mode with -Dwarnings, here --release without -Dwarnings)"
  "st3|0.4.1|--cfg st3_loom|--tests|LOOM_MAX_PREEMPTIONS=3|.github/workflows/ci.yml (loom job)"
  "event-listener|5.4.2|--cfg loom|--test loom --features loom||.github/workflows/ci.yml of smol-rs/event-listener (loom job: no preemption bound)"
)

want=("$@")
selected=()
for s in "${SUITES[@]}"; do
  name="${s%%|*}"
  if [ ${#want[@]} -eq 0 ] || printf '%s\n' "${want[@]}" | grep -qx "$name"; then
    selected+=("$s")
  fi
done

mkdir -p "$OUT/fetch/src"
: > "$OUT/fetch/src/lib.rs"
{
  printf '[package]\nname = "loom-suites-fetch"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n[workspace]\n\n[dependencies]\n'
  for s in "${selected[@]}"; do
    IFS='|' read -r name version _ <<<"$s"
    printf '%s = "=%s"\n' "$name" "$version"
  done
} > "$OUT/fetch/Cargo.toml"
(cd "$OUT/fetch" && cargo fetch --quiet)

# Where cargo unpacked a package: its manifest's directory, from `cargo metadata`.
source_dir() {
  (cd "$OUT/fetch" && cargo metadata --format-version 1 --quiet) | python3 -c '
import json, os, sys
name, version = sys.argv[1], sys.argv[2]
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == name and p["version"] == version:
        print(os.path.dirname(p["manifest_path"]))
        break
' "$1" "$2"
}

# The one-line switch: the loom dependency (any section, any cfg) becomes pctvb-loom, by
# path; the copy becomes its own workspace so it does not join this one.
switch_to_pctvb() {
  python3 - "$1/Cargo.toml" "$ROOT/loom" <<'PY'
import re, sys
path, loom_dir = sys.argv[1], sys.argv[2]
text = open(path).read()
# `[...dependencies.loom]` tables, as a published (normalized) Cargo.toml writes them.
def table(m):
    body = re.sub(r'(?m)^version\s*=.*$', f'package = "pctvb-loom"\npath = "{loom_dir}"', m.group(2))
    return m.group(1) + body
new, n = re.subn(r'(?ms)^(\[[^\]\n]*dependencies\.loom\]\n)(.*?)(?=^\[|\Z)', table, text)
# `loom = "..."` / `loom = { ... }` lines, as hand-written manifests have them.
new, m = re.subn(r'(?m)^loom\s*=\s*("[^"]*"|\{[^}]*\})',
                 f'loom = {{ package = "pctvb-loom", path = "{loom_dir}" }}', new)
if n + m == 0:
    sys.exit(f"{path}: no loom dependency found")
open(path, "w").write(new + "\n[workspace]\n")
PY
}

standalone() {
  printf '\n[workspace]\n' >> "$1/Cargo.toml"
}

# Runs a command with a timeout; prints "pass|fail|timeout" "|seconds|" "tests passed/failed".
measure() {
  local dir="$1" log="$2"; shift 2
  local start end rc=0 status
  start=$(date +%s.%N)
  (cd "$dir" && timeout "$TIMEOUT" env "$@") >"$log" 2>&1 || rc=$?
  end=$(date +%s.%N)
  case "$rc" in
    0) status=pass ;;
    124) status="timeout (${TIMEOUT} s)" ;;
    *) status=fail ;;
  esac
  # Sum the "test result" lines of every test binary the command ran.
  local tests
  tests=$(grep -Eo 'test result: [a-zA-Z]+\. [0-9]+ passed; [0-9]+ failed' "$log" \
    | awk '{p += $4; f += $6} END {printf "%d passed, %d failed", p, f}')
  # The time: the test binaries' own, as libtest reports it ("finished in N s", summed over
  # the binaries run), so cargo's start-up and freshness check, which differ between the two
  # copies' target directories, are left out; the command's elapsed time when no binary
  # finished (a timeout, a build failure).
  local secs
  secs=$(grep -Eo 'finished in [0-9.]+s' "$log" | awk '{t += $3} END {if (NR) printf "%.2f", t}')
  [ -n "$secs" ] || secs=$(echo "$end - $start" | bc)
  printf '%s|%.2f|%s\n' "$status" "$secs" "$tests"
}

# Builds a copy's loom test (quietly; the log says why if not).
build_copy() {
  local dir="$1" variant="$2" log="$3"
  (cd "$dir" && RUSTFLAGS="$cfg" CARGO_TARGET_DIR="$OUT/target-$variant" \
    nice -n 10 cargo test --release $args --no-run --quiet) >"$log" 2>&1
}

rows=()
bug_rows=()
ran=()
for s in "${selected[@]}"; do
  IFS='|' read -r name version cfg args loom_env ci_source <<<"$s"
  src="$(source_dir "$name" "$version")"
  [ -n "$src" ] || { echo "no source for $name $version" >&2; exit 1; }
  for variant in pctvb loom; do
    rm -rf "$OUT/$name-$version-$variant"
    cp -r "$src" "$OUT/$name-$version-$variant"
    chmod -R u+w "$OUT/$name-$version-$variant"
  done
  switch_to_pctvb "$OUT/$name-$version-pctvb"
  standalone "$OUT/$name-$version-loom"

  echo "== $name $version: building" >&2
  notes=""
  for variant in pctvb loom; do
    dir="$OUT/$name-$version-$variant"
    build() {
      (cd "$dir" && RUSTFLAGS="$cfg" CARGO_TARGET_DIR="$OUT/target-$variant" \
        nice -n 10 cargo test --release $args --no-run --quiet) >"$OUT/$name-$variant-build.log" 2>&1
    }
    if ! build; then
      # A published lockfile may pin dependencies older than pctvb builds with (issue #17:
      # e.g. a syn 2 without `Expr::RawAddr`): update the copy's lockfile and say so.
      echo "   $variant: build with the published Cargo.lock failed; cargo update" >&2
      cp "$OUT/$name-$variant-build.log" "$OUT/$name-$variant-build-locked.log"
      (cd "$dir" && cargo update --quiet) >>"$OUT/$name-$variant-build.log" 2>&1 || true
      notes+="$variant: the published Cargo.lock did not build ($(grep -m1 -E '^error' "$OUT/$name-$variant-build-locked.log" | cut -c1-120)); ran cargo update. "
      build || { echo "build failed: see $OUT/$name-$variant-build.log" >&2; notes+="$variant: build failed. "; }
    fi
  done

  echo "== $name $version: pctvb (default)" >&2
  TIMEOUT=$PCTVB_TIMEOUT
  # shellcheck disable=SC2086
  default=$(measure "$OUT/$name-$version-pctvb" "$OUT/$name-pctvb-default.log" \
    $loom_env RUSTFLAGS="$cfg" CARGO_TARGET_DIR="$OUT/target-pctvb" cargo test --release $args)
  echo "== $name $version: pctvb (PCTVB_CONFIDENCE=0.99)" >&2
  # shellcheck disable=SC2086
  confident=$(measure "$OUT/$name-$version-pctvb" "$OUT/$name-pctvb-confidence.log" \
    $loom_env PCTVB_CONFIDENCE=0.99 RUSTFLAGS="$cfg" CARGO_TARGET_DIR="$OUT/target-pctvb" cargo test --release $args)
  echo "== $name $version: loom ($loom_env)" >&2
  TIMEOUT=$LOOM_TIMEOUT
  # shellcheck disable=SC2086
  loom=$(measure "$OUT/$name-$version-loom" "$OUT/$name-loom.log" \
    $loom_env RUSTFLAGS="$cfg" CARGO_TARGET_DIR="$OUT/target-loom" cargo test --release $args)
  rows+=("$name $version|$default|$confident|$loom|${notes:-}")
  ran+=("$name $version")

  # Injected bugs: a third (and fourth) copy with the patch applied.
  for patch in "$ROOT"/scripts/loom-patches/"$name-$version"-*.patch; do
    [ -f "$patch" ] || continue
    bug="$(basename "$patch" .patch)"
    for variant in pctvb loom; do
      rm -rf "$OUT/$bug-$variant"
      cp -r "$OUT/$name-$version-$variant" "$OUT/$bug-$variant"
      patch -p1 --quiet -d "$OUT/$bug-$variant" <"$patch"
      echo "== $bug: building ($variant)" >&2
      build_copy "$OUT/$bug-$variant" "$variant" "$OUT/$bug-$variant-build.log" \
        || echo "build failed: see $OUT/$bug-$variant-build.log" >&2
    done
    echo "== $bug: pctvb (default)" >&2
    TIMEOUT=$PCTVB_TIMEOUT
    # shellcheck disable=SC2086
    bug_pctvb=$(measure "$OUT/$bug-pctvb" "$OUT/$bug-pctvb-default.log" \
      $loom_env RUSTFLAGS="$cfg" CARGO_TARGET_DIR="$OUT/target-pctvb" cargo test --release $args)
    echo "== $bug: loom ($loom_env)" >&2
    TIMEOUT=$LOOM_TIMEOUT
    # shellcheck disable=SC2086
    bug_loom=$(measure "$OUT/$bug-loom" "$OUT/$bug-loom.log" \
      $loom_env RUSTFLAGS="$cfg" CARGO_TARGET_DIR="$OUT/target-loom" cargo test --release $args)
    bug_rows+=("$name $version|\`scripts/loom-patches/$bug.patch\`|$bug_pctvb|$bug_loom")
  done
done

# Keeps the rows (first cell: crate and version) of crates not run this time.
kept_rows() {
  local section="$1"
  [ -f "$RESULTS" ] || return 0
  awk -v s="$section" '/^## /{in_s = ($0 == s)} /^# /{in_s = (s == "main")} in_s && /^\| / && !/^\| crate \|/' "$RESULTS" \
    | while IFS= read -r line; do
        crate="$(echo "$line" | cut -d'|' -f2 | sed 's/^ *//; s/ *$//')"
        keep=1
        for r in "${ran[@]}"; do [ "$r" = "$crate" ] && keep=0; done
        if [ "$keep" = 1 ]; then echo "$line"; fi
      done
}
old_rows="$(kept_rows main)"
old_bug_rows="$(kept_rows "## Injected bugs")"

{
  echo "# Real crates' loom suites under pctvb and under loom"
  echo
  echo "Generated by \`scripts/loom-suites.sh\` on $(date -u +%Y-%m-%d) ($(nproc) cores, $(rustc --version))."
  echo "Each suite runs in release mode with the crate's loom cfg; pctvb through \`pctvb-loom\` after"
  echo "the one-line Cargo.toml switch, loom as published with the settings of the crate's CI."
  echo "Times (s) are the test binaries' wall time as libtest reports it (\`finished in\`, summed over"
  echo "the binaries a run starts): builds are done first, and cargo's start-up is left out."
  echo "Executions per test are in each run's log (\`--nocapture\` prints pctvb's summary)."
  echo
  echo "| crate | pctvb default | s | tests | pctvb confidence 0.99 | s | tests | loom | s | tests | notes |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  { [ -n "$old_rows" ] && echo "$old_rows"
    for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done; } | sort
  echo
  echo "Timeouts of the last run: LOOM_TIMEOUT = ${LOOM_TIMEOUT} s, PCTVB_TIMEOUT = ${PCTVB_TIMEOUT} s per run; a"
  echo "\"timeout (N s)\" cell means the run was killed after N s. Rows of crates not in the last run"
  echo "are kept from the previous document (last run: ${ran[*]})."
  echo
  echo "## Injected bugs"
  echo
  echo "Each patch in \`scripts/loom-patches/\` is applied to copies of the crate; the suite then runs"
  echo "under pctvb (default mode) and under loom as above. \"fail\" means the tool found the bug."
  echo
  echo "| crate | patch | pctvb default | s | tests | loom | s | tests |"
  echo "|---|---|---|---|---|---|---|---|"
  { [ -n "$old_bug_rows" ] && echo "$old_bug_rows"
    for r in "${bug_rows[@]}"; do echo "| ${r//|/ | } |"; done; } | sort
  echo
  echo "## Failures"
  echo
  any=0
  for log in "$OUT"/*-pctvb-default.log "$OUT"/*-pctvb-confidence.log "$OUT"/*-loom.log; do
    [ -f "$log" ] || continue
    grep -q "^failures:" "$log" || continue
    any=1
    echo "\`$(basename "$log" .log)\`: the first failure, as reported:"
    echo
    echo '```'
    awk '/^---- .* stdout ----$/ {on = 1} on {print; n++} n >= 8 {exit}' "$log"
    echo '```'
    echo
  done
  [ "$any" = 1 ] || echo "None."
  echo
  echo "## How each suite runs"
  echo
  echo "As in the crate's CI (\`cargo test --release\` followed by the arguments below; the environment"
  echo "is given to the pctvb runs too, where pctvb-loom says once which \`LOOM_*\` it does not honour)."
  echo
  echo "| crate | RUSTFLAGS | cargo test arguments | environment | from |"
  echo "|---|---|---|---|---|"
  for s in "${SUITES[@]}"; do
    IFS='|' read -r name version cfg args loom_env ci_source <<<"$s"
    echo "| $name $version | \`$cfg\` | \`$args\` | ${loom_env:+\`$loom_env\`} | $ci_source |"
  done
  echo
  echo "## Notes"
  echo
  timed_out=""
  for r in "${rows[@]}"; do
    case "$r" in *timeout*) timed_out+="${r%%|*}; " ;; esac
  done
  if [ -n "$timed_out" ]; then
    echo "- Runs killed by the timeout in the last run (their time is a lower bound, not a"
    echo "  result): ${timed_out%; }. A timed-out loom run says loom did not finish within"
    echo "  LOOM_TIMEOUT; it is not counted as a pass."
  fi
  slower=""
  for r in "${rows[@]}"; do
    IFS='|' read -r crate _ d_s _ _ c_s _ _ l_s _ <<<"$r"
    awk -v d="$d_s" -v l="$l_s" 'BEGIN {exit !(d >= l)}' && slower+="$crate (default mode: $d_s s, loom $l_s s); "
    awk -v c="$c_s" -v l="$l_s" 'BEGIN {exit !(c >= l)}' && slower+="$crate (confidence 0.99: $c_s s, loom $l_s s); "
  done
  if [ -n "$slower" ]; then
    echo "- Where pctvb's time was not below loom's in the last run: ${slower%; }."
  else
    echo "- pctvb's time was below loom's on every crate in the last run, in both modes."
  fi
  echo "- pctvb samples executions (1000 per model by default; with \`PCTVB_CONFIDENCE=0.99\` as many as"
  echo "  its bound needs); loom enumerates them up to the crate's preemption bound. A pass means"
  echo "  different things: see README, \"Running your loom tests under pctvb\"."
  echo "- oneshot's \`send_recv_different_threads\` receives with a 1 ms timeout measured on the real"
  echo "  clock (\`std::time::Instant\`, which neither tool controls): an execution in which the OS"
  echo "  deschedules the process for over 1 ms between the deadline and the send times out and"
  echo "  fails. pctvb runs this model 1000 times (more for a guarantee), so a loaded machine shows"
  echo "  it more often under pctvb than under loom; it is the test's clock, not a schedule."
  echo "- pctvb treats atomics as sequentially consistent for scheduling, but its race detector"
  echo "  honours Release/Acquire: a Relaxed store does not publish data, so a weakened ordering"
  echo "  that lets an \`UnsafeCell\` access race is reported (the sharded-slab patch)."
} > "$RESULTS"
echo "wrote $RESULTS" >&2
