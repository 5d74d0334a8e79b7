#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Discovery wall time on ibsim fabrics of ~2k and ~8k HCAs: fabricplace (in process,
# libibnetdisc) at max_smps 2, 16 and 64, side by side with ibnetdiscover (which uses
# libibnetdisc's default of 2) on the same ibsim instance. Prints a markdown table.
#   bench/discovery.sh [FABRICPLACE] [REPEATS]
set -euo pipefail
fp=$(realpath "${1:-build/ci/cli/fabricplace}")
repeats=${2:-3}
preload=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
work=$(mktemp -d /tmp/fp-bench-XXXXXX)
ibsim_pid=""
cleanup() { [[ -n "$ibsim_pid" ]] && kill "$ibsim_pid" 2>/dev/null || true; exec 7>&- 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# Wall time of one run; a failed run fails the benchmark rather than timing an error.
timed() {
  local s e
  s=$(date +%s.%N)
  if ! "$@" >/dev/null 2>"$work/last.err"; then echo "benchmark run failed: $*" >&2; cat "$work/last.err" >&2; exit 1; fi
  e=$(date +%s.%N)
  echo "$e - $s" | bc
}

echo "| fabric | HCAs | switches | tool | max_smps | median wall time (s) of $repeats |"
echo "|---|---|---|---|---|---|"
for spec in 'fat3:pods=4,leaves=16,down=32,up=32,spines=32,radix=64' \
            'fat3:pods=8,leaves=32,down=32,up=32,spines=32,radix=64'; do
  "$fp" fabric export "$spec" --format ibsim-net -o f.net
  read -r n s p < <(sed -n 's/^# start with: ibsim -N \([0-9]*\) -S \([0-9]*\) -P \([0-9]*\).*/\1 \2 \3/p' f.net)
  hcas=$((n - s))
  rm -f ctl && mkfifo ctl && exec 7<>ctl
  export IBSIM_SOCKNAME=fpbench$$
  ibsim -s -N "$n" -S "$s" -P "$p" f.net <&7 >ibsim.log 2>&1 &
  ibsim_pid=$!
  for _ in $(seq 600); do grep -q "simulator ready" ibsim.log && break; sleep 0.1; done
  for m in 2 16 64; do
    t=$(for _ in $(seq "$repeats"); do timed timeout 300 env LD_PRELOAD=$preload "$fp" fabric discover -q --max-smps "$m" -o out.json; done | median | xargs printf "%.2f")
    echo "| \`$spec\` | $hcas | $s | fabricplace discover | $m | $t |"
  done
  t=$(for _ in $(seq "$repeats"); do timed timeout 300 env LD_PRELOAD=$preload ibnetdiscover; done | median | xargs printf "%.2f")
  echo "| \`$spec\` | $hcas | $s | ibnetdiscover | 2 (default) | $t |"
  kill "$ibsim_pid"; wait "$ibsim_pid" 2>/dev/null || true; ibsim_pid=""
  exec 7>&-
  rm -rf sys-*
done
