#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# mpirun_retry.sh OUT ERR MPIRUN-ARGS...: `timeout 120 mpirun MPIRUN-ARGS` with stdout in
# OUT and stderr in ERR; exits with mpirun's status. Open MPI 4.1's runtime on a loaded
# 2-core VM that also runs 16 slurmd now and then loses an orted ("ORTE has lost
# communication with a remote daemon"), and Open MPI 5's (Debian 13, the 24.11 chroot) now
# and then hangs after every rank has run (seen once: `--map-by seq`, ranks right, killed by
# the timeout): for that message, or a run the timeout ended (124), it tries once more, and
# says so on stderr. A second failure is mpirun's status.
out=$1 err=$2
shift 2
for attempt in 1 2; do
  timeout 120 mpirun "$@" >"$out" 2>"$err"
  rc=$?
  if [[ $rc == 124 ]]; then
    echo "mpirun_retry: attempt $attempt: mpirun did not end within 120 s; retrying" >&2
    continue
  fi
  grep -q "lost communication with a remote daemon" "$err" || break
  echo "mpirun_retry: attempt $attempt: ORTE lost a daemon; retrying" >&2
done
exit $rc
