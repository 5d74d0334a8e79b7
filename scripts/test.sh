#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The full test suite: install, build (all optional dependencies ON, warnings as errors),
# run every test; then build and test the core alone (IBNETDISC, HWLOC, SLURM all OFF) to
# prove the layering keeps them out; then every fuzz target for 60 s (docs/fuzzing.md), which
# ends with "fuzz: N passed, N failed".
# Last, whatever the outcome, the time of each stage (wall clock, seconds).
set -euo pipefail
cd "$(dirname "$0")/.."

stage_times=()
print_stage_times() {
  local rc=$?
  echo "== stage times =="
  [[ ${#stage_times[@]} -eq 0 ]] || printf '%s\n' "${stage_times[@]}"
  printf '%-24s %6d s\n' total "$SECONDS"
  exit "$rc"
}
trap print_stage_times EXIT
stage() {  # stage NAME CMD...: runs CMD, records its time; a failure ends the script
  local name=$1 t0=$SECONDS rc=0
  shift
  "$@" || rc=$?
  stage_times+=("$(printf '%-24s %6d s' "$name" $((SECONDS - t0)))$([[ $rc -eq 0 ]] || echo "  (failed: exit $rc)")")
  return "$rc"
}

stage install-deps bash scripts/install-deps.sh
stage "build (ci)" bash -c 'cmake --preset ci && cmake --build --preset ci'
stage "test (ci)" ctest --preset ci
stage "build (minimal)" bash -c 'cmake --preset minimal && cmake --build --preset minimal'
stage "test (minimal)" ctest --preset minimal
stage "fuzz smoke (60 s each)" bash scripts/fuzz.sh 60
