#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# slurm_sync.sh FABRICPLACE: `fabricplace slurm sync` writes every Slurm-side file as one set.
#   - the first sync writes the six files, each stamped with one generation, and links them;
#   - a second sync of the same fabric changes nothing ("no change", exit 0, same snapshot);
#   - a degraded link changes exactly fabric.json, keeps the generation, and the report names
#     the link; a host lost changes the generation and every structural file;
#   - --dry-run writes nothing; a file sync did not write is refused (exit 2, named) and
#     --replace keeps it in .fabricplace/replaced/; topology tree -> yaml drops topology.conf;
#     a plugstack line that is not sync's but reads this directory's fabric.json (the
#     package's conffile) is kept, untouched, with what it lacks said;
#   - a fabric with no host under a leaf or an incomplete one writes nothing;
#   - killed (strace injects SIGKILL) before each call of every system call that changes the
#     directory, the sync leaves the previous set whole (all files of one snapshot, byte for
#     byte the old set) or the new one whole, and the next sync completes and cleans up.
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
files=(fabric.json fabric.hostmap fabric.lua topology.conf fabricplace-nodes.conf plugstack.conf.d/fabricplace.conf)

"$bin" fabric export 'fat3:pods=2,leaves=2,down=4,up=2' --format json -o "$tmp/a.json"
"$bin" fabric export 'fat3:pods=2,leaves=2,down=3,up=2' --format json -o "$tmp/b.json"
# a.json with node001's link at 1x: link health only.
sed '0,/"4xHDR"\]/s//"1xHDR"]/' "$tmp/a.json" >"$tmp/a-degraded.json"
cmp -s "$tmp/a.json" "$tmp/a-degraded.json" && fail "the test did not degrade a link"

gen_of() { sed -n 's/^# generation: //p' "$1/fabric.hostmap"; }
check_set() {  # DIR: every file readable through its link, one generation in each
  local d=$1 g f
  g=$(gen_of "$d")
  [[ $g =~ ^[0-9a-f]{16}$ ]] || fail "$d/fabric.hostmap has no generation"
  for f in "${files[@]}"; do
    [[ -L $d/$f ]] || fail "$d/$f is not sync's link"
    grep -q "$g" "$d/$f" || fail "$d/$f does not carry generation $g"
  done
  [[ $(grep -c '"generation": "'"$g"'"' "$d/fabric.json") == 1 ]] || fail "fabric.json's generation is not $g"
  grep -q "generation = \"$g\"" "$d/fabric.lua" || fail "fabric.lua's table has no generation $g"
}

# ---- first sync, second sync ----------------------------------------------------------
d=$tmp/etc
"$bin" slurm sync --fabric "$tmp/a.json" --out "$d" >"$tmp/out1.txt"
grep -q "(first sync)" "$tmp/out1.txt" || fail "first sync: $(cat "$tmp/out1.txt")"
check_set "$d"
gen_a=$(gen_of "$d")
grep -qx "optional .*/fabricplace.so fabric=$d/fabric.json hostmap=$d/fabric.hostmap" "$d/plugstack.conf.d/fabricplace.conf" ||
  fail "plugstack line: $(grep optional "$d/plugstack.conf.d/fabricplace.conf")"
diff <("$bin" fabric export "$tmp/a.json" --format slurm-topology | grep -v '^#' | sed 's/ LinkSpeed=[0-9]*//') \
  <(grep -v '^#' "$d/topology.conf") >/dev/null || fail "topology.conf is not the slurm-topology export (without LinkSpeed)"
grep -q "^SwitchName=.*LinkSpeed=" "$d/topology.conf" && fail "sync's topology.conf has LinkSpeed= (link health would rewrite it)"
"$bin" place --fabric "$d/fabric.json" --nodes 2 >/dev/null || fail "the synced fabric.json does not read back"
# NVLink domains (#17): the blocks and features name them, the plugin gets their GPU count.
nd=$tmp/nvl
"$bin" slurm sync --fabric 'fat2:leaves=2,down=6,up=6,nvl=3,gpus=4' --topology block --out "$nd" >/dev/null ||
  fail "sync of a fabric with domains"
grep -q " gpus_per_node=4$" "$nd/plugstack.conf.d/fabricplace.conf" ||
  fail "plugstack line without the domains' GPUs: $(grep optional "$nd/plugstack.conf.d/fabricplace.conf")"
grep -qx "BlockName=nvl02 Nodes=node\[004-006\]" "$nd/topology.conf" || fail "topology.conf: $(grep Block "$nd/topology.conf")"
grep -q "^NodeName=node\[004-006\] Features=leaf01,nvl02" "$nd/fabricplace-nodes.conf" ||
  fail "nodes: $(grep NodeName "$nd/fabricplace-nodes.conf")"
snap1=$(readlink "$d/.fabricplace/current")
"$bin" slurm sync --fabric "$tmp/a.json" --out "$d" >"$tmp/out2.txt"
[[ $(cat "$tmp/out2.txt") == "slurm sync: $d: no change (generation $gen_a)" ]] || fail "second sync: $(cat "$tmp/out2.txt")"
[[ $(readlink "$d/.fabricplace/current") == "$snap1" ]] || fail "a sync with no change made a new snapshot"
# Modes are set, not the umask's: slurmctld and users' sruns read these files.
u=$tmp/umask
(umask 077 && "$bin" slurm sync --fabric "$tmp/a.json" --out "$u" >/dev/null)
modes=$(cd "$u" && stat -L -c '%a %n' .fabricplace .fabricplace/current fabric.hostmap topology.conf plugstack.conf.d plugstack.conf.d/fabricplace.conf | paste -sd' ')
[[ $modes == "755 .fabricplace 755 .fabricplace/current 644 fabric.hostmap 644 topology.conf 755 plugstack.conf.d 644 plugstack.conf.d/fabricplace.conf" ]] ||
  fail "modes under umask 077: $modes"

# ---- a degraded link: fabric.json only --------------------------------------------------
"$bin" slurm sync --fabric "$tmp/a-degraded.json" --out "$d" --dry-run >"$tmp/dry.txt"
[[ $(readlink "$d/.fabricplace/current") == "$snap1" ]] || fail "--dry-run wrote a snapshot"
grep -q "would be changed  fabric.json" "$tmp/dry.txt" || fail "dry run: $(cat "$tmp/dry.txt")"
"$bin" slurm sync --fabric "$tmp/a-degraded.json" --out "$d" >"$tmp/out3.txt"
changed=$(sed -n 's/^  \(added\|changed\|removed\)  //p' "$tmp/out3.txt")
[[ $changed == fabric.json ]] || fail "a degraded link changed: $changed"
[[ $(gen_of "$d") == "$gen_a" ]] || fail "link health changed the generation"
grep -q "degraded.*node001.*4xHDR -> 1xHDR\|node001.*degraded" "$tmp/out3.txt" || fail "the report does not name the degraded link: $(cat "$tmp/out3.txt")"
check_set "$d"
[[ $(ls "$d/.fabricplace" | grep -c '^snapshot\.') == 2 ]] || fail "expected the live and the previous snapshot: $(ls "$d/.fabricplace")"

# ---- a host lost: a new generation, every structural file -------------------------------
"$bin" slurm sync --fabric "$tmp/b.json" --out "$d" >"$tmp/out4.txt"
gen_b=$(gen_of "$d")
[[ $gen_b != "$gen_a" ]] || fail "fewer hosts kept the generation"
grep -q "generation $gen_b (was $gen_a)" "$tmp/out4.txt" || fail "report: $(head -1 "$tmp/out4.txt")"
for f in "${files[@]}"; do
  [[ $f == plugstack.conf.d/fabricplace.conf ]] && continue  # paths only: stamped, else alike
  grep -q "changed  $f" "$tmp/out4.txt" || fail "$f not reported changed: $(cat "$tmp/out4.txt")"
done
check_set "$d"
[[ $(ls "$d/.fabricplace" | grep -c '^snapshot\.') == 2 ]] || fail "old snapshots not pruned: $(ls "$d/.fabricplace")"
"$bin" slurm sync --fabric "$tmp/b.json" --out "$d" >/dev/null
[[ $(ls "$d/.fabricplace" | grep -c '^snapshot\.') == 2 ]] || fail "a sync with no change dropped the previous snapshot: $(ls "$d/.fabricplace")"

# ---- what does not change the set: raw counters, the plugin's arguments ------------------
c=$tmp/counters
h=$(dirname "$0")/../data/fabrics/health_fat2.json
"$bin" slurm sync --fabric "$h" --out "$c" >/dev/null
grep -q '"counters"' "$c/fabric.json" && fail "sync's fabric.json has raw counters"
grep -q 'SymbolErrorCounter 250 > 100' "$c/fabric.json" || fail "sync's fabric.json lost the counters' verdicts"
sed 's/"SymbolErrorCounter": 250/"SymbolErrorCounter": 300/' "$h" >"$tmp/more-errors.json"
out=$("$bin" slurm sync --fabric "$tmp/more-errors.json" --out "$c")
[[ $out == *"no change"* ]] || fail "a counter that moved changed the set: $out"
gen_c=$(gen_of "$c")
"$bin" slurm sync --fabric "$h" --out "$c" --plugin-args "gpus_per_node=4" >"$tmp/args.txt"
[[ $(gen_of "$c") == "$gen_c" ]] || fail "the plugin's arguments changed the generation"
[[ $(sed -n 's/^  \(added\|changed\|removed\)  //p' "$tmp/args.txt") == plugstack.conf.d/fabricplace.conf ]] ||
  fail "new plugin arguments changed more than the plugin's line: $(cat "$tmp/args.txt")"

# ---- what sync did not write; tree -> yaml; block ---------------------------------------
e=$tmp/etc2
mkdir -p "$e" && echo "SwitchName=s1 Nodes=x" >"$e/topology.conf"
echo "return {}" >"$e/fabric.lua"
rc=0; "$bin" slurm sync --fabric "$tmp/a.json" --out "$e" --dry-run >"$tmp/dry2.txt" 2>"$tmp/err.txt" || rc=$?
[[ $rc == 2 ]] && grep -q "not written by slurm sync, so a real run refuses them without --replace: $e/fabric.lua, $e/topology.conf" "$tmp/err.txt" &&
  grep -q "linked  $e/topology.conf -> .fabricplace/current/topology.conf (CONFLICT" "$tmp/dry2.txt" ||
  fail "--dry-run with two hand-written files: rc=$rc $(cat "$tmp/err.txt" "$tmp/dry2.txt")"
rm "$e/fabric.lua"
rc=0; "$bin" slurm sync --fabric "$tmp/a.json" --out "$e" 2>"$tmp/err.txt" || rc=$?
[[ $rc == 2 ]] && grep -q "$e/topology.conf: exists and was not written by slurm sync" "$tmp/err.txt" ||
  fail "a hand-written topology.conf: rc=$rc $(cat "$tmp/err.txt")"
[[ ! -e $e/.fabricplace/current ]] || fail "a refused sync wrote a snapshot"
"$bin" slurm sync --fabric "$tmp/a.json" --out "$e" --replace >/dev/null
grep -qx "SwitchName=s1 Nodes=x" "$e"/.fabricplace/replaced/topology.conf.* || fail "--replace did not keep the old file"
check_set "$e"
"$bin" slurm sync --fabric "$tmp/a.json" --out "$e" --topology yaml >"$tmp/out5.txt"
[[ ! -e $e/topology.conf && ! -L $e/topology.conf && -L $e/topology.yaml ]] || fail "tree -> yaml: $(ls -l "$e")"
grep -q "removed  topology.conf" "$tmp/out5.txt" && grep -q "added  topology.yaml" "$tmp/out5.txt" || fail "tree -> yaml: $(cat "$tmp/out5.txt")"
"$bin" slurm sync --fabric "$tmp/a.json" --out "$e" --topology block --plugin-args "gpus_per_node=4" --node-params "CPUs=2 State=UNKNOWN" >/dev/null
grep -q "^BlockName=" "$e/topology.conf" || fail "--topology block: no BlockName"
grep -q " topology=block gpus_per_node=4$" "$e/plugstack.conf.d/fabricplace.conf" || fail "block plugstack line: $(grep optional "$e/plugstack.conf.d/fabricplace.conf")"
grep -qx "NodeName=node\[001-004\] Features=p01-leaf01,p01-spine01-02 CPUs=2 State=UNKNOWN" "$e/fabricplace-nodes.conf" || fail "--node-params: $(grep ^NodeName "$e/fabricplace-nodes.conf" | head -2)"
rc=0; "$bin" slurm sync --fabric "$tmp/a.json" --out "$e" --plugin-args "fabric=/x" 2>/dev/null || rc=$?
[[ $rc == 2 ]] || fail "--plugin-args fabric= accepted (rc=$rc)"

# ---- the package's plugstack line: kept when it reads this directory's fabric.json -------
g=$tmp/etc4
mkdir -p "$g/plugstack.conf.d"
echo "optional /usr/lib/x86_64-linux-gnu/slurm-wlm/fabricplace.so fabric=$g/fabric.json" >"$g/plugstack.conf.d/fabricplace.conf"
cp "$g/plugstack.conf.d/fabricplace.conf" "$tmp/pkg.conf"
"$bin" slurm sync --fabric "$tmp/a.json" --out "$g" --topology block --plugin /usr/lib/fabricplace.so --plugin-args gpus_per_node=4 >"$tmp/out6.txt"
grep -q "kept  $g/plugstack.conf.d/fabricplace.conf: not sync's (a package's or an admin's), and its plugin line reads $g/fabric.json; but it lacks the plugin /usr/lib/fabricplace.so (it loads /usr/lib/x86_64-linux-gnu/slurm-wlm/fabricplace.so), topology=block, gpus_per_node=4 (edit it" "$tmp/out6.txt" ||
  fail "the package's plugstack line: $(cat "$tmp/out6.txt")"
[[ ! -L $g/plugstack.conf.d/fabricplace.conf ]] && cmp -s "$tmp/pkg.conf" "$g/plugstack.conf.d/fabricplace.conf" || fail "the package's plugstack line was touched"
[[ -L $g/topology.conf ]] || fail "with a kept plugstack line, the rest was not linked"
echo "optional /usr/lib/x86_64-linux-gnu/slurm-wlm/fabricplace.so fabric=/elsewhere/fabric.json" >"$g/plugstack.conf.d/fabricplace.conf"
rc=0; "$bin" slurm sync --fabric "$tmp/b.json" --out "$g" 2>"$tmp/err.txt" >/dev/null || rc=$?
[[ $rc == 2 ]] && grep -q "$g/plugstack.conf.d/fabricplace.conf: exists and was not written by slurm sync" "$tmp/err.txt" ||
  fail "a plugstack line reading another fabric.json: rc=$rc $(cat "$tmp/err.txt")"

# ---- --out: not a file, no blank; --reconfigure until it succeeds ------------------------
: >"$tmp/plain-file"
for dry in "" --dry-run; do
  rc=0; "$bin" slurm sync --fabric "$tmp/a.json" --out "$tmp/plain-file" $dry 2>"$tmp/err.txt" >/dev/null || rc=$?
  [[ $rc == 2 ]] && grep -q "$tmp/plain-file: exists and is not a directory" "$tmp/err.txt" || fail "--out a file $dry: rc=$rc $(cat "$tmp/err.txt")"
done
rc=0; "$bin" slurm sync --fabric "$tmp/a.json" --out "$tmp/my dir" 2>"$tmp/err.txt" >/dev/null || rc=$?
[[ $rc == 2 && ! -e "$tmp/my dir" ]] && grep -q "a blank or a tab in the path" "$tmp/err.txt" || fail "--out with a blank: rc=$rc $(cat "$tmp/err.txt")"
mkdir -p "$tmp/fakebin"
printf '#!/bin/sh\necho "$*" >>"%s/scontrol.log"\n[ ! -e "%s/scontrol.fails" ]\n' "$tmp" "$tmp" >"$tmp/fakebin/scontrol"
chmod +x "$tmp/fakebin/scontrol"
r=$tmp/reconf
touch "$tmp/scontrol.fails"
rc=0; PATH=$tmp/fakebin:$PATH "$bin" slurm sync --fabric "$tmp/a.json" --out "$r" --reconfigure >"$tmp/r1.txt" 2>"$tmp/err.txt" || rc=$?
[[ $rc == 1 ]] && grep -q "tries again" "$tmp/err.txt" || fail "a failed reconfigure: rc=$rc $(cat "$tmp/err.txt")"
rm "$tmp/scontrol.fails"
PATH=$tmp/fakebin:$PATH "$bin" slurm sync --fabric "$tmp/a.json" --out "$r" --reconfigure >"$tmp/r2.txt"
grep -q "no change" "$tmp/r2.txt" && grep -q "^reconfigure: scontrol reconfigure" "$tmp/r2.txt" ||
  fail "a sync with no change did not retry the failed reconfigure: $(cat "$tmp/r2.txt")"
PATH=$tmp/fakebin:$PATH "$bin" slurm sync --fabric "$tmp/a.json" --out "$r" --reconfigure >"$tmp/r3.txt"
grep -q "^reconfigure: not needed" "$tmp/r3.txt" || fail "reconfigured twice: $(cat "$tmp/r3.txt")"
PATH=$tmp/fakebin:$PATH "$bin" slurm sync --fabric "$tmp/a-degraded.json" --out "$r" --reconfigure >"$tmp/r4.txt"
grep -q "^reconfigure: not needed" "$tmp/r4.txt" || fail "link health reconfigured slurmctld: $(cat "$tmp/r4.txt")"
[[ $(grep -c reconfigure "$tmp/scontrol.log") == 2 ]] || fail "scontrol ran $(grep -c reconfigure "$tmp/scontrol.log") times, expected 2 (one failed)"

# ---- nothing written from a fabric Slurm cannot use -----------------------------------
f=$tmp/etc3
rc=0; "$bin" slurm sync --fabric "$(dirname "$0")/../data/fabrics/no_leaf_two_hosts.json" --out "$f" 2>"$tmp/err.txt" || rc=$?
[[ $rc != 0 && ! -e $f/.fabricplace/current ]] || fail "a fabric with no host under a leaf was synced"
grep -q "leaf" "$tmp/err.txt" || fail "no-leaf error: $(cat "$tmp/err.txt")"

# ---- killed at every step --------------------------------------------------------------
command -v strace >/dev/null || fail "no strace (scripts/install-deps.sh installs it)"
k=$tmp/kill
"$bin" slurm sync --fabric "$tmp/a.json" --out "$k" >/dev/null
mkdir -p "$tmp/ref-a" "$tmp/ref-b"
for f in "${files[@]}"; do install -D "$k/$f" "$tmp/ref-a/$f"; done
"$bin" slurm sync --fabric "$tmp/b.json" --out "$k" >/dev/null
for f in "${files[@]}"; do install -D "$k/$f" "$tmp/ref-b/$f"; done
same_as() { local f; for f in "${files[@]}"; do cmp -s "$k/$f" "$1/$f" || return 1; done; }
kills=0
for sc in mkdir mkdirat openat write fsync rename renameat symlink symlinkat unlink unlinkat rmdir; do
  for ((n = 1; ; n++)); do
    "$bin" slurm sync --fabric "$tmp/a.json" --out "$k" >/dev/null  # the old set, live
    rc=0
    { strace -o /dev/null -e trace="$sc" -e inject="$sc":signal=KILL:when=$n \
      "$bin" slurm sync --fabric "$tmp/b.json" --out "$k" >/dev/null 2>&1; } 2>/dev/null || rc=$?
    if [[ $rc == 0 ]]; then same_as "$tmp/ref-b" || fail "$sc #$n: a sync that finished left another set"; break; fi
    [[ $rc == 137 ]] || fail "$sc #$n: the sync exited $rc, not killed"
    kills=$((kills + 1))
    same_as "$tmp/ref-a" || same_as "$tmp/ref-b" || fail "killed before $sc #$n: neither the old set nor the new one is whole"
    "$bin" slurm sync --fabric "$tmp/b.json" --out "$k" >/dev/null || fail "after a kill at $sc #$n, the next sync failed"
    same_as "$tmp/ref-b" || fail "after a kill at $sc #$n, the next sync did not write the new set"
    leftovers=$(find "$k" -name '*fabricplace-tmp*' -o -name '.*.tmp.[0-9]*' -o -path "$k/.fabricplace/tmp.*" | head -3)
    [[ -z $leftovers ]] || fail "after a kill at $sc #$n, the next sync left $leftovers"
    ((n < 200)) || fail "$sc: more than 200 calls"
  done
done
((kills > 30)) || fail "only $kills kill points: strace injection did not take"
# The first sync, and --replace over a hand-written topology.conf: killed anywhere, the
# directory has no set or a whole one, and topology.conf is always there (the old file or
# the new link), never missing.
first_kills=0
for sc in mkdir mkdirat openat write fsync rename renameat symlink symlinkat link linkat unlink unlinkat; do
  for ((n = 1; ; n++)); do
    rm -rf "$k" && mkdir -p "$k" && echo "SwitchName=hand Nodes=node001" >"$k/topology.conf"
    rc=0
    { strace -o /dev/null -e trace="$sc" -e inject="$sc":signal=KILL:when=$n \
      "$bin" slurm sync --fabric "$tmp/b.json" --out "$k" --replace >/dev/null 2>&1; } 2>/dev/null || rc=$?
    [[ -f $k/topology.conf ]] || fail "killed before $sc #$n of a first --replace sync: topology.conf is missing"
    [[ ! -L $k/plugstack.conf.d/fabricplace.conf || -e $k/plugstack.conf.d/fabricplace.conf ]] ||
      fail "killed before $sc #$n of a first sync: a dangling plugin line (every srun's include would fail)"
    grep -qx "SwitchName=hand Nodes=node001" "$k/topology.conf" || cmp -s "$k/topology.conf" "$tmp/ref-b/topology.conf" ||
      fail "killed before $sc #$n: topology.conf is neither the hand-written one nor the new one"
    if [[ -e $k/.fabricplace/current ]]; then
      for f in "${files[@]}"; do cmp -s "$k/.fabricplace/current/$f" "$tmp/ref-b/$f" || fail "killed before $sc #$n: the live snapshot lacks $f"; done
    fi
    [[ $rc == 0 ]] && break
    first_kills=$((first_kills + 1))
    "$bin" slurm sync --fabric "$tmp/b.json" --out "$k" --replace >/dev/null || fail "after a kill at $sc #$n of a first sync, the next one failed"
    same_as "$tmp/ref-b" || fail "after a kill at $sc #$n of a first sync, the next one did not write the set"
    ((n < 200)) || fail "$sc: more than 200 calls"
  done
done
((first_kills > 20)) || fail "only $first_kills kill points in the first sync"
# tree -> yaml: killed anywhere, never a topology.conf link left dangling once the next sync
# ran, and topology.yaml there.
yaml_kills=0
for sc in rename renameat symlink symlinkat unlink unlinkat; do
  for ((n = 1; ; n++)); do
    rm -rf "$k" && "$bin" slurm sync --fabric "$tmp/b.json" --out "$k" >/dev/null
    rc=0
    { strace -o /dev/null -e trace="$sc" -e inject="$sc":signal=KILL:when=$n \
      "$bin" slurm sync --fabric "$tmp/b.json" --out "$k" --topology yaml >/dev/null 2>&1; } 2>/dev/null || rc=$?
    [[ -e $k/topology.conf || -e $k/topology.yaml ]] || fail "killed before $sc #$n of tree -> yaml: no topology file"
    [[ $rc == 0 ]] && break
    yaml_kills=$((yaml_kills + 1))
    "$bin" slurm sync --fabric "$tmp/b.json" --out "$k" --topology yaml >/dev/null || fail "after a kill at $sc #$n of tree -> yaml, the next sync failed"
    [[ ! -L $k/topology.conf && -f $k/topology.yaml ]] || fail "after a kill at $sc #$n of tree -> yaml: $(ls -l "$k" | grep topology)"
    ((n < 200)) || fail "$sc: more than 200 calls"
  done
done
((yaml_kills > 5)) || fail "only $yaml_kills kill points in tree -> yaml"
echo "ok: slurm sync: generation $gen_a -> $gen_b; $kills + $first_kills + $yaml_kills kill points, each left a whole set"
