#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# plugin_launch.sh FABRICPLACE PLUGIN_SO [SPEC]: the SPANK plugin on the Slurm lab, at launch.
#   - srun --fabric-tp inside an allocation runs tasks in the fabric ring order (TP-aware
#     leaf order), and every task gets FABRICPLACE_RING_RANK / TP_GROUP / TP_RANK;
#   - sbatch --fabric-tp: the batch step writes fabricplace.JOBID.{rankfile,hosts,
#     torchrun.env,json}; mpirun --rankfile inside the job follows it; an inner srun inherits
#     the option and runs in ring order;
#   - bad option values fail at once with a fabricplace: message;
#   - with hwloc_xml= (the DGX-2 fixture: HCA j next to GPUs 2j, 2j+1), each task gets
#     FABRICPLACE_GPU = its local rank and NCCL_IB_HCA = that GPU's nearest HCA;
#   - fabric= alone (no host map): the host map is derived from fabric.json, said once, and
#     srun and sbatch get the ring order; a stale host map (another `slurm sync` generation
#     than fabric.json) is said and derived too;
#   - faults never break a launch: neither file, a host the map lacks: one message in the
#     log, the job runs in Slurm's order.
# The allocation spans 3 leaves of 2 pods (12 of 16 nodes busy), so ring order differs from
# Slurm's. Exit 77 (SKIP) where Slurm cannot run; never in CI.
set -uo pipefail
FABRICPLACE=${1:?usage: plugin_launch.sh FABRICPLACE PLUGIN_SO [SPEC [HWLOC_XML]]}
PLUGIN=${2:?usage: plugin_launch.sh FABRICPLACE PLUGIN_SO [SPEC [HWLOC_XML]]}
spec=${3:-fat3:pods=2,leaves=2,down=4,up=4}
hwloc_xml=${4:-}  # a node topology with GPUs and HCAs: checks the per-task NCCL pairing
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo


# K = 2 tasks per node on "2-GPU" nodes: --fabric-tp=4 is a TP group of 2 nodes.
lab_start_plugin "$spec" "$PLUGIN" "" "${hwloc_xml:+hwloc_xml=$hwloc_xml}"
W=$LAB_DIR/work
log=$LAB_DIR/log/fabricplace.log
ring="node005 node013 node009 node010"  # TP-aware: the two 1-host leaves pair up

busy=$(sbatch --parsable -J busy -o /dev/null -w 'node[001-004,006-008,011-012,014-016]' -N 12 \
         --wrap 'sleep 600')
wait_running "$busy" 30 || { echo "FAIL: the busy job did not start"; exit 1; }

# ---- bad option values fail at once ----------------------------------------------------
out=$(timeout 30 srun --fabric-tp=x -N1 true 2>&1); rc=$?
check "srun --fabric-tp=x fails (rc $rc) with a fabricplace: message" \
  bash -c "[[ $rc != 0 ]] && grep -qF 'fabricplace: --fabric-tp: expected a positive integer' <<<'$out'"
out=$(sbatch --fabric-mode=fast --wrap true 2>&1); rc=$?
check "sbatch --fabric-mode=fast is rejected (rc $rc)" \
  bash -c "[[ $rc != 0 ]] && grep -qF 'fabricplace: --fabric-mode: expected constrain, exact or off' <<<'$out'"

# ---- srun --fabric-tp inside an allocation --------------------------------------------------
cat >alloc.sh <<'EOF'
#!/bin/bash
srun --fabric-tp=4 bash -c 'echo "$SLURM_PROCID $(hostname) $FABRICPLACE_RING_RANK $FABRICPLACE_TP_GROUP $FABRICPLACE_TP_RANK $FABRICPLACE_RING_SIZE"' >srun-tp.out 2>srun-tp.err
srun bash -c 'echo "$SLURM_PROCID $(hostname) ${FABRICPLACE_RING_RANK:-unset}"' >srun-plain.out 2>srun-plain.err
# Shapes the plugin must leave alone, and still run.
srun --fabric-tp=4 --ntasks-per-node=1 hostname >srun-ntasks.out 2>/dev/null; echo $? >srun-ntasks.rc
srun --fabric-tp=4 -n 3 -N 2 bash -c 'echo "${FABRICPLACE_RING_RANK:-unset}"' >srun-uneven.out 2>/dev/null
srun --fabric-tp=4 -m cyclic bash -c 'echo "$SLURM_PROCID $(hostname)"' >srun-cyclic.out 2>/dev/null
srun --fabric-tp=4 bash -c 'echo "${SLURM_HOSTFILE:-unset}"' >srun-nested.out 2>/dev/null
EOF
chmod +x alloc.sh
timeout 120 salloc -N4 --ntasks-per-node=2 -J alloc ./alloc.sh >salloc.out 2>&1
want="0 node005 0 0 0 8
1 node005 1 0 1 8
2 node013 2 0 2 8
3 node013 3 0 3 8
4 node009 4 1 0 8
5 node009 5 1 1 8
6 node010 6 1 2 8
7 node010 7 1 3 8"
check "srun --fabric-tp=4: tasks in ring order ($ring), ring rank and TP group/rank per task" \
  test "$(sort -n srun-tp.out 2>/dev/null)" == "$want"
check "srun without --fabric-*: Slurm's order, no FABRICPLACE_* variables" \
  test "$(sort -n srun-plain.out 2>/dev/null | awk '{print $2, $3}' | uniq | paste -sd' ')" == \
       "node005 unset node009 unset node010 unset node013 unset"

check "srun --ntasks-per-node=1 with the job's SLURM_NTASKS=8: runs all 8 tasks (plugin stands aside)" \
  test "$(cat srun-ntasks.rc)/$(grep -c . srun-ntasks.out)" == "0/8"
check "srun -n 3 -N 2 (uneven): no FABRICPLACE_RING_RANK rather than a wrong one" \
  test "$(sort -u srun-uneven.out | paste -sd' ')" == unset
check "srun -m cyclic keeps the user's layout (task 1 on node009)" \
  test "$(awk '$1 == 1 {print $2}' srun-cyclic.out)" == node009
check "tasks do not inherit the plugin's temporary SLURM_HOSTFILE" \
  test "$(sort -u srun-nested.out)" == unset

# ---- sbatch --fabric-tp: rank files from the batch step, mpirun and an inner srun ------------
cat >batch.sh <<'EOF'
#!/bin/bash
p=fabricplace.$SLURM_JOB_ID
ls $p.rankfile $p.hosts $p.torchrun.env $p.json >files.out 2>&1
@RETRY@ mpirun.out mpirun.err --rankfile $p.rankfile -np 8 sh -c 'echo "$OMPI_COMM_WORLD_RANK $(hostname)"'
srun bash -c 'echo "$SLURM_PROCID $(hostname) $FABRICPLACE_RING_RANK"' >inner.out 2>inner.err
srun -N 2 -n 2 --ntasks-per-node=1 bash -c 'echo "$SLURM_PROCID $(hostname)"' >inner-n2.out 2>inner-n2.err
sbatch -N 1 -o /dev/null --wrap true >inner-sbatch.out 2>inner-sbatch.err && echo ok >>inner-sbatch.out
EOF
sed -i "s|@RETRY@|$SLURM_TESTS_DIR/mpirun_retry.sh|" batch.sh
chmod +x batch.sh
j=$(sbatch --parsable -N4 --ntasks-per-node=2 --fabric-tp=4 -o batch.out batch.sh)
wait_gone "$j" 120 || echo "note: batch job $j still listed"
check "the batch step wrote the four rank files" test "$(grep -c '^fabricplace' files.out 2>/dev/null)" == 4
check "fabricplace.$j.rankfile hosts in ring order" \
  test "$(sed -n 's/^rank [0-9]*=\([^ ]*\) .*/\1/p' "fabricplace.$j.rankfile" 2>/dev/null | uniq | paste -sd' ')" == "$ring"
check "mpirun --rankfile in the job: every rank on its rank-file host" \
  test "$(sort -n mpirun.out 2>/dev/null | awk '{print $2}' | paste -sd' ')" == \
       "$(sed -n 's/^rank [0-9]*=\([^ ]*\) .*/\1/p' "fabricplace.$j.rankfile" 2>/dev/null | paste -sd' ')"
check "an inner srun inherits --fabric-tp: ring order, ring rank = task id" \
  test "$(sort -n inner.out 2>/dev/null | awk '$1 == $3 {print $2}' | uniq | paste -sd' ')" == "$ring"
# The job's own srun -N and sbatch inherit --fabric-tp (Slurm's SPANK option variable):
# both run. srun -N gets the ring order where Slurm takes a node order with -N (22.05), and
# Slurm's where it refuses one (23.11+, said); the 1-node sbatch, which the inherited TP size
# does not fit, is submitted without fabricplace rather than refused.
n2=$(sort -n inner-n2.out 2>/dev/null | awk '{print $2}' | paste -sd' ')
check "an inner srun -N 2 runs on 2 nodes ($n2)" test "$(tr ' ' '\n' <<<"$n2" | sort -u | grep -c .)" == 2
if [[ ${FABRICPLACE_LAB_SLURM%%.*} -ge 24 ]]; then
  check "  ... in Slurm's order, said (23.11+ refuses -N with a node order)" \
    grep -qF "srun -N with a node order is refused by Slurm 23.11+" inner-n2.err
else
  check "  ... in ring order (22.05 takes -N with a node order)" \
    test "$n2" == "$(cut -d' ' -f1-2 <<<"$ring")"
fi
check "an inner 1-node sbatch with the inherited --fabric-tp=4 is submitted ($(paste -sd' ' inner-sbatch.out inner-sbatch.err 2>/dev/null))" \
  bash -c 'grep -qx ok inner-sbatch.out && grep -qF "inherited from the enclosing job does not fit this one" inner-sbatch.err'
check "torchrun env of the job: NODE_RANK 1 is node013" \
  grep -qx '  node013) NODE_RANK=1 ;;' "fabricplace.$j.torchrun.env"

# ---- GPU k <-> nearest HCA per task (hwloc_xml=) ---------------------------------------------
if [[ -n $hwloc_xml ]]; then
  timeout 120 salloc -N1 -w node005 -J pairing srun -O --ntasks-per-node=4 --fabric-tp=8 \
    bash -c 'echo "$SLURM_LOCALID ${FABRICPLACE_GPU:-none} ${NCCL_IB_HCA:-none}"' >pairing.out 2>pairing.err
  check "per task: GPU = local rank, NCCL_IB_HCA = its nearest HCA ($(sort -n pairing.out | paste -sd'|'))" \
    test "$(sort -n pairing.out | paste -sd'|')" == "0 0 =mlx5_0|1 1 =mlx5_0|2 2 =mlx5_1|3 3 =mlx5_1"
  timeout 120 salloc -N1 -w node005 -J pairing2 env NCCL_IB_HCA=mlx5_7 srun --fabric-tp=2 \
    bash -c 'echo "${NCCL_IB_HCA:-none}"' >pairing2.out 2>/dev/null
  check "a user's own NCCL_IB_HCA wins" test "$(cat pairing2.out)" == mlx5_7
fi

# ---- fabric= alone: no host map exported -----------------------------------------------
# The plugin derives the host map from fabric.json (said once per process), and the ring is
# the one the host map gives.
mv "$LAB_DIR/etc/fabric.hostmap" "$LAB_DIR/etc/fabric.hostmap.away"
: >"$log"
timeout 120 salloc -N4 --ntasks-per-node=2 -J nomap \
  srun --fabric-tp=4 bash -c 'echo "$SLURM_PROCID $(hostname) ${FABRICPLACE_RING_RANK:-unset}"' >nomap.out 2>nomap.err
check "fabric= alone: srun --fabric-tp runs in the ring order ($ring)" \
  test "$(sort -n nomap.out | awk '{print $2}' | uniq | paste -sd' ')" == "$ring"
check "fabric= alone: every task has its ring rank" \
  test "$(sort -n nomap.out | awk '{print $3}' | paste -sd' ')" == "0 1 2 3 4 5 6 7"
check "fabric= alone: said, naming both files" \
  grep -qF "$LAB_DIR/etc/fabric.hostmap: no host map; derived from $LAB_DIR/etc/fabric.json instead" "$log"
jid=$(sbatch --parsable -N4 --ntasks-per-node=2 --fabric-tp=4 -J nomapb -o /dev/null --wrap true 2>nomapb.err)
wait_gone "$jid" 120
check "fabric= alone: sbatch --fabric-tp is accepted; its batch step's rank file is in ring order" \
  test "$(sed -n 's/^rank [0-9]*=\([^ ]*\) .*/\1/p' "fabricplace.$jid.rankfile" 2>/dev/null | uniq | paste -sd' ')" == "$ring"

# A stale host map: fabric.json of a `slurm sync` generation, the host map of another.
cp "$LAB_DIR/etc/fabric.json" "$LAB_DIR/etc/fabric.json.plain"
"$FABRICPLACE" slurm sync --fabric "$LAB_DIR/etc/fabric.json.plain" --out "$LAB_DIR/sync" >/dev/null
cp --remove-destination "$LAB_DIR/sync/fabric.json" "$LAB_DIR/etc/fabric.json"
gen=$(sed -n 's/^# generation: //p' "$LAB_DIR/sync/fabric.hostmap")
sed -e "s/^# generation: .*/# generation: 00000000000000aa/" -e 's/node0/other0/g' \
  "$LAB_DIR/sync/fabric.hostmap" >"$LAB_DIR/etc/fabric.hostmap"
: >"$log"
timeout 120 salloc -N4 --ntasks-per-node=2 -J stale \
  srun --fabric-tp=4 bash -c 'echo "$SLURM_PROCID $(hostname)"' >stale.out 2>stale.err
check "a stale host map: derived from fabric.json, the ring order ($ring)" \
  test "$(sort -n stale.out | awk '{print $2}' | uniq | paste -sd' ')" == "$ring"
check "a stale host map: said, with both generations" \
  grep -qF "$LAB_DIR/etc/fabric.hostmap is generation 00000000000000aa but $LAB_DIR/etc/fabric.json is $gen (a stale host map" "$log"
mv "$LAB_DIR/etc/fabric.json.plain" "$LAB_DIR/etc/fabric.json"

# ---- faults never break a launch ----------------------------------------------------------
# Neither a host map nor a fabric JSON.
rm -f "$LAB_DIR/etc/fabric.hostmap"
mv "$LAB_DIR/etc/fabric.json" "$LAB_DIR/etc/fabric.json.away"
: >"$log"
timeout 120 salloc -N4 --ntasks-per-node=2 -J nofiles \
  srun --fabric-tp=4 bash -c 'echo "$SLURM_PROCID $(hostname) ${FABRICPLACE_RING_RANK:-unset}"' >nofiles.out 2>nofiles.err
check "no host map, no fabric.json: srun --fabric-tp still runs all 8 tasks, in Slurm's order" \
  test "$(sort -n nofiles.out | awk '{print $2, $3}' | uniq | paste -sd' ')" == \
       "node005 unset node009 unset node010 unset node013 unset"
check "no host map, no fabric.json: one clear message naming the host map" \
  grep -qF "$LAB_DIR/etc/fabric.hostmap: cannot open" "$log"
mv "$LAB_DIR/etc/fabric.json.away" "$LAB_DIR/etc/fabric.json"
# A host map that lacks the job's hosts (another cluster's).
"$FABRICPLACE" fabric export 'fat2:leaves=2,down=2,up=2' --format hostmap -o "$LAB_DIR/etc/fabric.hostmap" 2>/dev/null
sed -i 's/node0/other0/g' "$LAB_DIR/etc/fabric.hostmap"
: >"$log"
timeout 120 salloc -N4 --ntasks-per-node=2 -J unknown \
  srun --fabric-tp=4 bash -c 'echo "$SLURM_PROCID $(hostname)"' >unknown.out 2>unknown.err
check "hosts not in the fabric: srun still runs all 8 tasks" test "$(grep -c . unknown.out)" == 8
check "hosts not in the fabric: the message names them" \
  grep -qF "4 host(s) not in the fabric: node[005,009-010,013]" "$log"
mv "$LAB_DIR/etc/fabric.hostmap.away" "$LAB_DIR/etc/fabric.hostmap"

check "no internal errors logged" bash -c "! grep -q 'internal error' '$log' '$LAB_DIR'/log/slurmd-*.log"

if ((fails)); then
  show_files salloc.out srun-tp.err srun-plain.err batch.out files.out mpirun.err inner.err \
    nomap.err nomapb.err stale.err nofiles.err unknown.err "$log"
  LAB_KEEP=1
fi
scancel "$busy" 2>/dev/null
echo "== $fails failed"
((fails == 0))
