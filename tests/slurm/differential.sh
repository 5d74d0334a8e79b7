#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# differential.sh FABRICPLACE SPEC [--topology tree|block] [--seed S] [--cases N]
#                 [--case FREE:N[:SEGMENT]]...
#
# fabricplace's reimplementation of Slurm's node selection must choose the same nodes as a
# real slurmctld of the lab's version on the same fabric and the same busy nodes:
#   tree  (default): `place --policy slurm-tree --slurm-version V` against select/cons_tres +
#         topology/tree (Slurm 22.05, or 24.11 whose selection differs: docs/placement.md);
#   block: `place --policy slurm-block --segment S` against topology/block (Slurm 23.11+)
#         with `sbatch --segment=S` (24.05+), on our slurm-block export (placeholders
#         included). First `scontrol show topology` must list exactly the blocks we wrote,
#         the block sizes of BlockSizes and one aggregated block per pod (several pods).
# The lab comes up from SPEC; per case node-exclusive `sbatch -w` jobs (one per leaf) occupy
# the busy nodes, then a probe `sbatch -N n` job is placed by Slurm and compared, as a set, with
# `fabricplace place --fabric DIR/etc/fabric.json -N n --busy BUSY --policy ...`. Where ours
# says no placement, Slurm must leave the probe pending (or refuse it at submission).
#
#   --seed S, --cases N  N random cases (default 24) from seed S (default 20250101):
#                        no node busy, every leaf partly busy, leaves whole/empty/partial,
#                        or each node busy with a random probability; n in 1..free (with
#                        block, 3 times in 4 at most the freest pod's free hosts); with
#                        block, a segment: none, a divisor of n up to the base block
#                        (mostly one above 1), or now and then one too large.
#   --case FREE:N[:SEG]  a hand-picked case: FREE = free nodes per leaf in topology order,
#                        e.g. 1,2,4,3:6 (a leaf's busy nodes are its first ones); SEG the
#                        segment (block; 0 or absent = none).
#
# One line per case; exit 1 listing every mismatch, 77 (SKIP) where Slurm cannot run.
set -uo pipefail
usage="usage: differential.sh FABRICPLACE SPEC [--topology tree|block] [--seed S] [--cases N] [--case FREE:N[:SEG]]..."
FABRICPLACE=${1:?$usage}
spec=${2:?$usage}
shift 2
seed=20250101 ncases=24 hand=() topology=tree
while [[ $# -gt 0 ]]; do
  case $1 in
    --topology) topology=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --cases) ncases=$2; shift 2 ;;
    --case) hand+=("$2"); shift 2 ;;
    *) echo "differential.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case $topology in tree) policy=slurm-tree ;; block) policy=slurm-block ;;
  *) echo "differential.sh: --topology tree or block" >&2; exit 2 ;; esac
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"

t_start=$(now_s)
lab_start "$spec" --topology "$topology"
etc=$LAB_DIR/etc
tag=${spec%%:*}

# ---- the fabric as Slurm sees it: leaves (in topology order), hosts, leaf parents ---------
# features.conf lists, per leaf in topology.conf order, its hosts and the leaf's name then its
# parents' (tree and block exports share the leaves).
leaf_names=() leaf_hosts=()   # leaf_hosts[i]: space-separated hosts of leaf i
declare -A parent=() leaf_at=()
# With NVLink domains a leaf has one line per domain, the domain's name last: its hosts are
# merged, and a parent is a switch (a feature that names a leaf's parent in topology.conf).
while read -r nl features; do
  leaf=${features%%,*}
  hosts=$(scontrol show hostnames "$nl" | paste -sd' ')
  if [[ -n ${leaf_at[$leaf]:-} ]]; then
    leaf_hosts[${leaf_at[$leaf]}]+=" $hosts"
    continue
  fi
  leaf_at[$leaf]=${#leaf_names[@]}
  leaf_names+=("$leaf")
  leaf_hosts+=("$hosts")
  second=$(cut -s -d, -f2 <<<"$features")
  if [[ -n $second ]] && grep -q "^SwitchName=$second .*Switches=.*" "$etc/topology.conf" 2>/dev/null; then
    parent[$leaf]=$second
  elif [[ -n $second && $topology == block ]] && ! grep -q "^BlockName=$second " "$etc/topology.conf"; then
    parent[$leaf]=$second  # topology/block: no switch lines; a feature that is no block is a parent
  fi
done < <(sed -n 's/^NodeName=\([^ ]*\) Features=\([^ ]*\).*/\1 \2/p' "$etc/features.conf")
nleaves=${#leaf_names[@]}
base=$(sed -n 's/^BlockSizes=\([0-9]*\).*/\1/p' "$etc/topology.conf")
# The groups a busy job may cover: leaves, or with topology/block the base blocks as written
# (leaves, or NVLink domains on a fabric with domains, which may span leaves and pods), the
# fabric's hosts of each (placeholders left out): topology/block refuses a job whose required
# nodes are not all in one block ("Requested node configuration is not available").
group_hosts=()
if [[ $topology == block ]]; then
  while read -r nl; do
    group_hosts+=("$(scontrol show hostnames "$nl" | grep -v '^fabricplace-pad' | paste -sd' ')")
  done < <(sed -n 's/^BlockName=[^ ]* Nodes=\([^ ]*\)$/\1/p' "$etc/topology.conf")
else
  group_hosts=("${leaf_hosts[@]}")
fi

if [[ $topology == block ]]; then
  # scontrol show topology lists every base block as we wrote it (name and nodes, placeholders
  # included), then the aggregated ones.
  want=$(sed -n 's/^BlockName=\([^ ]*\) Nodes=\([^ ]*\)$/\1 \2/p' "$etc/topology.conf")
  got=$(scontrol show topology 2>&1 | sed -n 's/^BlockName=\([^ ]*\) BlockIndex=[0-9]* Nodes=\([^ ]*\) BlockSize=.*/\1 \2/p' |
          head -n "$(grep -c . <<<"$want")")
  if [[ $got != "$want" ]]; then
    echo "FAIL: scontrol show topology does not list the blocks we wrote:"
    scontrol show topology
    echo "---- topology.conf"; cat "$etc/topology.conf"
    LAB_KEEP=1; exit 1
  fi
  # ... and the sizes of BlockSizes, with one aggregated block per pod holding exactly the
  # pod's nodes (placeholders included) when there are several.
  sizes=$(sed -n 's/^BlockSizes=//p' "$etc/topology.conf")
  got_sizes=$(scontrol show topology | sed -n 's/.* BlockSize=\([0-9]*\).*/\1/p' | awk '!seen[$0]++' | paste -sd,)
  want_aggr=$(awk '/^# pod /{p++} /^BlockName=/{sub(/^.*Nodes=/, ""); nodes[p] = nodes[p] (nodes[p] ? "," : "") $0}
                   END{if (p > 1) for (i = 1; i <= p; i++) print nodes[i]}' "$etc/topology.conf" |
              while read -r nl; do scontrol show hostnames "$nl" | sort | paste -sd' '; done)
  got_aggr=$(scontrol show topology | sed -n 's/^AggregatedBlock=[^ ]* BlockIndex=[0-9]* Nodes=\([^ ]*\) .*/\1/p' |
             while read -r nl; do scontrol show hostnames "$nl" | sort | paste -sd' '; done)
  if [[ $got_sizes != "$sizes" || $got_aggr != "$want_aggr" ]]; then
    echo "FAIL: scontrol show topology: block sizes $got_sizes (want $sizes), aggregated blocks:"
    echo "$got_aggr"; echo "---- want:"; echo "$want_aggr"
    scontrol show topology
    LAB_KEEP=1; exit 1
  fi
  echo "PASS: scontrol show topology lists the $(grep -c . <<<"$want") base blocks of topology.conf ($(grep -c '^BlockName=fabricplace-pad' "$etc/topology.conf") placeholders), BlockSizes=$sizes, $(grep -c . <<<"$got_aggr") aggregated block(s), one per pod, node for node"
fi

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
  done | grep . || true  # every leaf free: no busy host
}

mismatches=() ncase=0 nok=0 nplaced=0
run_case() {  # run_case LABEL BUSY-HOSTS N [SEGMENT]
  local label=$1 busy=$2 n=$3 seg=${4:-0} busylist nbusy jb=() jp="" slurm ours rc verdict="" out
  local segopt=() ourseg=()
  if [[ $topology == block ]]; then
    ourseg=(--segment "$seg")
    [[ $seg -gt 0 ]] && segopt=(--segment="$seg")
  fi
  ncase=$((ncase + 1))
  busylist=$(compress <<<"$busy")
  nbusy=$(grep -c . <<<"$busy")
  # One node-exclusive busy job per leaf (per base block with topology/block: group_hosts).
  local i h part j got=""
  if [[ $nbusy -gt 0 ]]; then
    for ((i = 0; i < ${#group_hosts[@]}; i++)); do
      part=""
      for h in ${group_hosts[i]}; do grep -qx "$h" <<<"$busy" && part+="$h"$'\n'; done
      [[ -n $part ]] || continue
      jb+=("$(sbatch --parsable --exclusive -J busy -o /dev/null -w "$(compress <<<"$part")" \
                -N "$(grep -c . <<<"$part")" --wrap 'sleep 600')")
    done
    for j in "${jb[@]}"; do
      if ! wait_running "$j" 30; then verdict="ERROR (busy job $j: $(job_state "$j"))"; break; fi
      got+=$(job_hosts "$j")$'\n'
    done
    if [[ -z $verdict && $(compress <<<"$got") != "$busylist" ]]; then
      verdict="ERROR (busy jobs on $(compress <<<"$got"), not $busylist)"
    fi
  fi
  if [[ -z $verdict ]]; then
    ours=$("$FABRICPLACE" place --fabric "$etc/fabric.json" -N "$n" --busy "${busylist/#-/}" \
             --policy "$policy" --slurm-version "$FABRICPLACE_LAB_SLURM" "${ourseg[@]}" --json 2>&1)
    rc=$?
    if [[ $rc == 0 ]]; then
      ours=$(sed -n 's/^ *"hostlist": "\(.*\)",\{0,1\}$/\1/p' <<<"$ours" | head -1)
      ours=$(scontrol show hostnames "$ours" | compress)
    elif [[ $rc == 3 ]]; then
      ours="pending"   # no placement: Slurm must not start the probe either
    else
      ours="exit $rc: $(tr '\n' ' ' <<<"$ours" | cut -c1-200)"
    fi
    if ! out=$(sbatch --parsable -J probe -o /dev/null -N "$n" "${segopt[@]}" --wrap 'sleep 600' 2>&1); then
      # Refused at submission because it can never run (a segment larger than a base block):
      # as good as pending. Any other refusal is a failure of the case.
      if grep -q 'Requested topology configuration is not available' <<<"$out"; then
        slurm="pending"
        echo "  (sbatch refused the probe: $(tail -1 <<<"$out"))"
      else
        slurm="sbatch failed: $(tail -1 <<<"$out")"
      fi
    else
      jp=$out
      # A probe ours cannot place gets a few scheduling passes (bf_interval=1) to prove it
      # stays pending; one ours places gets 30 s to start.
      if wait_running "$jp" "$([[ $ours == pending ]] && echo 4 || echo 30)"; then
        slurm=$(job_hosts "$jp" | compress)
      elif [[ $(job_state "$jp") == PENDING ]]; then
        slurm="pending"
        [[ $ours == pending ]] || slurm+=" ($(squeue -h -j "$jp" -o %r))"
      else
        slurm="not started ($(job_state "$jp"))"
      fi
    fi
    if [[ $slurm == "$ours" ]]; then
      verdict=OK; nok=$((nok + 1))
      [[ $ours == pending ]] || nplaced=$((nplaced + 1))
    else
      verdict=MISMATCH
    fi
  fi
  local line
  line=$(printf '%-16s free/leaf=%-20s busy=%-34s n=%-2s%s slurm=%-28s ours=%-28s %s' \
           "[$tag $label]" "$(free_shape "$busy")" "$busylist" "$n" \
           "$([[ $topology == block ]] && printf ' seg=%-2s' "$seg")" "${slurm:--}" "${ours:--}" "$verdict")
  echo "$line"
  [[ $verdict == OK ]] || mismatches+=("$line")
  scancel "${jb[@]}" ${jp:+"$jp"} 2>/dev/null
  wait_all_idle 30 || { echo "lab did not return to idle after case $label" >&2; squeue >&2; sinfo -N >&2; LAB_KEEP=1; exit 1; }
}

# random_segment N: SEG = a segment for a random case of N nodes: none (0) a third of the
# time, else a divisor of N up to the base block (one above 1 when there is one, 3 times in
# 4), and now and then the next divisor above the base block (refused). Not in a subshell
# (RANDOM).
SEG=0
random_segment() {
  local n=$1 d divs=() big=0 over1=()
  SEG=0
  [[ $topology == block && $((RANDOM % 3)) != 0 ]] || return 0
  for ((d = 1; d <= n; d++)); do
    [[ $((n % d)) == 0 ]] || continue
    if [[ $d -le $base ]]; then divs+=("$d"); [[ $d -gt 1 ]] && over1+=("$d")
    elif [[ $big == 0 ]]; then big=$d; fi
  done
  if [[ $big -gt 0 && $((RANDOM % 8)) == 0 ]]; then SEG=$big
  elif [[ ${#over1[@]} -gt 0 && $((RANDOM % 4)) != 0 ]]; then SEG=${over1[RANDOM % ${#over1[@]}]}
  else SEG=${divs[RANDOM % ${#divs[@]}]}; fi
}

# most_free_in_a_pod BUSY: the most free hosts under one parent switch (one pod), where a
# topology/block job of more than one leaf must fit.
most_free_in_a_pod() {
  local busy=$1 i h f best=0
  declare -A pod=()
  for ((i = 0; i < nleaves; i++)); do
    f=0
    for h in ${leaf_hosts[i]}; do grep -qx "$h" <<<"$busy" || f=$((f + 1)); done
    pod[${parent[${leaf_names[i]}]:-all}]=$(( ${pod[${parent[${leaf_names[i]}]:-all}]:-0} + f ))
  done
  for f in "${pod[@]}"; do [[ $f -gt $best ]] && best=$f; done
  echo "$best"
}

echo "differential: fabricplace place --policy $policy vs slurmctld $FABRICPLACE_LAB_SLURM, $spec, $FABRICPLACE_LAB_NODES nodes, $nleaves leaves, seed $seed"
for c in "${hand[@]}"; do
  IFS=: read -r free n seg <<<"$c"
  busy=$(hand_busy "$free") || exit 2
  run_case "hand $free" "$busy" "$n" "${seg:-0}"
done
RANDOM=$seed
for ((k = 1; k <= ncases; k++)); do
  random_busy
  nfree=$((FABRICPLACE_LAB_NODES - $(grep -c . <<<"$BUSY")))
  if [[ $nfree -eq 0 ]]; then  # keep one node free
    mapfile -t hs <<<"$BUSY"; shuffle "${hs[@]}"; BUSY=$(printf '%s\n' "${shuffled[@]:1}"); nfree=1
  fi
  # topology/block leaves a job pending unless one pod holds it: 3 cases in 4 ask for no more
  # than the freest pod has, so that most are placed and compared node for node.
  if [[ $topology == block && $((RANDOM % 4)) != 0 ]]; then
    n=$((1 + RANDOM % $(most_free_in_a_pod "$BUSY")))
  else
    n=$((1 + RANDOM % nfree))
  fi
  random_segment "$n"
  run_case "#$k" "$BUSY" "$n" "$SEG"
done

echo "== $spec ($topology): $nok/$ncase cases agree with slurmctld $FABRICPLACE_LAB_SLURM ($nplaced placed by both, node for node; $((nok - nplaced)) pending on both) ($(elapsed_s "$t_start") s)"
if [[ ${#mismatches[@]} -gt 0 ]]; then
  echo "== ${#mismatches[@]} MISMATCHES (slurm = slurmctld's choice, ours = fabricplace):"
  printf '%s\n' "${mismatches[@]}"
  echo "== topology.conf:"
  grep -E '^(SwitchName|BlockName|BlockSizes)' "$etc/topology.conf"
  exit 1
fi
