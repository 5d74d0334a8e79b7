#!/usr/bin/env bash
# The full test suite: install, build (all optional dependencies ON, warnings as errors),
# run every test; then build and test the core alone (IBNETDISC, HWLOC, SLURM all OFF) to
# prove the layering keeps them out; then every fuzz target for 60 s (docs/fuzzing.md), which
# ends with "fuzz: N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset ci
cmake --build --preset ci
ctest --preset ci
cmake --preset minimal
cmake --build --preset minimal
ctest --preset minimal
bash scripts/fuzz.sh 60
