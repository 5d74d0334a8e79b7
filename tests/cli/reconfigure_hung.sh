#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# reconfigure_hung.sh FABRICPLACE: `slurm sync --reconfigure` with an `scontrol` that hangs
# (ignores SIGTERM, and leaves a child holding its output): the command returns at the bound
# (FABRICPLACE_RECONFIGURE_TIMEOUT, docs/operations.md) with an error that says what happened,
# and neither the fake scontrol nor its child is left running.
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$tmp/fakebin"
cat >"$tmp/fakebin/scontrol" <<SH
#!/bin/sh
trap '' TERM
echo \$\$ >"$tmp/scontrol.pid"
sleep 300 &
echo \$! >"$tmp/child.pid"
wait
SH
chmod +x "$tmp/fakebin/scontrol"
"$bin" fabric export fat2:leaves=2,down=2,up=2 --format json -o "$tmp/a.json"

start=$(date +%s)
rc=0
# The outer bound only keeps a broken build from hanging the test: the command must return
# by itself after its own 2 s bound.
PATH=$tmp/fakebin:$PATH FABRICPLACE_RECONFIGURE_TIMEOUT=2 \
  timeout -s KILL 30 "$bin" slurm sync --fabric "$tmp/a.json" --out "$tmp/etc" --reconfigure \
  >"$tmp/out.txt" 2>"$tmp/err.txt" || rc=$?
took=$(($(date +%s) - start))
[[ $rc == 1 ]] || fail "exit status $rc (137: still hung at 30 s), stderr: $(cat "$tmp/err.txt")"
((took <= 10)) || fail "returned after $took s, the bound is 2 s"
want='fabricplace: error: --reconfigure: `scontrol reconfigure` did not finish within 2 s: killed, with every process it started; check that slurmctld answers (`scontrol ping`) (the files are written; the next sync with --reconfigure tries again)'
[[ "$(cat "$tmp/err.txt")" == "$want" ]] || fail "stderr: $(cat "$tmp/err.txt")"
grep -q '^reconfigure: scontrol reconfigure' "$tmp/out.txt" || fail "stdout: $(cat "$tmp/out.txt")"
# alive PID: the process exists and is not a zombie (killed, not yet reaped by init).
alive() { [[ -r /proc/$1/stat ]] && [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]]; }
for p in scontrol child; do
  [[ -s "$tmp/$p.pid" ]] || fail "the fake scontrol did not run ($p.pid missing)"
  pid=$(cat "$tmp/$p.pid")
  for _ in 1 2 3 4 5 6 7 8 9 10; do alive "$pid" || break; sleep 0.2; done
  if alive "$pid"; then
    kill -KILL "$pid" 2>/dev/null || true
    fail "the fake scontrol's $p process is still running"
  fi
done
# The files were written, and the failed reconfigure is tried again next time.
[[ -e "$tmp/etc/topology.conf" ]] || fail "the files were not written"

# A bound that is not a number of seconds is refused, before scontrol runs.
rm -f "$tmp/scontrol.pid"
"$bin" fabric export fat2:leaves=3,down=2,up=2 --format json -o "$tmp/b.json"
for bad in 0 -1 abc 3601; do
  rc=0
  PATH=$tmp/fakebin:$PATH FABRICPLACE_RECONFIGURE_TIMEOUT=$bad \
    timeout -s KILL 30 "$bin" slurm sync --fabric "$tmp/b.json" --out "$tmp/etc" --reconfigure \
    >/dev/null 2>"$tmp/err.txt" || rc=$?
  [[ $rc == 2 ]] || fail "FABRICPLACE_RECONFIGURE_TIMEOUT=$bad: exit status $rc"
  [[ "$(cat "$tmp/err.txt")" == "fabricplace: error: FABRICPLACE_RECONFIGURE_TIMEOUT=\"$bad\": expected seconds from 1 to 3600 (unset: 60)" ]] ||
    fail "FABRICPLACE_RECONFIGURE_TIMEOUT=$bad: $(cat "$tmp/err.txt")"
  [[ ! -e "$tmp/scontrol.pid" ]] || fail "scontrol ran with FABRICPLACE_RECONFIGURE_TIMEOUT=$bad"
done
echo "ok"
