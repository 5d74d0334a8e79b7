#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Makes the minhop and updn reference dumps of this directory (README.md): for each fabric,
# its ibsim net file (`fabricplace fabric export --format ibsim-net`), ibsim with the exact
# -N/-S/-P limits of the file's header, one opensm sweep under umad2sim, then ibnetdiscover
# once the SM has assigned LIDs. Writes NAME-ENGINE.ibnetdiscover.txt.gz and
# NAME-ENGINE.lfts.dump.gz (gzip -9 -n), and for updn NAME-updn.roots.txt (its root GUIDs).
#
#   make.sh FABRICPLACE [NAME...]     FABRICPLACE: the built CLI (build/dev/cli/fabricplace)
#
# Needs ibsim, opensm and ibnetdiscover (infiniband-diags) and umad2sim. Each ibsim gets its
# own IBSIM_SOCKNAME and is stopped by PID; clients run under `timeout` in a scratch
# directory (umad2sim leaves ./sys-<pid>/ behind), removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cli=$(realpath "${1:?usage: make.sh FABRICPLACE [NAME...]}")
shift
umad2sim=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so

# NAME|SOURCE|ENGINES. Sources are specs, or files of this directory: the ftree dumps of the
# same fabrics (an ibnetdiscover dump keeps every GUID and port number), a tiers CSV, and
# two irregular fabrics the live test writes (README.md).
fabrics=(
  "fat2_L8|fat2:leaves=8,down=20,up=20|minhop updn"
  "fat3_small|fat3_small-ftree.ibnetdiscover.txt.gz|minhop updn"
  "over_L20s|fat2:leaves=20,down=16,up=4,spines=2|minhop updn"
  "v2_fat2_guid|v2_fat2_guid-ftree.ibnetdiscover.txt.gz|minhop updn"
  "v5_fat2_droplink|v5_fat2_droplink-ftree.ibnetdiscover.txt.gz|minhop updn"
  "v6_fat2_emptyleaf|v6_fat2_emptyleaf-ftree.ibnetdiscover.txt.gz|minhop updn"
  "v7_fat2_uneven|v7_fat2_uneven-ftree.ibnetdiscover.txt.gz|minhop updn"
  "rail_2su|rail:sus=2,hosts=8,rails=4,up=8|minhop updn"
  "clos_irregular|clos_irregular.csv|minhop updn"
  "v8_fat2_cutspine|fat2:leaves=8,down=8,up=4,spines=2,cut=leaf01:9,cut=leaf01:11|minhop updn"
  "v9_fat3_cutleaf|fat3:pods=3,leaves=3,down=4,up=2,cut=p01-leaf01:5|minhop updn"
  "quirk68|quirk68.ibnetdiscover.txt.gz|minhop updn"
  "quirk212|quirk212.ibnetdiscover.txt.gz|minhop updn"
)

work=$(mktemp -d /tmp/fp-route-dumps-XXXXXX)
sim_pid=
holder_pid=
stop_sim() {
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null || true
  [ -n "$holder_pid" ] && kill "$holder_pid" 2>/dev/null && wait "$holder_pid" 2>/dev/null || true
  sim_pid= holder_pid=
}
trap 'stop_sim; rm -rf "$work"' EXIT

make_one() {  # NAME SOURCE ENGINE
  local name=$1 src=$2 eng=$3 d="$work/$1-$3"
  mkdir -p "$d"
  case "$src" in *:*) ;; *) src="$here/$src" ;; esac
  "$cli" fabric export --format ibsim-net -o "$d/net" "$src"
  local limits
  limits=$(sed -n 's/^# start with: ibsim \(-N [0-9]* -S [0-9]* -P [0-9]*\) .*/\1/p' "$d/net")
  [ -n "$limits" ] || { echo "$name: no ibsim limits in the net file header" >&2; return 1; }
  export IBSIM_SOCKNAME="fproutes$$-$name-$eng"
  mkfifo "$d/console"
  sleep infinity > "$d/console" &  # holds the console open: ibsim spins at end-of-file
  holder_pid=$!
  # shellcheck disable=SC2086
  (cd "$d" && exec ibsim -s $limits net < console > ibsim.log 2>&1) &
  sim_pid=$!
  for _ in $(seq 600); do
    grep -qs "simulator ready" "$d/ibsim.log" && break
    kill -0 "$sim_pid" 2>/dev/null || { cat "$d/ibsim.log" >&2; return 1; }
    sleep 0.05
  done
  mkdir -p "$d/osm"
  (cd "$d" && timeout 600 env LD_PRELOAD=$umad2sim OSM_TMP_DIR="$d/osm" OSM_CACHE_DIR="$d/osm" \
    opensm -o -e -f "$d/osm/osm.log" -D 0x43 --dump_files_dir "$d/osm" -R "$eng" -s 0 \
    > "$d/osm/stdout" 2>&1) || true
  # The engine must be the one asked for: opensm falls back to minhop when it fails.
  if ! grep -q "$eng tables configured on all switches" "$d/osm/osm.log"; then
    echo "$name: opensm did not route with $eng:" >&2
    grep -E 'ERR|tables configured|fallback|no root' "$d/osm/osm.log" | cut -c 30- | head >&2
    stop_sim
    return 1
  fi
  (cd "$d" && timeout 300 env LD_PRELOAD=$umad2sim ibnetdiscover > ibnd.txt 2> ibnd.err)
  stop_sim
  gzip -9 -n < "$d/ibnd.txt" > "$here/$name-$eng.ibnetdiscover.txt.gz"
  gzip -9 -n < "$d/osm/opensm-lfts.dump" > "$here/$name-$eng.lfts.dump.gz"
  # updn's roots, one GUID a line (opensm-updn-roots.dump without its header).
  if [ "$eng" = updn ]; then
    grep '^0x' "$d/osm/opensm-updn-roots.dump" > "$here/$name-updn.roots.txt"
  fi
  echo "$name-$eng: $(grep -c '^0x' "$d/osm/opensm-lfts.dump") LFT entries"
}

for f in "${fabrics[@]}"; do
  IFS='|' read -r name src engines <<< "$f"
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
  for eng in $engines; do make_one "$name" "$src" "$eng"; done
done
