#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# man_pages.sh FABRICPLACE: the manual pages (`fabricplace man --out DIR`, what the build
# installs) and --help agree:
#   - every command --help lists, down to the leaves, has its page (fabricplace.1,
#     fabricplace-fabric-export.1, ...), and no page is left over;
#   - each page renders without a groff warning (man -l would show it) and no markup shows
#     as text, and it holds its
#     command's description, every option --help lists (long name) and every subcommand.
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v groff >/dev/null || { echo "FAIL: no groff (groff-base)"; exit 1; }
"$bin" man --out "$tmp/man"

render() { groff -man -Tascii -P-c -ww -Wbreak "$1" 2>"$tmp/groff.err" | sed 's/.\x08//g' | tr -s ' \n' ' '; }

# subcommands CMD...: the subcommands `fabricplace CMD... --help` lists
subcommands() {
  "$bin" "$@" --help | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}'
}

want=()
walk() {
  want+=("$(IFS=-; echo "fabricplace${*:+-$*}").1")
  local s
  for s in $(subcommands "$@"); do walk "$@" "$s"; done
}
walk
n=0 fails=0
for page in "${want[@]}"; do
  [[ -f $tmp/man/$page ]] || { echo "FAIL: no page $page"; fails=$((fails + 1)); continue; }
  IFS=- read -ra path <<<"${page%.1}"
  cmd=("${path[@]:1}")
  text=$(render "$tmp/man/$page")
  [[ ! -s $tmp/groff.err ]] || { echo "FAIL: $page: groff says: $(head -3 "$tmp/groff.err")"; fails=$((fails + 1)); }
  [[ $text != *'\f'* && $text != *'\e'* ]] ||
    { echo "FAIL: $page: roff markup shows as text: $(grep -o '.\{20\}\\[fe].\{20\}' <<<"$text" | head -1)"; fails=$((fails + 1)); }
  help=$("$bin" "${cmd[@]}" --help)
  # The description: the first line of --help (the root's is its banner).
  desc=$(head -1 <<<"$help" | tr -s ' ')
  [[ ${#cmd[@]} == 0 ]] && desc=${desc#fabricplace: }
  [[ $text == *"$desc"* ]] || { echo "FAIL: $page lacks its description: $desc"; fails=$((fails + 1)); }
  for opt in $(grep -oE '^ +(-[a-zA-Z], ?)?--[a-z][a-z0-9-]*' <<<"$help" | grep -oE -- '--[a-z][a-z0-9-]*'); do
    [[ $text == *"$opt"* ]] || { echo "FAIL: $page lacks option $opt of ${cmd[*]} --help"; fails=$((fails + 1)); }
    n=$((n + 1))
  done
  for s in $(subcommands "${cmd[@]}"); do
    [[ $text == *" $s "* ]] || { echo "FAIL: $page lacks subcommand $s"; fails=$((fails + 1)); }
  done
done
extra=$(comm -13 <(printf '%s\n' "${want[@]}" | sort) <(ls "$tmp/man" | sort))
[[ -z $extra ]] || { echo "FAIL: pages no --help lists: $extra"; fails=$((fails + 1)); }
[[ $fails == 0 ]] || exit 1
echo "ok: ${#want[@]} pages, $n options, each as --help lists it"
