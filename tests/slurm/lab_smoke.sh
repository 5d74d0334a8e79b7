#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# lab_smoke.sh FABRICPLACE [SPEC]: the Slurm lab comes up from a fabric spec (all nodes
# idle, topology.conf and per-leaf features as exported), runs jobs on the lab's nodes,
# and `lab.sh down` leaves no process behind. Exit 77 (SKIP) where Slurm cannot run.
set -uo pipefail
FABRICPLACE=${1:?usage: lab_smoke.sh FABRICPLACE [SPEC]}
spec=${2:-fat2:leaves=4,down=4,up=4}
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"


t0=$(now_s)
lab_start "$spec"
echo "lab up in $(elapsed_s "$t0") s"
etc=$LAB_DIR/etc

# ---- every node idle, named as the fabric's hosts -----------------------------------
hosts=$(sed -n 's/^SwitchName=[^ ]* .*Nodes=\([^ ]*\).*/\1/p' "$etc/topology.conf" | paste -sd, |
        xargs scontrol show hostnames | sort)
nhosts=$(wc -l <<<"$hosts")
check "$nhosts hosts, all idle" test "$(sinfo -h -N -t idle -o %N | sort -u)" == "$hosts"
check "CPUs per node = this machine's cores ($(nproc))" \
  test "$(sinfo -h -N -o %c | sort -u)" == "$(nproc)"

# ---- jobs run on 4 distinct lab nodes ---------------------------------------------------
# The node's own hostname inside the job (UTS namespace); SLURMD_NODENAME without one.
if [[ $FABRICPLACE_LAB_UNSHARE == 1 ]]; then what=(hostname); else what=(printenv SLURMD_NODENAME); fi
out=$(timeout 60 srun -N4 "${what[@]}" | sort)
echo "srun -N4 ${what[*]}: $(paste -sd' ' <<<"$out")"
check "srun -N4 runs on 4 distinct lab nodes" \
  test "$(sort -u <<<"$out" | grep -Fxc -f <(echo "$hosts"))" == 4
if [[ $FABRICPLACE_LAB_UNSHARE == 1 ]]; then
  check "hostname in a job equals SLURMD_NODENAME" \
    test "$(timeout 60 srun -N2 sh -c 'test "$(hostname)" = "$SLURMD_NODENAME" && echo ok' | sort -u)" == ok
fi

# ---- topology.conf: Slurm's switches are the exported ones --------------------------------
mismatch=""
while read -r name kind list; do
  want=$(scontrol show hostnames "$list" | sort | paste -sd,)
  line=$(scontrol show topology "$name" | grep "^SwitchName=$name ")
  if [[ $kind == Nodes ]]; then
    got=$(scontrol show hostnames "$(sed -n 's/.* Nodes=\([^ ]*\).*/\1/p' <<<"$line")" | sort | paste -sd,)
  else
    got=$(scontrol show hostnames "$(sed -n 's/.* Switches=\([^ ]*\).*/\1/p' <<<"$line")" | sort | paste -sd,)
  fi
  [[ -n $want && $got == "$want" ]] || mismatch+=" $name($kind: slurm '$got', exported '$want')"
done < <(sed -n 's/^SwitchName=\([^ ]*\) \(Nodes\|Switches\)=\([^ ]*\).*/\1 \2 \3/p' "$etc/topology.conf")
check "scontrol show topology = exported topology.conf${mismatch:+:$mismatch}" test -z "$mismatch"

# ---- features: each host carries its leaf's features -------------------------------------
want=$(sed -n 's/^NodeName=\([^ ]*\) Features=\([^ ]*\).*/\1 \2/p' "$etc/features.conf" |
       while read -r nl f; do scontrol show hostnames "$nl" | sed "s/\$/ $f/"; done | sort)
got=$(sinfo -h -N -o '%N %f' | sort -u)
check "sinfo features = exported slurm-features" test "$got" == "$want"
first=$(head -1 <<<"$hosts")
echo "features of $first: $(sinfo -h -n "$first" -o %f)"

# ---- the partition is node-exclusive; topology/tree best fit: a 2-node job in one leaf ----
j=$(sbatch --parsable -N2 -o /dev/null --wrap 'sleep 6123')
if wait_running "$j" 30; then
  nodes=$(squeue -h -j "$j" -o %N)
  leaves=$(scontrol show hostnames "$nodes" | while read -r h; do
             sed -n 's/^SwitchName=\([^ ]*\) Nodes=\([^ ]*\).*/\1 \2/p' "$etc/topology.conf" |
               while read -r sw nl; do scontrol show hostnames "$nl" | grep -qx "$h" && echo "$sw"; done
           done | sort -u | wc -l)
  check "sbatch -N2 ran on one leaf ($nodes)" test "$leaves" == 1
  check "the job's nodes are allocated whole (exclusive)" \
    test "$(sinfo -h -N -n "$nodes" -o %t | sort -u)" == alloc
else
  check "sbatch -N2 started" false
fi
pgrep -f 'sleep 6123' >/dev/null || echo "note: job task not visible yet"

# ---- down leaves nothing running (the job above is still running now) ----------------------
t0=$(now_s)
"$LAB_SH" down --dir "$LAB_DIR" 9>&-
echo "lab down in $(elapsed_s "$t0") s"
left=$(live_pids "$LAB_DIR/"; live_pids 'sleep 6123')
check "no lab process left after down${left:+: $(ps -o pid=,comm= -p "$(paste -sd, <<<"$left")" | paste -sd' ')}" test -z "$left"
check "slurmctld port closed" bash -c "! (exec 3<>/dev/tcp/127.0.0.1/${FABRICPLACE_LAB_CTLD_PORT:-16817}) 2>/dev/null"
check "down again is harmless" "$LAB_SH" down --dir "$LAB_DIR" 9>&-
check "status says down" bash -c "\"$LAB_SH\" status --dir \"$LAB_DIR\"; test \$? = 3"

[[ $fails == 0 ]] || LAB_KEEP=1
echo "== lab_smoke: $fails failed"
[[ $fails == 0 ]]
