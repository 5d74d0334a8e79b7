#!/usr/bin/env bash
# deb_checks.sh DEBS SRC SERIES VERSION SPEC APT_CACHE: inside the clean chroot of deb.sh.
# Installs the packages as an admin would and checks everything from the installed files.
set -uo pipefail
debs=$1 src=$2 series=$3 version=$4 spec=$5 aptcache=$6
fails=0
check() {
  local d=$1; shift
  if "$@"; then echo "PASS: $d"; else echo "FAIL: $d"; fails=$((fails + 1)); fi
}
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
FABRICPLACE=/usr/bin/fabricplace
# shellcheck source=tests/slurm/common.sh
. "$src/tests/slurm/common.sh"
lab_start_plugin "$spec" "$so" /usr/share/fabricplace/slurm/job_submit.lua
etc=$LAB_DIR/etc
# Slurm's side from `slurm sync` (taking over the files lab.sh wrote), the plugin's line from
# plugstack.conf.d as Debian's plugstack.conf includes it; job_submit.lua reads fabric.lua.
check "slurm sync --replace --reconfigure into the lab's directory" \
  fabricplace slurm sync --fabric "$etc/fabric.json" --out "$etc" --replace --reconfigure \
    --plugin "$so" --plugin-args "gpus_per_node=2 log=$LAB_DIR/log/fabricplace.log"
echo "include $etc/plugstack.conf.d/*.conf" >"$etc/plugstack.conf"
check "the synced files are links into the live snapshot" test -L "$etc/fabric.hostmap" -a -L "$etc/topology.conf"
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
check "constrain mode: job_submit.lua (installed) read the synced table and constrained the job" \
  grep -q "job tp: " "$LAB_DIR/log/job_submit.log"
check "no internal errors logged" bash -c "! grep -q 'internal error' '$LAB_DIR/log/fabricplace.log' '$LAB_DIR'/log/slurmd-*.log"
if ((fails)); then
  for f in ring.err "$LAB_DIR/log/fabricplace.log" "$LAB_DIR/log/job_submit.log"; do echo "== $f"; tail -20 "$f" 2>/dev/null; done
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
