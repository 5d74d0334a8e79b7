#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Replays the real traces of docs/simulator.md ("Results") on realistic 3-level fat-trees and
# writes one report per scenario. Not part of the test suite (minutes, and the traces live
# outside the repository).
#
#   scripts/simulate-traces.sh [TRACES_DIR] [OUT_DIR] [SET]
#
# SET: `all` (default), or `bandwidth`: only the runs of docs/simulator.md "Placement by
# bandwidth" (issue #14: 70-90 % load, every route model, the LLM-heavy trace), or
# `domains`: only those of "NVLink domains" (issue #17: a GB200-class fabric, generated
# traces only, no trace files needed).
#
# TRACES_DIR holds philly-rfold/philly_trace.csv and msft-itp-elasticflow/raw-traces.tar.gz
# (default ../shared/data/traces; docs/simulator.md says where to download them).
set -euo pipefail
cd "$(dirname "$0")/.."
traces=${1:-../shared/data/traces}
out=${2:-build/simulations}
fp=${FABRICPLACE:-build/release/cli/fabricplace}
if [[ ! -x $fp ]]; then
  cmake --preset release >/dev/null
  cmake --build --preset release --target fabricplace
fi
set_=${3:-all}
mkdir -p "$out"
run() {
  local name=$1; shift
  echo "== $name: fabricplace simulate $*"
  "$fp" simulate -q "$@" --out "$out/$name"
}

# Issue #17: NVLink domains. A GB200-class fabric: 4 scalable units of 72 hosts (4 racks of
# 18 hosts of 4 GPUs, one NVL72 domain each: 16 domains, 1,152 GPUs), rail-optimised
# scale-out (4 rails; a rail leaf has 72 host ports and 72 uplinks: 144-port switches). The
# LLM-heavy trace with TP up to 72 GPUs and 30 % MoE jobs with EP groups up to 72 GPUs, at
# 70, 80 and 90 % offered load, two seeds each; fabric against slurm-block (--segment = the
# group's nodes), slurm-tree (24.11) and first-fit.
gb200='rail:sus=4,hosts=72,rails=4,up=72,radix=144,nvl=18,gpus=4'
for load in 0.7 0.8 0.9; do
  for seed in 7 11; do
    run "nvl-gb200-$load-s$seed" --fabric "$gb200" --tp-cap 72 --slurm-version 24.11 \
      --policies fabric,slurm-block,slurm-tree,first-fit \
      --trace "llm:jobs=1500,seed=$seed,load=$load,hosts=288,w1=40,w2=15,w4=12,w8=10,w16=8,w18=6,w32=4,w36=3,w64=1.5,moe=0.3,ep=72"
  done
done
if [[ $set_ == domains ]]; then
  echo "reports: $out/nvl-*/report.html"
  exit 0
fi

philly=$traces/philly-rfold/philly_trace.csv
itp_tar=$traces/msft-itp-elasticflow/raw-traces.tar.gz
for f in "$philly" "$itp_tar"; do
  [[ -r $f ]] || { echo "simulate-traces: $f not found (see docs/simulator.md)" >&2; exit 1; }
done
itp=$(mktemp -d)
trap 'rm -rf "$itp"' EXIT
tar xzf "$itp_tar" -C "$itp"


# 40-port HDR switches (20 down, 20 up): 4 pods x 10 leaves x 20 hosts = 800 hosts.
fat3_800='fat3:pods=4,leaves=10,down=20,up=20'
fat3_800_2to1='fat3:pods=4,leaves=10,down=20,up=10'
# 32-port switches: 2 pods x 4 leaves x 16 hosts = 128 hosts (ITP cluster04's ~82 busy nodes).
fat3_128='fat3:pods=2,leaves=4,down=16,up=16'
fat3_128_2to1='fat3:pods=2,leaves=4,down=16,up=8'

# Issue #14: the bandwidth objective against the baselines, at 70-90 % offered load, under
# every route model a fat-tree has, on fabrics with one thin tier.
every_model=ftree,minhop,updn,ecmp,adaptive
# 800 hosts whose core is 2.5:1 (each pod spine: 10 leaf ports, 4 core uplinks)...
fat3_800_core='fat3:pods=4,leaves=10,down=20,up=20,spine_up=4'
# ... and 128 hosts whose core is 2:1 (ITP cluster04's scale).
fat3_128_core='fat3:pods=2,leaves=4,down=16,up=16,spine_up=2'
# The LLM-heavy trace (docs/simulator.md): 10,000 jobs offered at 80 % of 800 hosts.
llm='llm:jobs=10000,seed=1,load=0.8,hosts=800'
run bw-llm-800-core --fabric "$fat3_800_core" --trace "$llm" --routes "$every_model"
run bw-llm-800-2to1 --fabric "$fat3_800_2to1" --trace "$llm" --routes "$every_model"
# Philly's 46 % and ITP cluster04's 64 % mean load, arrivals compressed to ~80 %.
run bw-philly-800-core --fabric "$fat3_800_core" --trace "$philly" --arrival-scale 0.57 \
  --routes "$every_model"
run bw-itp04-128-core --fabric "$fat3_128_core" --trace "$itp/cluster04.csv" --arrival-scale 0.8 \
  --routes "$every_model"
if [[ $set_ == bandwidth ]]; then
  echo "reports: $out/bw-*/report.html"
  exit 0
fi
run philly-800 --fabric "$fat3_800" --trace "$philly"
run philly-800-2to1 --fabric "$fat3_800_2to1" --trace "$philly"
run philly-800-degraded --fabric "$fat3_800" --trace "$philly" --degrade-links 16 --seed 1
# No communication at all (f = 0): what the placement constraints alone cost in queue wait.
run philly-800-f0 --fabric "$fat3_800" --trace "$philly" --comm-fraction 0
run itp04-128 --fabric "$fat3_128" --trace "$itp/cluster04.csv"
run itp04-128-2to1 --fabric "$fat3_128_2to1" --trace "$itp/cluster04.csv"
run itp04-128-f0 --fabric "$fat3_128" --trace "$itp/cluster04.csv" --comm-fraction 0
# All ten ITP clusters as one workload (69,351 jobs, 806 multi-node): on 512 hosts
# (4 pods x 8 leaves x 16), and on the 800-host fabric with arrivals twice as dense.
itp_all=("$itp"/cluster*.csv)
itp_traces=()
for f in "${itp_all[@]}"; do itp_traces+=(--trace "$f"); done
run itp-all-512 --fabric 'fat3:pods=4,leaves=8,down=16,up=16' "${itp_traces[@]}"
run itp-all-800-x2 --fabric "$fat3_800" "${itp_traces[@]}" --arrival-scale 0.5
# A RoCE Clos given as a tiers CSV with its links stated (tests/data/clos-roce.csv: 154 hosts,
# aggregation groups of 96, 40 and 18 hosts, one 400G link from each aggregation switch to
# the core): per-flow ECMP hashing against adaptive routing (docs/routes.md).
run itp04-roce-clos --fabric tests/data/clos-roce.csv --trace "$itp/cluster04.csv" --routes ecmp,adaptive
# The InfiniBand fat-tree under opensm's static ftree routes and under adaptive routing.
run philly-800-ftree-vs-ar --fabric "$fat3_800" --trace "$philly" --routes ftree,adaptive
echo "reports: $out/*/report.html"
