#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# metrics_promtool.sh FABRICPLACE DATA: `fabric metrics` on six fabrics (health problems of
# every kind, a degraded dump, rail-optimised, 3 levels, Ethernet, a tiers CSV of assumed
# links) is valid for Prometheus and for node_exporter's textfile collector:
#   - `promtool check metrics` (Debian's prometheus package) exits 0 and says nothing;
#   - every sample line is NAME{LABELS} VALUE: no timestamp (the collector drops a file
#     with one), one HELP and one TYPE per family, before its samples, no series twice;
#   - `-o FILE.prom` writes the same bytes, leaving no temporary file beside it;
#   - the port series join the InfiniBand exporters' on (guid, port): every degraded port's
#     labels are a port of `ibnetdiscover --ports`, as infiniband_exporter reads it.
set -euo pipefail
bin=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v promtool >/dev/null || { echo "FAIL: no promtool (Debian package prometheus; scripts/install-deps.sh)"; exit 1; }

n=0
for src in "$data/fabrics/health_fat2.json" "$data/fabrics/over_L20-degraded.ibnetdiscover.txt" \
           "$data/fabrics/rail_4su.ibnetdiscover.txt" fat3:pods=2,leaves=3,down=4,up=2 \
           "$data/clos-roce.csv" "$data/tiers.csv"; do
  "$bin" fabric metrics "$src" >"$tmp/m.prom" 2>"$tmp/warn.txt"
  if ! promtool check metrics <"$tmp/m.prom" >"$tmp/promtool.txt" 2>&1 || [[ -s $tmp/promtool.txt ]]; then
    echo "FAIL: promtool check metrics on the metrics of $src:"; cat "$tmp/promtool.txt"; exit 1
  fi
  python3 - "$tmp/m.prom" "$src" <<'PY'
import re, sys
path, src = sys.argv[1], sys.argv[2]
sample = re.compile(r'^([a-zA-Z_][a-zA-Z0-9_]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? (\S+)$')
help_seen, type_seen, series, current = set(), set(), set(), None
for n, line in enumerate(open(path), 1):
    line = line.rstrip("\n")
    where = f"{src}: line {n}: {line[:120]}"
    if line.startswith("# HELP "):
        name = line.split()[2]
        assert name not in help_seen, "second HELP: " + where
        help_seen.add(name); current = name
        continue
    if line.startswith("# TYPE "):
        name, kind = line.split()[2:4]
        assert name == current and name not in type_seen, "TYPE not right after its HELP: " + where
        assert kind in ("gauge", "counter"), where
        type_seen.add(name)
        continue
    m = sample.match(line)
    assert m, "not NAME{LABELS} VALUE (a timestamp?): " + where
    assert m.group(1) == current, "a sample outside its family: " + where
    key = (m.group(1), m.group(2) or "")
    assert key not in series, "a series twice: " + where
    series.add(key)
    float(m.group(3).replace("+Inf", "inf"))
assert help_seen == type_seen and "fabricplace_fabric_info" in help_seen, src
PY
  n=$((n + 1))
done

# -o FILE.prom: the same bytes, renamed into place (no temporary left beside it).
src=$data/fabrics/health_fat2.json
"$bin" fabric metrics "$src" >"$tmp/stdout.prom"
mkdir "$tmp/textfile"
"$bin" fabric metrics "$src" -o "$tmp/textfile/fabric.prom"
cmp -s "$tmp/stdout.prom" "$tmp/textfile/fabric.prom" || { echo "FAIL: -o wrote other bytes than stdout"; exit 1; }
[[ $(ls -A "$tmp/textfile") == fabric.prom ]] || { echo "FAIL: left beside fabric.prom: $(ls -A "$tmp/textfile")"; exit 1; }

# The join: each degraded port's (guid, port) is a port ibnetdiscover --ports lists, the way
# infiniband_exporter labels its infiniband_switch_port_* series.
dump=$data/fabrics/over_L20-degraded.ibnetdiscover.txt
"$bin" fabric export "$dump" --format ibnetdiscover-p -o "$tmp/ports.txt"
"$bin" fabric metrics "$dump" >"$tmp/m.prom"
pairs=$(sed -n 's/^fabricplace_port_degraded{guid="\([^"]*\)",port="\([^"]*\)".*/\1 \2/p' "$tmp/m.prom")
[[ $(grep -c . <<<"$pairs") -ge 2 ]] || { echo "FAIL: no degraded ports in the metrics of $dump"; exit 1; }
while read -r guid port; do
  # ibnetdiscover -p: "SW  LID PORT GUID ..." on either side of the " - " (the peer's columns).
  grep -qE "(^|- )(SW|CA) +[0-9]+ +$port $guid " "$tmp/ports.txt" ||
    { echo "FAIL: $guid port $port is no port of ibnetdiscover --ports"; exit 1; }
done <<<"$pairs"
echo "ok: $n fabrics pass promtool check metrics; -o renames into place; $(grep -c . <<<"$pairs") degraded ports join ibnetdiscover --ports on (guid, port)"
