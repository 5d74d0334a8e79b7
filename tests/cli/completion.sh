#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# completion.sh FABRICPLACE: the bash completion script (`fabricplace completion`, what the
# build installs) completes subcommands at every level, a command's options after "-", and
# file names where a command takes no subcommand; the hidden build commands are not offered.
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" completion >"$tmp/fabricplace.bash"
bash -n "$tmp/fabricplace.bash"
cd "$tmp" && touch fabric-a.json fabric-b.json
fails=0
# expect "WORDS..." "WANT": the completions of the last word, sorted, space-separated
expect() {
  local got
  got=$(bash -c '. ./fabricplace.bash; eval "set -- $1"; COMP_WORDS=(fabricplace "$@")
                 COMP_CWORD=$#; _fabricplace
                 printf "%s\n" "${COMPREPLY[@]}" | sort | paste -sd" "' _ "$1")
  [[ $got == "$2" ]] || { echo "FAIL: fabricplace $1<TAB>: got '$got', want '$2'"; fails=$((fails + 1)); }
}
expect "''" "fabric place rankfile simulate slurm trace"
expect "fab" "fabric"
expect "fabric ''" "diff discover export generate import merge metrics show watch"
expect "fabric ex" "export"
expect "fabric export --fo" "--format"
expect "fabric export --format slurm-block fabric-" "fabric-a.json fabric-b.json"
expect "slurm c" "check"
expect "slurm ''" "check sync"
expect "slurm sync --dr" "--dry-run"
expect "slurm check --plug" "--plugin --plugstack"
expect "place --fabric x --tp" "--tp"
expect "m" ""
[[ $fails == 0 ]] || exit 1
echo "ok: subcommands, options and file names complete"
