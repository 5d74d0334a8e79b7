#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# plugin_block.sh FABRICPLACE PLUGIN_SO JOB_SUBMIT_LUA CLI_FILTER_LUA [SPEC]: --fabric-tp on
# a topology/block cluster (Slurm 24.05+), with the plugin (plugstack.conf topology=block),
# etc/job_submit.lua and etc/cli_filter.lua; nodes of "2 GPUs": --fabric-tp=4 is a TP group
# of 2 nodes. Base blocks are the 4 leaves of 4 hosts, BlockSizes=4,8 (a pod).
# Busy: node001 (p01-leaf01), node005 (p01-leaf02), node[013-016] (all of p02-leaf02), each
# its own job (one job on all of them is refused: it spans blocks). Free: 3 + 3 | 4 + 0.
#   - Slurm alone (--fabric-mode=off), 6 nodes: one pod, at most 2 leaves (its block rules),
#     so 3 + 3, splitting a TP group in each leaf;
#   - constrain: the plugin hands --segment=2 to cli_filter.lua, so 2 + 2 + 2 over three
#     leaves and two pods, every TP group inside one leaf; job_submit.lua adds no per-leaf
#     counts (block refuses them) and says why;
#   - a job one leaf holds gets that leaf (job_submit.lua's one-leaf constraint);
#   - a steered job inherits no segment: its own srun and 1-node sbatch run;
#   - --fabric-ep=4 (an EP group of 2 nodes) gets the same --segment=2;
#   - the job's own --segment wins; a job without --fabric-tp is untouched;
#   - exact mode pins a one-leaf job, and leaves a multi-leaf one to the segment, saying so;
#   - `slurm check` passes the lab, and warns of a plugstack line without topology=block and
#     of a slurm.conf without CliFilterPlugins=lua.
# Exit 77 (SKIP) where Slurm cannot run; never in CI.
set -uo pipefail
FABRICPLACE=${1:?usage: plugin_block.sh FABRICPLACE PLUGIN_SO JOB_SUBMIT_LUA CLI_FILTER_LUA [SPEC]}
PLUGIN=${2:?}
LUA=${3:?}
CLI=${4:?}
spec=${5:-fat3:pods=2,leaves=2,down=4,up=4}
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"

LAB_UP_ARGS=(--topology block --cli-filter "$CLI")
lab_start_plugin "$spec" "$PLUGIN" "$LUA" topology=block
grep -q '^BlockSizes=4,8$' "$LAB_DIR/etc/topology.conf" ||
  { echo "FAIL: the lab's topology.conf is not the expected block topology"; cat "$LAB_DIR/etc/topology.conf"; exit 1; }

for w in node001 node005 'node[013-016]'; do
  j=$(sbatch --parsable -J busy -o /dev/null -w "$w" -N "$(scontrol show hostnames "$w" | wc -l)" --wrap 'sleep 600')
  wait_running "$j" 30 || { echo "FAIL: the busy job on $w did not start: $(squeue -h -j "$j" -o '%T %r')"; exit 1; }
done

# run_probe NAME SBATCH-ARGS...: the probe's nodes once it runs (sbatch -v's messages in
# NAME.err)
run_probe() {
  local j
  j=$(sbatch -v --parsable -J "$1" -o /dev/null "${@:2}" --wrap 'sleep 600' 2>"$1.err") ||
    { echo "probe $1 refused: $(grep -v '^sbatch: [a-z_]* *:' "$1.err" | tail -3)" >&2; return 1; }
  wait_running "$j" 30 || { echo "probe $1 ($j) did not start: $(squeue -h -j "$j" -o '%T %r')" >&2; scancel "$j"; return 1; }
  squeue -h -j "$j" -o %N
  scancel "$j"
  wait_gone "$j" 30
}

plain=$(run_probe plain -N 6 --fabric-tp=4 --fabric-mode=off)
check "Slurm alone: one pod, 3 + 3, a TP group split in each leaf ($plain: $(leaf_counts "$plain"))" \
  test "$(leaf_counts "$plain")" == "p01-leaf01:3 p01-leaf02:3"
check "Slurm alone: no segment from fabricplace" bash -c "! grep -q 'fabricplace: --segment' plain.err"

ours=$(run_probe ours -N 6 --fabric-tp=4)
check "constrain: --segment=2, every TP group inside one leaf ($ours: $(leaf_counts "$ours"))" \
  test "$(leaf_counts "$ours")" == "p01-leaf01:2 p01-leaf02:2 p02-leaf01:2"
check "cli_filter.lua set the segment (sbatch -v)" \
  grep -qF "fabricplace: --segment=2 (groups of 2 nodes, topology/block)" ours.err
check "job_submit.lua made no per-leaf counts, and said why" \
  grep -qF "job ours: 6 nodes, TP groups of 2 nodes: no leaf has room for the whole job now; fabricplace proposed --segment=2, which keeps each TP group inside one leaf (cli_filter.lua sets it unless the job has its own); left to Slurm" \
  "$LAB_DIR/log/job_submit.log"

epseg=$(run_probe epseg -N 6 --fabric-ep=4)
check "constrain --fabric-ep=4: --segment=2, every EP group inside one leaf ($epseg: $(leaf_counts "$epseg"))" \
  test "$(leaf_counts "$epseg")" == "p01-leaf01:2 p01-leaf02:2 p02-leaf01:2"
check "  ... cli_filter.lua set the EP group's segment (sbatch -v)" \
  grep -qF "fabricplace: --segment=2 (groups of 2 nodes, topology/block)" epseg.err
check "  ... job_submit.lua named the EP groups" \
  grep -qF "job epseg: 6 nodes, EP groups of 2 nodes: no leaf has room for the whole job now; fabricplace proposed --segment=2, which keeps each EP group inside one leaf" \
  "$LAB_DIR/log/job_submit.log"

one=$(run_probe one -N 4 --fabric-tp=4)
check "a job one leaf holds gets that leaf ($one)" test "$one" == "node[009-012]"
check "job_submit.lua's one-leaf constraint" \
  grep -qF "job one: 4 nodes, TP groups of 2 nodes: features=p02-leaf01" "$LAB_DIR/log/job_submit.log"

own=$(run_probe own -N 6 --fabric-tp=4 --segment=3)
check "the job's own --segment wins ($own: $(leaf_counts "$own"))" \
  test "$(leaf_counts "$own")" == "p01-leaf01:3 p01-leaf02:3"
check "the job's own --segment: cli_filter.lua left it" bash -c "! grep -q 'fabricplace: --segment' own.err"

other=$(run_probe other -N 2)
check "a job without --fabric-tp runs untouched ($other)" test -n "$other"
check "a job without --fabric-tp: no segment" bash -c "! grep -q 'fabricplace: --segment' other.err"

# The segment is the submitting sbatch's answer to cli_filter.lua only: the job does not
# inherit it, so its own srun and sbatch get none (a 1-node sbatch with --segment=2 would be
# refused).
j=$(sbatch --parsable -N 6 --fabric-tp=4 -o inner.out --wrap \
      'echo "segment=${FABRICPLACE_SEGMENT:-unset}"; srun -N 1 -n 1 true && echo srun-ok; sbatch -N 1 -o /dev/null --wrap true >/dev/null && echo sbatch-ok' 2>inner.err)
wait_gone "$j" 60
check "a steered job inherits no segment; its srun and 1-node sbatch run ($(paste -sd' ' inner.out 2>/dev/null))" \
  test "$(grep -E '^(segment=|srun-ok|sbatch-ok)' inner.out 2>/dev/null | paste -sd' ')" == "segment=unset srun-ok sbatch-ok"
check "  ... its srun -N, which Slurm 23.11+ refuses with a node order, runs in Slurm's order, said" \
  grep -qF "srun: fabricplace: srun -N with a node order is refused by Slurm 23.11+ (--nodes is incompatible with --distribution=arbitrary); leave -N out (-n, --ntasks-per-node) for the ring order; srun keeps Slurm's order" inner.out
check "  ... its 1-node sbatch, whose inherited --fabric-tp does not fit, is submitted unsteered, said" \
  grep -qF "sbatch: fabricplace: --fabric-tp 4 inherited from the enclosing job does not fit this one (--fabric-tp 4 does not tile the job: 1 nodes x 2 GPUs per node = 2 GPUs, not a multiple of 4); it is submitted without fabricplace" inner.out

exact1=$(run_probe exact1 -N 4 --fabric-tp=4 --fabric-mode=exact)
check "exact: a one-leaf job is pinned ($exact1)" test "$exact1" == "node[009-012]"
check "exact: the pin went to job_submit.lua" \
  grep -qF "job exact1: exact mode: pinned to node[009-012]" "$LAB_DIR/log/job_submit.log"
exact6=$(run_probe exact6 -N 6 --fabric-tp=4 --fabric-mode=exact)
check "exact, 6 nodes: not pinned, the segment keeps the TP groups whole ($exact6: $(leaf_counts "$exact6"))" \
  test "$(leaf_counts "$exact6")" == "p01-leaf01:2 p01-leaf02:2 p02-leaf01:2"
check "exact, 6 nodes: the plugin says why" \
  grep -qF "exact mode on topology/block pins only a job inside one leaf; constrain mode instead (each TP group inside one leaf through --segment=2)" exact6.err
exactseg=$(run_probe exactseg -N 4 --fabric-tp=4 --fabric-mode=exact --segment=2)
check "exact with the job's own --segment=2: not pinned, runs, no TP group split ($exactseg: $(leaf_counts "$exactseg"))" \
  bash -c '[[ -n $1 ]] && ! grep -qE ":[13]( |$)" <<<"$2"' _ "$exactseg" "$(leaf_counts "$exactseg")"
check "exact with the job's own --segment: the plugin says why" \
  grep -qF "exact mode on topology/block pins no job that has its own --segment (Slurm refuses a node list with one); constrain mode instead" exactseg.err

# ---- slurm check knows what topology/block needs -------------------------------------------
out=$("$FABRICPLACE" slurm check 2>check.err); rc=$?
check "slurm check on this lab: it loads, no warning (rc $rc: $out $(cat check.err))" \
  bash -c '[[ $0 == 0 && ! -s check.err ]]' "$rc"
sed 's/ topology=block//' "$LAB_DIR/etc/plugstack.conf" >noblock.conf
"$FABRICPLACE" slurm check --plugstack noblock.conf >/dev/null 2>check.err
check "slurm check: TopologyPlugin=topology/block without topology=block is warned of ($(cat check.err))" \
  grep -qF "fabricplace: warning: noblock.conf:1: slurm.conf has TopologyPlugin=topology/block, but this line has no topology=block: job_submit.lua then asks for per-leaf node counts, which topology/block refuses at submission; add topology=block" check.err
grep -v '^CliFilterPlugins=' "$SLURM_CONF" >nocli.conf
"$FABRICPLACE" slurm check --slurm-conf nocli.conf >/dev/null 2>check.err
check "slurm check: topology=block without CliFilterPlugins=lua is warned of ($(cat check.err))" \
  grep -qF "fabricplace: warning: nocli.conf: topology=block ($LAB_DIR/etc/plugstack.conf:1), but no CliFilterPlugins=lua: without etc/cli_filter.lua, a --fabric-tp job gets no --segment" check.err

if [[ $fails -gt 0 ]]; then
  show_files "$LAB_DIR/log/job_submit.log" "$LAB_DIR/log/fabricplace.log" ./*.err
  LAB_KEEP=1
  exit 1
fi
echo "plugin_block: all checks passed"
