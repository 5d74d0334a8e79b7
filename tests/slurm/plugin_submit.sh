#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# plugin_submit.sh FABRICPLACE PLUGIN_SO JOB_SUBMIT_LUA [SPEC]: the SPANK plugin and
# etc/job_submit.lua at submission, on the Slurm lab (nodes of "2 GPUs": --fabric-tp=4 is a
# TP group of 2 nodes).
#   - impossible requests are rejected at once with the reason;
#   - constrain mode: with 3 free hosts in each leaf of pod 1 (pod 2 full), a 4-node TP-4
#     job gets 2 + 2 (every TP group inside one leaf), where the same job without the plugin
#     (--fabric-mode=off) gets Slurm's best fit, 3 + 1, and splits a group;
#   - a job with its own -C is left alone; a job that fits in one leaf gets one leaf, and a
#     burst of such jobs spreads over the leaves (all run at once);
#   - exact mode pins the engine's nodes (2 + 2 as well), and the job inherits no
#     SLURM_HOSTFILE.
# Exit 77 (SKIP) where Slurm cannot run; never in CI.
set -uo pipefail
FABRICPLACE=${1:?usage: plugin_submit.sh FABRICPLACE PLUGIN_SO JOB_SUBMIT_LUA [SPEC]}
PLUGIN=${2:?}
LUA=${3:?}
spec=${4:-fat3:pods=2,leaves=2,down=4,up=4}
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"

lab_start_plugin "$spec" "$PLUGIN" "$LUA"

# ---- impossible requests: rejected at submission, with the reason -----------------------
out=$(sbatch --fabric-tp=16 -N 8 --wrap true 2>&1); rc=$?
check "TP group larger than any leaf is rejected (rc $rc)" bash -c "[[ $rc != 0 ]] && grep -qF \
  'fabricplace: --fabric-tp 16: a TP group needs 8 nodes in one leaf; the largest leaf (p01-leaf01) has 4 hosts' <<<'$out'"
out=$(sbatch --fabric-tp=4 -N 3 --wrap true 2>&1); rc=$?
check "TP not tiling the job is rejected (rc $rc)" bash -c "[[ $rc != 0 ]] && grep -qF \
  'fabricplace: --fabric-tp 4 does not tile the job: 3 nodes x 2 GPUs per node = 6 GPUs, not a multiple of 4' <<<'$out'"
printf '#!/bin/bash\n#SBATCH -N 20\ntrue\n' >big.sh
out=$(sbatch --fabric-tp=2 big.sh 2>&1); rc=$?
check "more nodes than the fabric (from #SBATCH -N) is rejected (rc $rc)" bash -c "[[ $rc != 0 ]] && grep -qF \
  'fabricplace: the job asks for 20 nodes; the fabric has 16 hosts' <<<'$out'"

# ---- valid requests are not mistaken for impossible ones ------------------------------------
for args in "--oversubscribe -N 4" "--nice -N 4" "-n 8 --ntasks-per-node=2" "--wait-all-nodes 1 -N 4"; do
  # shellcheck disable=SC2086
  out=$(sbatch --test-only --fabric-tp=4 $args --wrap true 2>&1); rc=$?
  check "sbatch --fabric-tp=4 $args is accepted (rc $rc)" test "$rc" == 0
done
for args in "--mem-bind local -N 4" "--fabric-mode=exact -n 8 --ntasks-per-node=2" "--fabric-mode=exact -n 8"; do
  # shellcheck disable=SC2086
  out=$(sbatch --test-only --fabric-tp=4 $args --wrap true 2>&1); rc=$?
  check "sbatch --fabric-tp=4 $args is accepted (rc $rc)" test "$rc" == 0
done
check "no pinned-node file left behind by --test-only" test -z "$(ls -A . | grep fabricplace-exact || true)"
printf '#!/bin/bash\n#SBATCH -N 4\ntrue\n' >stdin.sh
out=$(sbatch --test-only --fabric-tp=4 <stdin.sh 2>&1); rc=$?
check "a script on stdin (#SBATCH -N 4) is accepted (rc $rc)" test "$rc" == 0
# A script the plugin must not read again: a FIFO (sbatch has drained it; a second read would
# block forever). Its #SBATCH -N is unknown to the plugin, so only the checks that need no
# node count run, and the job is accepted.
mkfifo fifo.sh
timeout 60 bash -c "printf '#!/bin/bash\\n#SBATCH -N 4\\ntrue\\n' >fifo.sh" &
writer=$!
out=$(timeout -s KILL 60 sbatch --test-only --fabric-tp=4 fifo.sh 2>&1); rc=$?
wait "$writer" 2>/dev/null
rm -f fifo.sh
check "a FIFO script is accepted without the plugin reading it again (rc $rc: $(head -c 300 <<<"$out"))" test "$rc" == 0
out=$(sbatch --test-only --fabric-tp=32 -N 4 --fabric-tp=4 --wrap true 2>&1); rc=$?
check "the last --fabric-tp counts, whatever the callback order (rc $rc)" test "$rc" == 0

# ---- constrain: every TP group inside one leaf ----------------------------------------------
busy=$(sbatch --parsable -J busy -o /dev/null -w 'node[001,005,009-016]' -N 10 --wrap 'sleep 600')
wait_running "$busy" 30 || { echo "FAIL: the busy job did not start"; exit 1; }

plain=$(run_probe plain -N 4 --fabric-tp=4 --fabric-mode=off)
check "without fabricplace (mode off) Slurm takes 3 + 1 and splits a TP group ($plain: $(leaf_counts "$plain"))" \
  test "$(leaf_counts "$plain")" == "p01-leaf01:3 p01-leaf02:1"
ours=$(run_probe ours -N 4 --fabric-tp=4)
check "constrain: 2 + 2, every TP group inside one leaf ($ours: $(leaf_counts "$ours"))" \
  test "$(leaf_counts "$ours")" == "p01-leaf01:2 p01-leaf02:2"
check "job_submit.lua logged the constraint" \
  grep -qF "4 nodes, TP groups of 2 nodes: features=[p01-leaf01*2&p01-leaf02*2]" "$LAB_DIR/log/job_submit.log"
one=$(run_probe one -N 2 --fabric-tp=4)
check "a job that fits in one leaf gets one leaf ($one)" \
  bash -c "[[ '$(leaf_counts "$one")' == 'p01-leaf01:2' || '$(leaf_counts "$one")' == 'p01-leaf02:2' ]]"
own=$(run_probe own -N 4 --fabric-tp=4 -C 'p01-leaf01|p01-leaf02')
check "a job with its own -C is left alone ($own)" \
  grep -qF "has its own constraint" "$LAB_DIR/log/job_submit.log"

# ---- exact: the engine's nodes, pinned; nothing left behind ----------------------------------
exact=$(run_probe exact -N 4 --fabric-tp=4 --fabric-mode=exact)
check "exact: 2 + 2, every TP group inside one leaf ($exact: $(leaf_counts "$exact"))" \
  test "$(leaf_counts "$exact")" == "p01-leaf01:2 p01-leaf02:2"
j=$(sbatch --parsable -N 2 --fabric-tp=4 --fabric-mode=exact -o exact-env.out \
      --wrap 'echo "hostfile=${SLURM_HOSTFILE:-unset}"; srun -n 3 hostname 2>/dev/null | wc -l')
wait_gone "$j" 30
check "exact: the job does not inherit SLURM_HOSTFILE; its sruns lay tasks out freely" \
  test "$(paste -sd' ' exact-env.out 2>/dev/null)" == "hostfile=unset 3"
j=$(sbatch --parsable -N 2 --fabric-tp=4 --fabric-mode=exact -o exact-mpi.out \
      --wrap 'OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo timeout 120 mpirun hostname 2>&1 | sort | uniq -c | wc -l')
wait_gone "$j" 60
check "exact: a bare mpirun in the job runs on both nodes ($(tail -1 exact-mpi.out 2>/dev/null))" \
  test "$(tail -1 exact-mpi.out 2>/dev/null)" == 2
printf '#!/bin/bash\n#SBATCH -N 2\n#SBATCH hetjob\n#SBATCH -N 2\nsrun --het-group=0 hostname | wc -l\n' >het.sh
j=$(sbatch --parsable --fabric-tp=4 --fabric-mode=exact -o het.out het.sh 2>het.err)
wait_gone "$j" 30
check "exact: a #SBATCH hetjob job is left unpinned and runs ($(tail -1 het.out 2>/dev/null))" \
  test "$(tail -1 het.out 2>/dev/null)" == 2
printf '#!/bin/bash\n#SBATCH -N 2\n#SBATCH hetjob # second component\n#SBATCH -N 2\nsrun --het-group=0,1 hostname | wc -l\n' >het2.sh
j=$(sbatch --parsable --fabric-tp=4 --fabric-mode=exact -o het2.out het2.sh 2>het2.err)
wait_gone "$j" 30
check "exact: '#SBATCH hetjob # comment' is a het job too, and runs ($(tail -1 het2.out 2>/dev/null))" \
  test "$(tail -1 het2.out 2>/dev/null)" == 4
out=$(sbatch --test-only --fabric-tp=4 --fabric-mode=exact -N 2-4 --wrap true 2>&1); rc=$?
check "exact with a node range -N 2-4 is accepted (constrain instead) (rc $rc)" test "$rc" == 0
j=$(sbatch --parsable -N 4 -n 6 --fabric-tp=4 --fabric-mode=exact -o uneven.out \
      --wrap 'OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo timeout 120 mpirun hostname 2>/dev/null | wc -l')
wait_gone "$j" 60
check "exact with uneven tasks (-N 4 -n 6): constrain instead, a bare mpirun runs 6 ranks ($(tail -1 uneven.out 2>/dev/null))" \
  test "$(tail -1 uneven.out 2>/dev/null)" == 6
check "exact: no pinned-node file left in the submission directory" \
  test -z "$(ls -A . | grep fabricplace-exact || true)"

# ---- a burst: jobs that fit in one leaf spread over the leaves ------------------------------
scancel "$busy" 2>/dev/null
wait_all_idle 60 || echo "note: nodes not idle yet"
burst=()
for i in $(seq 1 8); do
  burst+=("$(sbatch --parsable -J "burst$i" -o /dev/null -N 2 --fabric-tp=4 --wrap 'sleep 30')")
done
running=0
for _ in $(seq 1 100); do
  running=$(squeue -h -t RUNNING -o %j | grep -c '^burst')
  [[ $running == 8 ]] && break
  sleep 0.2
done
check "8 two-node TP jobs at once on 16 idle nodes: all 8 run together ($running)" test "$running" == 8
split=0
for j in "${burst[@]}"; do
  [[ $(leaf_counts "$(squeue -h -j "$j" -o %N)") == *" "* ]] && split=$((split + 1))
done
check "... each inside one leaf ($split split)" test "$split" == 0
scancel "${burst[@]}" 2>/dev/null

check "no internal errors" bash -c "! grep -q 'internal error' '$LAB_DIR/log/fabricplace.log' '$LAB_DIR/log/job_submit.log'"
if ((fails)); then
  for f in "$LAB_DIR/log/fabricplace.log" "$LAB_DIR/log/job_submit.log"; do echo "---- $f"; tail -20 "$f"; done
  grep -i 'lua\|job_submit' "$LAB_DIR/log/slurmctld.log" | tail -10
  LAB_KEEP=1
fi
echo "== $fails failed"
((fails == 0))
