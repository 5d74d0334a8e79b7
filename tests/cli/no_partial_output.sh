#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad input never leaves a partial or clobbered output file, and good output replaces the
# old file whole.
set -euo pipefail
bin=$1 data=$2
# Independent of the caller's Slurm job (ctest run inside salloc or srun).
for v in $(compgen -e | grep '^SLURM_' || true); do unset "$v"; done
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

echo old >"$d/fabric.json"
if "$bin" fabric import "$data/bad/truncated.ibnetdiscover.txt" -o "$d/fabric.json" 2>"$d/err"; then fail "bad input accepted"; fi
[[ "$(cat "$d/fabric.json")" == old ]] || fail "existing output clobbered"
grep -q "truncated.ibnetdiscover.txt:" "$d/err" || fail "error does not name the file: $(cat "$d/err")"

if "$bin" fabric export "$data/bad/unknown-record.txt" --format slurm-topology -o "$d/new.conf" 2>/dev/null; then fail "bad input accepted"; fi
[[ ! -e "$d/new.conf" ]] || fail "partial output created"

# A tiers CSV whose links section contradicts its host rows: exit 1, file and line, no output.
if "$bin" fabric import "$data/bad/links-contradict.csv" -o "$d/fabric.json" 2>"$d/err"; then fail "contradicting links accepted"; fi
[[ "$(cat "$d/fabric.json")" == old ]] || fail "existing output clobbered by contradicting links"
grep -qF 'links-contradict.csv:24: "tor1" and "agg3" are not linked by the host rows' "$d/err" || fail "unclear error: $(cat "$d/err")"
if "$bin" fabric export "$data/bad/links-contradict.csv" --format tiers-csv -o "$d/new.csv" 2>/dev/null; then fail "contradicting links exported"; fi
[[ ! -e "$d/new.csv" ]] || fail "partial tiers CSV created"

if "$bin" fabric generate "fat2:leaves=2,bogus=1" -o "$d/fabric.json" 2>/dev/null; then fail "bad spec accepted"; fi
[[ "$(cat "$d/fabric.json")" == old ]] || fail "existing output clobbered by a bad spec"

"$bin" fabric import "$data/fabrics/fat2_L8.ibnetdiscover.txt" -o "$d/fabric.json"
"$bin" fabric export "$d/fabric.json" --format json -o "$d/again.json"
cmp "$d/fabric.json" "$d/again.json" || fail "JSON round trip through the CLI differs"
[[ $(ls -A "$d" | wc -l) -eq 3 ]] || fail "temporary files left behind: $(ls -A "$d")"

# rankfile: a bad host, a bad node list, no Slurm job: the old rank file stays whole.
S=fat2:leaves=2,down=4,up=4
echo old >"$d/ranks"
while IFS='|' read -r bad want; do
  # shellcheck disable=SC2086
  if env -u SLURM_JOB_NODELIST -u SLURM_NODELIST -u SLURM_STEP_NODELIST \
      "$bin" rankfile --fabric "$S" $bad --format openmpi -o "$d/ranks" 2>"$d/err"; then
    fail "rankfile $bad accepted"
  fi
  [[ "$(cat "$d/ranks")" == old ]] || fail "rankfile $bad clobbered the old file"
  grep -qF -- "$want" "$d/err" || fail "rankfile $bad: unclear error: $(cat "$d/err")"
done <<'CASES'
--hosts node[001,042]|--hosts: 1 host(s) not in the fabric: node042
--hosts node[001|--hosts: hostlist "node[001", column 5: '[' without ']'
--from-slurm-job|--from-slurm-job: SLURM_JOB_NODELIST is not set
--hosts node001 --tasks-per-node 0|--tasks-per-node must be at least 1
CASES
for bad in "--hwloc-xml $data/fabrics/fat2_L8.ibnetdiscover.txt --format openmpi" "--format pbs"; do
  # shellcheck disable=SC2086
  if "$bin" rankfile --fabric "$S" --hosts node001 $bad -o "$d/ranks" 2>"$d/err"; then fail "rankfile $bad accepted"; fi
  [[ "$(cat "$d/ranks")" == old ]] || fail "rankfile $bad clobbered the old file"
  grep -qE "not an hwloc XML topology|built without hwloc|--format pbs: expected one of" "$d/err" || fail "rankfile $bad: unclear error: $(cat "$d/err")"
done
# Tasks per node from Slurm only when tasks were asked for (-n / --ntasks-per-node); a plain
# `salloc -N2` sets SLURM_TASKS_PER_NODE to the CPU count and srun runs one task per node.
SLURM_JOB_NODELIST='node[003,001]' SLURM_TASKS_PER_NODE='2(x2)' SLURM_NTASKS=4 "$bin" rankfile \
  --fabric "$S" --from-slurm-job --format slurm -o "$d/ranks" 2>"$d/err"
[[ "$(tr '\n' ' ' <"$d/ranks")" == "node001 node001 node003 node003 " ]] || fail "rankfile from a Slurm job: $(cat "$d/ranks")"
grep -qxF "fabricplace: node[003,001], 2 task(s) per node (SLURM_TASKS_PER_NODE)" "$d/err" || fail "K source not said: $(cat "$d/err")"
env -u SLURM_NTASKS -u SLURM_NTASKS_PER_NODE SLURM_JOB_NODELIST='node[003,001]' SLURM_TASKS_PER_NODE='2(x2)' \
  "$bin" rankfile --fabric "$S" --from-slurm-job --format slurm -o "$d/ranks" 2>/dev/null
[[ "$(tr '\n' ' ' <"$d/ranks")" == "node001 node003 " ]] || fail "salloc -N2 without -n: $(cat "$d/ranks")"
# Inside an srun step on fewer nodes than the job, Slurm's counts are the step's: an error.
echo old >"$d/ranks"
if SLURM_JOB_NODELIST='node[001-004]' SLURM_STEP_NODELIST='node[001-002]' SLURM_NTASKS=2 \
    SLURM_TASKS_PER_NODE='1(x2)' "$bin" rankfile --fabric "$S" --from-slurm-job --format slurm \
    -o "$d/ranks" 2>"$d/err"; then
  fail "a step's task counts taken for the job's"
fi
[[ "$(cat "$d/ranks")" == old ]] || fail "step error clobbered the old file"
grep -qF "inside an srun step on node[001-002], fewer nodes than the job's node[001-004]" "$d/err" || fail "unclear error: $(cat "$d/err")"
# salloc's shell as an interactive step (LaunchParameters=use_interactive_step) keeps the
# job's counts: SLURM_STEP_TASKS_PER_NODE differs from SLURM_TASKS_PER_NODE.
SLURM_JOB_NODELIST='node[001-004]' SLURM_STEP_NODELIST='node001' SLURM_STEP_ID=4294967290 \
  SLURM_NTASKS=8 SLURM_NTASKS_PER_NODE=2 SLURM_TASKS_PER_NODE='2(x4)' SLURM_STEP_TASKS_PER_NODE=1 \
  "$bin" rankfile --fabric "$S" --from-slurm-job --format mpich -o "$d/ranks" 2>/dev/null
[[ "$(paste -sd' ' "$d/ranks")" == "node001:2 node002:2 node003:2 node004:2" ]] || fail "interactive step: $(cat "$d/ranks")"
# Uneven tasks per node (salloc -n 5 -N 2): an error, not a file with the wrong rank count.
echo old >"$d/ranks"
if SLURM_JOB_NODELIST='node[003,001]' SLURM_TASKS_PER_NODE='3,2' SLURM_NTASKS=5 "$bin" rankfile --fabric "$S" \
    --from-slurm-job --format openmpi -o "$d/ranks" 2>"$d/err"; then
  fail "uneven SLURM_TASKS_PER_NODE accepted"
fi
[[ "$(cat "$d/ranks")" == old ]] || fail "uneven tasks per node clobbered the old file"
grep -qF "SLURM_TASKS_PER_NODE=\"3,2\": the job's tasks per node are uneven" "$d/err" || fail "unclear error: $(cat "$d/err")"
rm -f "$d/ranks" "$d/err"

# Output into a directory that does not exist: clear error, nothing created.
if "$bin" fabric import "$data/fabrics/fat2_L8.ibnetdiscover.txt" -o "$d/missing/x.json" 2>"$d/err2"; then fail "write into a missing directory succeeded"; fi
grep -q "missing/x.json: cannot create a temporary file" "$d/err2" || fail "unclear error: $(cat "$d/err2")"
echo ok
