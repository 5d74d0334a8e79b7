#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run_scenario.sh FABRICPLACE SCENARIO.cmd DATA_DIR
# Runs `fabricplace <args from SCENARIO.cmd>` in DATA_DIR and compares stdout, stderr and
# the exit status with SCENARIO.out, SCENARIO.err and SCENARIO.rc (absent = empty / 0).
# FABRICPLACE_UPDATE_GOLDEN=1 rewrites the expectations instead.
set -uo pipefail
bin=$1 cmd=$2 data=$3
base=${cmd%.cmd}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
read -r -a args < <(grep -v '^#' "$cmd" | head -n 1)
(cd "$data" && "$bin" "${args[@]}" >"$tmp/out" 2>"$tmp/err")
echo $? >"$tmp/rc"
if [[ "${FABRICPLACE_UPDATE_GOLDEN:-0}" == 1 ]]; then
  cp "$tmp/out" "$base.out"; cp "$tmp/err" "$base.err"; cp "$tmp/rc" "$base.rc"
  for f in out err; do [[ -s "$base.$f" ]] || rm -f "$base.$f"; done
  [[ "$(cat "$base.rc")" == 0 ]] && rm -f "$base.rc"
  echo "updated $base.*"; exit 0
fi
status=0
for f in out err; do
  if ! diff -u "${base}.$f" "$tmp/$f" >"$tmp/diff" 2>/dev/null; then
    if [[ -e "$base.$f" || -s "$tmp/$f" ]]; then
      echo "== $f differs from $base.$f"; cat "$tmp/diff"; [[ -e "$base.$f" ]] || cat "$tmp/$f"; status=1
    fi
  fi
done
want_rc=$(cat "$base.rc" 2>/dev/null || echo 0)
if [[ "$(cat "$tmp/rc")" != "$want_rc" ]]; then echo "== exit status $(cat "$tmp/rc"), expected $want_rc"; status=1; fi
exit $status
