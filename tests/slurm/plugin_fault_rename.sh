#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# plugin_fault_rename.sh FABRICPLACE PLUGIN_SO JOB_SUBMIT_LUA [SPEC]: the fabric JSON and the
# host map are replaced (by rename, as an admin's `fabric export -o` does) over and over
# while 50 jobs launch.
#   Two valid versions of the same cluster alternate: A (the lab's) and B (the same hosts
#   dealt to other leaves, so rings differ). A background loop renames each file to the
#   other version every 50 ms. sbatch reads the host map (checks) and, in exact mode, the
#   JSON; every slurmstepd and srun reads the host map. All 50 jobs (constrain and exact,
#   1-4 nodes, 1-2 tasks per node, TP groups of 1 and 2 nodes) run to COMPLETED; each job's
#   rank files are all four, list the job's nodes, and are the ring of version A or of
#   version B (all four files the same one); each job's srun step runs every task in one
#   version's ring, and a task's FABRICPLACE_RING_RANK is its task id or absent (never a
#   rank of the other version); no message about the files, no crash in the logs.
# Exit 77 (SKIP) where Slurm cannot run; never in CI.
set -uo pipefail
FABRICPLACE=${1:?usage: plugin_fault_rename.sh FABRICPLACE PLUGIN_SO JOB_SUBMIT_LUA [SPEC]}
PLUGIN=${2:?}
LUA=${3:?}
spec=${4:-fat3:pods=2,leaves=2,down=4,up=4}
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"
t0=$(now_s)

lab_start_plugin "$spec" "$PLUGIN" "$LUA"
ETC=$LAB_DIR/etc V=$LAB_DIR/versions
mkdir -p "$V"
cp "$ETC/fabric.json" "$V/A.json" && cp "$ETC/fabric.hostmap" "$V/A.hostmap" || exit 1
# B: host k of leaf L (slot s) of A is renamed to the host in slot s of leaf (3 - L) mod
# leaves of A's numbering: same names, same leaves and pods, other members.
leaves=$(grep -c '^leaf ' "$V/A.hostmap")
per=$(awk '/^leaf /{print NF - 3; exit}' "$V/A.hostmap")
mapfile -t names < <(awk '/^leaf /{for (i = 4; i <= NF; i++) print $i}' "$V/A.hostmap")
expr=""
for ((p = 0; p < ${#names[@]}; p++)); do
  L=$((p / per)) s=$((p % per))
  q=$((s * leaves + (leaves - 1 - L)))
  expr+="s/\"${names[p]} /\"@${names[q]} /;"
done
sed -e "$expr" -e 's/"@/"/' "$V/A.json" >"$V/B.json"
"$FABRICPLACE" fabric export "$V/B.json" --format hostmap -o "$V/B.hostmap" ||
  { echo "FAIL: version B of the fabric does not load"; exit 1; }
ring() {  # ring VERSION HOSTLIST K TP: the version's ring order of those hosts (TP in GPUs,
          # on the lab's 2-GPU nodes, as --fabric-tp)
  "$FABRICPLACE" rankfile --fabric "$V/$1.json" --hosts "$2" --tasks-per-node "$3" \
    --gpus-per-node 2 --tp "$4" --format slurm 2>/dev/null | uniq | paste -sd' '
}
check "versions A and B order hosts differently (A: $(ring A 'node[001-002]' 1 1); B: $(ring B 'node[001-002]' 1 1))" \
  test "$(ring A 'node[001-002]' 1 1)" != "$(ring B 'node[001-002]' 1 1)"

# ---- the renamer: A and B in turn, each file replaced by rename(2) ----------------------------
renamer() {
  local n=0 v f
  while [[ ! -e $V/stop ]]; do
    for v in B A; do
      for f in json hostmap; do
        cp "$V/$v.$f" "$ETC/.fabric.$f.new" && mv -f "$ETC/.fabric.$f.new" "$ETC/fabric.$f"
      done
      n=$((n + 1))
      echo "$n" >"$V/swaps"
      sleep 0.05
    done
  done
}
renamer &
renamer_pid=$!
lab_on_stop "kill $renamer_pid 2>/dev/null || true"

cat >job.sh <<'EOF'
#!/bin/bash
# job.sh TP: one step through the plugin, every task saying where it runs and its ring rank.
srun --fabric-tp="$1" bash -c 'echo "task $SLURM_PROCID $(hostname) ${FABRICPLACE_RING_RANK:-unset}"'
echo "step rc $?"
EOF
chmod +x job.sh

# ---- 50 jobs at once -------------------------------------------------------------------------
declare -A shape id
pids=()
for i in $(seq 1 50); do
  n=$(( (i % 4) + 1 ))
  k=$(( i % 3 == 0 ? 2 : 1 ))
  tp=$(( n % 2 == 0 && i % 4 != 2 ? 4 : 2 ))   # TP 4: groups of 2 nodes (2-GPU nodes)
  mode=constrain; ((i % 5 == 0)) && mode=exact
  shape[$i]="$n $k $tp $mode"
  sbatch --parsable -J "r$i" -N "$n" --ntasks-per-node="$k" --fabric-tp="$tp" --fabric-mode="$mode" \
    -o "out.$i" -e "err.$i" ./job.sh "$tp" >"id.$i" 2>"sub.$i" &
  pids+=($!)
done
wait "${pids[@]}"
jobs=()
for i in $(seq 1 50); do id[$i]=$(grep -m1 '^[0-9]*$' "id.$i" 2>/dev/null); [[ -n ${id[$i]} ]] && jobs+=("${id[$i]}"); done
check "50 jobs submitted while the files are replaced, all accepted (${#jobs[@]})" test "${#jobs[@]}" == 50
out=$(wait_all_terminal 240 "${jobs[@]}")
check "every job reaches a final state within 240 s${out:+:$'\n'$out}" test -z "$out"
touch "$V/stop"
wait "$renamer_pid" 2>/dev/null
swaps=$(cat "$V/swaps" 2>/dev/null || echo 0)
echo "50 jobs done in $(elapsed_s "$t0") s; the files were replaced $swaps times meanwhile"
check "the fabric files were replaced while the jobs launched ($swaps times)" test "$swaps" -ge 20

seen_a=0 seen_b=0 both=0 bad_state="" bad_set="" bad_step="" bad_rank="" bad_jobs=""
for i in $(seq 1 50); do
  j=${id[$i]:-}
  [[ -n $j ]] || continue
  read -r n k tp mode <<<"${shape[$i]}"
  st="$(job_field "$j" JobState) $(job_field "$j" ExitCode)"
  [[ $st == "COMPLETED 0:0" ]] || bad_state+=" r$i($st)"
  nodes=$(job_field "$j" NodeList)
  a=$(ring A "$nodes" "$k" "$tp") b=$(ring B "$nodes" "$k" "$tp")
  set_now=$(rank_set "fabricplace.$j")
  r=${set_now#complete }
  if [[ $set_now != complete* ]] || ! same_hosts "$r" "$nodes" || [[ $r != "$a" && $r != "$b" ]] ||
     [[ $(grep -vc '^#' "fabricplace.$j.hosts") != $((n * k)) ]]; then
    bad_set+=$'\n'"  r$i ($j, $mode, $nodes, K $k, TP $tp): $set_now; A: $a; B: $b"
  elif [[ $a == "$b" ]]; then both=$((both + 1))
  elif [[ $r == "$a" ]]; then seen_a=$((seen_a + 1))
  else seen_b=$((seen_b + 1)); fi
  # The step: every task ran, in one version's ring.
  order=$(sed -n 's/^task //p' "out.$i" | sort -n | awk '{print $2}' | uniq | paste -sd' ')
  if [[ $(sed -n 's/^step rc //p' "out.$i") != 0 || $(grep -c '^task ' "out.$i") != $((n * k)) ||
        ( $order != "$a" && $order != "$b" ) ]]; then
    bad_step+=$'\n'"  r$i ($j, $nodes): rc $(sed -n 's/^step rc //p' "out.$i"), order '$order'; A: $a; B: $b"
    bad_jobs+=" $i:$j"
  fi
  wrong=$(sed -n 's/^task //p' "out.$i" | awk '$3 != "unset" && $3 != $1' | paste -sd'|')
  [[ -z $wrong ]] || bad_rank+=$'\n'"  r$i ($j, $nodes): task/host/ring rank $wrong; A: $a; B: $b"
done
echo "rank files: $seen_a jobs in version A's ring, $seen_b in B's, $both where both agree"
check "every job COMPLETED 0:0${bad_state:+:$bad_state}" test -z "$bad_state"
check "every job's rank files: all four, its nodes, one version's ring${bad_set:+:$bad_set}" test -z "$bad_set"
check "both versions were read by some launch (A $seen_a, B $seen_b)" test "$seen_a" -gt 0 -a "$seen_b" -gt 0
check "every job's srun step ran every task in one version's ring${bad_step:+:$bad_step}" test -z "$bad_step"
check "no task has a ring rank other than its task id (a rank of the other version)${bad_rank:+:$bad_rank}" \
  test -z "$bad_rank"
cat sub.* >submit.err
# job_submit.lua's constraint notes and exact mode's "no placement now" on a busy cluster,
# nothing about the files (cannot open, truncated, a host not in the fabric).
out=$(only_messages submit.err '^sbatch: fabricplace: TP groups of [0-9]+ nodes? kept inside leaves: [][a-z0-9|*&-]+$' \
        '^sbatch: fabricplace: only [0-9]+ of [0-9]+ whole groups of [0-9]+ nodes? fit in the free hosts now; Slurm places the job as it is$' \
        '^sbatch: fabricplace: no placement now: .*; exact mode falls back to constrain$')
check "sbatch said only what it says without faults${out:+: $out}" test -z "$out"
out=$(grep '^error' "$LAB_DIR/log/fabricplace.log" | head -5)
check "the plugin logged no error${out:+: $out}" test -z "$out"
out=$(no_crash_in_logs)
check "no fatal error or crash in slurmctld's, slurmd's or the plugin's logs${out:+: $out}" test -z "$out"

if ((fails)); then
  tail -20 "$LAB_DIR/log/fabricplace.log"
  for ij in $bad_jobs; do  # what Slurm said about a job whose step went wrong
    show_files "err.${ij%%:*}" "out.${ij%%:*}"
    grep -h "\[${ij#*:}\.\|JobId=${ij#*:} \|StepId=${ij#*:}\." "$LAB_DIR"/log/slurmd-*.log "$LAB_DIR/log/slurmctld.log" | tail -30
  done
  LAB_KEEP=1
fi
echo "== $fails failed ($(elapsed_s "$t0") s)"
((fails == 0))
