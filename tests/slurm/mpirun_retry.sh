#!/usr/bin/env bash
# mpirun_retry.sh OUT ERR MPIRUN-ARGS...: `timeout 120 mpirun MPIRUN-ARGS` with stdout in
# OUT and stderr in ERR; exits with mpirun's status. Open MPI 4.1's runtime on a loaded
# 2-core VM that also runs 16 slurmd now and then loses an orted ("ORTE has lost
# communication with a remote daemon"): for that message alone it tries once more, and
# says so on stderr.
out=$1 err=$2
shift 2
for attempt in 1 2; do
  timeout 120 mpirun "$@" >"$out" 2>"$err"
  rc=$?
  grep -q "lost communication with a remote daemon" "$err" || break
  echo "mpirun_retry: attempt $attempt: ORTE lost a daemon; retrying" >&2
done
exit $rc
