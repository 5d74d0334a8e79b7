#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the libFuzzer targets (docs/fuzzing.md): scripts/fuzz.sh SECONDS [TARGET...]
#
# Configures and builds the `fuzz` preset (clang-16, ASan + UBSan; scripts/install-deps.sh
# installs clang-16 and libclang-rt-16-dev, scripts/test.sh runs it first), then runs each
# target (all of fuzz/targets.txt, or those named) for SECONDS on a scratch copy of its seed
# corpus, two at a time. Prints per target its executions per second, coverage (cov, ft) and
# PASS or FAIL, and last "fuzz: N passed, N failed". Exits non-zero on any crash, leak,
# timeout (one input over 10 s), out-of-memory (2 GiB) or failed run; the failing inputs are
# in build/fuzz/artifacts/TARGET/ (the script prints their paths).
#
# Environment: FABRICPLACE_FUZZ_JOBS (targets at once, default 2), FABRICPLACE_FUZZ_KEEP_CORPUS=1
# (keep build/fuzz/corpus/TARGET from the previous run instead of starting from the seeds),
# FABRICPLACE_FUZZ_KEEP_GOING=1 (triage: libFuzzer's -fork=1 with -ignore_crashes, -ignore_ooms
# and -ignore_timeouts, so one run collects every distinct failure instead of stopping at the
# first; still FAIL when there is any).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

usage() {
  echo "usage: scripts/fuzz.sh SECONDS [TARGET...]" >&2
  exit 2
}
[[ $# -ge 1 && $1 =~ ^[0-9]+$ && $1 -gt 0 ]] || usage
seconds=$1
shift

build=$root/build/fuzz
bindir=$build/fuzz
jobs=${FABRICPLACE_FUZZ_JOBS:-2}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: FABRICPLACE_FUZZ_JOBS must be a positive integer" >&2; exit 2; }

# ---- the targets and their parameters (fuzz/targets.txt) ----
declare -A max_len dict seeds
all=()
while read -r name len d rest; do
  [[ -z $name || $name == \#* ]] && continue
  all+=("$name")
  max_len[$name]=$len
  dict[$name]=$d
  seeds[$name]=$rest
done <"$root/fuzz/targets.txt"
if [[ $# -gt 0 ]]; then
  targets=("$@")
  for t in "${targets[@]}"; do
    [[ -n ${max_len[$t]+x} ]] || { echo "fuzz: unknown target '$t' (fuzz/targets.txt: ${all[*]})" >&2; exit 2; }
  done
else
  targets=("${all[@]}")
fi

# ---- build ----
if ! command -v clang++-16 >/dev/null; then
  echo "fuzz: clang++-16 not found: run scripts/install-deps.sh (clang-16 libclang-rt-16-dev)" >&2
  echo "fuzz: 0 passed, ${#targets[@]} failed"
  exit 1
fi
mkdir -p "$build"
echo "fuzz: building the fuzz preset (build/fuzz; log: build/fuzz/build.log)"
if ! { cmake --preset fuzz && cmake --build --preset fuzz; } >"$build/build.log" 2>&1; then
  grep -E -B2 -A8 'error|Error' "$build/build.log" | head -60 >&2
  echo "fuzz: the fuzz preset did not build (build/fuzz/build.log)" >&2
  echo "fuzz: 0 passed, ${#targets[@]} failed"
  exit 1
fi

# ---- sanitizer settings: abort on the first error, leaks detected, symbolized stacks ----
symbolizer=$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer-14 || command -v llvm-symbolizer || true)
[[ -n $symbolizer ]] && export ASAN_SYMBOLIZER_PATH=$symbolizer UBSAN_SYMBOLIZER_PATH=$symbolizer
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:handle_abort=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:symbolize=1}
known_open=$root/tests/data/fuzz/KNOWN_OPEN

# The seed corpus of a target, copied (gunzipped) into $2.
assemble_corpus() {
  local t=$1 dir=$2 f base
  mkdir -p "$dir"
  local -a files=()
  # shellcheck disable=SC2206  # globs in targets.txt expand here
  (cd "$root" && shopt -s nullglob && for g in ${seeds[$t]}; do printf '%s\n' "$g"; done) >"$dir.list"
  while read -r f; do files+=("$root/$f"); done <"$dir.list"
  rm -f "$dir.list"
  for f in "$root/fuzz/seeds/$t"/* "$root/tests/data/fuzz/$t"/*; do
    [[ -f $f ]] && files+=("$f")
  done
  for f in "${files[@]}"; do
    [[ -f $f ]] || continue
    local rel=${f#"$root/tests/data/fuzz/"}
    if [[ $rel != "$f" ]] && grep -qxF "$rel" "$known_open" 2>/dev/null; then
      continue  # a known open crash would stop the run before it starts
    fi
    base=seed-$(basename "$(dirname "$f")")-$(basename "$f")
    if [[ $f == *.gz ]]; then
      gzip -dc "$f" >"$dir/${base%.gz}"
    else
      cp "$f" "$dir/$base"
    fi
  done
}

# Runs one target; writes its log and exit status under $build/logs.
run_target() {
  local t=$1
  local log=$build/logs/$t.log corpus=$build/corpus/$t artifacts=$build/artifacts/$t/
  local -a args=(-max_total_time="$seconds" -max_len="${max_len[$t]}" -rss_limit_mb=2048
                 -malloc_limit_mb=2048 -timeout=10 -print_final_stats=1 -detect_leaks=1
                 -artifact_prefix="$artifacts" -close_fd_mask=1)
  [[ ${dict[$t]} != - ]] && args+=(-dict="$root/fuzz/dicts/${dict[$t]}.dict")
  [[ ${FABRICPLACE_FUZZ_KEEP_GOING:-0} == 1 ]] &&
    args+=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1)
  rm -rf "$artifacts"
  mkdir -p "$artifacts"
  if [[ ${FABRICPLACE_FUZZ_KEEP_CORPUS:-0} != 1 || ! -d $corpus ]]; then
    rm -rf "$corpus"
    assemble_corpus "$t" "$corpus"
  fi
  # The budget plus time to load the corpus; `timeout` ends a run that hangs regardless.
  timeout -k 10 $((seconds + 300)) "$bindir/fuzz_$t" "${args[@]}" "$corpus" >"$log" 2>&1
  echo $? >"$build/logs/$t.rc"
}

# Children are killed (by their process ids) if this script is interrupted.
declare -A running=()
cleanup() {
  local pid
  for pid in "${!running[@]}"; do
    pkill -TERM -P "$pid" 2>/dev/null  # its `timeout`, which passes TERM on to the fuzzer
  done
  wait 2>/dev/null
}
trap 'cleanup; echo "fuzz: interrupted" >&2; exit 130' INT TERM
trap cleanup EXIT

mkdir -p "$build/logs" "$build/corpus" "$build/artifacts"
echo "fuzz: ${#targets[@]} targets, ${seconds} s each, $jobs at a time (logs: build/fuzz/logs/)"
for t in "${targets[@]}"; do
  rm -f "$build/logs/$t.rc" "$build/logs/$t.log"
  while [[ ${#running[@]} -ge $jobs ]]; do
    wait -n 2>/dev/null
    for pid in "${!running[@]}"; do kill -0 "$pid" 2>/dev/null || unset "running[$pid]"; done
  done
  if [[ ! -x $bindir/fuzz_$t ]]; then
    echo "not built" >"$build/logs/$t.log"
    echo 127 >"$build/logs/$t.rc"
    continue
  fi
  run_target "$t" &
  running[$!]=$t
done
wait
running=()

# ---- report ----
passed=0
failed=0
for t in "${targets[@]}"; do
  log=$build/logs/$t.log
  rc=$(cat "$build/logs/$t.rc" 2>/dev/null || echo 1)
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+.*cov: [0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9A-Za-z]*\).*/\1/p' <<<"$last")
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  mapfile -t found < <(find "$build/artifacts/$t" -type f 2>/dev/null | sort)
  if [[ $rc == 0 && ${#found[@]} -eq 0 ]] && grep -q -E 'Done [0-9]+ runs in|INFO: exiting: 0 ' "$log"; then
    verdict=PASS
    passed=$((passed + 1))
  else
    verdict=FAIL
    failed=$((failed + 1))
  fi
  printf '%-4s %-20s exec/s %-7s execs %-9s cov %-6s ft %-7s corpus %-12s rss %s MB\n' \
    "$verdict" "$t" "${eps:-?}" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "${rss:-?}"
  if [[ $verdict == FAIL ]]; then
    why=$(grep -m1 -E '^==[0-9]+==ERROR|^SUMMARY|ERROR: libFuzzer|fuzz: property violated|runtime error|^not built' "$log" || true)
    [[ $rc == 124 || $rc == 137 ]] && why="the run did not end by itself (killed by timeout after $((seconds + 300)) s)"
    [[ -z $why ]] && grep -q '^Slowest unit: ' "$log" && why="a slow input: $(grep -m1 '^Slowest unit: ' "$log")"
    echo "     ${why:-exit status $rc, see $log}"
    # The first frames in the project's code (past libc, the sanitizers, libFuzzer, fuzz/).
    grep -E '^ +#[0-9]+ 0x' "$log" | grep -E "$root/" | grep -v -E "$root/fuzz/|fuzzer::" | head -3 |
      sed -E "s/^ *#[0-9]+ 0x[0-9a-f]+ in /       at /; s#$root/##; s/\(([^()]|\([^()]*\))*\)//g" | cut -c1-160
    for a in "${found[@]:0:5}"; do
      echo "     artifact: ${a#"$root/"}  (reproduce: build/fuzz/fuzz/fuzz_$t ${a#"$root/"})"
    done
    [[ ${#found[@]} -gt 5 ]] && echo "     ... and $((${#found[@]} - 5)) more in build/fuzz/artifacts/$t/"
    echo "     log: build/fuzz/logs/$t.log"
  fi
done
echo "fuzz: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
