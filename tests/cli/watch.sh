#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# watch.sh FABRICPLACE: `fabric watch` on re-imported fabrics (the ibsim test covers live
# discovery): exit codes, what it says, the metrics file of every run (promtool), and the
# --interval loop stopped by SIGTERM.
#   - run 1 accepts the fabric and syncs; run 2 (a link degraded) says it and re-syncs only
#     fabric.json; run 3 (the source gone) exits 1, keeps the accepted fabric, and its metrics
#     say fabricplace_discovery_accepted 0 with the accepted fabric's health; run 4 (the link
#     back) says recovered and flapping;
#   - the metrics file: a FIFO refused, a link planted in a directory others may write
#     replaced (its target untouched), a link in the user's own directory followed;
#   - a bad state file is an error naming it; --interval 1 runs until SIGTERM, then exits 0,
#     or stops at once with exit 2 on a usage error (a file sync did not write).
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v promtool >/dev/null || fail "no promtool (Debian package prometheus; scripts/install-deps.sh)"
promcheck() {
  promtool check metrics <"$tmp/m.prom" >"$tmp/promtool.txt" 2>&1 && [[ ! -s $tmp/promtool.txt ]] ||
    fail "promtool check metrics after $1: $(cat "$tmp/promtool.txt")"
}
"$bin" fabric export 'fat2:leaves=2,down=2,up=2' --format json -o "$tmp/good.json"
sed '0,/"4xHDR"\]/s//"1xHDR"]/' "$tmp/good.json" >"$tmp/bad.json"
cp "$tmp/good.json" "$tmp/now.json"
w=("$bin" fabric watch --state "$tmp/state" --sync-out "$tmp/etc" --metrics "$tmp/m.prom" "$tmp/now.json")

"${w[@]}" >"$tmp/1.txt"
grep -qx "fabric watch: run 1: first fabric accepted: 4 hosts, 3 switches, 8 links (spec fat2:leaves=2,down=2,up=2)" "$tmp/1.txt" ||
  fail "run 1: $(cat "$tmp/1.txt")"
[[ -L $tmp/etc/topology.conf && -f $tmp/state/accepted.json ]] || fail "run 1 did not sync or accept"
promcheck "run 1"
grep -qx "fabricplace_discovery_accepted 1" "$tmp/m.prom" || fail "run 1: not accepted in the metrics"

cp "$tmp/bad.json" "$tmp/now.json"
"${w[@]}" >"$tmp/2.txt"
grep -qx "fabric watch: run 2: degraded node001 mlx5_0\[1\] - leaf01\[1\]: 4xHDR -> 1xHDR" "$tmp/2.txt" || fail "run 2: $(cat "$tmp/2.txt")"
[[ $(grep -c "  changed  " "$tmp/2.txt") == 1 ]] && grep -q "  changed  fabric.json" "$tmp/2.txt" || fail "run 2 synced more than fabric.json: $(cat "$tmp/2.txt")"
grep -qx "fabricplace_degraded_links 1" "$tmp/m.prom" || fail "run 2: the metrics lack the degraded link"
promcheck "run 2"

mv "$tmp/now.json" "$tmp/away.json"
rc=0; "${w[@]}" >"$tmp/3.txt" 2>&1 || rc=$?
[[ $rc == 1 ]] && grep -q "fabric watch: run 3: discovery failed: .*now.json.*; the accepted fabric stays" "$tmp/3.txt" ||
  fail "run 3 (no source): rc=$rc $(cat "$tmp/3.txt")"
grep -qx "fabricplace_discovery_accepted 0" "$tmp/m.prom" && grep -qx "fabricplace_degraded_links 1" "$tmp/m.prom" &&
  grep -qx "fabricplace_discoveries_total 3" "$tmp/m.prom" || fail "run 3: the metrics do not say rejected: $(grep discover "$tmp/m.prom")"
promcheck "run 3"

cp "$tmp/good.json" "$tmp/now.json"
"${w[@]}" >"$tmp/4.txt"
grep -qx "fabric watch: run 4: recovered node001 mlx5_0\[1\] - leaf01\[1\]: 1xHDR -> 4xHDR" "$tmp/4.txt" &&
  grep -qx "fabric watch: run 4: flapping node001 mlx5_0\[1\] - leaf01\[1\]: 2 changes in the last 10 runs: degraded (run 2), recovered (run 4)" "$tmp/4.txt" ||
  fail "run 4: $(cat "$tmp/4.txt")"
grep -qx "fabricplace_discovery_flapping_links 1" "$tmp/m.prom" || fail "run 4: flapping links not 1"
promcheck "run 4"

# The metrics file: a FIFO at its name is refused at once (no run hangs holding the lock); in
# a directory others may write (node_exporter's may be another account's), a link planted at
# its name is replaced, its target untouched; in the user's own directory a link is followed.
mkfifo "$tmp/fifo.prom"
rc=0; timeout 20 "$bin" fabric watch --state "$tmp/state" --metrics "$tmp/fifo.prom" "$tmp/now.json" >"$tmp/5.txt" 2>&1 || rc=$?
[[ $rc == 1 ]] && grep -q "$tmp/fifo.prom: is a FIFO or a socket: fabric watch writes its metrics only to a regular file" "$tmp/5.txt" ||
  fail "--metrics on a FIFO: rc=$rc $(cat "$tmp/5.txt")"
mkdir -p "$tmp/textfile" && chmod 1777 "$tmp/textfile"
mkfifo "$tmp/textfile/fabricplace.prom"  # planted where others may write: replaced, never opened
rc=0; timeout 20 "$bin" fabric watch --state "$tmp/state" --metrics "$tmp/textfile/fabricplace.prom" "$tmp/now.json" >"$tmp/5.txt" 2>&1 || rc=$?
[[ $rc == 0 && -f $tmp/textfile/fabricplace.prom && ! -p $tmp/textfile/fabricplace.prom ]] ||
  fail "--metrics on a FIFO planted in a directory others may write: rc=$rc $(cat "$tmp/5.txt")"
rm "$tmp/textfile/fabricplace.prom"
echo precious >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/textfile/fabricplace.prom"
"$bin" fabric watch --state "$tmp/state" --metrics "$tmp/textfile/fabricplace.prom" "$tmp/now.json" >/dev/null
[[ $(cat "$tmp/victim") == precious && -f $tmp/textfile/fabricplace.prom && ! -L $tmp/textfile/fabricplace.prom ]] ||
  fail "--metrics through a link planted in a directory others may write"
"$bin" fabric metrics "$tmp/now.json" -o "$tmp/textfile/fabricplace.prom"
ln -sf "$tmp/victim" "$tmp/textfile/fabricplace.prom"
"$bin" fabric metrics "$tmp/now.json" -o "$tmp/textfile/fabricplace.prom"
[[ $(cat "$tmp/victim") == precious && ! -L $tmp/textfile/fabricplace.prom ]] || fail "fabric metrics -o through a planted link"
mkdir -p "$tmp/mine" && chmod 0755 "$tmp/mine"
ln -s "$tmp/mine-target.prom" "$tmp/mine/fabricplace.prom"
"$bin" fabric metrics "$tmp/now.json" -o "$tmp/mine/fabricplace.prom"
[[ -L $tmp/mine/fabricplace.prom ]] && grep -q '^fabricplace_' "$tmp/mine-target.prom" ||
  fail "fabric metrics -o: a link in the user's own directory was not followed"

echo '{"runs": "x"}' >"$tmp/state/watch.json"
rc=0; "${w[@]}" >/dev/null 2>"$tmp/err.txt" || rc=$?
[[ $rc == 1 ]] && grep -q "$tmp/state/watch.json:1: \"runs\": expected a count" "$tmp/err.txt" || fail "a bad state file: rc=$rc $(cat "$tmp/err.txt")"
rm "$tmp/state/watch.json"

"${w[@]}" --interval 1 >"$tmp/loop.txt" 2>&1 &
pid=$!
for _ in $(seq 100); do [[ $(grep -c ": run " "$tmp/loop.txt") -ge 2 ]] && break; sleep 0.1; done
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
[[ $rc == 0 ]] && grep -qx "fabric watch: stopped" "$tmp/loop.txt" && [[ $(grep -c "no change" "$tmp/loop.txt") -ge 2 ]] ||
  fail "--interval 1 then SIGTERM: rc=$rc $(cat "$tmp/loop.txt")"
# A file sync did not write in the sync directory: a usage error, which stops the loop (exit 2).
mkdir -p "$tmp/etc2" && echo "SwitchName=s Nodes=x" >"$tmp/etc2/topology.conf"
rc=0; timeout 20 "$bin" fabric watch --state "$tmp/state2" --sync-out "$tmp/etc2" --interval 1 "$tmp/now.json" >"$tmp/loop2.txt" 2>&1 || rc=$?
[[ $rc == 2 ]] && grep -q "run 1: slurm sync failed: $tmp/etc2/topology.conf: exists and was not written by slurm sync" "$tmp/loop2.txt" ||
  fail "a conflict in --interval mode: rc=$rc $(cat "$tmp/loop2.txt")"
echo "ok: fabric watch: 4 runs and a loop, metrics valid after each"
