#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# plugin_domains.sh FABRICPLACE PLUGIN_SO JOB_SUBMIT_LUA: --fabric-tp and --fabric-ep on a
# fabric with NVLink domains (issue #17), on the Slurm lab (nodes of "2 GPUs": --fabric-tp=4 is a TP group of 2
# nodes). 12 hosts, 2 leaves of 6, domains of 3 (nvl01 node[001-003], nvl02 node[004-006]
# under leaf01, nvl03 and nvl04 under leaf02). Free: node003 (nvl01), node004 (nvl02),
# node[010-012] (nvl04): leaf01's 2 free hosts are the tightest fit for Slurm.
#   - the nodes carry their domain as a feature (`fabric export --format slurm-features`);
#   - without fabricplace (mode off) Slurm takes node[003-004]: one leaf, two domains;
#   - constrain: job_submit.lua constrains the job to the domains that hold a group
#     (nvl04) and it runs on node[010-011]; exact pins the same two nodes;
#   - --fabric-ep=4 (an EP group of 2 nodes, TP a node's 2 GPUs) is kept in nvl04 the same
#     way, and its tasks get their EP group and rank in the ring order.
# Exit 77 (SKIP) where Slurm cannot run; never in CI.
set -uo pipefail
FABRICPLACE=${1:?usage: plugin_domains.sh FABRICPLACE PLUGIN_SO JOB_SUBMIT_LUA}
PLUGIN=${2:?}
LUA=${3:?}
spec=fat2:leaves=2,down=6,up=6,nvl=3,gpus=2
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"

lab_start_plugin "$spec" "$PLUGIN" "$LUA"

check "node010 carries its domain as a feature ($(scontrol show node node010 | grep -o 'AvailableFeatures=[^ ]*'))" \
  bash -c "scontrol show node node010 | grep -q 'AvailableFeatures=leaf02,nvl04'"

busy=$(sbatch --parsable -J busy -o /dev/null -w 'node[001-002,005-009]' -N 7 --wrap 'sleep 600')
wait_running "$busy" 30 || { echo "FAIL: the busy job did not start"; exit 1; }

plain=$(run_probe plain -N 2 --fabric-tp=4 --fabric-mode=off)
check "without fabricplace (mode off) Slurm takes node[003-004], a TP group over two domains ($plain)" \
  test "$plain" == "node[003-004]"
ours=$(run_probe ours -N 2 --fabric-tp=4)
check "constrain: node[010-011], the TP group inside nvl04 ($ours)" test "$ours" == "node[010-011]"
check "job_submit.lua logged the domain constraint" \
  grep -qF "2 nodes, TP groups of 2 nodes: features=nvl04" "$LAB_DIR/log/job_submit.log"
exact=$(run_probe exact -N 2 --fabric-tp=4 --fabric-mode=exact)
check "exact: node[010-011], the TP group inside nvl04 ($exact)" test "$exact" == "node[010-011]"
ep=$(run_probe ep -N 2 --fabric-ep=4)
check "constrain --fabric-ep=4: node[010-011], the EP group inside nvl04 ($ep)" test "$ep" == "node[010-011]"
check "job_submit.lua logged the EP groups' domain constraint" \
  grep -qF "2 nodes, EP groups of 2 nodes: features=nvl04" "$LAB_DIR/log/job_submit.log"
ep_exact=$(run_probe ep_exact -N 2 --fabric-ep=4 --fabric-mode=exact)
check "exact --fabric-ep=4: node[010-011] ($ep_exact)" test "$ep_exact" == "node[010-011]"
# The tasks of an EP job: 2 per node (a GPU each), TP groups of 2 ranks, one EP group of 4.
out=$LAB_DIR/ep-tasks.out
j=$(sbatch --parsable -J eptasks -o "$out" -N 2 --ntasks-per-node=2 --fabric-ep=4 \
  --fabric-rankfile="$LAB_DIR/ep" \
  --wrap 'srun bash -c "echo \$FABRICPLACE_RING_RANK \$(hostname) \$FABRICPLACE_TP_GROUP \$FABRICPLACE_TP_RANK \${FABRICPLACE_EP_GROUP:-unset} \${FABRICPLACE_EP_RANK:-unset}"')
wait_gone "$j" 60
want="0 node010 0 0 0 0
1 node010 0 1 0 1
2 node011 1 0 0 2
3 node011 1 1 0 3"
check "--fabric-ep tasks: ring rank, TP group/rank and EP group/rank ($(tr '\n' ';' <"$out"))" \
  test "$(sort -n "$out")" == "$want"
# The batch step's rank files say what `fabricplace rankfile` says for these hosts: the two
# share an NVLink domain, so NCCL must use Multi-Node NVLink.
check "--fabric-ep rank files: NCCL_MNNVL_ENABLE=1 in the torchrun env ($(grep -c NCCL "$LAB_DIR/ep.torchrun.env" 2>/dev/null) NCCL lines)" \
  grep -qx 'NCCL_MNNVL_ENABLE=1' "$LAB_DIR/ep.torchrun.env"
# Inside an EP job, an sbatch with its own --fabric-tp: the inherited --fabric-ep 4 does not
# fit one node and is left out, said; the command's own TP 2 is checked alone and accepted.
inner=$LAB_DIR/ep-inner.out
j=$(sbatch --parsable -J epinner -o "$inner" -N 2 --fabric-ep=4 \
  --wrap 'sbatch -N 1 --fabric-tp=2 -o /dev/null --wrap true >/dev/null && echo inner-ok')
wait_gone "$j" 60
check "an inner sbatch with its own --fabric-tp runs; the inherited --fabric-ep is left out, said ($(tr '\n' ';' <"$inner"))" \
  bash -c 'grep -qx inner-ok "$1" && grep -qF "sbatch: fabricplace: --fabric-ep 4 inherited from the enclosing job does not fit this one (--fabric-ep 4 does not tile the job: 2 GPUs are not a multiple of 4); it is left out" "$1"' _ "$inner"
scancel "$busy" 2>/dev/null
[[ $fails == 0 ]] || { LAB_KEEP=1; tail -20 "$LAB_DIR/log/job_submit.log"; }
echo "plugin_domains: $fails failure(s)"
exit $((fails > 0))
