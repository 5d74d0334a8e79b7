#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# place_empty_lists.sh FABRICPLACE DATA_DIR
# An empty list is a list: `--free ''` means nothing is free (no placement, exit 3), never
# "option not given"; `--busy ''` means nothing is busy. (Scenario files cannot pass an
# empty argument.)
set -uo pipefail
bin=$1 data=$2
fabric=$data/fabrics/fat2_L8.ibnetdiscover.txt
fail=0
out=$("$bin" place --fabric "$fabric" -N 4 --free '' --json 2>/dev/null); rc=$?
if [[ $rc != 3 || "$out" != *'"feasible": false'* || "$out" != *'0 usable (0 free; 160 busy)'* ]]; then
  echo "--free '': expected exit 3 and no usable host, got $rc: $out"; fail=1
fi
out=$("$bin" place --fabric "$fabric" -N 4 --busy '' 2>&1); rc=$?
if [[ $rc != 0 || "$out" != *'hosts: node[001-004] (4)'* ]]; then
  echo "--busy '': expected node[001-004], got $rc: $out"; fail=1
fi
exit $fail
