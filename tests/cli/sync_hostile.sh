#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sync_hostile.sh FABRICPLACE: `slurm sync` against a directory someone has planted links in,
# and against arguments that would make a plugstack line Slurm reads otherwise
# (docs/operations.md, "Directories fabricplace owns", "The plugin's line"):
#   - the store DIR/.fabricplace a link to another directory: refused, nothing there changes
#     (its tmp.* and snapshot.* entries stay);
#   - the lock, the reconfigure record, a subdirectory of the set replaced by links: refused or
#     replaced, never followed; the store owned by another user (as root): refused; DIR or a
#     subdirectory writable by group or others, or owned by another user than root: refused;
#   - a FIFO in the live snapshot: an error at once, not a hang;
#   - leftovers are removed by the names sync makes, nothing else of DIR;
#   - '#', tabs, an empty plugin, arguments the plugin refuses, a line longer than Slurm
#     reads, a '#' in --node-params: each refused (exit 2), no line written.
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$bin" fabric export 'fat2:leaves=2,down=4,up=2' --format json -o "$tmp/a.json"
"$bin" fabric export 'fat2:leaves=2,down=3,up=2' --format json -o "$tmp/b.json"
# What a directory holds, names, types and contents: equal before and after, or something changed.
fingerprint() { (cd "$1" && find . -printf '%p %y %l\n' | sort && find . -type f -exec sha1sum {} + | sort); }
expect_refused() {  # RC PATTERN: the last command's exit status and error
  local rc=$1 pattern=$2
  [[ $rc != 0 ]] || fail "$3: exit 0"
  grep -q -- "$pattern" "$tmp/err.txt" || fail "$3: expected '$pattern', got: $(cat "$tmp/err.txt")"
}
sync_refused() {  # FABRIC PATTERN WHAT: `slurm sync --fabric FABRIC --out $d` refused with PATTERN
  rc=0; "$bin" slurm sync --fabric "$1" --out "$d" >/dev/null 2>"$tmp/err.txt" || rc=$?
  expect_refused "$rc" "$2" "$3"
}

# ---- the store is a link to another directory ------------------------------------------
out=$tmp/outside
mkdir -p "$out/tmp.12345" "$out/snapshot.000001" "$out/snapshot.000007"
echo precious >"$out/tmp.12345/data"
echo precious >"$out/snapshot.000001/x"
before=$(fingerprint "$out")
d=$tmp/etc
mkdir -p "$d"
ln -s "$out" "$d/.fabricplace"
sync_refused "$tmp/a.json" "$d/.fabricplace: is a symbolic link: fabricplace writes and removes files only in a real directory it owns" "store a link"
rc=0; "$bin" slurm sync --fabric "$tmp/a.json" --out "$d" --dry-run >/dev/null 2>"$tmp/err.txt" || rc=$?
expect_refused "$rc" "is a symbolic link" "store a link, --dry-run"
[[ $(fingerprint "$out") == "$before" ]] || fail "a sync through a linked store changed what the link points to"
[[ ! -e $d/fabric.json && ! -L $d/fabric.json ]] || fail "a refused sync left links in $d"
rm "$d/.fabricplace"

# ---- a synced directory, then links planted in it -------------------------------------
"$bin" slurm sync --fabric "$tmp/a.json" --out "$d" >/dev/null
echo precious >"$out/victim"
before=$(fingerprint "$out")
# The lock: refused, never opened through the link.
mv "$d/.fabricplace/lock" "$tmp/lock.saved"
ln -s "$out/victim" "$d/.fabricplace/lock"
sync_refused "$tmp/b.json" "lock: the lock is a symbolic link" "lock a link"
rm "$d/.fabricplace/lock"
ln -s "$out/new-lock" "$d/.fabricplace/lock"  # a dangling link: O_CREAT must not create its target
sync_refused "$tmp/b.json" "the lock is a symbolic link" "lock a dangling link"
rm "$d/.fabricplace/lock"
# The reconfigure record: replaced by name (the link goes, its target stays).
mkdir -p "$tmp/fakebin"
printf '#!/bin/sh\nexit 0\n' >"$tmp/fakebin/scontrol"
chmod +x "$tmp/fakebin/scontrol"
ln -s "$out/victim" "$d/.fabricplace/reconfigured"
PATH="$tmp/fakebin:$PATH" "$bin" slurm sync --fabric "$tmp/b.json" --out "$d" --reconfigure >/dev/null 2>"$tmp/err.txt" ||
  fail "sync --reconfigure with a planted record: $(cat "$tmp/err.txt")"
[[ -f $d/.fabricplace/reconfigured && ! -L $d/.fabricplace/reconfigured ]] || fail "the reconfigure record is still a link"
[[ $(fingerprint "$out") == "$before" ]] || fail "the reconfigure record was written through its link"
# A subdirectory of the set that is a link: sync would place its link where it points.
mv "$d/plugstack.conf.d" "$tmp/plugstack.saved"
mkdir -p "$out/plugstack"
ln -s "$out/plugstack" "$d/plugstack.conf.d"
before=$(fingerprint "$out")
sync_refused "$tmp/a.json" "plugstack.conf.d: is a symbolic link: slurm sync places its links only in a real directory" "subdirectory a link"
[[ $(fingerprint "$out") == "$before" ]] || fail "a sync through a linked subdirectory changed what the link points to"
rm "$d/plugstack.conf.d" && mv "$tmp/plugstack.saved" "$d/plugstack.conf.d"
# A store writable by others, or (as root) owned by another user: refused.
chmod 0777 "$d/.fabricplace"
sync_refused "$tmp/a.json" "is writable by its group or by others" "store 0777"
chmod 0755 "$d/.fabricplace"
if [[ $(id -u) == 0 ]]; then
  chown 65534 "$d/.fabricplace"
  sync_refused "$tmp/a.json" "is owned by uid 65534, not by the user running fabricplace (uid 0)" "store of another user"
  chown 0 "$d/.fabricplace"
fi
# DIR and the subdirectories of the set are the admin's, but what is in them decides what slurmd
# loads as root: writable by group or others, or (as root) owned by a user other than root,
# they are refused; nothing in them changes.
before=$(fingerprint "$d")
chmod 0777 "$d"
sync_refused "$tmp/b.json" "$d: is writable by its group or by others: it is refused, since they could plant files that Slurm loads in it (chmod go-w; group write is allowed to group root)" "DIR 0777"
chmod 0755 "$d"
chmod 0775 "$d/plugstack.conf.d"
if [[ $(id -u) == 0 ]]; then chgrp 65534 "$d/plugstack.conf.d"; fi
sync_refused "$tmp/b.json" "plugstack.conf.d: is writable by its group or by others" "subdirectory 0775"
if [[ $(id -u) == 0 ]]; then
  # Group write by group root is allowed (2775 root:root, an admins' convention).
  chgrp 0 "$d/plugstack.conf.d" && chmod 2775 "$d/plugstack.conf.d"
  "$bin" slurm sync --fabric "$tmp/b.json" --out "$d" --dry-run >/dev/null 2>"$tmp/err.txt" ||
    fail "a plugstack.conf.d group-writable by group root was refused: $(cat "$tmp/err.txt")"
fi
chmod 0755 "$d/plugstack.conf.d"
if [[ $(id -u) == 0 ]]; then
  chown 65534 "$d/plugstack.conf.d"
  sync_refused "$tmp/b.json" "plugstack.conf.d: is owned by uid 65534, not by root or the user running fabricplace (uid 0)" "subdirectory of another user"
  chown 0 "$d/plugstack.conf.d"
fi
[[ $(fingerprint "$d") == "$before" ]] || fail "a refused sync changed DIR"

# ---- a FIFO in the live snapshot: an error, not a hang -----------------------------------
snap=$d/.fabricplace/$(readlink "$d/.fabricplace/current")
rm "$snap/fabric.lua" && mkfifo "$snap/fabric.lua"
rc=0; timeout 20 "$bin" slurm sync --fabric "$tmp/a.json" --out "$d" >/dev/null 2>"$tmp/err.txt" || rc=$?
[[ $rc != 124 ]] || fail "a FIFO in the live snapshot hung the sync"
expect_refused "$rc" "fabric.lua: is not a regular file" "FIFO in the snapshot"
rm "$snap/fabric.lua"
rm -rf "$d" && mkdir -p "$d"

# ---- leftovers: only the names sync makes are removed ------------------------------------
"$bin" slurm sync --fabric "$tmp/a.json" --out "$d" >/dev/null
mkdir "$d/.keep.fabricplace-tmp.99" "$d/.fabric.json.fabricplace-tmp.77"  # directories: not sync's links
ln -s /nonexistent "$d/.fabric.json.fabricplace-tmp.88"                  # sync's temporary link
ln -s "$out" "$d/.fabricplace/tmp.4242"                                    # not a directory sync built
mkdir "$d/.fabricplace/tmp.4343"                                           # one a killed sync built
"$bin" slurm sync --fabric "$tmp/b.json" --out "$d" >/dev/null
[[ -d $d/.keep.fabricplace-tmp.99 && -d $d/.fabric.json.fabricplace-tmp.77 ]] || fail "sync removed directories it did not make"
[[ ! -L $d/.fabric.json.fabricplace-tmp.88 ]] || fail "sync left its temporary link"
[[ ! -e $d/.fabricplace/tmp.4343 && ! -L $d/.fabricplace/tmp.4242 ]] || fail "sync left a killed sync's snapshot"
[[ -f $out/victim ]] || fail "cleanup went through a link"

# ---- the plugstack line as Slurm reads it ------------------------------------------------
refuse_line() {  # PATTERN ARGS...: exit 2, PATTERN said, nothing written (in the --out given)
  local pattern=$1 e=$tmp/line-$RANDOM a
  shift
  local -a args=("$@")
  for ((a = 0; a + 1 < ${#args[@]}; a++)); do [[ ${args[a]} == --out ]] && e=${args[a + 1]}; done
  [[ " $* " == *" --out "* ]] || set -- --out "$e" "$@"
  rc=0; "$bin" slurm sync --fabric "$tmp/a.json" "$@" >/dev/null 2>"$tmp/err.txt" || rc=$?
  [[ $rc == 2 ]] || fail "$*: exit $rc, expected 2: $(cat "$tmp/err.txt")"
  grep -qF -- "$pattern" "$tmp/err.txt" || fail "$*: expected '$pattern', got: $(cat "$tmp/err.txt")"
  [[ ! -e $e/plugstack.conf.d && ! -e $e/fabricplace-nodes.conf ]] || fail "$*: a refused set was written in $e"
}
refuse_line "a '#' in the path (plugstack.conf ends a line at '#'" --out "$tmp/etc#1"
refuse_line "a blank or a tab in the path" --out "$tmp/etc	tab"
refuse_line "fabric= is set by slurm sync itself" --plugin-args $'policy=fabric\tfabric=/elsewhere/fabric.json'
refuse_line '--plugin-args "mode=exact #x": a '"'#'" --plugin-args 'mode=exact #x'
refuse_line 'the plugin would refuse its line: policy="best": expected' --plugin-args 'policy=best'
refuse_line 'the plugin would refuse its line: unknown plugstack.conf argument "colour"' --plugin-args 'colour=red'
refuse_line "--plugin: expected a file" --plugin ''
refuse_line 'the plugin "fabricplace": expected the path of fabricplace.so' --plugin fabricplace
refuse_line "--node-params \"CPUs=4 #RealMemory=1000\": a '#' (slurm.conf ends a line at '#'" --node-params 'CPUs=4 #RealMemory=1000'
refuse_line "(slurm.conf escapes with it, and one at the end joins the next line to every node line)" --node-params 'Weight=1 \'
refuse_line "bytes, more than the 4094 Slurm reads as one line" --plugin-args "log=/var/log/$(printf 'x%.0s' {1..4100})"
# Tabs between good arguments are blanks to Slurm: the line is written with single blanks.
e=$tmp/tabs
"$bin" slurm sync --fabric "$tmp/a.json" --out "$e" --plugin-args $'mode=exact\tpolicy=slurm-tree' >/dev/null
grep -qx "optional .*/fabricplace.so fabric=$e/fabric.json hostmap=$e/fabric.hostmap mode=exact policy=slurm-tree" \
  "$e/plugstack.conf.d/fabricplace.conf" || fail "tabs in --plugin-args: $(grep optional "$e/plugstack.conf.d/fabricplace.conf")"
# fabric watch --sync-out writes through the same check.
rc=0; "$bin" fabric watch --state "$tmp/watch" "$tmp/a.json" --sync-out "$tmp/w" --plugin '' >"$tmp/err.txt" 2>&1 || rc=$?
[[ $rc == 2 ]] && grep -q -- "slurm sync failed: --plugin: empty" "$tmp/err.txt" ||
  fail "fabric watch --plugin '': exit $rc: $(cat "$tmp/err.txt")"
[[ ! -e $tmp/w/plugstack.conf.d ]] || fail "fabric watch --plugin '' wrote a plugstack line"
echo "ok: sync_hostile"
