#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# plugin_stress.sh FABRICPLACE PLUGIN_SO JOB_SUBMIT_LUA [SPEC]: 50 jobs submitted at once
# through the plugin and job_submit.lua (constrain and exact modes, TP groups of 1 and 2
# nodes, 1 to 4 nodes): every one is placed and runs, every TP group of every job lies inside
# one leaf, and neither the plugin's log nor job_submit's holds an error. Then the faults at
# submission: with the fabric files gone (the host map: derived from fabric.json, said; the
# JSON in exact mode: constrain; a truncated host map), a --fabric-tp job is submitted and
# runs anyway.
# Exit 77 (SKIP) where Slurm cannot run; never in CI.
set -uo pipefail
FABRICPLACE=${1:?usage: plugin_stress.sh FABRICPLACE PLUGIN_SO JOB_SUBMIT_LUA [SPEC]}
PLUGIN=${2:?}
LUA=${3:?}
spec=${4:-fat3:pods=2,leaves=2,down=4,up=4}
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"


lab_start_plugin "$spec" "$PLUGIN" "$LUA"

# leaf of each host, from the exported features
declare -A leaf_of
while read -r nl leaf; do
  for h in $(scontrol show hostnames "$nl"); do leaf_of[$h]=$leaf; done
done < <(sed -n 's/^NodeName=\([^ ]*\) Features=\([^, ]*\).*/\1 \2/p' "$LAB_DIR/etc/features.conf")

cat >job.sh <<'EOF'
#!/bin/bash
# Prints the job's ring (the batch step's rank file) and runs one step through the plugin.
sleep 0.5
echo "nodes $SLURM_JOB_NODELIST"
echo "ring $(sed -n 's/^rank [0-9]*=\([^ ]*\) .*/\1/p' fabricplace.$SLURM_JOB_ID.rankfile | uniq | paste -sd' ')"
echo "step $(srun hostname | wc -l)"
rm -f fabricplace.$SLURM_JOB_ID.*
EOF
chmod +x job.sh

# ---- 50 jobs at once ------------------------------------------------------------------------
t0=$(now_s)
declare -A shape
pids=()
for i in $(seq 1 50); do
  n=$(( (i % 4) + 1 ))                  # 1..4 nodes
  tp=$(( n % 2 == 0 && i % 3 != 0 ? 4 : 2 ))   # TP 4 = groups of 2 nodes when n is even
  m=$(( i % 5 == 0 )) ; mode=constrain; [[ $m == 1 ]] && mode=exact
  shape[$i]="$n $tp $mode"
  sbatch --parsable -J "s$i" -N "$n" --ntasks-per-node=1 --fabric-tp=$tp --fabric-mode=$mode \
    -o "out.$i" ./job.sh >"id.$i" 2>"err.$i" &
  pids+=($!)
done
wait "${pids[@]}"
submitted=$(cat id.* 2>/dev/null | grep -c '^[0-9]')
check "50 jobs submitted at once, all accepted ($submitted)" test "$submitted" == 50
deadline=$(($(date +%s) + 240))
while [[ -n $(squeue -h -o %i 2>/dev/null) && $(date +%s) -lt $deadline ]]; do sleep 0.5; done
echo "all 50 jobs done in $(elapsed_s "$t0") s"
ran=0 split=0 left=0 bad=""
for i in $(seq 1 50); do
  read -r n tp mode <<<"${shape[$i]}"
  if grep -q "^step $n$" "out.$i" 2>/dev/null; then ran=$((ran + 1)); else bad+=" s$i"; fi
  ring=$(sed -n 's/^ring //p' "out.$i" 2>/dev/null)
  if [[ $tp == 4 ]]; then  # groups of 2 consecutive ring hosts must share a leaf
    read -r -a r <<<"$ring"
    for ((k = 0; k + 1 < ${#r[@]}; k += 2)); do
      [[ ${leaf_of[${r[k]}]} == "${leaf_of[${r[k+1]}]}" ]] && continue
      # A job job_submit.lua left to Slurm (no whole group fit the free hosts when it was
      # submitted: on a loaded machine earlier jobs may already run) is Slurm's to place,
      # and said so; any other split is a failure.
      if grep -q "^[0-9T:-]* job s$i: .*; left to Slurm$" "$LAB_DIR/log/job_submit.log"; then
        left=$((left + 1)); echo "s$i ($mode) left to Slurm at submission, split: ${r[*]}"; break
      fi
      split=$((split + 1)); echo "s$i ($mode) splits: ${r[*]}"
    done
  fi
done
check "every job ran its step on all its nodes ($ran of 50)${bad:+; not:$bad}" test "$ran" == 50
check "every TP group of every job job_submit.lua constrained inside one leaf ($split split; $left jobs left to Slurm at submission)" test "$split" == 0
check "plugin log free of errors" bash -c "! grep -q '^error' '$LAB_DIR/log/fabricplace.log'"
check "job_submit log free of internal errors" bash -c "! grep -q 'internal error\|cannot load' '$LAB_DIR/log/job_submit.log'"

# ---- faults at submission: the job still runs -----------------------------------------------
mv "$LAB_DIR/etc/fabric.hostmap" "$LAB_DIR/etc/fabric.hostmap.away"
j=$(sbatch --parsable -N 2 --fabric-tp=4 -o nomap.out --wrap 'srun hostname | wc -l' 2>nomap.err)
wait_gone "$j" 30
check "no host map at submission: the job is submitted and runs ($(tail -1 nomap.out 2>/dev/null))" \
  test "$(tail -1 nomap.out 2>/dev/null)" == 2
check "no host map at submission: derived from fabric.json, said" \
  grep -qF "fabric.hostmap: no host map; derived from $LAB_DIR/etc/fabric.json instead" nomap.err
mv "$LAB_DIR/etc/fabric.hostmap.away" "$LAB_DIR/etc/fabric.hostmap"
# Exact mode without the fabric JSON: one message, constrain instead, and the job runs.
mv "$LAB_DIR/etc/fabric.json" "$LAB_DIR/etc/fabric.json.away"
j=$(sbatch --parsable -N 2 --fabric-tp=4 --fabric-mode=exact -o nojson.out --wrap 'srun hostname | wc -l' 2>nojson.err)
wait_gone "$j" 30
check "exact mode without the fabric JSON: the job runs ($(tail -1 nojson.out 2>/dev/null))" \
  test "$(tail -1 nojson.out 2>/dev/null)" == 2
check "exact mode without the fabric JSON: one message, then constrain" \
  grep -qF "fabric.json: cannot open: No such file or directory; exact mode falls back to constrain" nojson.err
mv "$LAB_DIR/etc/fabric.json.away" "$LAB_DIR/etc/fabric.json"
# A truncated host map (a copy cut short): an error naming it, and the job runs.
head -3 "$LAB_DIR/etc/fabric.hostmap" >"$LAB_DIR/etc/fabric.hostmap.cut"
mv "$LAB_DIR/etc/fabric.hostmap" "$LAB_DIR/etc/fabric.hostmap.away"
mv "$LAB_DIR/etc/fabric.hostmap.cut" "$LAB_DIR/etc/fabric.hostmap"
j=$(sbatch --parsable -N 2 --fabric-tp=4 -o cut.out --wrap 'srun hostname | wc -l' 2>cut.err)
wait_gone "$j" 30
check "a truncated host map: the job runs ($(tail -1 cut.out 2>/dev/null))" test "$(tail -1 cut.out 2>/dev/null)" == 2
check "a truncated host map: the message says so" grep -qF 'the host map is truncated' cut.err
mv "$LAB_DIR/etc/fabric.hostmap.away" "$LAB_DIR/etc/fabric.hostmap"

if ((fails)); then
  for f in "$LAB_DIR/log/fabricplace.log" "$LAB_DIR/log/job_submit.log"; do echo "---- $f"; tail -20 "$f"; done
  head -5 err.* 2>/dev/null | head -40
  LAB_KEEP=1
fi
echo "== $fails failed"
((fails == 0))
