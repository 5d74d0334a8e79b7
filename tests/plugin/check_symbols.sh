#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The plugin exports exactly what Slurm looks up (version script plugin/fabricplace.lds) and
# the plugin_* symbols have C linkage (the SPANK_PLUGIN trap in C++).
set -euo pipefail
so=$1
actual=$(nm -D --defined-only "$so" | awk '{print $3}' | sort)
allowed='^(slurm_spank_[a-z_]+|plugin_name|plugin_type|plugin_version|spank_plugin_version)$'
bad=$(grep -Ev "$allowed" <<<"$actual" || true)
if [[ -n "$bad" ]]; then echo "unexpected exported symbols:"; echo "$bad"; exit 1; fi
for need in plugin_name plugin_type plugin_version spank_plugin_version slurm_spank_init; do
  grep -qx "$need" <<<"$actual" || { echo "missing exported symbol: $need"; echo "have:"; echo "$actual"; exit 1; }
done
echo "exported: $(tr '\n' ' ' <<<"$actual")"
