#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# unrouted_edges.sh FABRICPLACE DATA_DIR: an LFT dump whose spines have no entries for
# leaf01's hosts (holes: a ring edge from another leaf to them has no route). place,
# rankfile --route-aware and simulate each say so, with the edge and the model
# (routes::no_route_text), where before rankfile and simulate said nothing and simulate
# counted those rings as free (first-fit's comm-slowdown 1.133 became 1.000, unsaid).
set -euo pipefail
bin=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp"
zcat "$data/routes/fat2_L8-ftree.ibnetdiscover.txt.gz" >fat2.txt
zcat "$data/routes/fat2_L8-ftree.lfts.dump.gz" >fat2.lfts
awk '/^Unicast/ { spine = ($0 ~ /spine/) }
     spine && /Channel Adapter/ && /node0(0[1-9]|1[0-9]|20) mlx5_0/ { next } { print }' fat2.lfts >holes.lfts
[[ $(($(wc -l <fat2.lfts) - $(wc -l <holes.lfts))) == 80 ]] || fail "the holes: $(wc -l <holes.lfts) lines"
why="(a hole or a loop in the switches' tables, or parts of the fabric that do not reach each other)"

# ---- rankfile --route-aware: its own ring, and a running ring --------------------------
"$bin" rankfile --fabric fat2.txt --hosts 'node[015-030]' --route-aware --lfts holes.lfts \
  --format hostfile >/dev/null 2>err.txt
want="fabricplace: warning: ring edge node030 -> node015 has no route on the lfts:holes.lfts routes $why; the ring's load is left out of the figures below
fabricplace: route-aware ring (routes: lfts (opensm LFT dump holes.lfts); 0 running rings): most load on a switch link 0 ring edges (plain order 0)"
[[ "$(cat err.txt)" == "$want" ]] || fail "rankfile's own ring: $(cat err.txt)"
# The intact dump: no warning.
"$bin" rankfile --fabric fat2.txt --hosts 'node[015-030]' --route-aware --lfts fat2.lfts \
  --format hostfile >/dev/null 2>err.txt
grep -q warning err.txt && fail "rankfile warned on the intact dump: $(cat err.txt)"
printf '7 node[001-002],node[041-042]\n' >running.txt
"$bin" rankfile --fabric fat2.txt --hosts 'node[021-030]' --route-aware --lfts holes.lfts \
  --running running.txt --format hostfile >/dev/null 2>err.txt
want="fabricplace: warning: running.txt:1: running job 7: ring edge node042 -> node001 has no route on the lfts:holes.lfts routes $why; its load is left out"
[[ "$(head -n 1 err.txt)" == "$want" ]] || fail "rankfile's running ring: $(cat err.txt)"

# ---- place: the placed ring and a running ring, the same words ---------------------------
"$bin" place --fabric fat2.txt -N 24 --lfts holes.lfts --policy first-fit >out.txt 2>err.txt
[[ "$(cat err.txt)" == "fabricplace: warning: ring edge node024 -> node001 has no route on the lfts:holes.lfts routes $why; the ring counts at slowdown 1000 in the score" ]] ||
  fail "place: $(cat err.txt)"
grep -q '^hosts: node\[001-024\] (24)$' out.txt || fail "place chose $(grep hosts: out.txt)"
"$bin" place --fabric fat2.txt -N 4 --lfts holes.lfts --running running.txt --free 'node[021-040]' >/dev/null 2>err.txt
[[ "$(tail -n 1 err.txt)" == "fabricplace: warning: running job 7: ring edge node042 -> node001 has no route on the lfts:holes.lfts routes $why; its load is left out" ]] ||
  fail "place's running ring: $(cat err.txt)"

# ---- simulate: below the summary table, in the report's notes, in summary.csv ------------
sim=(simulate -q --fabric fat2.txt --trace 'llm:jobs=300,seed=1,load=0.9,hosts=160' --policies fabric,first-fit)
"$bin" "${sim[@]}" --lfts fat2.lfts --out intact >intact.txt
grep -qE '^first-fit +300 +35 .* 1\.133 +2$' intact.txt || fail "intact dump: $(cat intact.txt)"
grep -q warning intact.txt && fail "simulate warned on the intact dump"
"$bin" "${sim[@]}" --lfts holes.lfts --out holes >holes.txt
cat >want.txt <<TXT
routes: lfts (opensm LFT dump holes.lfts)
policy             jobs  tp-split  mean-wait-s  p95-wait-s  util   comm-slowdown  max-load
fabric              300         0         6870       40995  82.9%          1.000         1
first-fit           300        33         6181       29811  82.9%          1.000         1
warning: fabric: 7 of 300 jobs had a ring edge with no route; they count as running alone (communication slowdown 1, no load on any link), so comm-slowdown and max-load leave them out. The first: ring edge node084 -> node001 has no route on the lfts:holes.lfts routes $why
warning: first-fit: 27 of 300 jobs had a ring edge with no route; they count as running alone (communication slowdown 1, no load on any link), so comm-slowdown and max-load leave them out. The first: ring edge node022 -> node007 has no route on the lfts:holes.lfts routes $why
TXT
diff -u want.txt holes.txt || fail "simulate's summary"
col=$(head -n 1 holes/summary.csv | tr ',' '\n' | grep -nx jobs_unrouted | cut -d: -f1)
[[ -n "$col" ]] || fail "summary.csv has no jobs_unrouted column"
[[ $(tail -n +2 holes/summary.csv | cut -d, -f"$col" | paste -sd,) == 7,27 ]] || fail "summary.csv jobs_unrouted: $(cut -d, -f"$col" holes/summary.csv | paste -sd,)"
[[ $(tail -n +2 intact/summary.csv | cut -d, -f"$col" | paste -sd,) == 0,0 ]] || fail "intact summary.csv jobs_unrouted"
grep -qF "<li>first-fit: 27 of 300 jobs had a ring edge with no route;" holes/report.html || fail "report.html has no note"
grep -qF "ring edge node022 -&gt; node007 has no route on the lfts:holes.lfts routes" holes/report.html || fail "report.html note lacks the edge"
echo ok
