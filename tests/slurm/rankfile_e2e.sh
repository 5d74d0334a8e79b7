#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rankfile_e2e.sh FABRICPLACE [SPEC]: rank files written by `fabricplace rankfile
# --from-slurm-job` inside a real allocation are obeyed by the real launchers:
#   - Open MPI: `mpirun --rankfile` runs every rank on the host the file names, bound to the
#     cores of its slot=;
#   - Slurm: `SLURM_HOSTFILE` + `srun --distribution=arbitrary` runs task i on line i's host;
#   - Open MPI again: `mpirun --hostfile` with that one-line-per-task file and `--map-by seq`;
#   - torchrun env: sourced on each node, NODE_RANK is the node's position in the ring.
# The allocation is made to span 3 leaves of 2 pods with a partial TP group in two of them,
# so the ring order (TP-aware: p01-leaf02, p02-leaf02, p02-leaf01) differs from Slurm's own
# order (node names) and a launcher that ignored the file would fail the comparison.
# Exit 77 (SKIP) where Slurm cannot run; never in CI.
set -uo pipefail
FABRICPLACE=${1:?usage: rankfile_e2e.sh FABRICPLACE [SPEC]}
spec=${2:-fat3:pods=2,leaves=2,down=4,up=4}
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI inside a container: no shared-memory transport surprises, no network probing.
export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

for tool in mpirun hwloc-calc; do
  command -v "$tool" >/dev/null || {
    if [[ ${CI:-} == true || ${FABRICPLACE_LAB_REQUIRED:-0} == 1 ]]; then
      echo "FAIL: $tool missing (scripts/install-deps.sh)"; exit 1
    fi
    echo "SKIP: $tool not installed"; exit 77
  }
done

# "0-2,5" -> "0 1 2 5"
expand_cpus() {
  tr ',' '\n' <<<"$1" | awk -F- 'NF { b = NF == 2 ? $2 : $1; for (i = $1; i <= b; i++) print i }' |
    sort -n | paste -sd' '
}

lab_start "$spec"
W=$LAB_DIR/work
mkdir -p "$W" && cd "$W" || exit 1
fabric=$LAB_DIR/etc/fabric.json
# Tasks per node: every lab node has this machine's cores; 2 ranks per node where there are
# 2 cores (slots must stay within them), else 1.
K=$(($(nproc) >= 2 ? 2 : 1))

# Leave free exactly node005 (p01-leaf02), node009-010 (p02-leaf01), node013 (p02-leaf02).
busy=$(sbatch --parsable -J busy -o /dev/null -w 'node[001-004,006-008,011-012,014-016]' -N 12 \
         --wrap 'sleep 600')
wait_running "$busy" 30 || { echo "FAIL: the busy job did not start"; exit 1; }

cat >job.sh <<EOF
#!/bin/bash
# Runs in the allocation's shell (salloc); every step below is a real launch.
set -u
fp=$FABRICPLACE
rf() { "\$fp" rankfile --fabric $fabric --from-slurm-job --tasks-per-node $K --gpus-per-node 2 --tp 4 "\$@"; }
rf --format openmpi -o rankfile.txt || exit 1
rf --format slurm -o hostfile.txt || exit 1
rf --format torchrun -o torchrun.env || exit 1
# No --tasks-per-node: salloc -N4 asked for no tasks, so one per node (said on stderr).
"\$fp" rankfile --fabric $fabric --from-slurm-job --format slurm -o inferred.txt 2>inferred.err
echo "\$SLURM_JOB_NODELIST" >nodelist.txt
$SLURM_TESTS_DIR/mpirun_retry.sh mpirun.out mpirun.err --rankfile rankfile.txt -np $((4 * K)) \\
  sh -c 'echo "\$OMPI_COMM_WORLD_RANK \$(hostname) \$(sed -n "s/^Cpus_allowed_list:\\t*//p" /proc/self/status)"'
echo \$? >mpirun.rc
$SLURM_TESTS_DIR/mpirun_retry.sh seq.out seq.err --hostfile hostfile.txt --map-by seq -np $((4 * K)) \\
  sh -c 'echo "\$OMPI_COMM_WORLD_RANK \$(hostname)"'
echo \$? >seq.rc
SLURM_HOSTFILE=\$PWD/hostfile.txt timeout 120 srun --distribution=arbitrary -n $((4 * K)) \\
  sh -c 'echo "\$SLURM_PROCID \$(hostname)"' >srun.out 2>srun.err
echo \$? >srun.rc
timeout 120 srun -n \$SLURM_NNODES --ntasks-per-node=1 \\
  bash -c '. ./torchrun.env && echo "\$(hostname) \$NODE_RANK \$NNODES \$MASTER_ADDR"' >torchrun.out 2>torchrun.err
echo \$? >torchrun.rc
EOF
chmod +x job.sh
timeout 300 salloc -N 4 -J rankfiles ./job.sh >salloc.out 2>&1
echo "salloc: $(grep -c . salloc.out) lines of output; nodes $(cat nodelist.txt 2>/dev/null)"

check "salloc -N4 got the 4 free nodes" test "$(cat nodelist.txt 2>/dev/null)" == "node[005,009-010,013]"
check "salloc -N4 without -n: one rank per node, and said so" \
  test "$(paste -sd' ' inferred.txt 2>/dev/null)" == "node005 node009 node010 node013" -a \
  "$(cat inferred.err 2>/dev/null)" == "fabricplace: node[005,009-010,013], 1 task(s) per node (no task count asked of Slurm (-n, --ntasks-per-node): one per node)"
ring="node005 node013 node009 node010"
check "rank file hosts in ring order ($ring)" \
  test "$(sed -n 's/^rank [0-9]*=\([^ ]*\) .*/\1/p' rankfile.txt | uniq | paste -sd' ')" == "$ring"

# ---- Open MPI ------------------------------------------------------------------------
check "mpirun --rankfile exits 0 ($(cat mpirun.rc 2>/dev/null))" test "$(cat mpirun.rc 2>/dev/null)" == 0
want=$(sed -n 's/^rank \([0-9]*\)=\([^ ]*\) slot=\(.*\)$/\1 \2 \3/p' rankfile.txt)
got=$(sort -n mpirun.out 2>/dev/null)
check "mpirun ran $(grep -c . <<<"$want") ranks" test "$(grep -c . <<<"$got")" == "$(grep -c . <<<"$want")"
bad=""
while read -r rank host slot; do
  line=$(awk -v r="$rank" '$1 == r' <<<"$got")
  read -r _ ghost gcpus <<<"$line"
  [[ $ghost == "$host" ]] || bad+=" rank $rank on '$ghost', file says $host;"
  # slot= is a list of logical cores: the PUs of those cores, as the OS numbers them.
  pus=$(hwloc-calc -I pu --physical-output "core:$slot" 2>/dev/null)
  [[ $(expand_cpus "$gcpus") == "$(expand_cpus "$pus")" ]] ||
    bad+=" rank $rank bound to CPUs '$gcpus', slot=$slot is PUs '$pus';"
done <<<"$want"
check "every rank on its rank-file host and slot${bad:+:$bad}" test -z "$bad"

# ---- srun --distribution=arbitrary -----------------------------------------------------
check "srun --distribution=arbitrary exits 0" test "$(cat srun.rc 2>/dev/null)" == 0
want=$(awk '{ print NR - 1, $1 }' hostfile.txt)
got=$(sort -n srun.out 2>/dev/null)
check "task i runs on line i of SLURM_HOSTFILE ($(awk '{print $2}' <<<"$got" | paste -sd' '))" \
  test "$got" == "$want"
check "SLURM_HOSTFILE has ntasks lines, each host's tasks contiguous" \
  test "$(uniq hostfile.txt | paste -sd' ')" == "$ring" -a "$(grep -c . hostfile.txt)" == $((4 * K))

# ---- mpirun --hostfile (one line per task) --map-by seq -------------------------------------
check "mpirun --hostfile --map-by seq exits 0 ($(cat seq.rc 2>/dev/null))" test "$(cat seq.rc 2>/dev/null)" == 0
check "mpirun --map-by seq: rank i on line i of the file" \
  test "$(sort -n seq.out 2>/dev/null)" == "$(awk '{ print NR - 1, $1 }' hostfile.txt)"

# ---- tasks per node from Slurm when the job asked for them ---------------------------------
scancel "$busy" 2>/dev/null
wait_all_idle 30 || echo "note: nodes not idle yet"
got=$(timeout 120 salloc -N 2 --ntasks-per-node=$K -w 'node[001,016]' "$FABRICPLACE" rankfile \
        --fabric "$fabric" --from-slurm-job --format mpich 2>/dev/null | paste -sd' ')
check "salloc --ntasks-per-node=$K: $K ranks per host ($got)" test "$got" == "node001:$K node016:$K"

# ---- torchrun env ------------------------------------------------------------------------
check "torchrun env sourced on every node exits 0" test "$(cat torchrun.rc 2>/dev/null)" == 0
want="node005 0 4 node005
node009 2 4 node005
node010 3 4 node005
node013 1 4 node005"
check "NODE_RANK per node follows the ring, MASTER_ADDR its first host" \
  test "$(sort torchrun.out 2>/dev/null)" == "$want"

if ((fails)); then
  show_files salloc.out mpirun.err seq.err srun.err torchrun.err inferred.err rankfile.txt \
    mpirun.out seq.out srun.out torchrun.out
  LAB_KEEP=1
fi
scancel "$busy" 2>/dev/null
echo "== $fails failed"
((fails == 0))
