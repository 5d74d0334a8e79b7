#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The main job on the bundled example fabric: install, build, then import a real
# ibnetdiscover dump, show its classification, export Slurm topology.conf and DOT, and place
# a TP-16 job on it with every policy side by side; rank files for Slurm's choice; an
# LLM-heavy trace replayed on it under every policy.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release
cmake --build --preset release
fp=build/release/cli/fabricplace
out=build/demo
mkdir -p "$out"
run() { echo; echo "\$ $*"; "$@"; }
run $fp fabric import etc/examples/cluster.ibnetdiscover.txt -o $out/fabric.json
run $fp fabric show $out/fabric.json
run $fp fabric export $out/fabric.json --format slurm-topology -o $out/topology.conf
run cat $out/topology.conf
run $fp fabric export $out/fabric.json --format dot -o $out/fabric.dot
# A 48-node job with TP 16 (groups of two 8-GPU nodes) while most of the cluster is busy:
# which hosts, in which ring order, and why (p02-leaf03 has the degraded uplink).
busy='node[001-070,161-320]'
run $fp place --fabric $out/fabric.json --nodes 48 --tp 16 --busy "$busy" --explain
run $fp place --fabric $out/fabric.json --nodes 48 --tp 16 --busy "$busy" --compare
# Rank files for an allocation we did not choose: the nodes Slurm's topology/tree would give
# that job, ordered so the ring crosses each leaf boundary once and TP pairs stay together.
slurm_hosts=$($fp place --fabric $out/fabric.json --nodes 48 --tp 16 --busy "$busy" \
                --policy slurm-tree --json | sed -n 's/^  "hostlist": "\(.*\)",$/\1/p')
run $fp rankfile --fabric $out/fabric.json --hosts "$slurm_hosts" --tasks-per-node 8 --tp 16 \
  --cores-per-node 64 --format openmpi -o $out/rankfile.txt
run head -3 $out/rankfile.txt
run $fp rankfile --fabric $out/fabric.json --hosts "$slurm_hosts" --tasks-per-node 8 --tp 16 \
  --format torchrun -o $out/torchrun.env
run sed -n '6,13p' $out/torchrun.env
# Replay 1,500 jobs of the seeded LLM-heavy trace (most GPU-time in 16-128-node jobs; offered
# at 80 % of this fabric's 320 hosts; docs/simulator.md) under each policy: at that load the
# policies differ (TP groups split, communication slowdown, wait). Real traces (Philly, ITP):
# scripts/simulate-traces.sh and docs/simulator.md.
run $fp simulate -q --fabric $out/fabric.json --trace 'llm:jobs=1500,seed=1,load=0.8,hosts=320' \
  --policies fabric,slurm-tree,slurm-block,first-fit --out $out/sim
# A RoCE Clos given as a tiers CSV with its links stated (aggregation groups of different
# sizes, one thin core tier): per-flow ECMP hashing against adaptive routing, per policy.
run $fp fabric show tests/data/clos-roce.csv
run $fp simulate -q --fabric tests/data/clos-roce.csv --trace 'llm:jobs=800,seed=1,load=0.8,hosts=154' \
  --routes ecmp,adaptive --out $out/sim-roce
echo
echo "Wrote $out/fabric.json (canonical JSON), $out/topology.conf (Slurm topology/tree), $out/fabric.dot (Graphviz),"
echo "$out/rankfile.txt (Open MPI rankfile), $out/torchrun.env (torchrun static rendezvous) and"
echo "$out/sim/{jobs.csv,summary.csv,report.html} (the simulation; open report.html in a browser) and"
echo "$out/sim-roce/ (the RoCE Clos under ecmp and adaptive routing)."
