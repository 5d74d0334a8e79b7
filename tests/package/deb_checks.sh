#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# deb_checks.sh DEBS SRC SERIES VERSION SPEC APT_CACHE: inside the clean chroot of deb.sh.
# Installs the packages as an admin would and checks everything from the installed files.
set -uo pipefail
debs=$1 src=$2 series=$3 version=$4 spec=$5 aptcache=$6
FABRICPLACE=/usr/bin/fabricplace
# check(), fails and the lab (tests/slurm/common.sh): sourced first, as it sets fails=0.
# shellcheck source=tests/slurm/common.sh
. "$src/tests/slurm/common.sh"
log=/tmp/fp-deb-apt.$$.log
export DEBIAN_FRONTEND=noninteractive
apt=(apt-get -q -y -o "Dir::Cache::archives=$aptcache/" --no-install-recommends)
"${apt[@]}" update >"$log" 2>&1 || { tail -20 "$log"; echo "FAIL: apt-get update"; exit 1; }
# What the packages say they need (names; versions are dpkg's to check), and what the checks
# and the lab use.
deps=$(for d in "$debs"/*.deb; do dpkg-deb -f "$d" Depends; done | tr ',' '\n' |
         sed -e 's/(.*//' -e 's/|.*//' -e 's/ //g' | grep . | sort -u)
# shellcheck disable=SC2086
"${apt[@]}" install $deps man-db bash-completion slurmctld slurmd slurm-client munge \
  util-linux procps iproute2 hostname systemd >>"$log" 2>&1 || { tail -20 "$log"; echo "FAIL: apt-get install"; exit 1; }
rm -f "$log"
plugin_deb=$(ls "$debs"/fabricplace-slurm-*.deb)

check "dpkg -i installs fabricplace and fabricplace-slurm-$series" \
  dpkg -i "$debs"/fabricplace_*.deb "$plugin_deb"
check "both are installed" \
  test "$(dpkg-query -W -f '${Status} ' fabricplace "fabricplace-slurm-$series")" == "install ok installed install ok installed "
check "fabricplace --version: $version" test "$(fabricplace --version)" == "$version"
for pkg in fabricplace "fabricplace-slurm-$series"; do
  check "$pkg: /usr/share/doc/$pkg/copyright is the project's DEP-5 copyright file" \
    cmp "/usr/share/doc/$pkg/copyright" "$src/cmake/deb/copyright"
done
check "the copyright file says GPL-2+ for every file the packages hold" \
  bash -c 'head -1 /usr/share/doc/fabricplace/copyright | grep -q "^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" &&
           grep -A2 -x "Files: \*" /usr/share/doc/fabricplace/copyright | grep -qx "License: GPL-2+"'
check "man fabricplace" bash -c 'MANPAGER=cat MANWIDTH=200 man fabricplace 2>/dev/null | grep -q "fabricplace - topology-aware placement"'
check "man fabricplace-slurm-sync" bash -c 'MANPAGER=cat MANWIDTH=200 man fabricplace-slurm-sync 2>/dev/null | grep -q -- "--dry-run"'
check "man 8 fabricplace-spank" bash -c 'MANPAGER=cat MANWIDTH=200 man 8 fabricplace-spank 2>/dev/null | grep -q "loads only on Slurm '"$series"'.x"'
complete_words() {  # WORD...: what bash completion offers for the last one
  bash -c '. /usr/share/bash-completion/bash_completion 2>/dev/null
           . /usr/share/bash-completion/completions/fabricplace
           COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
           _fabricplace; printf "%s\n" "${COMPREPLY[@]}"' _ "$@" | sort | paste -sd' '
}
check "bash completion: fabricplace sl -> slurm" test "$(complete_words fabricplace sl)" == slurm
check "bash completion: fabricplace slurm '' -> check sync" test "$(complete_words fabricplace slurm '')" == "check sync"
check "bash completion: fabricplace fabric w -> watch" test "$(complete_words fabricplace fabric w)" == watch
check "systemd-analyze verify: fabricplace-watch.service and .timer (their binary, man pages, settings)" \
  bash -c 'out=$(systemd-analyze verify /usr/lib/systemd/system/fabricplace-watch.service \
                   /usr/lib/systemd/system/fabricplace-watch.timer 2>&1) && [[ -z $out ]] || { echo "$out"; false; }'
check "the watch's settings parse and name a state the service owns" \
  bash -c '. /etc/default/fabricplace-watch && [[ $FABRICPLACE_WATCH_ARGS == *--sync-out* ]]'
so=$(dpkg -L "fabricplace-slurm-$series" | grep '/fabricplace\.so$')
check "the plugin is in Slurm's plugin directory" test "$so" == /usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/slurm-wlm/fabricplace.so
check "the plugstack line names the installed plugin" grep -q "^optional $so fabric=/etc/slurm/fabric.json" /etc/slurm/plugstack.conf.d/fabricplace.conf
check "fabricplace slurm check: the installed plugin matches Slurm $series and loads" \
  fabricplace slurm check --plugstack /etc/slurm/plugstack.conf.d/fabricplace.conf

# ---- a Slurm lab on the installed files -------------------------------------------------
# As an admin would: the package's plugin line (edited: these lab nodes have 2 GPUs), Debian's
# plugstack.conf including it, `slurm sync --out /etc/slurm` for the fabric files (the
# package's line is kept), the installed job_submit.lua with only a log file set.
plog=/var/log/fabricplace-lab.log
sed -i -e 's/gpus_per_node=8/gpus_per_node=2/' -e "s|\$| log=$plog|" /etc/slurm/plugstack.conf.d/fabricplace.conf
: >"$plog" && chmod 666 "$plog"
fabricplace slurm sync --fabric "$spec" --out /etc/slurm >/var/log/fabricplace-sync.out 2>&1
check "slurm sync --out /etc/slurm keeps the package's plugin line, which reads its fabric.json" \
  grep -q "kept  /etc/slurm/plugstack.conf.d/fabricplace.conf: not sync's" /var/log/fabricplace-sync.out
check "the package's plugin line is as the admin left it" grep -q "gpus_per_node=2 log=$plog$" /etc/slurm/plugstack.conf.d/fabricplace.conf
check "the synced files are links into the live snapshot" test -L /etc/slurm/fabric.hostmap -a -L /etc/slurm/fabric.lua
sed 's|^M.LOG = nil .*|M.LOG = "/var/log/fabricplace-job_submit.log"|' \
  /usr/share/fabricplace/slurm/job_submit.lua >/tmp/fp-deb-job_submit.lua
: >/var/log/fabricplace-job_submit.log
lab_start "$spec" --plugstack /etc/slurm/plugstack.conf --job-submit /tmp/fp-deb-job_submit.lua
rm -f /tmp/fp-deb-job_submit.lua
mkdir -p "$LAB_DIR/work" && chmod 777 "$LAB_DIR/work" && cd "$LAB_DIR/work" || exit 1
check "slurm sync --reconfigure: no change, but slurmctld never reread it: scontrol reconfigure runs" \
  bash -c 'fabricplace slurm sync --fabric "$1" --out /etc/slurm --reconfigure | grep -q "^reconfigure: scontrol reconfigure"' _ "$spec"
check "... and once it has, not again" \
  bash -c 'fabricplace slurm sync --fabric "$1" --out /etc/slurm --reconfigure | grep -q "^reconfigure: not needed"' _ "$spec"
out=$(sbatch --help 2>&1)
man_text=$(LC_ALL=C MANPAGER=cat MANWIDTH=400 man 8 fabricplace-spank 2>/dev/null | tr -s ' \n' ' ')
for opt in fabric-tp fabric-mode fabric-policy fabric-rankfile; do
  # The option's help, as sbatch wraps it over lines, joined.
  usage=$(awk -v o="--$opt" '
    on && /^                              / { sub(/^ +/, ""); text = text " " $0; next }
    on { exit }
    $1 ~ "^"o"=" { on = 1; $1 = ""; sub(/^ +/, ""); text = $0 }
    END { gsub(/ +/, " ", text); sub(/^ /, "", text); print text }' <<<"$out")
  check "sbatch --help shows --$opt as fabricplace-spank(8) documents it (${usage:0:40}...)" \
    bash -c '[[ ${#1} -gt 20 && $2 == *"$1"* ]]' _ "$usage" "$man_text"
done
busy=$(sbatch --parsable -J busy -o /dev/null -w 'node[001-004,006-008,011-012,014-016]' -N 12 --wrap 'sleep 600')
wait_running "$busy" 30 || echo "note: the busy job did not start"
timeout 120 salloc -N4 --ntasks-per-node=2 -J ring \
  srun --fabric-tp=4 bash -c 'echo "$SLURM_PROCID $(hostname) $FABRICPLACE_RING_RANK"' >ring.out 2>ring.err
check "srun --fabric-tp on the synced files: the ring order (node005 node013 node009 node010)" \
  test "$(sort -n ring.out | awk '{print $2}' | uniq | paste -sd' ')" == "node005 node013 node009 node010"
check "... with every task's ring rank" test "$(sort -n ring.out | awk '{print $3}' | paste -sd' ')" == "0 1 2 3 4 5 6 7"
scancel "$busy"
wait_all_idle 60 || true
jid=$(sbatch --parsable -N4 --ntasks-per-node=2 --fabric-tp=4 -J tp -o /dev/null --wrap 'sleep 2')
wait_gone "$jid" 120 || true
check "constrain mode: the installed job_submit.lua read /etc/slurm/fabric.lua and constrained the job" \
  grep -q "job tp: 4 nodes, TP groups of 2 nodes: features=" /var/log/fabricplace-job_submit.log
check "no internal errors logged" bash -c "! grep -q 'internal error' '$plog' '$LAB_DIR'/log/slurmd-*.log"
if ((fails)); then
  for f in /var/log/fabricplace-sync.out ring.err "$plog" /var/log/fabricplace-job_submit.log; do echo "== $f"; tail -20 "$f" 2>/dev/null; done
  LAB_KEEP=1
fi
lab_stop
trap - EXIT

check "dpkg --purge removes both packages and their files" \
  dpkg --purge "fabricplace-slurm-$series" fabricplace
check "... the binary, the plugin, the conffiles are gone" \
  bash -c '! ls /usr/bin/fabricplace "$1" /etc/slurm/plugstack.conf.d/fabricplace.conf /etc/default/fabricplace-watch /usr/share/man/man1/fabricplace.1 2>/dev/null' _ "$so"
echo "== $fails failed"
((fails == 0))
