#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# simulate.sh FABRICPLACE DATA_DIR: `fabricplace simulate` end to end on the head of the ITP
# trace: the three outputs, their columns, a self-contained report, progress on stderr, and
# byte-identical outputs for the same seed (different ones for another seed).
set -euo pipefail
bin=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

args=(simulate --fabric 'fat3:pods=2,leaves=2,down=4,up=4' --trace "$data/traces/itp-cluster04-head300.csv"
      --policies fabric,slurm-tree,first-fit --tp-cap 16 --degrade-links 2)
"$bin" "${args[@]}" --seed 7 --threads 2 --out "$tmp/a" >"$tmp/a.stdout" 2>"$tmp/a.stderr"
"$bin" "${args[@]}" --seed 7 --out "$tmp/b" -q >"$tmp/b.stdout" 2>"$tmp/b.stderr"
"$bin" "${args[@]}" --seed 8 --out "$tmp/c" -q >/dev/null 2>&1

"$bin" "${args[@]}" --seed 7 --out "$tmp/t1" -q --threads 1 >/dev/null 2>&1

for f in jobs.csv summary.csv report.html; do
  [[ -s "$tmp/a/$f" ]] || fail "$f missing or empty"
  cmp -s "$tmp/a/$f" "$tmp/b/$f" || fail "$f differs between two runs with seed 7"
  cmp -s "$tmp/a/$f" "$tmp/t1/$f" || fail "$f differs between 2 threads and 1"
done
cmp -s "$tmp/a/report.html" "$tmp/c/report.html" && fail "seed 8 gave the same report as seed 7"
grep -q 'degraded to 1x (seed 7): ' "$tmp/a/report.html" || fail "report does not name the degraded links"

# summary.csv: the columns the issue asks for, one row per policy, plain numbers.
header=$(head -n 1 "$tmp/a/summary.csv")
for col in policy routes jobs jobs_tp_split mean_wait_s p95_wait_s utilization mean_comm_slowdown max_link_load; do
  tr ',' '\n' <<<"$header" | grep -qx "$col" || fail "summary.csv lacks column $col"
done
[[ $(tail -n +2 "$tmp/a/summary.csv" | cut -d, -f1 | paste -sd,) == fabric,slurm-tree,first-fit ]] ||
  fail "summary.csv rows: $(cut -d, -f1 "$tmp/a/summary.csv" | paste -sd' ')"
awk -F, 'NR == 1 { n = NF } NF != n { exit 1 }' "$tmp/a/summary.csv" ||
  fail "summary.csv rows and header have different numbers of fields"
# jobs.csv: hosts, the last field, is quoted when it holds commas; the fields before it are
# plain, so counting them is enough.
sed 's/,"[^"]*"$/,hosts/' "$tmp/a/jobs.csv" | awk -F, 'NR == 1 { n = NF } NF != n { exit 1 }' ||
  fail "jobs.csv rows and header have different numbers of fields"
[[ $(tail -n +2 "$tmp/a/summary.csv" | cut -d, -f2 | sort -u) == ftree ]] || fail "summary.csv: routes is not ftree"
tail -n +2 "$tmp/a/summary.csv" | cut -d, -f3- | tr ',' '\n' | grep -vqE '^[0-9]+(\.[0-9]+)?$' &&
  fail "summary.csv has a value that is not a plain number"
# jobs.csv: one row per job and policy (300 jobs x 3 policies) plus the header.
[[ $(wc -l <"$tmp/a/jobs.csv") == 901 ]] || fail "jobs.csv has $(wc -l <"$tmp/a/jobs.csv") lines"

# The report opens without network: inline SVG, no scripts, no external references.
[[ $(grep -c '<svg ' "$tmp/a/report.html") == 4 ]] || fail "report.html should hold 4 plots"
grep -qi '<script' "$tmp/a/report.html" && fail "report.html has a script"
grep -o 'https\?://[^"]*' "$tmp/a/report.html" | grep -qv '^http://www.w3.org/2000/svg$' &&
  fail "report.html references the network"

# Progress on stderr (not with -q), the table on stdout.
grep -qE '^simulate: fabric done in [0-9.]+ s \([0-9]+ jobs/min\)$' "$tmp/a.stderr" || fail "no progress on stderr"
[[ -s "$tmp/b.stderr" ]] && fail "-q still printed: $(cat "$tmp/b.stderr")"
grep -q '^slurm-tree ' "$tmp/a.stdout" || fail "no summary table on stdout"
# Exact routes from opensm's LFT dump give the same simulation as the ftree model (their
# tables agree on every host pair of this fabric: tests/routes/test_ftree.cpp).
zcat "$data/routes/fat2_L8-ftree.ibnetdiscover.txt.gz" >"$tmp/fat2.txt"
zcat "$data/routes/fat2_L8-ftree.lfts.dump.gz" >"$tmp/fat2.lfts"
common=(simulate -q --fabric "$tmp/fat2.txt" --trace "$data/traces/philly-head300.csv"
        --arrival-scale 0.002 --policies fabric,slurm-tree,first-fit)
"$bin" "${common[@]}" --out "$tmp/model" >/dev/null
"$bin" "${common[@]}" --lfts "$tmp/fat2.lfts" --out "$tmp/lft" >"$tmp/lft.stdout"
cut -d, -f2 --complement "$tmp/model/jobs.csv" >"$tmp/model.jobs"
cut -d, -f2 --complement "$tmp/lft/jobs.csv" >"$tmp/lft.jobs"
cmp -s "$tmp/model.jobs" "$tmp/lft.jobs" || fail "LFT-dump routes and the ftree model disagree"
grep -q "Routes: lfts (opensm LFT dump $tmp/fat2.lfts)" "$tmp/lft/report.html" || fail "report does not name the LFT dump"
grep -q "Routes: ftree (opensm&#39;s ftree engine, modelled); chosen: an InfiniBand fabric" "$tmp/model/report.html" ||
  grep -q "Routes: ftree (opensm's ftree engine, modelled); chosen: an InfiniBand fabric" "$tmp/model/report.html" ||
  fail "report does not name the ftree model"
awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "max_link_load") c = i; next }
     $c > 0 { n++ } END { exit !(c && n > 0) }' "$tmp/model/jobs.csv" ||
  fail "no job crossed a switch link: the comparison would prove nothing"

# Settings are printed as given (0.0625, not 0.062); with no multi-node TP group (a TP cap
# of one node's 8 GPUs) the report says "none", not "100 % of 0".
grep -qE 'arrival scale 0[.]002([^0-9]|$)' "$tmp/model/report.html" || fail "report does not state the arrival scale"
"$bin" simulate -q --fabric 'fat2:leaves=2,down=4,up=2' --trace "$data/traces/philly-head300.csv" \
  --arrival-scale 0.0625 --tp-cap 8 --policies fabric,first-fit --max-jobs 40 --out "$tmp/small" >/dev/null
grep -qE 'arrival scale 0[.]0625([^0-9]|$)' "$tmp/small/report.html" || fail "arrival scale 0.0625 not printed as given"
[[ $(grep -o '<td>none (no multi-node TP group)</td>' "$tmp/small/report.html" | wc -l) == 2 ]] ||
  fail "report does not say 'none' for TP groups in one leaf without multi-node TP groups"
grep -q '% of 0<' "$tmp/small/report.html" && fail "report still says '% of 0'"

# The three outputs are replaced together or not at all: with summary.csv unwritable (a
# directory in its place) the run fails and the previous jobs.csv and report.html stay.
cp -r "$tmp/c" "$tmp/keep"
rm "$tmp/c/summary.csv" && mkdir "$tmp/c/summary.csv"
if "$bin" "${args[@]}" --seed 7 --out "$tmp/c" -q >/dev/null 2>"$tmp/c.err"; then
  fail "a run whose summary.csv cannot be written succeeded"
fi
cmp -s "$tmp/c/jobs.csv" "$tmp/keep/jobs.csv" || fail "jobs.csv replaced by a failed run"
cmp -s "$tmp/c/report.html" "$tmp/keep/report.html" || fail "report.html replaced by a failed run"
ls "$tmp/c" | grep -q partial && fail "temporary files left: $(ls "$tmp/c")"

# A job larger than the fabric is dropped from every policy's run, and said so.
printf 'job_id,submission_time,duration,num_gpu\nsmall,0,10,8\nhuge,5,10,4096\n' >"$tmp/huge.csv"
"$bin" simulate --fabric 'fat2:leaves=2,down=4,up=1' --trace "$tmp/huge.csv" --out "$tmp/huge" \
  >/dev/null 2>"$tmp/huge.err" || fail "a trace with one oversized job failed: $(cat "$tmp/huge.err")"
grep -q '^simulate: 1 jobs dropped: larger than the fabric' "$tmp/huge.err" || fail "dropped job not said"
[[ $(wc -l <"$tmp/huge/jobs.csv") == 4 ]] || fail "jobs.csv should hold the small job under 3 policies"

# Every fabric simulates (issue #13), each with the route model it calls for, named on stdout
# and in the report. A RoCE Clos from a tiers CSV (aggregation groups of different sizes):
# ecmp; the baselines, which cross ToRs, see contention (a link loaded above 1 ring edge).
clos=(simulate -q --fabric "$data/clos-roce.csv" --trace "$data/traces/itp-cluster04-head300.csv"
      --tp-cap 16 --policies fabric,slurm-tree,first-fit)
"$bin" "${clos[@]}" --out "$tmp/clos" >"$tmp/clos.stdout" 2>/dev/null
grep -q '^routes: ecmp (.*); chosen: an Ethernet (RoCE) fabric$' "$tmp/clos.stdout" || fail "clos: no ecmp line: $(head -1 "$tmp/clos.stdout")"
grep -q 'Routes: ecmp (' "$tmp/clos/report.html" || fail "clos: report does not name ecmp"
# col FILE NAME ROW: the field of summary.csv column NAME in the row whose policy is ROW.
col() {
  awk -F, -v name="$2" -v row="$3" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == name) c = i; next }
    $1 == row { print $c }' "$1"
}
awk -v s="$(col "$tmp/clos/summary.csv" mean_comm_slowdown first-fit)" 'BEGIN { exit !(s > 1) }' ||
  fail "clos: first-fit saw no contention: $(cat "$tmp/clos/summary.csv")"
# Its thinnest tier is the core (one 400G link per aggregation switch). With the LLM-heavy
# trace (75 multi-node jobs of 150, seeded) ours crosses it less often than Slurm's tree
# (15 ring edges against 19), at a lower communication slowdown.
"$bin" simulate -q --fabric "$data/clos-roce.csv" --trace 'llm:jobs=150,seed=1,load=0.8,hosts=154' \
  --policies fabric,slurm-tree --out "$tmp/thin" >/dev/null
[[ $(col "$tmp/thin/summary.csv" thin_tier fabric) == 2 ]] || fail "clos: thinnest tier not the core"
ours=$(col "$tmp/thin/summary.csv" thin_tier_crossings fabric)
theirs=$(col "$tmp/thin/summary.csv" thin_tier_crossings slurm-tree)
[[ $ours == 15 && $theirs == 19 ]] || fail "clos: core crossings: fabric $ours, slurm-tree $theirs (expected 15, 19)"
# The same with two models side by side: a row per (policy, model), labelled.
"$bin" "${clos[@]}" --routes ecmp,adaptive --out "$tmp/clos2" >"$tmp/clos2.stdout" 2>/dev/null
[[ $(tail -n +2 "$tmp/clos2/summary.csv" | cut -d, -f1 | paste -sd,) == \
   "fabric [ecmp],slurm-tree [ecmp],first-fit [ecmp],fabric [adaptive],slurm-tree [adaptive],first-fit [adaptive]" ]] ||
  fail "clos: summary rows with two models: $(cut -d, -f1 "$tmp/clos2/summary.csv" | paste -sd'|')"
[[ $(grep -c '^routes: ' "$tmp/clos2.stdout") == 2 ]] || fail "clos: both models not named on stdout"
[[ $(grep -c 'Routes: ' "$tmp/clos2/report.html") == 2 ]] || fail "clos: both models not named in the report"
[[ $(wc -l <"$tmp/clos2/jobs.csv") == 1801 ]] || fail "clos: jobs.csv should hold 300 jobs x 6 runs"
# An InfiniBand dump ftree refuses (a leaf-spine link removed): minhop, saying why.
zcat "$data/routes/v5_fat2_droplink-ftree.ibnetdiscover.txt.gz" >"$tmp/drop.txt"
"$bin" simulate -q --fabric "$tmp/drop.txt" --trace "$data/traces/itp-cluster04-head300.csv" --tp-cap 16 \
  --out "$tmp/drop" >"$tmp/drop.stdout" 2>/dev/null || fail "the droplink dump did not simulate"
grep -q "^routes: minhop (opensm's minhop engine, modelled); chosen: opensm's ftree engine would not route this fabric" \
  "$tmp/drop.stdout" || fail "droplink: $(head -1 "$tmp/drop.stdout")"
# A rail-optimised fabric: minhop too (ftree is modelled for single-rail fabrics).
"$bin" simulate -q --fabric 'rail:sus=2,hosts=4,rails=2' --trace "$data/traces/itp-cluster04-head300.csv" \
  --out "$tmp/rail" >"$tmp/rail.stdout" 2>/dev/null || fail "a rail fabric did not simulate"
grep -q "^routes: minhop " "$tmp/rail.stdout" || fail "rail: $(head -1 "$tmp/rail.stdout")"

# No fabric that `fabric show` accepts is refused: every source and shape, each with its
# automatic route model, simulates and orders a rank file on its routes.
every=("$data/topology.conf" "$data/flat.conf" "$data/tiers.csv" "$data/clos.csv" "$data/clos-roce.csv"
       "$data/fabrics/fat2_L8.ibnetdiscover.txt" "$data/fabrics/fat3_small.ibnetdiscover-p.txt"
       "$data/fabrics/over_L20-degraded.ibnetdiscover.txt" "$data/fabrics/rail_4su.ibnetdiscover.txt"
       'fat2:leaves=3,down=4,up=2,cut=leaf01:5' 'rail:sus=2,hosts=4,rails=2')
for fab in "${every[@]}"; do
  "$bin" fabric show "$fab" >/dev/null 2>&1 || fail "fabric show refused $fab"
  "$bin" simulate -q --fabric "$fab" --trace "$data/traces/itp-cluster04-head300.csv" --max-jobs 60 \
    --arrival-scale 0.01 --out "$tmp/every" >"$tmp/every.stdout" 2>"$tmp/every.err" ||
    fail "simulate refused $fab: $(cat "$tmp/every.err")"
  grep -q '^routes: ' "$tmp/every.stdout" || fail "$fab: no route model named"
  hosts=$("$bin" fabric show --json "$fab" 2>/dev/null | python3 -c 'import json,sys; h=json.load(sys.stdin)["hosts"]; print(",".join(x["name"] for x in [h[0], h[len(h)//2], h[-1]]))')
  "$bin" rankfile --fabric "$fab" --hosts "$hosts" --format hostfile --route-aware >/dev/null 2>"$tmp/every.err" ||
    fail "rankfile --route-aware refused $fab: $(cat "$tmp/every.err")"
done
# The rail planes, discovered one by one and merged: separate subnets.
"$bin" simulate -q --fabric "$data"/fabrics/rail_4su_planes/plane*.ibnetdiscover.txt \
  --trace "$data/traces/itp-cluster04-head300.csv" --max-jobs 60 --out "$tmp/every" >/dev/null 2>"$tmp/every.err" ||
  fail "simulate refused the merged rail planes: $(cat "$tmp/every.err")"

echo "simulate: outputs, columns, self-contained report, progress, determinism and every route model OK"
