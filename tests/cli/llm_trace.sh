#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# llm_trace.sh FABRICPLACE: the synthetic LLM-heavy trace end to end (docs/simulator.md, "A
# synthetic LLM-heavy trace"): `trace generate` writes the same bytes for the same spec, and
# `simulate` gives the same jobs.csv and summary.csv from the spec as from the SWF written
# from it; bad specs are usage errors (exit 2) naming the key.
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

spec='llm:jobs=300,seed=3,load=0.8,hosts=64,w128=0'
"$bin" trace generate "$spec" -o "$tmp/a.swf" 2>"$tmp/gen.err"
"$bin" trace generate "$spec" -q -o "$tmp/b.swf"
cmp -s "$tmp/a.swf" "$tmp/b.swf" || fail "two runs of one spec wrote different files"
"$bin" trace generate "${spec/seed=3/seed=4}" -q -o "$tmp/c.swf"
cmp -s "$tmp/a.swf" "$tmp/c.swf" && fail "seed 4 wrote the same file as seed 3"
grep -qE "^trace: $spec: 300 jobs of 1-64 nodes \(8 GPUs each\), seed 3; [0-9.]+ % of GPU-time in 16-128-node jobs; offered load 0\.800 on 64 hosts over [0-9.]+ h" "$tmp/gen.err" ||
  fail "no summary on stderr: $(cat "$tmp/gen.err")"
[[ $(grep -vc '^;' "$tmp/a.swf") == 300 ]] || fail "the SWF should hold 300 jobs"
head -n 1 "$tmp/a.swf" | grep -qx '; Version: 2.2' || fail "no SWF header"
awk '!/^;/ && NF != 18 { exit 1 }' "$tmp/a.swf" || fail "an SWF line without 18 fields"

fabric='fat3:pods=2,leaves=2,down=16,up=16'
common=(simulate -q --fabric "$fabric" --policies fabric,slurm-tree,first-fit)
"$bin" "${common[@]}" --trace "$spec" --out "$tmp/spec" >"$tmp/spec.stdout"
"$bin" "${common[@]}" --trace "$tmp/a.swf" --out "$tmp/file" >"$tmp/file.stdout"
for f in jobs.csv summary.csv; do
  cmp -s "$tmp/spec/$f" "$tmp/file/$f" || fail "$f differs between the spec and its SWF"
done
cmp -s "$tmp/spec.stdout" "$tmp/file.stdout" || fail "the summary tables differ"
grep -qF "$spec: 300 jobs of 1-64 nodes" "$tmp/spec/report.html" || fail "the report does not say what was generated"
[[ $(wc -l <"$tmp/spec/jobs.csv") == 901 ]] || fail "jobs.csv has $(wc -l <"$tmp/spec/jobs.csv") lines"

# Errors: usage (exit 2), naming the key and what was expected.
set +e
"$bin" simulate -q --fabric "$fabric" --trace 'llm:jobs=300,load=0.8' --out "$tmp/x" 2>"$tmp/err"
rc=$?
set -e
[[ $rc == 2 ]] || fail "a spec without hosts: exit $rc, expected 2"
[[ $(cat "$tmp/err") == "fabricplace: error: trace spec: llm: hosts: expected hosts=N, the cluster size the load is for (or rate=R arrivals per hour instead of a load)" ]] ||
  fail "message: $(cat "$tmp/err")"
[[ -e "$tmp/x" ]] && fail "--out created for a bad spec"
set +e
"$bin" trace generate 'llm:hosts=64,jobs=2000000' -o "$tmp/y.swf" 2>"$tmp/err"
rc=$?
set -e
[[ $rc == 2 ]] || fail "jobs=2000000: exit $rc, expected 2"
[[ $(cat "$tmp/err") == "fabricplace: error: trace spec: llm: jobs=2000000: expected an integer from 1 to 1000000" ]] ||
  fail "message: $(cat "$tmp/err")"
[[ -e "$tmp/y.swf" ]] && fail "an output was written for a bad spec"
echo "llm_trace: ok"
