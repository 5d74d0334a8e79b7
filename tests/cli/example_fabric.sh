#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The bundled example dump (real ibnetdiscover output from ibsim) is exactly the fabric its
# spec describes, and show reports its two planted faults.
set -euo pipefail
bin=$1 examples=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
spec='fat3:pods=4,leaves=4,down=20,up=20,spines=4,degrade=p02-leaf03:23:w=1,degrade=p03-spine02:23:s=EDR'
"$bin" fabric import "$examples/cluster.ibnetdiscover.txt" | grep -v '"origin"' >"$d/dump.json"
"$bin" fabric generate "$spec" | grep -v '"origin"' >"$d/spec.json"
cmp "$d/dump.json" "$d/spec.json" || { echo "example dump and spec differ"; exit 1; }
"$bin" fabric show "$examples/cluster.ibnetdiscover.txt" >"$d/show.txt"
grep -q "  link health: 2 problem(s)$" "$d/show.txt" || { cat "$d/show.txt"; exit 1; }
grep -q "degraded p02-leaf03\[23\] <-> p02-spine03\[11\]: 1xHDR, nominal 4xHDR (width 1x < 4x); hosts behind: node\[121-140\]" "$d/show.txt" || { cat "$d/show.txt"; exit 1; }
grep -q "degraded p03-spine02\[23\] <-> core003\[22\]: 4xEDR, nominal 4xHDR (speed EDR < HDR); hosts behind: node\[161-240\]" "$d/show.txt" || { cat "$d/show.txt"; exit 1; }
echo ok
