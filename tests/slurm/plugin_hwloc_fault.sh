#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# plugin_hwloc_fault.sh FABRICPLACE PLUGIN_SO HWLOC_XML [SPEC]: hwloc_xml= (plugstack.conf)
# names a file that makes libhwloc crash (tests/data/hwloc/malformed-crash.xml: SIGSEGV in
# hwloc 2.9). The plugin reads it in a forked child (docs/node-topology.md, "Malformed and
# hostile files"), so slurmstepd survives it:
#   - an `sbatch -N2 --fabric-tp=4` job (batch step and an inner srun) and an
#     `srun --fabric-tp=4` step inside `salloc -N4` (hosts whose ring is not Slurm's order)
#     end COMPLETED 0:0 and run every task;
#   - tasks get FABRICPLACE_RING_RANK / TP_GROUP / TP_RANK as without hwloc_xml (the ring
#     `fabricplace rankfile` gives for those hosts, ring rank = task id) but no
#     FABRICPLACE_GPU / NCCL_IB_HCA;
#   - each job's four rank files are written, in ring order;
#   - the defined message (`...: hwloc crashed reading it (signal 11, SIGSEGV); the file is
#     malformed; no GPU/HCA pairing`) is in the job's stderr and slurmd's log;
#   - no slurmstepd crashed: no fatal error, segfault or abort in slurmctld's, slurmd's or
#     the plugin's logs (but for that message), and the kernel's log (when readable) shows
#     no crash of a step daemon (the tasks' parent): the only crashes it may show are the
#     reader children's.
# With a valid XML the pairing is slurm.plugin_launch's (dgx2-with-hcas.xml).
# Exit 77 (SKIP) where Slurm cannot run; never in CI.
set -uo pipefail
FABRICPLACE=${1:?usage: plugin_hwloc_fault.sh FABRICPLACE PLUGIN_SO HWLOC_XML [SPEC]}
PLUGIN=${2:?usage: plugin_hwloc_fault.sh FABRICPLACE PLUGIN_SO HWLOC_XML [SPEC]}
XML=${3:?usage: plugin_hwloc_fault.sh FABRICPLACE PLUGIN_SO HWLOC_XML [SPEC]}
spec=${4:-fat3:pods=2,leaves=2,down=4,up=4}
XML=$(realpath "$XML")
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"
t0=$(now_s)

# The kernel's log before the jobs (dmesg may be unreadable here: then the jobs' states and
# slurmd's logs are the evidence).
kern_before=$(mktemp /tmp/fp-kern.XXXXXX)
dmesg >"$kern_before" 2>/dev/null && kern=1 || kern=0

# K = 2 tasks per node on "2-GPU" nodes: --fabric-tp=4 is a TP group of 2 nodes.
lab_start_plugin "$spec" "$PLUGIN" "" "hwloc_xml=$XML"
W=$LAB_DIR/work
log=$LAB_DIR/log/fabricplace.log
grep -qF "hwloc_xml=$XML" "$LAB_DIR/etc/plugstack.conf" ||
  { echo "FAIL: the lab's plugstack.conf has no hwloc_xml=$XML"; cat "$LAB_DIR/etc/plugstack.conf"; exit 1; }
core="$XML: hwloc crashed reading it (signal 11, SIGSEGV); the file is malformed; no GPU/HCA pairing"
msg="fabricplace: $core"

ring() {  # ring HOSTLIST: the fabric's ring of those hosts (K 2, TP 4 GPUs of 2-GPU nodes: 4
          # ranks), as without hwloc_xml
  "$FABRICPLACE" rankfile --fabric "$LAB_DIR/etc/fabric.json" --hosts "$1" --tasks-per-node 2 \
    --gpus-per-node 2 --tp 4 --format slurm 2>/dev/null | uniq | paste -sd' '
}
# want HOSTS...: "TASK HOST RING_RANK TP_GROUP TP_RANK none none" per task, K = 2, TP = 4
want() {
  local h r=0
  for h in "$@"; do
    for _ in 1 2; do echo "$r $h $r $((r / 4)) $((r % 4)) none none"; r=$((r + 1)); done
  done
}
task='echo "$SLURM_PROCID $(hostname) ${FABRICPLACE_RING_RANK:-unset} ${FABRICPLACE_TP_GROUP:-unset} ${FABRICPLACE_TP_RANK:-unset} ${FABRICPLACE_GPU:-none} ${NCCL_IB_HCA:-none}"; echo "$PPID" >>stepd.pids'

# ---- sbatch -N2 --fabric-tp=4: the batch step writes the rank files, an inner srun ----------
cat >batch.sh <<EOF
#!/bin/bash
echo "\$PPID" >>stepd.pids
srun bash -c '$task' >inner.out 2>inner.err
echo "step rc \$?"
EOF
chmod +x batch.sh
h2='node[001,016]'
j1=$(sbatch --parsable -J hwloc2 -N2 -w "$h2" --ntasks-per-node=2 --fabric-tp=4 -o batch.out \
       -e batch.err ./batch.sh) || { echo "FAIL: sbatch"; exit 1; }

# ---- srun --fabric-tp=4 inside salloc -N4 (ring node005 node013 node009 node010) ----------
h4='node[005,009-010,013]'
timeout 120 salloc -N4 -w "$h4" --ntasks-per-node=2 -J hwloc4 \
  srun --fabric-tp=4 bash -c "$task" >srun.out 2>srun.err
echo "salloc rc $?" >salloc.rc
j2=$(squeue -h -n hwloc4 -o %i 2>/dev/null | head -1)
[[ -n $j2 ]] || j2=$(scontrol show job -o 2>/dev/null | sed -n 's/^JobId=\([0-9]*\) JobName=hwloc4 .*/\1/p' | head -1)
wait_all_terminal 60 "$j1" ${j2:+"$j2"} || check "both jobs reach a final state within 60 s" false

r2=$(ring "$h2") r4=$(ring "$h4")
check "the fabric's ring of $h4 ($r4) is not Slurm's order" test "$r4" != "node005 node009 node010 node013"
for j in "$j1" "$j2"; do
  check "job $j ($(job_field "$j" JobName) on $(job_field "$j" NodeList)): COMPLETED 0:0 ($(job_field "$j" JobState) $(job_field "$j" ExitCode))" \
    test "$(job_field "$j" JobState) $(job_field "$j" ExitCode)" == "COMPLETED 0:0"
done
check "sbatch job: its inner srun ran (rc $(sed -n 's/^step rc //p' batch.out))" \
  test "$(sed -n 's/^step rc //p' batch.out)" == 0
# shellcheck disable=SC2086
check "sbatch job: inner srun tasks in ring order ($r2), ring/TP ranks as without hwloc_xml, no GPU/HCA" \
  test "$(sort -n inner.out 2>/dev/null)" == "$(want $r2)"
check "salloc srun --fabric-tp=4: rc 0 ($(cat salloc.rc))" test "$(cat salloc.rc)" == "salloc rc 0"
# shellcheck disable=SC2086
check "srun step: tasks in ring order ($r4), ring/TP ranks as without hwloc_xml, no GPU/HCA" \
  test "$(sort -n srun.out 2>/dev/null)" == "$(want $r4)"
set1=$(rank_set "fabricplace.$j1") set2=$(rank_set "fabricplace.$j2")
check "sbatch job: all four rank files, in ring order ($set1)" test "$set1" == "complete $r2"
check "salloc job (first job-wide srun): all four rank files, in ring order ($set2)" \
  test "$set2" == "complete $r4"

# The defined message: the batch step's in the job's stderr, the srun step's in srun's, every
# step daemon's in slurmd's log (once per node and step) and the plugin's log=.
check "sbatch job's stderr: '$msg'" grep -qF "error: $msg" batch.err
check "srun's stderr has it too" grep -qF "error: $msg" srun.err
n_slurmd=$(cat "$LAB_DIR"/log/slurmd-*.log | grep -cF "error: $msg")
check "slurmd's logs: once per node and step: 1 batch + 2 inner srun + 4 srun = 7 ($n_slurmd)" \
  test "$n_slurmd" == 7
check "the plugin's log= has it, 7 times ($(grep -cF "error pid=" "$log"))" \
  test "$(grep -cxE "error pid=[0-9]+ ctx=[0-9]+ ${core//[().]/.}" "$log")/$(grep -c . "$log")" == 7/7
check "no other fabricplace message in the jobs' stderr" \
  only_messages <(cat batch.err inner.err srun.err) "error: ${msg//[().]/.}\$"

# No step daemon crashed: the logs, but for the defined message, and the kernel's view.
hits=$(grep -HiE 'fatal|segfault|segmentation|core dumped|signal 11|signal 6|sigsegv|sigabrt|terminate called|internal error|exception' \
         "$LAB_DIR"/log/slurmctld.log "$LAB_DIR"/log/slurmd-*.log "$log" 2>/dev/null |
       grep -vF "$core" | head -20)
check "no fatal error, segfault or abort in slurmctld's, slurmd's or the plugin's logs${hits:+: $hits}" \
  test -z "$hits"
ndaemons=$(sort -u stepd.pids 2>/dev/null | grep -c .)
check "the tasks' step daemons: 1 batch + 2 + 4 ($ndaemons)" test "$ndaemons" == 7
if [[ $kern == 1 ]]; then
  dmesg 2>/dev/null | grep -vxFf "$kern_before" >kern.all
  grep -F slurmstepd kern.all >kern.new
  crashed=""
  for p in $(sed -n 's/.*slurmstepd\[\([0-9]*\)\].*/\1/p' kern.new | sort -u); do
    grep -qx "$p" stepd.pids && crashed+=" $p"
  done
  echo "kernel: $(grep -c . kern.all) new line(s) during the test, $(grep -c . kern.new) naming slurmstepd (only a forked hwloc reader may)"
  head -3 kern.new
  check "kernel's log: no step daemon (a task's parent) crashed${crashed:+:$crashed}" test -z "$crashed"
else
  echo "note: dmesg not readable here; the jobs' states and slurmd's logs stand for the kernel's view"
fi
rm -f "$kern_before"
echo "log line: $(grep -hF "error: $msg" "$LAB_DIR"/log/slurmd-*.log | head -1)"

if ((fails)); then
  show_files batch.out batch.err inner.out inner.err srun.out srun.err stepd.pids "$log"
  LAB_KEEP=1
fi
echo "== $fails failed ($(elapsed_s "$t0") s)"
((fails == 0))
