#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# plugin_fault_ctld.sh FABRICPLACE PLUGIN_SO JOB_SUBMIT_LUA [SPEC]: slurmctld restarted while
# fabricplace jobs run and while steered jobs are pending.
#   Leaves 1-2 run two --fabric-tp jobs, each with a step running across the restarts;
#   leaf 3 a plain job and a --fabric-tp job that starts an srun right after the first
#   restart; leaf 4 is free. Pending behind dependencies: an exact-mode job pinned to 2
#   hosts of leaf 4 and a constrain-mode job job_submit.lua kept inside leaf 4.
#   slurmctld is restarted twice: SIGTERM (it saves its state) and SIGKILL (a crash). After
#   each, once the nodes have registered again, the running jobs still run and the pending
#   ones still carry their pin and their constraint. Then the jobs go on: the steps across
#   the restarts end, new steps run in ring order, and the pending jobs run on the hosts they
#   were steered to (the exact job on its pin, the constrain job inside leaf 4, where
#   without the constraint Slurm would take the free leaves 1-2), each with its whole
#   rank-file set. The srun started while slurmctld had not heard from the nodes yet (all
#   UNKNOWN for a few seconds; slurmctld refuses a step with a host list on them, where
#   srun without one waits) stands aside with its message and runs in Slurm's order once
#   srun retries. Every job ends COMPLETED; no fatal error or crash in the logs.
# Exit 77 (SKIP) where Slurm cannot run; never in CI.
set -uo pipefail
FABRICPLACE=${1:?usage: plugin_fault_ctld.sh FABRICPLACE PLUGIN_SO JOB_SUBMIT_LUA [SPEC]}
PLUGIN=${2:?}
LUA=${3:?}
spec=${4:-fat3:pods=2,leaves=2,down=4,up=4}
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"
t0=$(now_s)

lab_start_plugin "$spec" "$PLUGIN" "$LUA"
W=$LAB_DIR/work
leaf4=$(scontrol show hostnames "$(sed -n 's/^NodeName=\([^ ]*\) Features=p02-leaf02.*/\1/p' "$LAB_DIR/etc/features.conf")")
[[ -n $leaf4 ]] || { echo "FAIL: no leaf p02-leaf02 in features.conf"; exit 1; }

cat >job.sh <<'EOF'
#!/bin/bash
# job.sh WAIT: a step that waits for ./go when WAIT is 1 (it runs across the restarts),
# then a step after them; every task says where it runs and its ring rank.
if [[ $1 == 1 ]]; then
  srun --fabric-tp=4 bash -c 'while [ ! -e go ]; do sleep 0.2; done; echo "task $SLURM_PROCID $(hostname) ${FABRICPLACE_RING_RANK:-unset}"' >"step0.$SLURM_JOB_ID"
  echo "step0 rc $?"
fi
srun --fabric-tp=4 bash -c 'echo "task $SLURM_PROCID $(hostname) ${FABRICPLACE_RING_RANK:-unset}"' >"step1.$SLURM_JOB_ID"
echo "step1 rc $?"
EOF
cat >window.sh <<'EOF'
#!/bin/bash
# window.sh: an srun as soon as ./go-window appears (right after slurmctld's restart).
while [ ! -e go-window ]; do sleep 0.05; done
srun --fabric-tp=4 bash -c 'echo "task $SLURM_PROCID $(hostname)"' >"window.$SLURM_JOB_ID"
echo "window rc $?"
EOF
chmod +x job.sh window.sh

r1=$(sbatch --parsable -J run1 -N 4 -w 'node[001-004]' --fabric-tp=4 -o "$W/out.run1" ./job.sh 1)
r2=$(sbatch --parsable -J run2 -N 4 -w 'node[005-008]' --fabric-tp=4 -o "$W/out.run2" ./job.sh 1)
b3=$(sbatch --parsable -J plain3 -N 2 -w 'node[009-010]' -o /dev/null --wrap 'while [ ! -e go ]; do sleep 0.2; done')
wj=$(sbatch --parsable -J window -N 2 -w 'node[011-012]' --fabric-tp=4 -o "$W/out.window" -e "$W/err.window" ./window.sh)
for j in "$r1" "$r2" "$b3" "$wj"; do
  wait_running "$j" 30 || { echo "FAIL: job $j did not start: $(job_field "$j" JobState) $(job_field "$j" Reason)"; exit 1; }
done
deadline=$(($(date +%s) + 30))
until squeue -h -s -j "$r1" -o %i | grep -q "^$r1\.0$" && squeue -h -s -j "$r2" -o %i | grep -q "^$r2\.0$"; do
  [[ $(date +%s) -ge $deadline ]] && { echo "FAIL: the jobs' first steps did not start"; squeue -s; exit 1; }
  sleep 0.2
done
# job_submit.lua must see the running jobs: slurm.jobs gains jobs created in the second of
# its last refresh only once a later second brings a change (next_second, common.sh).
next_second
pe=$(sbatch --parsable -J exact -N 2 --fabric-tp=4 --fabric-mode=exact --dependency="afterok:$r1" \
       -o "$W/out.exact" -e "$W/err.exact" ./job.sh 0)
next_second
pc=$(sbatch --parsable -J constrain -N 4 --fabric-tp=4 --dependency="afterok:$r2" \
       -o "$W/out.constrain" -e "$W/err.constrain" ./job.sh 0)
pin=$(job_field "$pe" ReqNodeList) feat=$(job_field "$pc" Features)
echo "exact job $pe pinned to $pin; constrain job $pc: Features=$feat"
in_leaf4=$(comm -12 <(scontrol show hostnames "$pin" | sort) <(sort <<<"$leaf4") | wc -l)
check "the exact job is pinned to 2 hosts of leaf 4 ($pin)" \
  test "$(scontrol show hostnames "$pin" | wc -l)/$in_leaf4" == 2/2
check "job_submit.lua kept the constrain job inside leaf 4 ($feat)" \
  bash -c "[[ '$feat' == *p02-leaf02* && '$feat' != *p01-* && '$feat' != *p02-leaf01* ]]"

# state_now: every job's state, and the pending jobs' steering, as one line
state_now() {
  echo "run1=$(job_field "$r1" JobState) run2=$(job_field "$r2" JobState)" \
       "plain3=$(job_field "$b3" JobState) exact=$(job_field "$pe" JobState)/$(job_field "$pe" ReqNodeList)" \
       "constrain=$(job_field "$pc" JobState)/$(job_field "$pc" Features)"
}
want="run1=RUNNING run2=RUNNING plain3=RUNNING exact=PENDING/$pin constrain=PENDING/$feat"
check "before the restarts: $(state_now)" test "$(state_now)" == "$want"
for how in "" --kill; do
  "$LAB_SH" restart-ctld --dir "$LAB_DIR" $how 9>&- || { echo "FAIL: lab.sh restart-ctld $how"; LAB_KEEP=1; exit 1; }
  [[ -z $how ]] && touch "$W/go-window"   # an srun while the nodes are UNKNOWN
  t_restart=$(now_s)
  check "after slurmctld's restart ${how:-(SIGTERM)}: every node registers again within 30 s" wait_nodes_registered 30
  echo "nodes registered $(elapsed_s "$t_restart") s after the restart"
  check "after slurmctld's restart ${how:-(SIGTERM)}: jobs run, pin and constraint kept: $(state_now)" \
    test "$(state_now)" == "$want"
  [[ -z $how ]] && sleep 2   # slurmctld has saved the state it recovered
done
check "the first steps still run after the restarts" \
  bash -c "squeue -h -s -o %i | grep -qx '$r1.0' && squeue -h -s -o %i | grep -qx '$r2.0'"

touch "$W/go"
# srun retries a refused step after about a minute (Slurm's own wait).
out=$(wait_all_terminal 150 "$r1" "$r2" "$b3" "$wj" "$pe" "$pc")
check "every job reaches a final state within 150 s of the restarts${out:+:$'\n'$out}" test -z "$out"
for j in "$r1" "$r2" "$b3" "$wj" "$pe" "$pc"; do
  name=$(job_field "$j" JobName) st="$(job_field "$j" JobState) $(job_field "$j" ExitCode)"
  check "$name ($j): COMPLETED 0:0 ($st)" test "$st" == "COMPLETED 0:0"
done
enodes=$(job_field "$pe" NodeList) cnodes=$(job_field "$pc" NodeList)
check "the exact job ran on its pin ($enodes = $pin)" \
  test "$(scontrol show hostnames "$enodes" | paste -sd' ')" == "$(scontrol show hostnames "$pin" | paste -sd' ')"
check "the constrain job ran inside leaf 4 ($cnodes)" \
  test "$(scontrol show hostnames "$cnodes" | paste -sd' ')" == "$(paste -sd' ' <<<"$leaf4")"
for j in "$r1" "$r2" "$pe" "$pc"; do
  name=$(job_field "$j" JobName) nodes=$(job_field "$j" NodeList)
  set_now=$(rank_set "$W/fabricplace.$j")
  ok=0
  [[ $set_now == complete* ]] && same_hosts "${set_now#complete }" "$nodes" && ok=1
  check "$name: all four rank files, listing its nodes ($set_now)" test "$ok" == 1
  ring=${set_now#complete }
  for s in 0 1; do
    [[ $s == 0 && ( $j == "$pe" || $j == "$pc" ) ]] && continue
    got=$(sed -n 's/^task //p' "$W/step$s.$j" 2>/dev/null | sort -n)
    check "$name: step $s ($([[ $s == 0 ]] && echo across || echo after) the restarts) ran its tasks in ring order, ring rank = task id" \
      test "$(awk '{print $2}' <<<"$got" | paste -sd' ')/$(awk '$1 != $3' <<<"$got" | wc -l)" == "$ring/0"
  done
done
check "the srun right after the restart ran both tasks, in Slurm's order ($(sed -n 's/^task //p' "$W/window.$wj" 2>/dev/null | sort -n | paste -sd' '))" \
  test "$(sed -n 's/^task //p' "$W/window.$wj" 2>/dev/null | sort -n | paste -sd' ')" == "0 node011 1 node012"
out=$(only_messages "$W/err.window" "^srun: fabricplace: node011 has not answered slurmctld yet \\(slurmctld restarted, or the node is not responding\\); srun keeps Slurm's order$")
check "... and said it stands aside: node011 has not answered slurmctld yet${out:+; $out}" \
  bash -c "[[ -z '$out' ]] && grep -q 'has not answered slurmctld yet' '$W/err.window'"
out=$(no_crash_in_logs)
check "no fatal error or crash in slurmctld's, slurmd's or the plugin's logs${out:+: $out}" test -z "$out"

if ((fails)); then
  show_files "$W"/out.* "$W"/err.* "$W"/step* "$LAB_DIR/log/fabricplace.log" "$LAB_DIR/log/job_submit.log"
  grep -iE 'error|recover' "$LAB_DIR/log/slurmctld.log" | tail -20
  LAB_KEEP=1
fi
echo "== $fails failed ($(elapsed_s "$t0") s)"
((fails == 0))
