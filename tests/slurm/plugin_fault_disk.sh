#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# plugin_fault_disk.sh FABRICPLACE PLUGIN_SO [SPEC]: the rank-file directory is full, or
# read-only.
#   A 64 KiB tmpfs, filled but for one page, is where jobs' rank files go (--fabric-rankfile
#   PREFIX on it, and a job whose working directory it is: the default fabricplace.JOBID).
#   The first file of a set fits, the next does not. Every job still runs to COMPLETED,
#   the batch step's error names the file and the reason and says no rank files were written
#   (job stderr and slurmd's log), and no job has a file of its set, nor a temporary, left
#   there. An srun whose TMPDIR is that disk cannot write its hostfile: its tasks run in
#   Slurm's order and it says so. A job whose --fabric-rankfile is on a read-only tmpfs runs
#   too and says why (EROFS), leaving nothing. Then the disk is freed and the next job gets
#   its whole set.
#   slurmctld's and slurmd's logs show no crash.
# Exit 77 (SKIP) where Slurm cannot run or a tmpfs cannot be mounted; never in CI.
set -uo pipefail
FABRICPLACE=${1:?usage: plugin_fault_disk.sh FABRICPLACE PLUGIN_SO [SPEC]}
PLUGIN=${2:?usage: plugin_fault_disk.sh FABRICPLACE PLUGIN_SO [SPEC]}
spec=${3:-fat3:pods=2,leaves=2,down=4,up=4}
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"
t0=$(now_s)

lab_start_plugin "$spec" "$PLUGIN"
W=$LAB_DIR/work
full=$LAB_DIR/full
mkdir -p "$full"
if ! mount -t tmpfs -o size=64k,mode=1777 fplab-full "$full" 2>mount.err; then
  if [[ ${CI:-} == true || ${FABRICPLACE_LAB_REQUIRED:-0} == 1 ]]; then
    echo "FAIL: cannot mount a tmpfs: $(cat mount.err)"; exit 1
  fi
  echo "SKIP: cannot mount a tmpfs here: $(cat mount.err)"; exit 77
fi
lab_on_stop "umount '$full'"
# Fill it, then free one page: a set's first file fits, the second gets ENOSPC.
dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null
truncate -s -4096 "$full/filler"
echo "tmpfs $full: $(df -k --output=avail "$full" | tail -1 | tr -d ' ') KiB free"

cat >job.sh <<'EOF'
#!/bin/bash
# job.sh TMPDIR_FOR_SRUN TP: an srun step through the plugin (its hostfile in that TMPDIR).
echo "nodes $SLURM_JOB_NODELIST"
TMPDIR=$1 srun --fabric-tp="$2" bash -c 'echo "task $SLURM_PROCID $(hostname) ${FABRICPLACE_RING_RANK:-unset}"'
echo "step rc $?"
EOF
chmod +x job.sh

# Jobs 1-4 with --fabric-rankfile on the full disk, 2 and 4 with srun's TMPDIR there too;
# 1 and 2 on hosts whose ring (TP 4: groups of 2 nodes) is not Slurm's order
# (node005 node013 node009 node010 for job 2); job 5 in a working directory on the full
# disk (the default prefix).
declare -A prefix tmpdir num
jobs=()
submit() {  # submit I TMPDIR SBATCH-ARGS... TP
  local i=$1 tmp=$2 tp=${*: -1} j
  j=$(sbatch --parsable -J "full$i" -o "$W/out.$i" -e "$W/err.$i" "${@:3:$#-3}" --fabric-tp="$tp" \
        "$W/job.sh" "$tmp" "$tp") || { echo "FAIL: sbatch $i"; exit 1; }
  num[$j]=$i tmpdir[$i]=$tmp prefix[$j]=$full/r.$i
  jobs+=("$j")
}
submit 1 /tmp -N 4 -w 'node[001,006-007,014]' --fabric-rankfile="$full/r.1" 4
submit 2 "$full" -N 4 -w 'node[005,009-010,013]' --fabric-rankfile="$full/r.2" 4
submit 3 /tmp -N 2 --fabric-rankfile="$full/r.3" 2
submit 4 "$full" -N 3 --fabric-rankfile="$full/r.4" 2
submit 5 /tmp -N 2 -D "$full" 2
prefix[${jobs[4]}]=$full/fabricplace.${jobs[4]}

if ! wait_all_terminal 120 "${jobs[@]}"; then
  check "every job reaches a final state within 120 s" false
fi
for j in "${jobs[@]}"; do
  i=${num[$j]}
  st=$(job_field "$j" JobState) ec=$(job_field "$j" ExitCode) nodes=$(job_field "$j" NodeList)
  check "job $i ($j, $nodes): COMPLETED 0:0 on a full disk ($st $ec)" test "$st $ec" == "COMPLETED 0:0"
  check "job $i: no file of its set and no temporary on the full disk ($(rank_set "${prefix[$j]}"))" \
    test "$(rank_set "${prefix[$j]}")" == absent
  check "job $i: its srun step ran every task (rc $(sed -n 's/^step rc //p' "$W/out.$i"))" \
    test "$(sed -n 's/^step rc //p' "$W/out.$i")/$(grep -c '^task ' "$W/out.$i")" == \
         "0/$(scontrol show hostnames "$nodes" | wc -l)"
  re_set="^slurmstepd-node[0-9]+: error: fabricplace: ${prefix[$j]//./\\.}\\.(rankfile|hosts|torchrun\\.env|json): write failed: No space left on device; no rank files were written$"
  check "job $i: the batch step says which file, why, and that no rank files were written" \
    grep -qE "$re_set" "$W/err.$i"
  re_srun="^srun: error: fabricplace: ${full//./\\.}/fabricplace-srun-$j-[0-9]+\\.hosts: write failed: No space left on device; srun keeps Slurm's order$"
  if [[ ${tmpdir[$i]} == "$full" ]]; then
    # Slurm's block order: task k on the k-th node of the job (one task per node).
    check "job $i: srun could not write its hostfile: tasks in Slurm's order" \
      test "$(sed -n 's/^task //p' "$W/out.$i" | sort -n | awk '{print $2}' | paste -sd' ')" == \
           "$(scontrol show hostnames "$nodes" | paste -sd' ')"
    check "job $i: srun says its hostfile was not written and it keeps Slurm's order" \
      grep -qE "$re_srun" "$W/err.$i"
  else
    check "job $i: srun (TMPDIR on a good disk) still runs tasks in ring order" \
      test "$(sed -n 's/^task //p' "$W/out.$i" | awk '$1 != $3' | wc -l)" == 0
  fi
  out=$(only_messages "$W/err.$i" "$re_set" "$re_srun")
  check "job $i: no other fabricplace message in its stderr${out:+: $out}" test -z "$out"
done
check "slurmd's log has the batch steps' messages too" \
  grep -qE "\[[0-9]+\.batch\] error: fabricplace: .*: write failed: No space left on device; no rank files were written" \
  "$LAB_DIR"/log/slurmd-*.log
check "nothing but the filler on the full disk" test "$(ls -A "$full")" == filler

# ---- a read-only rank-file directory: the job runs, the reason is given, nothing is left ----
ro=$LAB_DIR/readonly
mkdir -p "$ro"
if mount -t tmpfs -o size=64k,mode=1777,ro fplab-ro "$ro" 2>mount.err; then
  lab_on_stop "umount '$ro'"
  j=$(sbatch --parsable -J ro -N 2 --fabric-tp=2 --fabric-rankfile="$ro/r.ro" -o "$W/out.ro" \
        -e "$W/err.ro" ./job.sh /tmp 2)
  wait_terminal "$j" 60
  check "read-only directory: COMPLETED 0:0 ($(job_field "$j" JobState) $(job_field "$j" ExitCode))" \
    test "$(job_field "$j" JobState) $(job_field "$j" ExitCode)" == "COMPLETED 0:0"
  re_ro="^slurmstepd-node[0-9]+: error: fabricplace: ${ro//./\\.}/r\\.ro\\.(rankfile|hosts|torchrun\\.env|json): cannot create a temporary file next to it: Read-only file system; no rank files were written$"
  check "read-only directory: the batch step says which file and why" grep -qE "$re_ro" "$W/err.ro"
  check "read-only directory: its srun still runs tasks in ring order" \
    test "$(sed -n 's/^task //p' "$W/out.ro" | awk '$1 != $3' | wc -l)/$(grep -c '^task ' "$W/out.ro")" == 0/2
elif [[ ${CI:-} == true || ${FABRICPLACE_LAB_REQUIRED:-0} == 1 ]]; then
  check "a read-only tmpfs can be mounted: $(cat mount.err)" false
fi

# ---- the disk freed: the next job gets its whole set --------------------------------------
rm -f "$full/filler"
j=$(sbatch --parsable -J freed -N 3 --fabric-tp=2 --fabric-rankfile="$full/r.freed" -o "$W/out.freed" \
      -e "$W/err.freed" ./job.sh /tmp)
wait_terminal "$j" 60
set_now=$(rank_set "$full/r.freed")
check "disk freed: COMPLETED ($(job_field "$j" JobState)) with all four rank files ($set_now)" \
  test "$(job_field "$j" JobState) ${set_now%% *}" == "COMPLETED complete"
check "disk freed: the set lists the job's nodes ($(job_field "$j" NodeList))" \
  same_hosts "${set_now#complete }" "$(job_field "$j" NodeList)"

out=$(no_crash_in_logs)
check "no fatal error or crash in slurmctld's, slurmd's or the plugin's logs${out:+: $out}" test -z "$out"

if ((fails)); then
  show_files "$W"/err.* "$W"/out.* "$LAB_DIR/log/fabricplace.log"
  LAB_KEEP=1
fi
echo "== $fails failed ($(elapsed_s "$t0") s)"
((fails == 0))
