#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# lab.sh - fabricplace's own throw-away Slurm test cluster on ONE machine: 22.05 on the host
# (Debian 12), 24.11 inside tests/slurm/chroot.sh's Debian 13 (the same script, run there).
#
#   lab.sh up --fabric SPEC [--fabricplace PATH] [--dir DIR] [--plugstack FILE]
#             [--job-submit FILE] [--cli-filter FILE] [--topology tree|block] [--restart]
#   lab.sh down [--dir DIR] [--purge]
#   lab.sh status [--dir DIR]
#   lab.sh restart-ctld [--dir DIR] [--kill]
#   lab.sh kill-slurmd NODE [--dir DIR]
#   lab.sh start-slurmd NODE [--dir DIR]
#
# The nodes, topology.conf and per-node features come from `fabricplace fabric export SPEC`
# (--format slurm-topology / slurm-features; with --topology block, Slurm 23.11+:
# slurm-block, and slurm-block-nodes for the placeholders' State=FUTURE nodes); DIR/etc/fabric.json (and fabric.hostmap and
# fabric.lua, for the SPANK plugin and job_submit.lua) is the same fabric as
# JSON, for `fabricplace place --fabric`. One munged on a private socket, one slurmctld and
# one slurmd per host (multiple-slurmd: `slurmd -N nodeNNN`, each under `unshare --uts` so
# `hostname` in a job prints the node name; NodeAddr 127.0.1.K, Port BASE_PORT+K for the
# K-th host). topology/tree, select/cons_tres CR_Core, a node-exclusive partition, CPUs per
# node = this machine's cores, no accounting. See tests/slurm/README.md.
#
# Faults, for tests (tests/slurm/plugin_fault_*.sh): restart-ctld stops slurmctld by PID
# (SIGTERM: it saves its state; --kill: SIGKILL, a crash) and starts it again recovering
# that state (no -c), waiting until it answers; kill-slurmd SIGKILLs one node's slurmd (its
# slurmstepds and tasks go on, as on a node whose slurmd crashed); start-slurmd starts it
# again (ReturnToService=2: the node returns once it registers).
#
# Exit status: 0 ok; 1 error (nothing left running); 2 usage; 77 Slurm cannot run here
# ("slurm lab: cannot run here: ...", tests SKIP on it). `status`: 0 up, 3 down.
#
# Environment: FABRICPLACE_LAB (default DIR, /tmp/fabricplace-slurmlab), FABRICPLACE (the
# fabricplace binary), FABRICPLACE_LAB_CTLD_PORT (16817), FABRICPLACE_LAB_BASE_PORT (17000),
# FABRICPLACE_LAB_UP_TIMEOUT (30 s), FABRICPLACE_LAB_CTLD_DEBUG / _SLURMD_DEBUG (info),
# FABRICPLACE_LAB_SLURMD_TIMEOUT (SlurmdTimeout, 300 s: how long a silent node stays up),
# NO_UNSHARE=1 (no UTS namespaces; chosen automatically where unshare is not permitted).
# In plugstack/job_submit/cli_filter files, @LAB@ stands for DIR. --cli-filter becomes
# DIR/etc/cli_filter.lua beside slurm.conf, where the client commands look for it
# (CliFilterPlugins=lua).
set -uo pipefail

prog=lab.sh
die()  { echo "slurm lab: $*" >&2; exit 1; }
skip() { echo "slurm lab: cannot run here: $*" >&2; exit 77; }
usage() { sed -n '/^#   lab.sh up /,/^#$/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }

[[ $# -ge 1 ]] || usage
cmd=$1; shift
dir=${FABRICPLACE_LAB:-/tmp/fabricplace-slurmlab}
spec="" topology=tree fp=${FABRICPLACE:-fabricplace} plugstack="" jobsubmit="" clifilter="" restart=0 purge=0 kill=0 node=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --kill) kill=1; shift ;;
    --fabric) spec=${2:?--fabric needs a value}; shift 2 ;;
    --topology) topology=${2:?--topology needs a value}; shift 2
                [[ $topology == tree || $topology == block ]] || { echo "$prog: --topology tree or block" >&2; usage; } ;;
    --fabricplace) fp=${2:?--fabricplace needs a value}; shift 2 ;;
    --dir) dir=${2:?--dir needs a value}; shift 2 ;;
    --plugstack) plugstack=${2:?--plugstack needs a value}; shift 2 ;;
    --job-submit) jobsubmit=${2:?--job-submit needs a value}; shift 2 ;;
    --cli-filter) clifilter=${2:?--cli-filter needs a value}; shift 2 ;;
    --restart) restart=1; shift ;;
    --purge) purge=1; shift ;;
    -h|--help) usage ;;
    -*) echo "$prog: unknown argument: $1" >&2; usage ;;
    *)
      if [[ ( $cmd == kill-slurmd || $cmd == start-slurmd ) && -z $node ]]; then node=$1; shift
      else echo "$prog: unknown argument: $1" >&2; usage; fi ;;
  esac
done
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
ETC=$dir/etc RUN=$dir/run LOG=$dir/log ST=$dir/state
export SLURM_CONF=$ETC/slurm.conf
CTLD_PORT=${FABRICPLACE_LAB_CTLD_PORT:-16817}
BASE_PORT=${FABRICPLACE_LAB_BASE_PORT:-17000}
export PATH=$PATH:/usr/sbin:/sbin   # slurmctld, slurmd, munged live in sbin

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.2f", b-a}'; }

alive() {  # running and not a zombie
  [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null || return 1
  local st; st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 1
  [[ $st != Z ]]
}
ctld_alive() { [[ -s $RUN/slurmctld.pid ]] && alive "$(cat "$RUN/slurmctld.pid")"; }

# Hostlist expansion (fabricplace's exports: prefix[a-b,c]suffix, items separated by
# commas outside brackets). Prints one name per line.
expand_hostlist() {
  awk -v list="$1" '
    function one(item,   lb, rb, pre, inner, suf, n, parts, i, ab, w, k, rest, m, rs, j) {
      lb = index(item, "[")
      if (!lb) { out[++nout] = item; return }
      rb = index(item, "]")
      pre = substr(item, 1, lb - 1); inner = substr(item, lb + 1, rb - lb - 1); suf = substr(item, rb + 1)
      n = split(inner, parts, ",")
      for (i = 1; i <= n; i++) {
        if (split(parts[i], ab, "-") == 1) ab[2] = ab[1]
        w = length(ab[1])
        for (k = ab[1] + 0; k <= ab[2] + 0; k++) {
          rest = sprintf("%s%0*d", pre, w, k)
          if (index(suf, "[")) { m = nout; one(suf); for (j = m + 1; j <= nout; j++) out[j] = rest out[j] }
          else out[++nout] = rest suf
        }
      }
    }
    BEGIN {
      depth = 0; cur = ""
      for (c = 1; c <= length(list); c++) {
        ch = substr(list, c, 1)
        if (ch == "[") depth++
        if (ch == "]") depth--
        if (ch == "," && depth == 0) { if (cur != "") one(cur); cur = "" } else cur = cur ch
      }
      if (cur != "") one(cur)
      for (i = 1; i <= nout; i++) print out[i]
    }'
}

# ---------------------------------------------------------------------------- down
lab_down() {
  local t0; t0=$(now)
  # 1) cancel jobs so steps end cleanly (bounded wait)
  if ctld_alive; then
    local jobs; jobs=$(timeout 10 squeue -h -o %i 2>/dev/null)
    if [[ -n $jobs ]]; then
      # shellcheck disable=SC2086
      timeout 10 scancel $jobs 2>/dev/null
      for _ in $(seq 1 30); do [[ -z $(timeout 5 squeue -h -o %i 2>/dev/null) ]] && break; sleep 0.1; done
    fi
  fi
  # 2) collect pids: pid files; every process in a lab slurmd's private UTS namespace;
  #    slurmstepds, and job tasks, whose environment carries this SLURM_CONF (NO_UNSHARE);
  #    a slurmd's or slurmstepd's whose working directory is in DIR (the steps of a slurmd
  #    killed as a fault: its namespace is no longer any live slurmd's, and slurmstepd's
  #    process title has overwritten its environment)
  local pids=() reps=() f p d c r
  for f in "$RUN"/slurmctld.pid "$RUN"/slurmd-*.pid "$RUN"/munged.pid; do
    [[ -s $f ]] && alive "$(cat "$f")" && pids+=("$(cat "$f")")
  done
  for f in "$RUN"/slurmctld.pid "$RUN"/slurmd-*.pid; do
    [[ -s $f ]] || continue; p=$(cat "$f"); alive "$p" || continue
    [[ /proc/$p/ns/uts -ef /proc/$$/ns/uts ]] || reps+=("$p")
  done
  local ancestors=" " a=$$
  while [[ -n $a && $a != 0 && $a != 1 ]]; do
    ancestors+="$a "; a=$(awk '{print $4}' "/proc/$a/stat" 2>/dev/null)
  done
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [[ $ancestors == *" $p "* ]] && continue
    for r in "${reps[@]}"; do   # -ef compares the namespace inode: no fork per process
      if [[ $d/ns/uts -ef /proc/$r/ns/uts ]]; then pids+=("$p"); continue 2; fi
    done
    c=; { read -r c <"$d/comm"; } 2>/dev/null
    if [[ $c == slurmstepd || $c == slurmd ]]; then
      r=$(readlink "$d/cwd" 2>/dev/null)
      if [[ $r == "$dir" || $r == "$dir"/* ]]; then pids+=("$p"); continue; fi
    fi
    grep -qzx "SLURM_CONF=$SLURM_CONF" "$d/environ" 2>/dev/null || continue
    if [[ $c == slurmstepd ]] || grep -qz '^SLURM_JOB_ID=' "$d/environ" 2>/dev/null; then pids+=("$p"); fi
  done
  [[ ${#pids[@]} -gt 0 ]] && mapfile -t pids < <(printf '%s\n' "${pids[@]}" | sort -un)
  # 3) TERM, wait up to 5 s, then KILL leftovers - strictly by PID
  local left=()
  if [[ ${#pids[@]} -gt 0 ]]; then
    kill -TERM "${pids[@]}" 2>/dev/null
    for _ in $(seq 1 50); do
      left=(); for p in "${pids[@]}"; do alive "$p" && left+=("$p"); done
      [[ ${#left[@]} -eq 0 ]] && break; sleep 0.1
    done
    if [[ ${#left[@]} -gt 0 ]]; then
      echo "slurm lab: SIGKILL ${left[*]}" >&2; kill -KILL "${left[@]}" 2>/dev/null; sleep 0.2
    fi
  fi
  rm -f "$RUN"/*.pid
  if [[ $purge == 1 ]]; then
    rm -rf "$ETC" "$RUN" "$LOG" "$ST" "$dir/env"
    rmdir "$dir" 2>/dev/null
  fi
  echo "slurm lab: down ($dir): ${#pids[@]} processes stopped in $(elapsed "$t0") s"
}

# -------------------------------------------------------------------------- status
lab_status() {
  if ! ctld_alive; then echo "slurm lab: not up ($dir)"; return 3; fi
  local n=0 up=0 f
  for f in "$RUN"/slurmd-*.pid; do [[ -s $f ]] || continue; n=$((n + 1)); alive "$(cat "$f")" && up=$((up + 1)); done
  echo "slurm lab: up ($dir): slurmctld pid $(cat "$RUN/slurmctld.pid"), $up/$n slurmd running"
  echo "export SLURM_CONF=$SLURM_CONF"
  timeout 10 sinfo -N -o '%N %t %c %f'
}

# -------------------------------------------------------------------------- faults
lab_env() {  # the settings of the lab that is up (NO_UNSHARE as it was brought up)
  [[ -r $dir/env ]] || die "no lab in $dir (no $dir/env)"
  # shellcheck disable=SC1091
  . "$dir/env"
  [[ ${FABRICPLACE_LAB_UNSHARE:-1} == 0 ]] && NO_UNSHARE=1
  return 0
}

wait_gone_pid() {  # wait_gone_pid PID SECONDS: 0 once PID has exited
  local i
  for ((i = 0; i < $2 * 10; i++)); do alive "$1" || return 0; sleep 0.1; done
  return 1
}

lab_restart_ctld() {
  local t0 pid sig=TERM deadline
  t0=$(now)
  lab_env
  ctld_alive || die "slurmctld is not running in $dir"
  pid=$(cat "$RUN/slurmctld.pid")
  [[ $kill == 1 ]] && sig=KILL
  kill -"$sig" "$pid" 2>/dev/null
  if ! wait_gone_pid "$pid" 30; then
    echo "slurm lab: slurmctld $pid still running 30 s after SIG$sig; SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null; wait_gone_pid "$pid" 5 || die "slurmctld $pid does not exit"
  fi
  # The port is released with the process; a restart that finds it taken fails to bind.
  local port; port=$(sed -n 's/^SlurmctldPort=//p' "$SLURM_CONF")
  for _ in $(seq 1 50); do port_in_use "${port:-$CTLD_PORT}" || break; sleep 0.1; done
  # The old PID file would name the dead process until the new daemon writes its own (a
  # moment after it forks, longer on a loaded machine): without it, "not yet" is not "died".
  rm -f "$RUN/slurmctld.pid"
  ns slurmctl slurmctld -f "$SLURM_CONF" || die "slurmctld failed to restart"
  deadline=$(($(date +%s) + ${FABRICPLACE_LAB_UP_TIMEOUT:-30}))
  until timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP'; do
    if [[ -s $RUN/slurmctld.pid ]] && ! ctld_alive; then
      tail -15 "$LOG/slurmctld.log" >&2
      die "slurmctld died after its restart"
    fi
    [[ $(date +%s) -ge $deadline ]] && die "slurmctld does not answer ${FABRICPLACE_LAB_UP_TIMEOUT:-30} s after its restart"
    sleep 0.1
  done
  echo "slurm lab: slurmctld restarted (SIG$sig, pid $pid -> $(cat "$RUN/slurmctld.pid")) in $(elapsed "$t0") s"
}

lab_kill_slurmd() {
  [[ -n $node ]] || { echo "$prog kill-slurmd: NODE is required" >&2; usage; }
  local f=$RUN/slurmd-$node.pid pid
  if [[ ! -s $f ]] || ! alive "$(cat "$f")"; then die "slurmd of $node is not running"; fi
  pid=$(cat "$f")
  kill -KILL "$pid"
  wait_gone_pid "$pid" 10 || die "slurmd $pid of $node does not exit"
  echo "slurm lab: slurmd of $node (pid $pid) killed"
}

lab_start_slurmd() {
  [[ -n $node ]] || { echo "$prog start-slurmd: NODE is required" >&2; usage; }
  lab_env
  local f=$RUN/slurmd-$node.pid
  [[ -s $f ]] && alive "$(cat "$f")" && die "slurmd of $node is already running"
  grep -q "^NodeName=$node " "$SLURM_CONF" || die "no node $node in $SLURM_CONF"
  ns "$node" slurmd -f "$SLURM_CONF" -N "$node" || die "slurmd -N $node failed to start"
  echo "slurm lab: slurmd of $node started (pid $(cat "$f" 2>/dev/null))"
}

# ------------------------------------------------------------------------------ up
check_can_run() {
  local b
  for b in slurmctld slurmd munged sinfo squeue scontrol srun sbatch scancel; do
    command -v "$b" >/dev/null || skip "no $b (install slurmctld, slurmd, slurm-client, munge)"
  done
  slurm_version=$(slurmd -V 2>/dev/null | awk '{print $NF}')
  [[ $slurm_version =~ ^[0-9]+\.[0-9]+ ]] || die "cannot read the Slurm version (slurmd -V printed '$slurm_version')"
  if [[ $(id -u) -ne 0 ]]; then
    skip "not root (slurmd starts job steps as the submitting user, so the lab runs as root; run as root or with sudo)"
  fi
  if [[ ${NO_UNSHARE:-0} != 1 ]] && ! unshare --uts true 2>/dev/null; then
    echo "slurm lab: note: unshare --uts is not permitted here; NO_UNSHARE=1 (jobs see this machine's hostname, use SLURMD_NODENAME)" >&2
    NO_UNSHARE=1
  fi
}

port_in_use() {  # TCP port listening on this machine?
  if command -v ss >/dev/null; then
    [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]]
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}

fail_up() {  # print the logs that explain it, then leave nothing running
  echo "slurm lab: $*" >&2
  if [[ -f $LOG/slurmctld.log ]]; then
    echo "---- tail $LOG/slurmctld.log" >&2; tail -15 "$LOG/slurmctld.log" >&2
  fi
  local h bad=""
  for h in "${hosts[@]}"; do
    if ! alive "$(cat "$RUN/slurmd-$h.pid" 2>/dev/null)"; then bad=$h; break; fi
  done
  if [[ -z $bad ]] && ctld_alive; then
    bad=$(timeout 5 sinfo -h -N -t '~idle' -o %N 2>/dev/null | head -1)  # a node that is not idle
  fi
  [[ -z $bad ]] && bad=${hosts[0]:-}
  if [[ -n $bad && -f $LOG/slurmd-$bad.log ]]; then
    echo "---- tail $LOG/slurmd-$bad.log" >&2; tail -15 "$LOG/slurmd-$bad.log" >&2
  fi
  lab_down >&2
  exit 1
}

ns() {  # ns HOSTNAME CMD... : run CMD (a daemon that forks itself) in a new UTS namespace
  local h=$1; shift
  if [[ ${NO_UNSHARE:-0} == 1 ]]; then "$@"; else unshare --uts -- sh -c 'hostname "$0" && exec "$@"' "$h" "$@"; fi
}

lab_up() {
  local t0; t0=$(now)
  [[ -n $spec ]] || { echo "$prog up: --fabric SPEC is required" >&2; usage; }
  check_can_run
  if [[ $fp != */* ]]; then command -v "$fp" >/dev/null || die "no fabricplace binary '$fp' (use --fabricplace PATH or FABRICPLACE)"; fi
  [[ -x $(command -v "$fp") ]] || die "fabricplace binary '$fp' is not executable"
  if ctld_alive; then
    if [[ $restart == 1 ]]; then lab_down; else
      die "already up in $dir (run \`$0 down --dir $dir\` first, or pass --restart)"
    fi
  else
    lab_down >/dev/null  # stale pids from a crashed lab: stop whatever is left
  fi
  [[ -z $plugstack || -r $plugstack ]] || die "cannot read --plugstack $plugstack"
  [[ -z $jobsubmit || -r $jobsubmit ]] || die "cannot read --job-submit $jobsubmit"
  [[ -z $clifilter || -r $clifilter ]] || die "cannot read --cli-filter $clifilter"

  local sock=$RUN/munge/munge.socket
  [[ ${#sock} -lt 100 ]] || die "--dir $dir is too long: the munge socket path $sock must fit a Unix socket address (< 100 characters)"
  mkdir -p "$ETC" "$RUN/munge" "$LOG" "$ST/ctld" "$ST/spool" || die "cannot create $dir"
  chmod 755 "$dir" "$RUN" "$RUN/munge"
  rm -rf "${ST:?}/ctld/"* "${ST:?}/spool/"*  # a clean cluster every time

  # ---- the fabric: topology.conf, features, JSON -----------------------------------
  if [[ $topology == block ]]; then
    [[ ${slurm_version%%.*} -ge 24 || $slurm_version == 23.11* ]] ||
      die "--topology block needs Slurm 23.11 or later (this is $slurm_version)"
    "$fp" fabric export "$spec" --format slurm-block -o "$ETC/topology.conf" ||
      die "fabricplace fabric export $spec --format slurm-block failed"
    "$fp" fabric export "$spec" --format slurm-block-nodes -o "$ETC/placeholders.conf" ||
      die "fabricplace fabric export $spec --format slurm-block-nodes failed"
  else
    "$fp" fabric export "$spec" --format slurm-topology -o "$ETC/topology.conf" ||
      die "fabricplace fabric export $spec --format slurm-topology failed"
    : >"$ETC/placeholders.conf"
  fi
  "$fp" fabric export "$spec" --format slurm-features -o "$ETC/features.conf" ||
    die "fabricplace fabric export $spec --format slurm-features failed"
  "$fp" fabric export "$spec" --format json -o "$ETC/fabric.json" ||
    die "fabricplace fabric export $spec --format json failed"
  "$fp" fabric export "$spec" --format hostmap -o "$ETC/fabric.hostmap" ||
    die "fabricplace fabric export $spec --format hostmap failed"
  "$fp" fabric export "$spec" --format lua -o "$ETC/fabric.lua" ||
    die "fabricplace fabric export $spec --format lua failed"
  # The hosts under a leaf (tree and block list the same ones), with their leaf's features.
  hosts=()
  declare -A feat=()
  local h nl f
  while read -r nl f; do
    while read -r h; do hosts+=("$h"); feat[$h]=$f; done < <(expand_hostlist "$nl")
  done < <(sed -n 's/^NodeName=\([^ ]*\) Features=\([^ ]*\).*/\1 \2/p' "$ETC/features.conf")
  [[ ${#hosts[@]} -gt 0 ]] || die "no hosts in $ETC/features.conf"
  [[ ${#hosts[@]} -le 64 ]] || die "$spec has ${#hosts[@]} hosts; the lab runs at most 64 slurmds on one machine"
  [[ $(printf '%s\n' "${hosts[@]}" | sort | uniq -d) == "" ]] || die "a host is under two leaves in $ETC/features.conf"

  # ---- ports must be free (another lab, or the reference one, may be up) ----------
  local k p
  port_in_use "$CTLD_PORT" && die "port $CTLD_PORT (slurmctld) is in use: another Slurm lab is up? (FABRICPLACE_LAB_CTLD_PORT)"
  for ((k = 1; k <= ${#hosts[@]}; k++)); do
    p=$((BASE_PORT + k))
    port_in_use "$p" && die "port $p (slurmd of ${hosts[k - 1]}) is in use: another Slurm lab is up? (FABRICPLACE_LAB_BASE_PORT)"
  done

  # ---- munge: a private key, a private munged on a private socket ------------------
  [[ -f $ETC/munge.key ]] || dd if=/dev/urandom of="$ETC/munge.key" bs=1024 count=1 status=none
  chmod 600 "$ETC/munge.key"
  munged --force --key-file="$ETC/munge.key" --socket="$RUN/munge/munge.socket" \
    --pid-file="$RUN/munged.pid" --log-file="$LOG/munged.log" \
    --seed-file="$RUN/munged.seed" --num-threads=4 ||
    { echo "slurm lab: munged failed to start:" >&2; tail -5 "$LOG/munged.log" >&2; lab_down >&2; exit 1; }

  # ---- slurm.conf ------------------------------------------------------------------
  local ctld_host=slurmctl cpus
  [[ ${NO_UNSHARE:-0} == 1 ]] && ctld_host=$(hostname -s)  # must equal slurmctld's hostname
  cpus=$(nproc)
  if [[ -n $plugstack ]]; then sed "s|@LAB@|$dir|g" "$plugstack" >"$ETC/plugstack.conf"; else : >"$ETC/plugstack.conf"; fi
  rm -f "$ETC/job_submit.lua"
  if [[ -n $jobsubmit ]]; then sed "s|@LAB@|$dir|g" "$jobsubmit" >"$ETC/job_submit.lua"; fi
  rm -f "$ETC/cli_filter.lua"
  if [[ -n $clifilter ]]; then sed "s|@LAB@|$dir|g" "$clifilter" >"$ETC/cli_filter.lua"; fi
  # The Slurm here (22.05 on Debian 12; 24.11 in tests/slurm/chroot.sh's Debian 13): from
  # 23.x on, slurmd initialises a cgroup plugin even with proctrack/linuxproc and task/none,
  # and fails ("Unable to initialize cgroup plugin") where the cgroup tree is not ours.
  rm -f "$ETC/cgroup.conf"
  if [[ ${slurm_version%%.*} -ge 23 ]]; then echo "CgroupPlugin=disabled" >"$ETC/cgroup.conf"; fi
  cat >"$ETC/slurm.conf" <<EOF
# Written by tests/slurm/lab.sh from: $spec
ClusterName=fplab
SlurmctldHost=$ctld_host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$RUN/munge/munge.socket
StateSaveLocation=$ST/ctld
SlurmdSpoolDir=$ST/spool/%n
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd-%n.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd-%n.log
SlurmctldDebug=${FABRICPLACE_LAB_CTLD_DEBUG:-info}
SlurmdDebug=${FABRICPLACE_LAB_SLURMD_DEBUG:-info}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# bf_interval=1: backfill every second (default 30); max_switch_wait: --switches=N@T may
# wait a day; batch_sched_delay=0: schedule batch jobs right at submission
SchedulerParameters=bf_interval=1,max_switch_wait=86400,batch_sched_delay=0
TopologyPlugin=topology/$topology
PlugStackConfig=$ETC/plugstack.conf
${jobsubmit:+JobSubmitPlugins=lua}
${clifilter:+CliFilterPlugins=lua}
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
SlurmdTimeout=${FABRICPLACE_LAB_SLURMD_TIMEOUT:-300}
SlurmctldTimeout=60
MessageTimeout=20
KillWait=2
MinJobAge=300
InactiveLimit=0
Waittime=0
PartitionName=lab Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
EOF
  for ((k = 1; k <= ${#hosts[@]}; k++)); do
    h=${hosts[k - 1]}
    printf 'NodeName=%s NodeHostname=%s NodeAddr=127.0.1.%d Port=%d CPUs=%d%s State=UNKNOWN\n' \
      "$h" "$h" "$k" $((BASE_PORT + k)) "$cpus" "${feat[$h]:+ Features=${feat[$h]}}" >>"$ETC/slurm.conf"
  done
  grep -v '^#' "$ETC/placeholders.conf" >>"$ETC/slurm.conf"  # topology/block's State=FUTURE nodes
  {
    echo "# source me: the Slurm lab in $dir (tests/slurm/lab.sh)"
    echo "export SLURM_CONF=$SLURM_CONF"
    echo "FABRICPLACE_LAB_DIR=$dir"
    echo "FABRICPLACE_LAB_FABRIC='$spec'"
    echo "FABRICPLACE_LAB_NODES=${#hosts[@]}"
    echo "FABRICPLACE_LAB_SLURM=$slurm_version"
    echo "FABRICPLACE_LAB_TOPOLOGY=$topology"
    echo "FABRICPLACE_LAB_UNSHARE=$([[ ${NO_UNSHARE:-0} == 1 ]] && echo 0 || echo 1)"
  } >"$dir/env"

  # ---- daemons -----------------------------------------------------------------------
  ns slurmctl slurmctld -c -f "$SLURM_CONF" || fail_up "slurmctld failed to start"
  for h in "${hosts[@]}"; do
    mkdir -p "$ST/spool/$h"
    ns "$h" slurmd -f "$SLURM_CONF" -N "$h" || fail_up "slurmd -N $h failed to start"
  done

  # ---- wait until every node is idle -------------------------------------------------
  local deadline n
  deadline=$(($(date +%s) + ${FABRICPLACE_LAB_UP_TIMEOUT:-30}))
  while :; do
    n=$(timeout 5 sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
    [[ $n == "${#hosts[@]}" ]] && break
    [[ -s $RUN/slurmctld.pid ]] && ! ctld_alive && fail_up "slurmctld died"
    for h in "${hosts[@]}"; do
      [[ -s $RUN/slurmd-$h.pid ]] && ! alive "$(cat "$RUN/slurmd-$h.pid")" && fail_up "slurmd -N $h died"
    done
    [[ $(date +%s) -ge $deadline ]] && fail_up "only $n of ${#hosts[@]} nodes idle after ${FABRICPLACE_LAB_UP_TIMEOUT:-30} s"
    sleep 0.1
  done
  [[ ${NO_UNSHARE:-0} == 1 ]] && echo "slurm lab: note: NO_UNSHARE=1: no UTS namespaces, jobs see this machine's hostname"
  echo "slurm lab: up ($dir): Slurm $slurm_version, ${#hosts[@]} nodes idle in $(elapsed "$t0") s, fabric $spec"
  echo "export SLURM_CONF=$SLURM_CONF    # or: . $dir/env"
}

case $cmd in
  up) lab_up ;;
  down) lab_down ;;
  status) lab_status ;;
  restart-ctld) lab_restart_ctld ;;
  kill-slurmd) lab_kill_slurmd ;;
  start-slurmd) lab_start_slurmd ;;
  *) echo "$prog: unknown command: $cmd" >&2; usage ;;
esac
