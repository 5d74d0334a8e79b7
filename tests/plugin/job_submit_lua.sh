#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# job_submit_lua.sh FABRICPLACE LUA51: etc/job_submit.lua's functions under Lua 5.1 (the
# interpreter Slurm 22.05's job_submit/lua embeds), on the fabric table that
# `fabricplace fabric export --format lua` writes for the lab's 3-level fabric, and against
# hostile job descriptions; then etc/cli_filter.lua's. Also run with lua5.4 (Debian 13's
# Slurm 24.11 embeds 5.4).
set -euo pipefail
fp=$1 lua=$2
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
"$fp" fabric export 'fat3:pods=2,leaves=2,down=4,up=4' --format lua -o "$d/fabric.lua"
"$fp" slurm sync --fabric 'fat3:pods=2,leaves=2,down=4,up=4' --out "$d/a" >/dev/null
"$fp" slurm sync --fabric 'fat3:pods=2,leaves=2,down=3,up=4' --out "$d/b" >/dev/null
"$fp" fabric export 'fat2:leaves=3,down=4,up=4,nvl=6,gpus=4' --format lua -o "$d/domains.lua"
"$lua" "$here/test_job_submit.lua" "$here/../../etc/job_submit.lua" "$d/fabric.lua" "$d/a/fabric.lua" "$d/b/fabric.lua" "$d/domains.lua"
# Hostile job descriptions: CPU per submission and the heap bounded (tables of its own).
"$lua" "$here/test_job_submit_hostile.lua" "$here/../../etc/job_submit.lua"
"$lua" "$here/test_cli_filter.lua" "$here/../../etc/cli_filter.lua"
