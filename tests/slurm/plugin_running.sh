#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# plugin_running.sh FABRICPLACE PLUGIN_SO JOB_SUBMIT_LUA [SPEC]: exact mode reads the running jobs from
# slurmctld (slurm_load_jobs, issue #14), on the Slurm lab:
#   - with nothing running, `sbatch -v --fabric-mode=exact` reads 0 running jobs;
#   - with a 2-node job, a 3-node job and a 2-task array job running (4 jobs on 7 hosts),
#     one job pending and one ended, it reads exactly the 4 running ones: `sbatch -v` and
#     the plugin's log say "exact mode: 4 running job(s) on 7 host(s) read from slurmctld"
#     (without -v sbatch says nothing of it), and a real exact job is pinned and runs;
#   - `fabricplace place --from-slurm` reads the same 4 jobs through squeue.
# Exit 77 (SKIP) where Slurm cannot run; never in CI.
set -uo pipefail
FABRICPLACE=${1:?usage: plugin_running.sh FABRICPLACE PLUGIN_SO JOB_SUBMIT_LUA [SPEC]}
PLUGIN=${2:?}
LUA=${3:?}  # exact mode's pin goes through it on Slurm 23.11+ (docs/slurm.md)
spec=${4:-fat3:pods=2,leaves=2,down=4,up=4}
# shellcheck source=tests/slurm/common.sh
. "$(dirname "$0")/common.sh"

lab_start_plugin "$spec" "$PLUGIN" "$LUA"
log=$LAB_DIR/log/fabricplace.log

# ---- nothing running ------------------------------------------------------------------------
out=$(sbatch -v --test-only -N 2 --fabric-tp=4 --fabric-mode=exact --wrap true 2>&1); rc=$?
check "nothing running: sbatch -v says 0 running jobs (rc $rc)" \
  grep -qF 'fabricplace: exact mode: 0 running job(s) on 0 host(s) read from slurmctld' <<<"$out"

# ---- an ended job, four running, one pending --------------------------------------------------
ended=$(sbatch --parsable -J ended -o /dev/null -w node016 -N 1 --wrap true)
wait_gone "$ended" 30 || echo "note: job $ended still listed"
a=$(sbatch --parsable -J a -o /dev/null -w 'node[001-002]' -N 2 --wrap 'sleep 600')
b=$(sbatch --parsable -J b -o /dev/null -w 'node[005,009-010]' -N 3 --wrap 'sleep 600')
arr=$(sbatch --parsable -J arr -o /dev/null --array=1-2 -N 1 --wrap 'sleep 600')  # 2 jobs, ids ${arr}_1, _2
started=1
for j in "$a" "$b"; do wait_running "$j" 30 || started=0; done
for _ in $(seq 1 150); do
  [[ $(squeue -h -t R -r -j "$arr" -o %i | wc -l) == 2 ]] && break
  sleep 0.2
done
check "the setup runs: jobs a, b and the array's two tasks, on 7 hosts ($(squeue -h -t R -o '%i %N' | paste -sd' '))" \
  test "$started $(squeue -h -t R -o %i | sort | paste -sd' ') $(squeue -h -t R -o %D | awk '{ s += $1 } END { print s + 0 }')" == \
       "1 $(printf '%s\n' "$a" "$b" "${arr}_1" "${arr}_2" | sort | paste -sd' ') 7"
pending=$(sbatch --parsable -J pending -o /dev/null -N 16 --wrap true)
check "a 16-node job pends" test "$(job_state "$pending")" == PENDING

# ---- fabricplace place --from-slurm reads them through squeue ---------------------------------
out=$("$FABRICPLACE" place --fabric "$LAB_DIR/etc/fabric.json" --from-slurm -N 2 2>&1 >/dev/null); rc=$?
check "place --from-slurm: squeue's 4 running jobs on 7 hosts (rc $rc: $out)" \
  grep -qxF 'fabricplace: squeue: 4 running job(s) on 7 host(s) read' <<<"$out"

# ---- exact mode reads them from slurmctld -----------------------------------------------------
out=$(sbatch -v --test-only -N 2 --fabric-tp=4 --fabric-mode=exact --wrap true 2>&1)
check "sbatch -v: exact mode read the 4 running jobs on 7 hosts, not the pending or ended one" \
  grep -qxF 'sbatch: fabricplace: exact mode: 4 running job(s) on 7 host(s) read from slurmctld' <<<"$out"
check "the plugin's log says so too" \
  grep -qE '^verbose pid=[0-9]+ ctx=[0-9]+ exact mode: 4 running job\(s\) on 7 host\(s\) read from slurmctld$' "$log"
check "without sbatch -v, sbatch says nothing of it" \
  test -z "$(sbatch --test-only -N 2 --fabric-tp=4 --fabric-mode=exact --wrap true 2>&1 | grep fabricplace)"
scancel "$pending"; wait_gone "$pending" 30
j=$(sbatch --parsable -v -J exact -o /dev/null -N 2 --fabric-tp=4 --fabric-mode=exact --wrap 'sleep 5' 2>exact.err)
check "a real submission reads them as well" \
  grep -qxF 'sbatch: fabricplace: exact mode: 4 running job(s) on 7 host(s) read from slurmctld' exact.err
wait_running "$j" 60 || echo "note: the exact job did not start: $(squeue -h -j "$j" -o '%T %r')"
pin=$(job_field "$j" ReqNodeList)
check "the exact job is pinned and runs on its pin ($pin: $(squeue -h -j "$j" -o %N))" \
  bash -c "[[ '$pin' == node* && '$(squeue -h -j "$j" -o %N)' == '$pin' ]]"
check "no error in the plugin's log" bash -c "! grep -q '^error' '$log'"

scancel "$a" "$b" "$arr" "$j" 2>/dev/null
if ((fails)); then
  show_files exact.err "$log"
  squeue -a -o '%i %T %N %r'
  LAB_KEEP=1
fi
echo "== $fails failed"
((fails == 0))
