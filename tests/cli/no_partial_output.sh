#!/usr/bin/env bash
# Bad input never leaves a partial or clobbered output file, and good output replaces the
# old file whole.
set -euo pipefail
bin=$1 data=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

echo old >"$d/fabric.json"
if "$bin" fabric import "$data/bad/truncated.ibnetdiscover.txt" -o "$d/fabric.json" 2>"$d/err"; then fail "bad input accepted"; fi
[[ "$(cat "$d/fabric.json")" == old ]] || fail "existing output clobbered"
grep -q "truncated.ibnetdiscover.txt:" "$d/err" || fail "error does not name the file: $(cat "$d/err")"

if "$bin" fabric export "$data/bad/unknown-record.txt" --format slurm-topology -o "$d/new.conf" 2>/dev/null; then fail "bad input accepted"; fi
[[ ! -e "$d/new.conf" ]] || fail "partial output created"

if "$bin" fabric generate "fat2:leaves=2,bogus=1" -o "$d/fabric.json" 2>/dev/null; then fail "bad spec accepted"; fi
[[ "$(cat "$d/fabric.json")" == old ]] || fail "existing output clobbered by a bad spec"

"$bin" fabric import "$data/fabrics/fat2_L8.ibnetdiscover.txt" -o "$d/fabric.json"
"$bin" fabric export "$d/fabric.json" --format json -o "$d/again.json"
cmp "$d/fabric.json" "$d/again.json" || fail "JSON round trip through the CLI differs"
[[ $(ls -A "$d" | wc -l) -eq 3 ]] || fail "temporary files left behind: $(ls -A "$d")"

# Output into a directory that does not exist: clear error, nothing created.
if "$bin" fabric import "$data/fabrics/fat2_L8.ibnetdiscover.txt" -o "$d/missing/x.json" 2>"$d/err2"; then fail "write into a missing directory succeeded"; fi
grep -q "missing/x.json: cannot create a temporary file" "$d/err2" || fail "unclear error: $(cat "$d/err2")"
echo ok
