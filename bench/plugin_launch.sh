#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# plugin_launch.sh FABRICPLACE PLUGIN_SO [RUNS=20]: what the SPANK plugin adds to a step
# launch with a 16,384-host fabric (docs/performance.md). On the Slurm test cluster
# (tests/slurm/lab.sh, 16 nodes), the plugin reads a host map of a 16,384-host 3-level
# fat-tree whose first 16 hosts are renamed to the lab's nodes. It times `srun` steps with the
# plugin idle (no --fabric-* option: it only registers its options) and active
# (--fabric-tp=2, a TP group of one 2-GPU node, which fits any node count: srun computes
# SLURM_HOSTFILE, every slurmstepd parses the host map, lays out the ring and sets the task
# variables, the first writes the job's rank files), on 1 node and on 16, and prints the
# medians. Any failed step, or a plugin that did not lay out the ring, fails the benchmark.
# Root; the lab needs Slurm and munge (scripts/install-deps.sh).
set -uo pipefail
FABRICPLACE=$(realpath "${1:?usage: plugin_launch.sh FABRICPLACE PLUGIN_SO [RUNS]}")
PLUGIN=$(realpath "${2:?usage: plugin_launch.sh FABRICPLACE PLUGIN_SO [RUNS]}")
runs=${3:-20}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/slurm/common.sh
. "$here/../tests/slurm/common.sh"

big='fat3:pods=16,leaves=32,down=32,up=32,spines=32,radix=64'
tmp=$(mktemp -d /tmp/fp-bench.XXXXXX)
"$FABRICPLACE" fabric export "$big" --format hostmap -o "$tmp/big.hostmap" || exit 1
# node00001..node00016 -> node001..node016, the lab's names.
sed -E -i 's/\bnode000(0[1-9]|1[0-6])\b/node0\1/g' "$tmp/big.hostmap"
echo "host map: $(grep -c '^leaf' "$tmp/big.hostmap") leaves, $(wc -c <"$tmp/big.hostmap") bytes"
chmod 755 "$tmp" && chmod 644 "$tmp/big.hostmap"
echo "required $PLUGIN fabric=@LAB@/etc/fabric.json hostmap=$tmp/big.hostmap gpus_per_node=2" >"$tmp/plugstack.conf"
lab_start 'fat2:leaves=4,down=4,up=4' --plugstack "$tmp/plugstack.conf"
cd "$LAB_DIR" || exit 1

# median wall time in ms of RUNS runs of "$@"
median_ms() {
  local i t0 t1 times=()
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }  # warm-up
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
    t1=$(date +%s%N)
    times+=($(((t1 - t0) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) / 1000 }'
}

printf '%-8s %-34s %12s\n' nodes step "median (ms)"
for n in 1 16; do
  idle=$(median_ms salloc -N "$n" --ntasks-per-node=2 srun true) || exit 1
  # The active path really runs: every task has its ring rank.
  got=$(salloc -N "$n" --ntasks-per-node=2 srun --fabric-tp=2 printenv FABRICPLACE_RING_RANK 2>/dev/null | sort -n | paste -sd' ')
  want=$(seq 0 $((2 * n - 1)) | paste -sd' ')
  [[ $got == "$want" ]] || { echo "the plugin did not lay out the ring on $n nodes: '$got'" >&2; exit 1; }
  active=$(median_ms salloc -N "$n" --ntasks-per-node=2 srun --fabric-tp=2 true) || exit 1
  printf '%-8s %-34s %12s\n' "$n" "salloc + srun (plugin idle)" "$idle"
  printf '%-8s %-34s %12s\n' "$n" "salloc + srun --fabric-tp=2" "$active"
  awk -v a="$active" -v b="$idle" -v n="$n" 'BEGIN { printf "%-8s %-34s %12.1f\n", n, "added by the plugin", a - b }'
done
rm -rf "$tmp"
