#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# plugin_fault_slurmd.sh FABRICPLACE PLUGIN_SO [SPEC]: one node's slurmd killed (SIGKILL)
# while a --fabric-tp job's multi-node step runs on it.
#   SlurmdTimeout is 10 s here. The job (--no-requeue) ends NODE_FAIL within a bounded
#   time, nothing of it hangs (its srun, the batch step and every task are gone once the
#   node is back), its rank files are the whole set written at launch. A job elsewhere runs
#   on to COMPLETED; a job submitted while the node is down runs on other nodes. The slurmd
#   is started again, the node returns to service, and a job on it gets its whole rank-file
#   set. No fabricplace message in the jobs' stderr, no fatal error or crash in the logs.
# Exit 77 (SKIP) where Slurm cannot run; never in CI.
set -uo pipefail
FABRICPLACE=${1:?usage: plugin_fault_slurmd.sh FABRICPLACE PLUGIN_SO [SPEC]}
PLUGIN=${2:?usage: plugin_fault_slurmd.sh FABRICPLACE PLUGIN_SO [SPEC]}
spec=${3:-fat3:pods=2,leaves=2,down=4,up=4}
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"
t0=$(now_s)

export FABRICPLACE_LAB_SLURMD_TIMEOUT=10   # a silent node is DOWN after 10 s
lab_start_plugin "$spec" "$PLUGIN"
W=$LAB_DIR/work

cat >victim.sh <<'EOF'
#!/bin/bash
# A multi-node step through the plugin that would run for 5 minutes.
srun --fabric-tp=2 bash -c 'echo "task $SLURM_PROCID $(hostname) ${FABRICPLACE_RING_RANK:-unset}"; exec sleep 300' >"victim.$SLURM_JOB_ID"
echo "step rc $?"
EOF
cat >other.sh <<'EOF'
#!/bin/bash
sleep "$1"
srun --fabric-tp=2 bash -c 'echo "task $SLURM_PROCID $(hostname)"'
echo "step rc $?"
EOF
chmod +x victim.sh other.sh

v=$(sbatch --parsable -J victim -N 3 -w 'node[005,009,013]' --no-requeue --fabric-tp=2 \
      -o "$W/out.victim" -e "$W/err.victim" ./victim.sh)
o=$(sbatch --parsable -J other -N 2 -w 'node[001-002]' --fabric-tp=2 -o "$W/out.other" \
      -e "$W/err.other" ./other.sh 25)
wait_running "$v" 30 || { echo "FAIL: the victim job did not start"; exit 1; }
deadline=$(($(date +%s) + 30))
until [[ $(grep -c '^task ' "victim.$v" 2>/dev/null) == 3 ]]; do
  [[ $(date +%s) -ge $deadline ]] && { echo "FAIL: the victim's step did not start on 3 nodes"; LAB_KEEP=1; exit 1; }
  sleep 0.2
done
node=$(scontrol show hostnames "$(job_field "$v" NodeList)" | sed -n 2p)   # not the batch host
victim_set=$(rank_set "$W/fabricplace.$v")

t_kill=$(now_s)
"$LAB_SH" kill-slurmd "$node" --dir "$LAB_DIR" 9>&- || { echo "FAIL: lab.sh kill-slurmd $node"; exit 1; }
wait_terminal "$v" 60
st=$(job_field "$v" JobState)
echo "victim job $v: $st $(elapsed_s "$t_kill") s after $node's slurmd was killed"
check "the victim job ends NODE_FAIL within 60 s of $node's slurmd dying ($st)" test "$st" == NODE_FAIL
check "$node is DOWN ($(sinfo -h -n "$node" -o %t))" bash -c "[[ \$(sinfo -h -n '$node' -o %t) == down* ]]"
ok=0
[[ $victim_set == complete* ]] && same_hosts "${victim_set#complete }" "$(job_field "$v" NodeList)" && ok=1
check "the victim's rank files: the whole set written at launch, its nodes ($victim_set)" test "$ok" == 1

# A job submitted while the node is down: other nodes, and it runs.
d=$(sbatch --parsable -J during -N 3 --fabric-tp=2 -o "$W/out.during" -e "$W/err.during" ./other.sh 0)
wait_terminal "$d" 60
dn=$(job_field "$d" NodeList)
check "a job submitted while $node is down runs on other nodes ($dn): $(job_field "$d" JobState)" \
  bash -c "[[ '$(job_field "$d" JobState)' == COMPLETED ]] && ! scontrol show hostnames '$dn' | grep -qx '$node'"

# The node comes back.
"$LAB_SH" start-slurmd "$node" --dir "$LAB_DIR" 9>&- || { echo "FAIL: lab.sh start-slurmd $node"; exit 1; }
deadline=$(($(date +%s) + 60))
until [[ $(sinfo -h -n "$node" -o %t) == idle ]]; do
  [[ $(date +%s) -ge $deadline ]] && break
  sleep 0.3
done
check "$node returns to service once its slurmd is back ($(sinfo -h -n "$node" -o %t))" \
  test "$(sinfo -h -n "$node" -o %t)" == idle
left=""
deadline=$(($(date +%s) + 30))
while :; do
  left=""
  for p in /proc/[0-9]*; do
    grep -qzx "SLURM_JOB_ID=$v" "$p/environ" 2>/dev/null && left+=" ${p#/proc/}($(cat "$p/comm" 2>/dev/null))"
  done
  [[ -z $left || $(date +%s) -ge $deadline ]] && break
  sleep 0.5
done
check "nothing of the victim job is left running (srun, batch step, tasks)${left:+:$left}" test -z "$left"

out=$(wait_all_terminal 60 "$o")
check "the other job ran to its end${out:+: $out}" test -z "$out"
check "the other job COMPLETED 0:0, its step on both nodes ($(job_field "$o" JobState) $(job_field "$o" ExitCode))" \
  test "$(job_field "$o" JobState) $(job_field "$o" ExitCode) $(grep -c '^task ' "$W/out.other")" == "COMPLETED 0:0 2"

a=$(sbatch --parsable -J after -N 2 -w "$node,$(scontrol show hostnames "$(job_field "$v" NodeList)" | sed -n 1p)" \
      --fabric-tp=2 -o "$W/out.after" -e "$W/err.after" ./other.sh 0)
wait_terminal "$a" 60
after_set=$(rank_set "$W/fabricplace.$a")
check "a job on the recovered node: COMPLETED with its whole rank-file set ($(job_field "$a" JobState); $after_set)" \
  bash -c "[[ '$(job_field "$a" JobState)' == COMPLETED && '$after_set' == complete* ]]"

for f in err.victim err.other err.during err.after; do
  out=$(only_messages "$W/$f")
  check "$f: no fabricplace message${out:+: $out}" test -z "$out"
done
out=$(no_crash_in_logs)
check "no fatal error or crash in slurmctld's, slurmd's or the plugin's logs${out:+: $out}" test -z "$out"

# The killed slurmd's steps are the lab's too: `lab.sh down` stops them (by their working
# directory, in DIR), so no slurmstepd outlives the test.
"$LAB_SH" down --dir "$LAB_DIR" >/dev/null 9>&-
left=""
for d in /proc/[0-9]*; do
  c=; { read -r c <"$d/comm"; } 2>/dev/null
  [[ $c == slurmstepd || $c == slurmd ]] || continue
  r=$(readlink "$d/cwd" 2>/dev/null)
  [[ $r == "$LAB_DIR" || $r == "$LAB_DIR"/* ]] && left+=" ${d#/proc/}"
done
check "lab.sh down leaves no slurmd or slurmstepd of the lab running${left:+: pids$left}" test -z "$left"

if ((fails)); then
  show_files "$W"/out.* "$W"/err.* "$W/victim.$v" "$LAB_DIR/log/fabricplace.log"
  grep -iE 'error|down|respond' "$LAB_DIR/log/slurmctld.log" | tail -15
  LAB_KEEP=1
fi
echo "== $fails failed ($(elapsed_s "$t0") s)"
((fails == 0))
