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
# What every section of the existing results document says of crates not run this time is
# kept (their table rows, their quoted failures), so crates can be run one at a time; the
# crates run this time get new rows, and their failures are quoted from this run's logs in
# target/loom-suites/. The Notes compare the tools on every crate the document lists.
#
# Usage: scripts/loom-suites.sh [crate-name ...]   (default: every crate in SUITES)
# Environment: LOOM_TIMEOUT (seconds per loom run, default 900), PCTVB_TIMEOUT (default 900);
# LOOM_SUITES_REPEATS (runs of each suite whose median is reported, default 5),
# LOOM_SUITES_SHORT_REPEATS (runs of a suite whose runs so far took under 1 s in all, default
# 21: a run of milliseconds moves with the machine's load, and more runs steady its median) and
# LOOM_SUITES_REPEAT_BUDGET (seconds after which a suite is not run again, default 60) and
# LOOM_SUITES_SYSTEMATIC_BUDGET (the exhaustive mode's PCTVB_ITERATIONS, default 10^9).
# The settings used are printed in the document (a timed-out run is "timeout (N s)").
# Builds run under `nice -n 10` (they are the heavy part on a shared machine); the measured
# runs do not, since a test that reads the real clock (oneshot's 1 ms `recv_timeout` under loom;
# under pctvb on Linux with glibc it reads pctvb's virtual clock) can time out when its process
# is descheduled for longer than that.
set -euo pipefail
# A failing command ends the script (set -e): say which, rather than stop without a word.
trap 'echo "scripts/loom-suites.sh: line $LINENO: a command failed (exit $?); the results document was not written" >&2' ERR

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/target/loom-suites"
RESULTS="$ROOT/docs/RESULTS-loom-suites.md"
LOOM_TIMEOUT="${LOOM_TIMEOUT:-900}"
PCTVB_TIMEOUT="${PCTVB_TIMEOUT:-900}"
REPEATS="${LOOM_SUITES_REPEATS:-5}"
REPEAT_BUDGET="${LOOM_SUITES_REPEAT_BUDGET:-60}"
SHORT_REPEATS="${LOOM_SUITES_SHORT_REPEATS:-21}"
LOOM_COUNT_MAX="${LOOM_COUNT_MAX:-60}"
# Executions per model for the exhaustive mode (PCTVB_ITERATIONS): high enough that only the
# time limit (PCTVB_TIMEOUT) stops a search before it has explored every level.
SYSTEMATIC_BUDGET="${LOOM_SUITES_SYSTEMATIC_BUDGET:-1000000000}"
case "$REPEATS" in ''|*[!0-9]*|0) echo "LOOM_SUITES_REPEATS must be a number of runs, 1 or more (got '$REPEATS')" >&2; exit 2 ;; esac
case "$SHORT_REPEATS" in ''|*[!0-9]*|0) echo "LOOM_SUITES_SHORT_REPEATS must be a number of runs, 1 or more (got '$SHORT_REPEATS')" >&2; exit 2 ;; esac
case "$REPEAT_BUDGET" in ''|*[!0-9]*) echo "LOOM_SUITES_REPEAT_BUDGET must be a whole number of seconds (got '$REPEAT_BUDGET')" >&2; exit 2 ;; esac

# name | version | RUSTFLAGS | cargo test arguments (after --release; words after " -- " are
# given to the test binaries, as a CI job's test-name filter) | loom's environment in the
# crate's CI | where that command comes from. The environment is given to the pctvb runs too, so
# a suite runs exactly as its CI runs it (pctvb-loom says once which LOOM_* it does not honour).
SUITES=(
  "oneshot|0.1.13|--cfg oneshot_loom|--features loom --test loom|LOOM_MAX_BRANCHES=100000|.github/workflows (loom job)"
  "concurrent-queue|2.5.0|--cfg loom|--features loom --test loom|LOOM_MAX_PREEMPTIONS=4|.github/workflows (loom job)"
  "sharded-slab|0.1.7|--cfg loom -C debug-assertions=on|--lib|LOOM_MAX_PREEMPTIONS=2 LOOM_CHECKPOINT_INTERVAL=1 LOOM_LOG=1 LOOM_LOCATION=1|bin/loom.sh, run by .github/workflows/ci.yml"
  "bytes|1.12.2|--cfg loom|--lib||.github/workflows/ci.yml (loom job; it builds in debug mode with -Dwarnings, here --release without -Dwarnings)"
  "st3|0.4.1|--cfg st3_loom|--tests|LOOM_MAX_PREEMPTIONS=3|.github/workflows/ci.yml (loom job)"
  "event-listener|5.4.2|--cfg loom|--test loom --features loom||.github/workflows/ci.yml of smol-rs/event-listener (loom job: no preemption bound)"
  "thingbuf|0.1.6|--cfg loom -C debug-assertions=on|--lib -- thingbuf|LOOM_MAX_PREEMPTIONS=2 LOOM_LOG=loom=trace|.github/workflows/loom.yml of hawkw/thingbuf (its ThingBuf job, cargo test --profile loom --lib -- thingbuf; the loom profile has debug assertions, which its loom build needs to compile; the other jobs' models run over 15 min under loom)"
  "left-right|0.11.8|--cfg loom|--test loom|LOOM_MAX_PREEMPTIONS=3|.github/workflows/safety.yml of jonhoo/left-right (loom job)"
  "parking|2.2.1|--cfg loom|--test loom --features loom|LOOM_MAX_PREEMPTIONS=2|.github/workflows/ci.yml of smol-rs/parking (test job, loom step)"
  "tokio|1.54.1|--cfg loom --cfg tokio_unstable -C debug-assertions=on|--lib --features full,test-util -- sync::tests|LOOM_MAX_PREEMPTIONS=2 LOOM_MAX_BRANCHES=10000|.github/workflows/loom.yml of tokio-rs/tokio (its loom-sync job, cargo test --lib --release --features full -- --nocapture sync::tests with -Dwarnings, one of the five loom jobs on tokio itself; the others test the runtime. Here without -Dwarnings and --nocapture, and with test-util: in tokio's workspace tokio-test, whose tokio is patched to the local one, turns it on, and the published crate's lib tests need it to compile, \`Builder::start_paused\`)"
)

# Tests that take deadlines from std's clock (the real clock under loom; pctvb's virtual clock
# under pctvb on Linux with glibc), per crate: "test|what it waits for". Their timeouts are
# counted in every run's log and named in the row's notes.
declare -A CLOCK_TESTS=(
  [oneshot]="send_recv_different_threads|receives with recv_timeout(1 ms): a deadline from std::time::Instant, read before and after the other threads' steps"
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

# The timer: runs suites' test binaries directly, as `cargo test` would (the package's
# directory as working directory, cargo's CARGO_* variables and library path), and times each
# run with a nanosecond clock (Python's `time.perf_counter_ns`, read just before the binary is
# started and just after a blocking wait sees it exit, a timer thread killing it at the
# timeout: the process start-up is counted, Python's is not). A "run"
# is every binary of a suite one after the other. It takes several suites (the settings a
# crate is measured in: pctvb's modes and loom), each described by a spec file (see `spec`
# below), and runs them in turn, one run of each per round, so that a change in the machine's
# load falls on every tool alike. A suite's runs repeat up to REPEATS times (up to
# SHORT_REPEATS while they took under 1 s in all), or until they took REPEAT_BUDGET seconds in
# all (a suite of a minute is not run five times). Prints, per suite in the order given,
# "status|median s|min s|max s|runs|tests": status pass, fail (a run failed; with how many of
# the runs), or timeout; tests from the first failing run, or the first run (of a killed run,
# the tests libtest had reported finished, "before the kill"). Every run's output
# goes to the suite's log, each under a "== run N: binary" line.
cat > "$OUT/timer.py" <<'PY'
import os, re, statistics, subprocess, sys, tempfile, threading, time

repeats, short_repeats, budget = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
result = re.compile(rb"test result: [a-zA-Z]+\. ([0-9]+) passed; ([0-9]+) failed")
# libtest's line for a test that finished, as it prints it without --nocapture.
finished = re.compile(rb"(?m)^test \S+ \.\.\. (ok|FAILED)$")


class Suite:
    def __init__(self, path):
        self.env, self.binaries, self.arguments = dict(os.environ), [], []
        for line in open(path).read().splitlines():
            key, _, value = line.partition("=")
            if key == "log":
                self.log = open(value, "wb")
            elif key == "cwd":
                self.cwd = value
            elif key == "timeout":
                self.timeout = float(value)
            elif key == "arguments":
                self.arguments = value.split()
            elif key == "env":
                name, _, v = value.partition("=")
                self.env[name] = v
            elif key == "binary":
                self.binaries.append(value)
        self.times, self.outcomes, self.counts = [], [], []

    def wants_more(self):
        n, spent = len(self.times), sum(self.times)
        if not self.binaries or "timeout" in self.outcomes or spent >= budget:
            return False
        return n < repeats or (n < short_repeats and spent < 1.0)

    def run(self):
        number = len(self.times) + 1
        total_ns, outcome, passed, failed = 0, "pass", 0, 0
        for binary in self.binaries:
            self.log.write(f"== run {number}: {binary}\n".encode())
            self.log.flush()
            with tempfile.TemporaryFile() as out:
                # A blocking wait, and a timer thread that kills the run at the timeout:
                # `subprocess.run(timeout=...)` polls for the exit with sleeps that double from
                # 0.5 ms, so a run of 2.2 ms was timed as 3.5 ms, and every tool alike.
                killed = threading.Event()
                start = time.perf_counter_ns()
                proc = subprocess.Popen([binary, *self.arguments], cwd=self.cwd, env=self.env,
                                        stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=subprocess.STDOUT)
                def kill(proc=proc):
                    killed.set()
                    proc.kill()
                timer = threading.Timer(self.timeout, kill)
                timer.start()
                rc = proc.wait()
                total_ns += time.perf_counter_ns() - start
                timer.cancel()
                if killed.is_set():
                    rc = None
                out.seek(0)
                text = out.read()
            self.log.write(text)
            for p, f in result.findall(text):
                passed, failed = passed + int(p), failed + int(f)
            if rc is None:
                # Killed before libtest's summary: count the tests it said had finished.
                done = finished.findall(text)
                passed += done.count(b"ok")
                failed += done.count(b"FAILED")
                outcome = "timeout"
                self.log.write(f"\n== killed after {self.timeout:.0f} s\n".encode())
                break
            if rc != 0:
                outcome = "fail"
        self.times.append(total_ns / 1e9)
        self.outcomes.append(outcome)
        self.counts.append(f"{passed} passed, {failed} failed"
                           + (" before the kill" if outcome == "timeout" else ""))

    def line(self):
        if not self.binaries:
            return "build failed|0|0|0|0|0 passed, 0 failed"
        times, n = self.times, len(self.times)
        bad = [i for i, o in enumerate(self.outcomes) if o != "pass"]
        if "timeout" in self.outcomes:
            status = f"timeout ({self.timeout:.0f} s)"
        elif bad:
            status = "fail" if len(bad) == n else f"fail ({len(bad)} of {n} runs)"
        else:
            status = "pass"
        tests = self.counts[bad[0] if bad else 0]
        return f"{status}|{statistics.median(times):.4f}|{min(times):.4f}|{max(times):.4f}|{n}|{tests}"


suites = [Suite(path) for path in sys.argv[4:]]
while True:
    due = [s for s in suites if s.wants_more()]
    if not due:
        break
    for s in due:
        s.run()
for s in suites:
    s.log.close()
    print(s.line())
PY

# What the confidence mode ran, from two untimed runs of a clean suite with `--nocapture
# --test-threads=1` (one test at a time, so each test's lines stay together): pctvb's summary
# of each test (search executions, executions/s, threads, scheduling points k; for a test whose
# class was enumerated, the enumeration's executions and those sampling would have needed; for
# a sampled one, the guarantee's counted executions, its per-execution bound "1 in N" and sum
# k_q), and loom's "Completed in N iterations" (its model log, on with
# LOOM_LOG=loom::model=info). Prints a crate line "crate|tests|enumerated tests|executions|
# enumerated|counted|seconds|us per execution|loom iterations", then the five tests pctvb spent
# most time in, each "  test|executions|enumerated|sampling needs|counted|1 in|k|sum k_q|per
# s|s|loom".
cat > "$OUT/explain.py" <<'PY'
# Reads an untimed `--nocapture --test-threads=1` run of a suite under pctvb with a confidence
# target and one under loom with its model log on; prints what the confidence mode ran.
import re, sys

pctvb_log, loom_log, crate = sys.argv[1], sys.argv[2], sys.argv[3]
# The run's name: the test binary's crate (`crate` before pctvb-loom named it), then the test.
summary = re.compile(r"pctvb: [A-Za-z0-9_]+::(\S+) (?:passed|FAILED) ([0-9]+) executions? in [0-9.]+s \(([0-9]+)/s; .*?up to ([0-9]+) threads?, ([0-9]+) scheduling points?")
guarantee = re.compile(r"^pctvb: guarantee: .*\(([0-9,]+) executions; n=([0-9]+), k_q <= ([0-9]+);")
bound = re.compile(r"^pctvb: per-execution bound: p >= \S+ \(1 in ([0-9,]+)\).*?sum k_q = ([0-9]+)")
shared = re.compile(r"^pctvb: [0-9]+ variables?, [0-9]+ shared \(Q=([0-9]+)\)")
enumerated = re.compile(r"^pctvb: confidence \S+: the class of \S+ was enumerated by the systematic search in ([0-9]+) executions, where sampling needs ([0-9]+)")
tests, cur = {}, None
for line in open(pctvb_log, errors="replace"):
    m = summary.search(line)
    if m:
        cur = m.group(1)
        n, rate = int(m.group(2)), int(m.group(3))
        tests[cur] = dict(execs=n, rate=rate, secs=n / rate if rate else 0.0, threads=int(m.group(4)),
                          points=int(m.group(5)), counted=None, one_in=None, sum_kq=None, q=None,
                          enumerated=None, needs=None)
        continue
    if cur is None:
        continue
    for pat, keys in ((guarantee, ("counted",)), (bound, ("one_in", "sum_kq")), (shared, ("q",)),
                      (enumerated, ("enumerated", "needs"))):
        m = pat.match(line)
        if m:
            for k, v in zip(keys, m.groups()):
                tests[cur][k] = int(v.replace(",", ""))
loom_iters, current = {}, None
for line in open(loom_log, errors="replace"):
    line = re.sub(r"\x1b\[[0-9;]*m", "", line)
    m = re.match(r"^test (\S+) \.\.\.", line)
    if m:
        current = m.group(1)
    m = re.search(r"Completed in ([0-9]+) iterations", line)
    if m and current:
        loom_iters[current] = int(m.group(1))
total = sum(t["execs"] for t in tests.values())
secs = sum(t["secs"] for t in tests.values())
counted = sum(t["counted"] or 0 for t in tests.values())
enum_tests = sum(1 for t in tests.values() if t["enumerated"] is not None)
enum_execs = sum(t["enumerated"] or 0 for t in tests.values())
li = sum(loom_iters.values())
per = secs / total * 1e6 if total else 0
import os
loom_ran = os.path.getsize(loom_log) > 0
print(f"{crate}|{len(tests)}|{enum_tests}|{total}|{enum_execs}|{counted}|{secs:.3f}|{per:.1f}|{li if loom_iters else ('not printed' if loom_ran else 'not counted')}")
top = sorted(tests.items(), key=lambda kv: -kv[1]["secs"])[:5]
for name, t in top:
    f = lambda v: "" if v is None else f"{v:,}"
    print(f"  {name}|{t['execs']:,}|{f(t['enumerated'])}|{f(t['needs'])}|{f(t['counted'])}|{f(t['one_in'])}|{t['points']}|{f(t['sum_kq'])}|{t['rate']:,}|{t['secs']:.3f}|{f(loom_iters.get(name))}")
PY

# The test binaries `cargo test --release <args>` runs in a built copy, one path per line
# (from `--no-run --message-format=json`: the artifacts built in test mode), in cargo's order
# (unit tests of the library first, then the rest by name).
test_binaries() {
  local dir="$1" variant="$2"
  # shellcheck disable=SC2086
  (cd "$dir" && RUSTFLAGS="$cfg" CARGO_TARGET_DIR="$OUT/target-$variant" \
    nice -n 10 cargo test --release $args --no-run --quiet --message-format=json) | python3 -c '
import json, sys
found = []
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        found.append((0 if "lib" in m["target"]["kind"] else 1, m["target"]["name"], m["executable"]))
for _, _, exe in sorted(found):
    print(exe)
'
}

# Writes the spec of a built copy's suite for timer.py (see above) to "$log.spec" and prints
# its path: the log, the working directory, the timeout (TIMEOUT), the arguments every binary
# gets (one word list; none for a measured run), the environment given after them (NAME=value
# words: the crate's LOOM_* settings, PCTVB_CONFIDENCE) with what cargo sets when it runs a
# test binary (CARGO_MANIFEST_DIR and the package's CARGO_PKG_*, CARGO_CRATE_NAME, and the
# target directory's libraries on the library path), and the binaries (none: the build failed).
spec() {
  local dir="$1" variant="$2" log="$3" arguments="$4"; shift 4
  local deps="$OUT/target-$variant/release" word bin
  {
    echo "log=$log"
    echo "cwd=$dir"
    echo "timeout=$TIMEOUT"
    echo "arguments=$arguments"
    for word in "$@" CARGO_MANIFEST_DIR="$dir" CARGO_MANIFEST_PATH="$dir/Cargo.toml" \
      CARGO_PKG_NAME="$name" CARGO_PKG_VERSION="$version" CARGO_CRATE_NAME="${name//-/_}" \
      LD_LIBRARY_PATH="$deps/deps:$deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; do
      echo "env=$word"
    done
    test_binaries "$dir" "$variant" | while IFS= read -r bin; do echo "binary=$bin"; done
  } >"$log.spec"
  echo "$log.spec"
}

# Times suites together (see timer.py above): their specs, a line each.
measure_specs() {
  python3 "$OUT/timer.py" "$REPEATS" "$SHORT_REPEATS" "$REPEAT_BUDGET" "$@"
}

# Runs a built copy's suite once, untimed, with `arguments` (one word list) after the
# binaries: `spec`'s arguments.
run_once() {
  python3 "$OUT/timer.py" 1 1 "$REPEAT_BUDGET" "$(spec "$@")"
}

# Builds a copy's loom test (quietly; the log says why if not). The clean copy and the patched
# ones of a crate share a target directory and a package id, so cargo would take one copy's
# build as fresh for another (their sources' times, not their paths, decide): the crate's own
# build products are removed first, and only its dependencies are reused.
build_copy() {
  local dir="$1" variant="$2" log="$3"
  (cd "$dir" && RUSTFLAGS="$cfg" CARGO_TARGET_DIR="$OUT/target-$variant" \
    cargo clean --release -p "$name" --quiet \
    && RUSTFLAGS="$cfg" CARGO_TARGET_DIR="$OUT/target-$variant" \
    nice -n 10 cargo test --release $args --no-run --quiet) >"$log" 2>&1
}

# "i of n": the runs in a timer log (see timer.py) in which `test` failed: libtest's report of
# its failure, or a panic on its thread (loom aborts the whole binary when a run of the model
# differs from the one it replays, "Is the model fully deterministic?", before any report).
clock_failures() {
  awk -v t="---- $2 stdout ----" -v p="thread '$2' (" '
    /^== run [0-9]+:/ {split($3, r, ":"); runs[r[1]] = 1}
    $0 == t {failed[r[1]] = 1}
    index($0, p) == 1 && index($0, "panicked") {failed[r[1]] = 1}
    END {n = 0; f = 0; for (i in runs) n++; for (i in failed) f++; printf "%d of %d", f, n}' "$1"
}

# A measurement as three table cells: status | median s (min-max, runs) | tests.
cells() {
  local status med min max n tests
  IFS='|' read -r status med min max n tests <<<"$1"
  printf '%s|%s (%s-%s, %s runs)|%s' "$status" "$med" "$min" "$max" "$n" "$tests"
}

rows=()
raw=()
alone_rows=()
exhaustive_rows=()
explained=()
bug_rows=()
ran=()
for s in "${selected[@]}"; do
  IFS='|' read -r name version cfg args loom_env ci_source <<<"$s"
  # Arguments after " -- " go to the test binaries (a filter), the rest to cargo.
  bin_args=""
  case "$args" in *" -- "*) bin_args="${args#* -- }"; args="${args%% -- *}" ;; esac
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
      build_copy "$dir" "$variant" "$OUT/$name-$variant-build.log"
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

  # pctvb's three settings and loom, timed together (one run of each per round). The third,
  # the guarantee alone: a named strategy runs without the explorer (race reversal) in between, so every
  # search execution is the combined strategy's and counts towards the bound.
  echo "== $name $version: timing pctvb (default; PCTVB_CONFIDENCE=0.99; PCTVB_STRATEGY=combined PCTVB_CONFIDENCE=0.99; PCTVB_STRATEGY=systematic) and loom ($loom_env), in turn" >&2
  TIMEOUT=$PCTVB_TIMEOUT
  # shellcheck disable=SC2086
  spec_default="$(spec "$OUT/$name-$version-pctvb" pctvb "$OUT/$name-pctvb-default.log" "$bin_args" $loom_env)"
  # shellcheck disable=SC2086
  spec_confident="$(spec "$OUT/$name-$version-pctvb" pctvb "$OUT/$name-pctvb-confidence.log" "$bin_args" \
    $loom_env PCTVB_CONFIDENCE=0.99)"
  # shellcheck disable=SC2086
  spec_alone="$(spec "$OUT/$name-$version-pctvb" pctvb "$OUT/$name-pctvb-guarantee-only.log" "$bin_args" \
    $loom_env PCTVB_STRATEGY=combined PCTVB_CONFIDENCE=0.99)"
  # The exhaustive mode: pctvb's systematic search with the crate's LOOM_MAX_PREEMPTIONS as its
  # preemption bound and no budget short of the time limit (see SYSTEMATIC_BUDGET).
  # shellcheck disable=SC2086
  spec_exhaustive="$(spec "$OUT/$name-$version-pctvb" pctvb "$OUT/$name-pctvb-systematic.log" "$bin_args" \
    $loom_env PCTVB_STRATEGY=systematic PCTVB_ITERATIONS=$SYSTEMATIC_BUDGET)"
  TIMEOUT=$LOOM_TIMEOUT
  # shellcheck disable=SC2086
  spec_loom="$(spec "$OUT/$name-$version-loom" loom "$OUT/$name-loom.log" "$bin_args" $loom_env)"
  mapfile -t measured < <(measure_specs "$spec_default" "$spec_confident" "$spec_alone" \
    "$spec_exhaustive" "$spec_loom")
  [ "${#measured[@]}" = 5 ] || { echo "the timer failed for $name $version" >&2; exit 1; }
  default="${measured[0]}" confident="${measured[1]}" alone="${measured[2]}"
  exhaustive="${measured[3]}" loom="${measured[4]}"
  alone_rows+=("$name $version|$(cells "$alone")|$(echo "$confident" | cut -d'|' -f2)|$(echo "$loom" | cut -d'|' -f2)")
  if [ -n "${CLOCK_TESTS[$name]:-}" ]; then
    IFS='|' read -r clock_test clock_what <<<"${CLOCK_TESTS[$name]}"
    notes+="\`$clock_test\` $clock_what; it failed (timed out, or loom stopped it as nondeterministic) in $(clock_failures "$OUT/$name-pctvb-default.log" "$clock_test") pctvb default runs, $(clock_failures "$OUT/$name-pctvb-confidence.log" "$clock_test") confidence runs, $(clock_failures "$OUT/$name-loom.log" "$clock_test") loom runs (see Notes). "
  fi
  rows+=("$name $version|$(cells "$default")|$(cells "$confident")|$(cells "$loom")|${notes:-}")
  raw+=("$name $version|$default|$confident|$loom")

  # What the exhaustive mode finished, per test (untimed, one test at a time, with its
  # summary): tests whose every level up to the bounds was explored, and tests whose budget
  # ran out first.
  echo "== $name $version: the exhaustive mode's levels (untimed, --nocapture)" >&2
  TIMEOUT=$PCTVB_TIMEOUT
  # shellcheck disable=SC2086
  run_once "$OUT/$name-$version-pctvb" pctvb "$OUT/$name-pctvb-systematic-counts.log" \
    "$bin_args --nocapture --test-threads=1" $loom_env PCTVB_STRATEGY=systematic \
    PCTVB_ITERATIONS=$SYSTEMATIC_BUDGET >/dev/null
  complete="$(grep -c 'pctvb: systematic: exhaustively explored all schedules' \
    "$OUT/$name-pctvb-systematic-counts.log" || true)"
  cut_short="$(grep -c 'pctvb: systematic: the budget of' "$OUT/$name-pctvb-systematic-counts.log" || true)"
  bound="$(grep -o 'systematic(c=[0-9]*,v=[0-9]*,t=[0-9]*)' "$OUT/$name-pctvb-systematic-counts.log" \
    | sort -u | tr '\n' ' ' | sed 's/ $//')"
  exhaustive_rows+=("$name $version|$(cells "$exhaustive")|${bound:-none}: $complete models explored every level, $cut_short stopped by the budget|$(echo "$loom" | cut -d'|' -f2)")

  # Where the confidence mode's time goes (untimed runs; see explain.py above). loom's
  # iterations are counted when its measured run took at most LOOM_COUNT_MAX seconds.
  echo "== $name $version: executions per test (untimed, --nocapture)" >&2
  TIMEOUT=$PCTVB_TIMEOUT
  # shellcheck disable=SC2086
  run_once "$OUT/$name-$version-pctvb" pctvb "$OUT/$name-pctvb-confidence-counts.log" \
    "$bin_args --nocapture --test-threads=1" $loom_env PCTVB_CONFIDENCE=0.99 >/dev/null
  : >"$OUT/$name-loom-counts.log"
  loom_median="$(echo "$loom" | cut -d'|' -f2)"
  if awk -v m="$loom_median" -v c="$LOOM_COUNT_MAX" 'BEGIN {exit !(m <= c)}'; then
    TIMEOUT=$LOOM_TIMEOUT
    # shellcheck disable=SC2086
    run_once "$OUT/$name-$version-loom" loom "$OUT/$name-loom-counts.log" \
      "$bin_args --nocapture --test-threads=1" $loom_env LOOM_LOG=loom::model=info >/dev/null
  fi
  explained+=("$(python3 "$OUT/explain.py" "$OUT/$name-pctvb-confidence-counts.log" \
    "$OUT/$name-loom-counts.log" "$name $version")")
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
    echo "== $bug: timing pctvb (default) and loom ($loom_env), in turn" >&2
    TIMEOUT=$PCTVB_TIMEOUT
    # shellcheck disable=SC2086
    spec_pctvb="$(spec "$OUT/$bug-pctvb" pctvb "$OUT/$bug-pctvb-default.log" "$bin_args" $loom_env)"
    TIMEOUT=$LOOM_TIMEOUT
    # shellcheck disable=SC2086
    spec_loom="$(spec "$OUT/$bug-loom" loom "$OUT/$bug-loom.log" "$bin_args" $loom_env)"
    mapfile -t measured < <(measure_specs "$spec_pctvb" "$spec_loom")
    [ "${#measured[@]}" = 2 ] || { echo "the timer failed for $bug" >&2; exit 1; }
    bug_pctvb="${measured[0]}" bug_loom="${measured[1]}"
    bug_rows+=("$name $version|\`scripts/loom-patches/$bug.patch\`|$(cells "$bug_pctvb")|$(cells "$bug_loom")")
  done
done

# Partial runs (`scripts/loom-suites.sh <crate> ...`): every section keeps what the existing
# document says of the crates not run this time, and takes the new crates' rows from this run.
# A row belongs to the crate (name and version) in its first cell; a failure quoted under
# "Failures" to the crate whose name starts its log's name.
ran_names=()
for r in "${ran[@]}"; do ran_names+=("${r% *}"); done

# The existing document's table rows of a section (`main`: the tables before the first `## `
# heading) with `cells` cells, of crates not run this time.
kept_rows() {
  local section="$1" cells="$2"
  [ -f "$RESULTS" ] || return 0
  awk -v s="$section" -v c="$cells" '
    /^## / {in_s = ($0 == s)} /^# / {in_s = (s == "main")}
    in_s && /^\| / && !/^\| crate \|/ && !/^\|---/ && gsub(/\|/, "|") - 1 == c' "$RESULTS" \
    | while IFS= read -r line; do
        crate="$(echo "$line" | cut -d'|' -f2 | sed 's/^ *//; s/ *$//')"
        keep=1
        for r in "${ran[@]}"; do [ "$r" = "$crate" ] && keep=0; done
        if [ "$keep" = 1 ]; then echo "$line"; fi
      done
}

# Whether a log (its name without .log) belongs to a crate run this time.
ran_log() {
  local n
  for n in "${ran_names[@]}"; do
    case "$1" in "$n"-*) return 0 ;; esac
  done
  return 1
}

# The existing document's quoted failures (each: the "`log`: ..." line, its code block and the
# blank line after it) of crates not run this time.
kept_failures() {
  [ -f "$RESULTS" ] || return 0
  awk '/^## / {on = ($0 == "## Failures")} on' "$RESULTS" | python3 -c '
import re, sys
names = sys.argv[1:]
text = sys.stdin.read()
for m in re.finditer(r"^`([^`]+)`: the first failure, as reported:\n\n```\n.*?^```\n", text, re.S | re.M):
    if not any(m.group(1).startswith(n + "-") for n in names):
        print(m.group(0))
' "${ran_names[@]}"
}

# A main-table row as the measurements' fields, in the order `raw` holds them: crate, then for
# pctvb default, pctvb confidence and loom each status|median|min|max|runs|tests.
row_fields() {
  python3 -c '
import re, sys
for line in sys.stdin:
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    out = [cells[0]]
    for i in (1, 4, 7):
        m = re.match(r"([0-9.]+) \(([0-9.]+)-([0-9.]+), ([0-9]+) runs\)", cells[i + 1])
        med, lo, hi, n = m.groups() if m else ("0", "0", "0", "0")
        out += [cells[i], med, lo, hi, n, cells[i + 2]]
    print("|".join(out))
'
}

new_main=()
for r in "${rows[@]}"; do new_main+=("| ${r//|/ | } |"); done
all_rows="$( { kept_rows main 11; printf '%s\n' "${new_main[@]}"; } | grep -v '^$' | sort)"
# The Notes below compare the tools on every crate in the document, run now or kept.
mapfile -t raw < <(echo "$all_rows" | grep -v '^$' | row_fields)
new_explained=()
new_tests=()
for e in "${explained[@]}"; do
  new_explained+=("| $(echo "$e" | head -1 | sed 's/|/ | /g') |")
  crate="$(echo "$e" | head -1 | cut -d'|' -f1)"
  while IFS= read -r t; do
    new_tests+=("$(echo "| $crate | ${t#  } |" | sed 's/|/ | /g; s/  */ /g; s/^ //; s/ $//')")
  done < <(echo "$e" | tail -n +2)
done
conf_section="## Confidence mode: where the time goes"
# Sorted by crate (each crate's tests stay in their order: most time first).
all_explained="$( { kept_rows "$conf_section" 9; printf '%s\n' "${new_explained[@]}"; } | grep -v '^$' | sort)"
all_tests="$( { kept_rows "$conf_section" 12; printf '%s\n' "${new_tests[@]}"; } | grep -v '^$' | sort -s -t'|' -k2,2)"
all_alone="$( { kept_rows "$conf_section" 6; for r in "${alone_rows[@]}"; do echo "| ${r//|/ | } |"; done; } | grep -v '^$' | sort)"
exhaustive_section="## Exhaustive mode"
all_exhaustive="$( { kept_rows "$exhaustive_section" 6; for r in "${exhaustive_rows[@]}"; do echo "| ${r//|/ | } |"; done; } | grep -v '^$' | sort)"
all_bug_rows="$( { kept_rows "## Injected bugs" 8; for r in "${bug_rows[@]}"; do echo "| ${r//|/ | } |"; done; } | grep -v '^$' | sort)"
old_failures="$(kept_failures)"

{
  echo "# Real crates' loom suites under pctvb and under loom"
  echo
  echo "Generated by \`scripts/loom-suites.sh\` on $(date -u +%Y-%m-%d) ($(nproc) cores, $(rustc --version))."
  echo "Each suite runs in release mode with the crate's loom cfg; pctvb through \`pctvb-loom\` after"
  echo "the one-line Cargo.toml switch, loom as published with the settings of the crate's CI."
  echo
  echo "How the time is measured: each suite is built first (\`cargo test --release <args> --no-run\`)."
  echo "Then the test binaries that command would run are started directly, as cargo starts them"
  echo "(the package's directory as working directory, cargo's \`CARGO_*\` variables, no extra"
  echo "arguments but a CI job's test-name filter where \"How each suite runs\" gives one after"
  echo "\`--\`, so libtest runs $(nproc) tests at a time), and each is timed with a nanosecond"
  echo "clock (Python's \`time.perf_counter_ns\` read just before the binary starts and after it"
  echo "exits: process start-up and exit are counted, cargo's and the timer's are not). A run is"
  echo "every binary of the suite in turn; it is repeated up to ${REPEATS} times (\`LOOM_SUITES_REPEATS\`), up"
  echo "to ${SHORT_REPEATS} times while the runs so far took under 1 s in all (\`LOOM_SUITES_SHORT_REPEATS\`: a run"
  echo "of milliseconds moves with the machine's load), fewer when the runs so far took ${REPEAT_BUDGET} s"
  echo "(\`LOOM_SUITES_REPEAT_BUDGET\`). A crate's settings (pctvb's default, its confidence target, the"
  echo "guarantee alone, loom) are timed in turn, one run of each per round, so that a change in the"
  echo "machine's load falls on every tool alike. A time cell is the"
  echo "median run in seconds, then the fastest and slowest run and the number of runs. Status and"
  echo "test counts are those of the first run (of the first failing run, if any failed; \"fail (i"
  echo "of n runs)\" when only some did). Measured runs ran at niceness $(nice) on a machine that may"
  echo "have been running other work: compare the two tools within one row, where the spread says"
  echo "how much a time moved from run to run. Executions per test are in each run's log"
  echo "(\`--nocapture\` prints pctvb's summary); the confidence mode's are summarized below."
  echo
  echo "| crate | pctvb default | s | tests | pctvb confidence 0.99 | s | tests | loom | s | tests | notes |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  echo "$all_rows"
  echo
  echo "Timeouts of the last run: LOOM_TIMEOUT = ${LOOM_TIMEOUT} s, PCTVB_TIMEOUT = ${PCTVB_TIMEOUT} s per run; a"
  echo "\"timeout (N s)\" cell means the run was killed after N s. What every section says of a crate"
  echo "not in the last run is kept from the previous document (last run: ${ran[*]})."
  echo
  echo "## Confidence mode: where the time goes"
  echo
  echo "With a confidence target pctvb first enumerates the guarantee's class: after profiling, the"
  echo "systematic search (depth 2 = 1 preemption, 1 variable, 3 threads: the combined strategy's"
  echo "class) gets a quarter of the executions sampling would need; when it explores every level"
  echo "within them the model passes with its exhaustive statement (or finds the bug); the explorer"
  echo "(race reversal) runs one execution after each of the search's and, after a class that passed, the rest"
  echo "of its share: as many executions as the enumeration took, at least 1,000 (what the default"
  echo "mode runs) in all; otherwise the model samples as before (README, guide section 2,"
  echo "\`Config::enumerate\`)."
  echo
  echo "From two more runs of each clean suite, untimed, with \`--nocapture --test-threads=1\`: pctvb"
  echo "with \`PCTVB_CONFIDENCE=0.99\` (each test's summary line: search executions, executions/s,"
  echo "scheduling points k; for an enumerated test, the enumeration's executions and those sampling"
  echo "the same class would have needed; for a sampled one, the executions the bound counted and the"
  echo "per-execution bound p, shown as 1 in 1/p, with the sum of the variables' accesses k_q),"
  echo "and loom with its model log on (\`LOOM_LOG=loom::model=info\`: \"Completed in N iterations\""
  echo "per test; \"not counted\" when loom's measured run took over ${LOOM_COUNT_MAX} s, \`LOOM_COUNT_MAX\`;"
  echo "\"not printed\" when the suite calls \`loom::model::Builder::check\` itself, as sharded-slab's"
  echo "\`run_builder\` does: loom installs the log that prints the count only in \`loom::model\`; a"
  echo "test that printed no count is missing from the sum)."
  echo "pctvb's executions are the search's (the enumeration's and the explorer's; in a sampled test"
  echo "1 in 2 runs the explorer, which the bound does not count), its seconds the sum over tests of executions divided"
  echo "by the executions/s the summary reports (one test at a time, without the 10 profiling"
  echo "executions and the process start-up). A test that failed prints no summary and is missing."
  echo
  echo "| crate | tests with a summary | tests enumerated | pctvb executions | enumerating | counted by a sampled bound | pctvb s | us per execution | loom iterations |"
  echo "|---|---|---|---|---|---|---|---|---|"
  echo "$all_explained"
  echo
  echo "The tests pctvb spent most time in, per crate (at most five):"
  echo
  echo "| crate | test | pctvb executions | enumerating | sampling would need | counted | bound: 1 in | k | sum k_q | executions/s | pctvb s | loom iterations |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  echo "$all_tests"
  echo
  echo "The guarantee alone: the suite with \`PCTVB_STRATEGY=combined PCTVB_CONFIDENCE=0.99\`, timed as"
  echo "above. A named strategy runs without the explorer (race reversal): the class enumerated (or sampled,"
  echo "where it does not fit) and nothing else, the same statement (each test's summary states it)"
  echo "without the explorer's exploration, which finds bugs outside the class (more preemptions,"
  echo "variables or threads) and, on most programs, those inside it in fewer executions (README,"
  echo "\"Compared with shuttle and loom\")."
  echo
  echo "| crate | status | s | tests | pctvb confidence 0.99 (with the explorer): median s | loom: median s |"
  echo "|---|---|---|---|---|---|"
  echo "$all_alone"
  echo
  echo "$exhaustive_section"
  echo
  echo "The suite with \`PCTVB_STRATEGY=systematic PCTVB_ITERATIONS=$SYSTEMATIC_BUDGET\`, timed as above:"
  echo "pctvb's bounded exhaustive search (guide section 4), with the crate's \`LOOM_MAX_PREEMPTIONS\`"
  echo "as its preemption bound c (pctvb-loom maps it), at most v = 2 variables' accesses as"
  echo "preemption points and t = 3 threads (its defaults), and a budget of executions that only"
  echo "the time limit cuts. A model that explored every level up to those bounds proves, with no"
  echo "probability caveat, that no schedule within them fails; loom's DPOR proves the same for its"
  echo "own bound (preemptions at any operation, no variable or thread bound), so the two prove"
  echo "different things, and neither bound contains the other. The levels column counts, from one"
  echo "more untimed run of the suite with \`--nocapture --test-threads=1\`, the models whose summary"
  echo "says every level was explored and those whose budget ran out first."
  echo
  echo "| crate | status | s | tests | bounds and levels | loom: median s |"
  echo "|---|---|---|---|---|---|"
  echo "$all_exhaustive"
  echo
  echo "## Injected bugs"
  echo
  echo "Each patch in \`scripts/loom-patches/\` is applied to copies of the crate; the suite then runs"
  echo "under pctvb (default mode) and under loom as above. \"fail\" means the tool found the bug."
  echo
  echo "| crate | patch | pctvb default | s | tests | loom | s | tests |"
  echo "|---|---|---|---|---|---|---|---|"
  echo "$all_bug_rows"
  echo
  echo "## Failures"
  echo
  any=0
  if [ -n "$old_failures" ]; then
    any=1
    echo "$old_failures"
    echo
  fi
  for log in "$OUT"/*-pctvb-default.log "$OUT"/*-pctvb-confidence.log "$OUT"/*-pctvb-guarantee-only.log "$OUT"/*-loom.log; do
    [ -f "$log" ] || continue
    ran_log "$(basename "$log" .log)" || continue
    if grep -q "^failures:" "$log"; then
      start='^---- .* stdout ----$'
    elif ! grep -q "^test result: ok" "$log" && grep -q "^thread '.*panicked at" "$log"; then
      # A run that ended before libtest's report (aborted, as loom's does when a destructor
      # panics while a failed model unwinds; or killed): its first panic, as printed.
      start="^thread '.*panicked at"
    else
      continue
    fi
    any=1
    echo "\`$(basename "$log" .log)\`: the first failure, as reported:"
    echo
    echo '```'
    awk -v re="$start" '$0 ~ re {on = 1} on {print; n++} n >= 8 {exit}' "$log"
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
  for r in "${raw[@]}"; do
    IFS='|' read -r crate d_status _ _ _ _ _ c_status _ _ _ _ _ l_status _ <<<"$r"
    case "$d_status $c_status $l_status" in *timeout*) timed_out+="$crate; " ;; esac
  done
  if [ -n "$timed_out" ]; then
    echo "- Runs killed by the timeout (their time is a lower bound, not a"
    echo "  result): ${timed_out%; }. A timed-out loom run says loom did not finish within"
    echo "  LOOM_TIMEOUT; it is not counted as a pass."
  fi
  slower=""
  close=""
  for r in "${raw[@]}"; do
    IFS='|' read -r crate _ d_s _ d_max _ _ _ c_s _ c_max _ _ _ l_s l_min _ _ _ <<<"$r"
    awk -v d="$d_s" -v l="$l_s" 'BEGIN {exit !(d >= l)}' && slower+="$crate (default mode: median $d_s s, loom $l_s s); "
    awk -v c="$c_s" -v l="$l_s" 'BEGIN {exit !(c >= l)}' && slower+="$crate (confidence 0.99: median $c_s s, loom $l_s s); "
    awk -v d="$d_s" -v l="$l_s" -v m="$d_max" -v n="$l_min" 'BEGIN {exit !(d < l && m >= n)}' \
      && close+="$crate (default mode: slowest run $d_max s, loom's fastest $l_min s); "
    awk -v c="$c_s" -v l="$l_s" -v m="$c_max" -v n="$l_min" 'BEGIN {exit !(c < l && m >= n)}' \
      && close+="$crate (confidence 0.99: slowest run $c_max s, loom's fastest $l_min s); "
  done
  if [ -n "$slower" ]; then
    echo "- Where pctvb's median time was not below loom's: ${slower%; }."
  else
    echo "- pctvb's median time was below loom's on every crate, in both modes."
  fi
  for r in "${raw[@]}"; do
    IFS='|' read -r crate _ _ _ _ _ _ _ c_s _ _ _ _ _ l_s _ <<<"$r"
    awk -v c="$c_s" -v l="$l_s" 'BEGIN {exit !(c >= l)}' || continue
    while IFS= read -r e; do
      IFS='|' read -r e_crate _ _ e_executions _ e_counted e_secs e_per e_loom \
        <<<"$(echo "$e" | sed 's/^| //; s/ |$//; s/ | /|/g')"
      [ "$e_crate" = "$crate" ] || continue
      case "$e_loom" in
        ''|*[!0-9]*|0) loom_said="loom's iteration count is $e_loom (see the table above), its median run took $l_s s" ;;
        *) loom_said="loom enumerated $e_loom iterations in a median run of $l_s s ($(awk -v s="$l_s" -v n="$e_loom" 'BEGIN {printf "%.1f", s / n * 1e6}') us of whole run per iteration)" ;;
      esac
      echo "- Why $crate is slower with the confidence target: pctvb's bound needs the executions it"
      echo "  counts ($e_counted), and reaching them took $e_executions search executions in all (the"
      echo "  explorer's (race reversal), 1 in 2, and those drawn with counts a later execution raised are not"
      echo "  counted) at $e_per us each: $e_secs s of the models' own time (one test at a time), of"
      echo "  the suite's median run of $c_s s (the rest is the process's and each test's set-up and"
      echo "  libtest; two tests at a time); $loom_said. Fewer executions would not give the printed"
      echo "  guarantee; the tables above give each test's."
    done <<<"$all_explained"
  done
  if [ -n "$close" ]; then
    echo "- Where pctvb's median was below loom's but the runs' ranges overlap: ${close%; }."
  fi
  echo "- pctvb samples executions (1000 per model by default); with \`PCTVB_CONFIDENCE=0.99\` it enumerates"
  echo "  the guarantee's class (1 preemption at one variable's accesses, 3 threads) where that takes"
  echo "  fewer executions than sampling it, as above, and samples as many as its bound needs"
  echo "  elsewhere; loom enumerates every schedule up to the crate's preemption bound. A pass means"
  echo "  different things: see README, \"Running your loom tests under pctvb\"."
  echo "- oneshot's \`send_recv_different_threads\` takes a deadline from std's clock. Its receiver thread"
  echo "  calls \`recv_timeout(Duration::from_millis(1))\`, which reads \`std::time::Instant::now()\` (oneshot's"
  echo "  loom build replaces only \`park_timeout\`, by \`loom::thread::yield_now\`), then loops: while the"
  echo "  deadline has not passed it yields and checks the channel; once it has, it swaps the channel's"
  echo "  state and returns \`Err(Timeout)\` unless the message is already there, and the test asserts"
  echo "  \`Ok(9)\`. Under loom the read is the real clock: between taking the deadline and seeing the"
  echo "  message lie a few scheduling points (the main thread spawning the sender, the sender's send),"
  echo "  microseconds of work, so an iteration times out only when the OS deschedules the test's thread"
  echo "  for over 1 ms inside that window; each iteration is one more chance, so the rate grows with the"
  echo "  iterations run and the machine's load. The clock can also make an iteration take another"
  echo "  path than the one loom replays to reach the next schedule; loom then stops with \"Reached"
  echo "  unexpected exploration state. Is the model fully deterministic?\" and the test binary aborts:"
  echo "  the row's count includes such runs. Under pctvb (Linux with glibc) \`Instant::now()\` inside"
  echo "  an execution reads the execution's virtual clock (the guide's section \"Time\"), which advances"
  echo "  1 us per read and does not see real time: the receiver times out only after 1,000 turns of its"
  echo "  loop without the message, and no schedule of this test makes that many (each turn waits for"
  echo "  another thread's progress, and the sender sends within a few steps); a timeout would replay."
  echo "  The row's notes count the runs the test failed in, per tool; a failing run is reported as"
  echo "  failing, not retried. On other platforms pctvb reads the real clock, as loom does."
  echo "- pctvb treats atomics as sequentially consistent for scheduling, but its race detector"
  echo "  honours Release/Acquire: a Relaxed store does not publish data, so a weakened ordering"
  echo "  that lets an \`UnsafeCell\` access race is reported (the sharded-slab patch)."
  echo "- thingbuf 0.1.6 runs one of its CI's six loom jobs (ThingBuf, \`--lib -- thingbuf\`: two"
  echo "  models, a third ignored). Its whole \`--lib\` suite, with the \`--cfg ci_skip_slow_models\` its"
  echo "  mpsc_async job adds (8 models ignored), had passed 22 tests under loom when a 900 s limit"
  echo "  stopped it; under pctvb-loom the whole \`--lib\` without that cfg (44 tests, 3 ignored) passes"
  echo "  in 1.3 s (measured by hand, not by this script). Before this version pctvb-loom failed 28 of"
  echo "  those 44 with data races loom does not report: a slot guard whose \`Drop\` publishes the slot"
  echo "  with a release store and then drops its \`MutPtr\` field; pctvb recorded the pointer's end"
  echo "  with the clock after the release, loom with the clock of the release, which covers it"
  echo "  (CHANGELOG; \`loom/tests/cell_span.rs\`). The ThingBuf job's time under loom includes the"
  echo "  trace its CI asks for (\`LOOM_LOG=loom=trace\`: loom formats a line per operation into a"
  echo "  buffer thingbuf prints on failure). Under loom the injected bug's run aborts: after the"
  echo "  causality violation, the unwinding drops the ring, whose destructor panics again (loom's"
  echo "  cell is still being written), so the row counts no tests; its log shows the violation."
  echo "- left-right 0.11.8's injected bug fails its one model's assertion. The unwinding then runs"
  echo "  \`WriteHandle\`'s \`Drop\`, which locks the readers' mutex twice with \`unwrap\`: under pctvb's"
  echo "  std-style locks the first guard, dropped while the thread panicked, poisoned the mutex, the"
  echo "  second \`unwrap\` panicked inside the unwinding and the process aborted, the report naming a"
  echo "  \`PoisonError\`. loom's locks are never poisoned, and now neither are pctvb-loom's \`Mutex\`,"
  echo "  \`RwLock\` and \`Condvar\` (\`loom/tests/sync.rs\`)."
  echo "- parking 2.2.1's injected bug (a lost wake-up: \`unpark\` notifies without taking the lock)"
  echo "  fails both of its models under both tools. In \`smoke\` the test body unparks and returns"
  echo "  without joining the parked thread, which then waits forever: loom requires every thread to"
  echo "  finish and reports \"deadlock\"; pctvb ends such an execution normally, as a process exit"
  echo "  would end the thread, so before this version pctvb-loom passed \`smoke\` (1 of the 2 models"
  echo "  failed). pctvb-loom now fails an execution whose \`thread::spawn\` threads did not all finish"
  echo "  (\`loom/tests/sync.rs\`)."
  echo "- tokio 1.54.1 runs its CI's loom-sync job, \`sync::tests\`: the loom models of \`tokio::sync\`"
  echo "  (\`mpsc\`, \`oneshot\`, \`broadcast\`, \`watch\`, \`Notify\`, \`RwLock\`, the semaphore, \`AtomicWaker\`,"
  echo "  \`SetOnce\`), switched with no source edit (its loom dependency is a"
  echo "  \`[target.\"cfg(loom)\".dev-dependencies.loom]\` table, with loom's \`futures\` and \`checkpoint\`"
  echo "  features, which pctvb-loom accepts). Its other loom jobs test the runtime (blocking pool,"
  echo "  time driver, current-thread and multi-thread schedulers) and are not run here. A loom run"
  echo "  killed by LOOM_TIMEOUT counts the tests libtest had reported finished (\"before the kill\")."
  echo "  pctvb-loom does not honour \`LOOM_MAX_BRANCHES=10000\` (it says so once): its own limit of"
  echo "  100,000 scheduling points per execution applies."
  echo "- tokio 1.54.1's injected bug is a lost wake-up in \`oneshot\`'s receiver: \`poll_recv\` sets its"
  echo "  \`RX_TASK_SET\` flag but decides whether the value has come from the state it loaded before,"
  echo "  not from the one the flag's \`fetch_or\` returns. A value sent between the two is missed, and"
  echo "  the sender, which saw no task to wake, wakes none: the receiver waits forever. pctvb fails"
  echo "  the three models where a oneshot's sender may run at that moment (\`loom_oneshot::smoke\` and"
  echo "  \`changing_rx_task\`, \`loom_notify::notify_waiters_sequential_notified_await\`), reporting a"
  echo "  task that waits for a wake-up no thread left can give: a lost wake-up, or a deadlock naming"
  echo "  that wait when another thread is joining the receiver's. loom reports a deadlock in the first"
  echo "  such model it reaches; the unwinding then drops a loom \`Arc\` in loom's \`block_on\`, whose"
  echo "  destructor panics again (loom has no active thread after the deadlock), and the test binary"
  echo "  aborts, so loom's row counts no tests (its first panic is quoted under Failures)."
} > "$RESULTS"
echo "wrote $RESULTS" >&2
