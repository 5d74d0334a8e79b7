#!/usr/bin/env bash
# differential_tree.sh FABRICPLACE SPEC [--seed S] [--cases N] [--case FREE:N]...
#
# `fabricplace place --policy slurm-tree` must choose the same nodes as a real slurmctld
# (select/cons_tres + topology/tree, Slurm 22.05) on the same fabric and the same busy
# nodes. The lab comes up from SPEC; per case a node-exclusive `sbatch -w BUSY` job occupies
# the busy nodes, then a probe `sbatch -N n` job is placed by Slurm and compared, as a set,
# with `fabricplace place --fabric DIR/etc/fabric.json -N n --busy BUSY --policy slurm-tree`.
#
#   --seed S, --cases N  N random cases (default 24) from seed S (default 20250101):
#                        no node busy, every leaf partly busy, leaves whole/empty/partial,
#                        or each node busy with a random probability; n in 1..free.
#   --case FREE:N        a hand-picked case: FREE = free nodes per leaf in topology.conf
#                        order, e.g. 1,2,4,3:6 (a leaf's busy nodes are its first ones).
#
# One line per case; exit 1 listing every mismatch, 77 (SKIP) where Slurm cannot run.
set -uo pipefail
FABRICPLACE=${1:?usage: differential_tree.sh FABRICPLACE SPEC [--seed S] [--cases N] [--case FREE:N]...}
spec=${2:?usage: differential_tree.sh FABRICPLACE SPEC [--seed S] [--cases N] [--case FREE:N]...}
shift 2
seed=20250101 ncases=24 hand=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --seed) seed=$2; shift 2 ;;
    --cases) ncases=$2; shift 2 ;;
    --case) hand+=("$2"); shift 2 ;;
    *) echo "differential_tree.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"

t_start=$(now_s)
lab_start "$spec"
etc=$LAB_DIR/etc
tag=${spec%%:*}

# ---- the fabric as Slurm sees it: leaves (in topology.conf order), hosts, leaf parents ----
leaf_names=() leaf_hosts=()   # leaf_hosts[i]: space-separated hosts of leaf i
while read -r sw nl; do
  leaf_names+=("$sw")
  leaf_hosts+=("$(scontrol show hostnames "$nl" | paste -sd' ')")
done < <(sed -n 's/^SwitchName=\([^ ]*\) Nodes=\([^ ]*\).*/\1 \2/p' "$etc/topology.conf")
declare -A parent=()
while read -r sw list; do
  for c in $(scontrol show hostnames "$list"); do parent[$c]=$sw; done
done < <(sed -n 's/^SwitchName=\([^ ]*\) Switches=\([^ ]*\).*/\1 \2/p' "$etc/topology.conf")
nleaves=${#leaf_names[@]}

compress() {  # hosts on stdin (any order) -> sorted hostlist expression, "-" if none
  local l; l=$(grep . | sort | paste -sd,)
  if [[ -z $l ]]; then echo -; else scontrol show hostlistsorted "$l"; fi
}

free_shape() {  # BUSY-HOSTS(newline list) -> free nodes per leaf, leaves under one parent
  local busy=$1 i out="" f h prev=""  # joined by ',', groups separated by ' | '
  for ((i = 0; i < nleaves; i++)); do
    f=0
    for h in ${leaf_hosts[i]}; do grep -qx "$h" <<<"$busy" || f=$((f + 1)); done
    if [[ -n $out ]]; then
      if [[ ${parent[${leaf_names[i]}]:-} == "$prev" ]]; then out+=","; else out+=" | "; fi
    fi
    out+=$f; prev=${parent[${leaf_names[i]}]:-}
  done
  echo "($out)"
}

# The random generator never runs in a subshell: bash reseeds RANDOM in each subshell.
shuffled=()
shuffle() {  # words -> shuffled[]: the same words in a random order
  shuffled=("$@")
  local i j t
  for ((i = ${#shuffled[@]} - 1; i > 0; i--)); do
    j=$((RANDOM % (i + 1))); t=${shuffled[i]}; shuffled[i]=${shuffled[j]}; shuffled[j]=$t
  done
}

BUSY=""
random_busy() {  # BUSY = the busy hosts of a random case, one per line
  local mode=$((RANDOM % 10)) i s b p h hs
  BUSY=""
  for ((i = 0; i < nleaves; i++)); do
    read -ra hs <<<"${leaf_hosts[i]}"; s=${#hs[@]}
    case $mode in
      0) b=0 ;;                                                   # nothing busy
      1|2|3|4|5) b=$((s > 1 ? 1 + RANDOM % (s - 1) : 0)) ;;       # every leaf partly busy
      6|7) case $((RANDOM % 3)) in 0) b=0 ;; 1) b=$s ;; *) b=$((RANDOM % (s + 1))) ;; esac ;;
      *) p=$((RANDOM % 100)); b=0                                 # each node with p %
         for h in "${hs[@]}"; do [[ $((RANDOM % 100)) -lt $p ]] && b=$((b + 1)); done ;;
    esac
    shuffle "${hs[@]}"
    for ((h = 0; h < b; h++)); do BUSY+=${shuffled[h]}$'\n'; done
  done
  BUSY=${BUSY%$'\n'}
}

hand_busy() {  # FREE (per-leaf free counts) -> busy hosts: each leaf's first size-free
  local -a free; IFS=, read -ra free <<<"$1"
  [[ ${#free[@]} == "$nleaves" ]] || { echo "case $1: $nleaves leaves in $spec" >&2; return 1; }
  local i hs
  for ((i = 0; i < nleaves; i++)); do
    read -ra hs <<<"${leaf_hosts[i]}"
    [[ ${free[i]} -le ${#hs[@]} ]] || { echo "case $1: leaf ${leaf_names[i]} has ${#hs[@]} hosts" >&2; return 1; }
    printf '%s\n' "${hs[@]:0:${#hs[@]}-${free[i]}}"
  done | grep .
}

mismatches=() ncase=0 nok=0
run_case() {  # run_case LABEL BUSY-HOSTS N
  local label=$1 busy=$2 n=$3 busylist nbusy jb="" jp slurm ours rc verdict
  ncase=$((ncase + 1))
  busylist=$(compress <<<"$busy")
  nbusy=$(grep -c . <<<"$busy")
  if [[ $nbusy -gt 0 ]]; then
    jb=$(sbatch --parsable --exclusive -J busy -o /dev/null -w "$busylist" -N "$nbusy" --wrap 'sleep 600')
    if ! wait_running "$jb" 30 || [[ $(job_hosts "$jb" | compress) != "$busylist" ]]; then
      verdict="ERROR (busy job $jb: $(job_state "$jb") on $(squeue -h -j "$jb" -o %N))"
    fi
  fi
  if [[ -z ${verdict:-} ]]; then
    jp=$(sbatch --parsable -J probe -o /dev/null -N "$n" --wrap 'sleep 600')
    if wait_running "$jp" 30; then
      slurm=$(job_hosts "$jp" | compress)
    else
      slurm="not started ($(job_state "$jp"): $(squeue -h -j "$jp" -o %r))"
    fi
    ours=$("$FABRICPLACE" place --fabric "$etc/fabric.json" -N "$n" --busy "${busylist/#-/}" \
             --policy slurm-tree --json 2>&1)
    rc=$?
    if [[ $rc == 0 ]]; then
      ours=$(sed -n 's/^ *"hostlist": "\(.*\)",\{0,1\}$/\1/p' <<<"$ours" | head -1)
      ours=$(scontrol show hostnames "$ours" | compress)
    else
      ours="exit $rc: $(tr '\n' ' ' <<<"$ours" | cut -c1-200)"
    fi
    if [[ $slurm == "$ours" ]]; then verdict=OK; nok=$((nok + 1)); else verdict=MISMATCH; fi
  fi
  local line
  line=$(printf '%-16s free/leaf=%-20s busy=%-34s n=%-2s slurm=%-28s ours=%-28s %s' \
           "[$tag $label]" "$(free_shape "$busy")" "$busylist" "$n" "${slurm:--}" "${ours:--}" "$verdict")
  echo "$line"
  [[ $verdict == OK ]] || mismatches+=("$line")
  scancel ${jb:+"$jb"} ${jp:+"$jp"} 2>/dev/null
  wait_all_idle 30 || { echo "lab did not return to idle after case $label" >&2; squeue >&2; sinfo -N >&2; LAB_KEEP=1; exit 1; }
  verdict=""
}

echo "differential: fabricplace place --policy slurm-tree vs slurmctld, $spec, $FABRICPLACE_LAB_NODES nodes, $nleaves leaves, seed $seed"
for c in "${hand[@]}"; do
  busy=$(hand_busy "${c%%:*}") || exit 2
  run_case "hand ${c%%:*}" "$busy" "${c##*:}"
done
RANDOM=$seed
for ((k = 1; k <= ncases; k++)); do
  random_busy
  nfree=$((FABRICPLACE_LAB_NODES - $(grep -c . <<<"$BUSY")))
  if [[ $nfree -eq 0 ]]; then  # keep one node free
    mapfile -t hs <<<"$BUSY"; shuffle "${hs[@]}"; BUSY=$(printf '%s\n' "${shuffled[@]:1}"); nfree=1
  fi
  n=$((1 + RANDOM % nfree))
  run_case "#$k" "$BUSY" "$n"
done

echo "== $spec: $nok/$ncase cases agree with slurmctld ($(elapsed_s "$t_start") s)"
if [[ ${#mismatches[@]} -gt 0 ]]; then
  echo "== ${#mismatches[@]} MISMATCHES (slurm = slurmctld's choice, ours = fabricplace):"
  printf '%s\n' "${mismatches[@]}"
  echo "== topology.conf:"
  grep '^SwitchName' "$etc/topology.conf"
  exit 1
fi
