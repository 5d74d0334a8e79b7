#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# spdx.sh SRC: every source file the project wrote carries its licence line, LICENSE is the
# GPL version 2 (the project is GPL-2.0-or-later), and README.md says so.
#
# Covered (the files git tracks, or all files when SRC is not a git checkout): *.cpp *.hpp *.c
# *.h *.sh *.lua *.cmake *.py *.lds, CMakeLists.txt, the systemd units and their defaults
# file, and every other file that starts with "#!" (.ci/run, the packages' maintainer
# scripts). Not covered: data, which keeps its own terms: tests/data/ (third-party samples,
# named in cmake/deb/copyright) and fuzz/seeds/ (inputs), except the scripts among them.
# The line must be within the first three lines: "SPDX-License-Identifier: GPL-2.0-or-later"
# in the file's comment syntax (after a "#!" line).
set -uo pipefail
src=${1:?usage: spdx.sh SRC}
cd "$src" || exit 2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files)
else
  mapfile -t files < <(find . -path ./build -prune -o -path ./.git -prune -o -type f -print | sed 's|^\./||' | sort)
fi

declare -A kinds=()
covered=0
missing=()
for f in "${files[@]}"; do
  [[ -f $f ]] || continue
  base=${f##*/}
  kind=""
  case $base in
    *.cpp | *.hpp | *.c | *.h | *.sh | *.lua | *.cmake | *.py | *.lds) kind=".${base##*.}" ;;
    CMakeLists.txt) kind="CMakeLists.txt" ;;
    *.service | *.timer | *.default) [[ $f == etc/systemd/* ]] && kind="systemd" ;;
  esac
  if [[ -z $kind ]] && [[ $(head -c 2 "$f") == "#!" ]]; then kind="#! script"; fi
  [[ -z $kind ]] && continue
  case $f in
    tests/data/* | fuzz/seeds/*) [[ $kind == .py || $kind == .sh ]] || continue ;;
  esac
  kinds[$kind]=$((${kinds[$kind]:-0} + 1))
  covered=$((covered + 1))
  head -n 3 "$f" | grep -q 'SPDX-License-Identifier: GPL-2.0-or-later' || missing+=("$f")
done

for k in "${!kinds[@]}"; do printf '%s %s\n' "${kinds[$k]}" "$k"; done | sort -k2 |
  awk '{ printf "covered: %5d %s\n", $1, substr($0, index($0, $2)) }'
echo "covered: $covered files"
[[ $covered -ge 300 ]] || fail "only $covered files covered: is $src the source tree?"
for f in "${missing[@]}"; do fail "$f: no 'SPDX-License-Identifier: GPL-2.0-or-later' in its first three lines"; done

# LICENSE: the GPL version 2, verbatim (as /usr/share/common-licenses/GPL-2 has it).
if [[ ! -f LICENSE ]]; then
  fail "no LICENSE"
else
  grep -q '^ *GNU GENERAL PUBLIC LICENSE$' LICENSE && grep -q '^ *Version 2, June 1991$' LICENSE ||
    fail "LICENSE is not the GNU GPL version 2"
  [[ ! -f /usr/share/common-licenses/GPL-2 ]] || cmp -s LICENSE /usr/share/common-licenses/GPL-2 ||
    fail "LICENSE differs from /usr/share/common-licenses/GPL-2"
fi
# cmake/deb/copyright (installed as every package's /usr/share/doc/PACKAGE/copyright): machine-
# readable (DEP-5, read strictly by python3-debian), "Files: *" GPL-2+, every other Files
# pattern naming files that exist, every licence named given its text.
if [[ ! -f cmake/deb/copyright ]]; then
  fail "no cmake/deb/copyright"
elif ! out=$(/usr/bin/python3 - "${files[@]}" 2>&1 <<'PY'
import fnmatch, sys
from debian.copyright import Copyright
c = Copyright(open("cmake/deb/copyright", encoding="utf-8"), strict=True)
tracked = sys.argv[1:]
bad = []
if not c.header.format or "copyright-format/1.0" not in c.header.format:
    bad.append("no DEP-5 Format line")
texts = {p.license.synopsis for p in c.all_license_paragraphs()}
stanzas = list(c.all_files_paragraphs())
if not stanzas or stanzas[0].files != ("*",) or stanzas[0].license.synopsis != "GPL-2+":
    bad.append("the first Files stanza is not 'Files: *' under GPL-2+")
for p in stanzas:
    if not p.license.text and p.license.synopsis not in texts:
        bad.append(f"licence {p.license.synopsis} has no text")
    for pat in p.files:
        if pat != "*" and not any(fnmatch.fnmatchcase(f, pat) for f in tracked):
            bad.append(f"Files: {pat} names no file of the tree")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
); then
  while IFS= read -r l; do fail "cmake/deb/copyright: $l"; done <<<"$out"
fi

grep -q '^## Licence' README.md || fail "README.md has no '## Licence' section"
grep -q 'GPL-2.0-or-later' README.md || fail "README.md does not name GPL-2.0-or-later"

[[ $fails -eq 0 ]] && echo "PASS: spdx ($covered files)" || echo "spdx: $fails failure(s)"
exit $((fails > 0))
