# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# common.sh - sourced by the Slurm lab tests (tests/slurm/*.sh): bring the lab up in a
# private directory, always bring it down again, poll with deadlines.
# The caller sets FABRICPLACE (the binary) before lab_start.

SLURM_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_SH=$SLURM_TESTS_DIR/lab.sh
LAB_DIR=""
LAB_KEEP=0   # keep DIR (logs) after a failure
LAB_ON_STOP=()  # commands lab_stop runs after `down`, before DIR is removed (lab_on_stop)

# lab_on_stop 'COMMAND': run by lab_stop once the lab is down (unmount a tmpfs inside DIR,
# stop a helper this test started by its PID), so DIR can be removed.
lab_on_stop() { LAB_ON_STOP+=("$1"); }

lab_stop() {
  [[ -n $LAB_DIR ]] || return 0
  local c
  "$LAB_SH" down --dir "$LAB_DIR" >/dev/null 9>&- || echo "lab.sh down failed" >&2
  for c in "${LAB_ON_STOP[@]}"; do eval "$c" || echo "cleanup failed: $c" >&2; done
  LAB_ON_STOP=()
  if [[ $LAB_KEEP == 1 ]]; then
    echo "lab logs kept in $LAB_DIR/log" >&2
  else
    rm -rf "$LAB_DIR"
  fi
  LAB_DIR=""
}

port_in_use() {  # TCP port listening on this machine?
  if command -v ss >/dev/null; then
    [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]]
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}

# Labs of concurrent test runs (two ctest invocations; RESOURCE_LOCK only orders one) take
# turns on a machine-wide lock. Ports: the defaults (16817, 17000+K) unless something else,
# e.g. another Slurm lab, listens there; then the next free set (16818, 17100+K), ...
lab_lock_and_ports() {
  local lock=${FABRICPLACE_LAB_LOCK:-/tmp/fabricplace-slurmlab.lock} wait=${FABRICPLACE_LAB_LOCK_WAIT:-900}
  if command -v flock >/dev/null; then
    exec 9>>"$lock"
    if ! flock -n 9; then
      echo "waiting for $lock (another Slurm lab test is running; at most $wait s)"
      flock -w "$wait" 9 || { echo "FAIL: $lock still held after $wait s" >&2; exit 1; }
    fi
  fi
  [[ -n ${FABRICPLACE_LAB_CTLD_PORT:-}${FABRICPLACE_LAB_BASE_PORT:-} ]] && return 0
  local try ctld base k busy
  for ((try = 0; try < 10; try++)); do
    ctld=$((16817 + try)) base=$((17000 + 100 * try)) busy=0
    port_in_use "$ctld" && busy=1
    for ((k = 1; k <= 64 && busy == 0; k++)); do port_in_use $((base + k)) && busy=1; done
    if [[ $busy == 0 ]]; then
      export FABRICPLACE_LAB_CTLD_PORT=$ctld FABRICPLACE_LAB_BASE_PORT=$base
      [[ $try -gt 0 ]] && echo "note: default Slurm lab ports in use; using slurmctld port $ctld, slurmd ports $base+K"
      return 0
    fi
  done
  echo "FAIL: no free port set for the Slurm lab (16817-16826 with 17000-17999)" >&2
  exit 1
}

# lab_start SPEC [lab.sh up options...]: up in a fresh /tmp directory (the munge socket path must stay short);
# exits 77 (SKIP) where Slurm cannot run, 1 on any other failure.
lab_start() {
  local rc
  trap 'lab_stop' EXIT
  trap 'exit 130' INT TERM
  lab_lock_and_ports
  LAB_DIR=$(mktemp -d /tmp/fplab.XXXXXX) || exit 1
  local spec=$1
  shift
  "$LAB_SH" up --fabric "$spec" --fabricplace "$FABRICPLACE" --dir "$LAB_DIR" "$@" 9>&-
  rc=$?
  if [[ $rc == 77 && ( ${CI:-} == true || ${FABRICPLACE_LAB_REQUIRED:-0} == 1 ) ]]; then
    echo "FAIL: the Slurm lab must run in CI (scripts/install-deps.sh installs Slurm and munge)"
    exit 1
  fi
  if [[ $rc != 0 ]]; then
    [[ $rc == 77 ]] && echo "SKIP: Slurm cannot run here" || LAB_KEEP=1
    exit "$rc"
  fi
  # shellcheck disable=SC1091
  . "$LAB_DIR/env"
}

now_s() { date +%s.%N; }
elapsed_s() { awk -v a="$1" -v b="$(now_s)" 'BEGIN{printf "%.1f", b-a}'; }

# job_state JOBID: PENDING, RUNNING, ... or "" when squeue no longer shows it
job_state() { squeue -h -j "$1" -o %T 2>/dev/null | head -1; }

# wait_running JOBID [SECONDS=30]: 0 once RUNNING; 1 on a deadline or a final state
wait_running() {
  local deadline st
  deadline=$(($(date +%s) + ${2:-30}))
  while :; do
    st=$(job_state "$1")
    case $st in
      RUNNING) return 0 ;;
      PENDING|CONFIGURING) ;;
      *) return 1 ;;
    esac
    [[ $(date +%s) -ge $deadline ]] && return 1
    sleep 0.1
  done
}

# all_idle [SECONDS=30]: cancel nothing; wait until no job is listed and every node is idle
wait_all_idle() {
  local deadline
  deadline=$(($(date +%s) + ${1:-30}))
  while :; do
    if [[ -z $(squeue -h -o %i 2>/dev/null) &&
          $(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l) == "$FABRICPLACE_LAB_NODES" ]]; then
      return 0
    fi
    [[ $(date +%s) -ge $deadline ]] && return 1
    sleep 0.1
  done
}

# job_hosts JOBID: the job's nodes, sorted, one per line
job_hosts() { scontrol show hostnames "$(squeue -h -j "$1" -o %N)" | sort; }

# live_pids PATTERN: pids (not zombies) whose command line matches PATTERN (pgrep -f)
live_pids() {
  local p st
  for p in $(pgrep -f -- "$1"); do
    [[ $p == "$$" ]] && continue
    st=$(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null) || continue
    [[ $st != Z ]] && echo "$p"
  done
}

# lab_start_plugin SPEC PLUGIN_SO [JOB_SUBMIT_LUA [EXTRA_PLUGSTACK_ARGS]]: the lab with the
# SPANK plugin, declared `optional` as etc/plugstack.conf.d ships it (nodes of "2 GPUs",
# logging to log/fabricplace.log) and, if given,
# job_submit.lua reading the lab's fabric table (decisions in log/job_submit.log). Then cd
# into DIR/work. More `lab.sh up` options in the array LAB_UP_ARGS (--topology block ...).
lab_start_plugin() {
  local spec=$1 plugin=$2 lua=${3:-} extra=${4:-} tmp
  tmp=$(mktemp -d /tmp/fp-plugin.XXXXXX)
  echo "optional $plugin fabric=@LAB@/etc/fabric.json gpus_per_node=2 log=@LAB@/log/fabricplace.log${extra:+ $extra}" >"$tmp/plugstack.conf"
  local args=(--plugstack "$tmp/plugstack.conf")
  if [[ -n $lua ]]; then
    sed -e 's|^M.FABRIC_TABLE = .*|M.FABRIC_TABLE = "@LAB@/etc/fabric.lua"|' \
        -e 's|^M.LOG = nil .*|M.LOG = "@LAB@/log/job_submit.log"|' "$lua" >"$tmp/job_submit.lua"
    args+=(--job-submit "$tmp/job_submit.lua")
  fi
  lab_start "$spec" "${args[@]}" ${LAB_UP_ARGS[@]+"${LAB_UP_ARGS[@]}"}
  rm -rf "$tmp"
  mkdir -p "$LAB_DIR/work" && chmod 777 "$LAB_DIR/work" && cd "$LAB_DIR/work" || exit 1
  touch "$LAB_DIR/log/fabricplace.log" "$LAB_DIR/log/job_submit.log"
  chmod 666 "$LAB_DIR/log/fabricplace.log" "$LAB_DIR/log/job_submit.log"
}

# leaf_counts HOSTLIST: hosts per leaf of the lab fabric, "p01-leaf01:2 p01-leaf02:2"
leaf_counts() {
  local h
  for h in $(scontrol show hostnames "$1"); do
    sed -n "s/^NodeName=\([^ ]*\) Features=\([^, ]*\).*/\1 \2/p" "$LAB_DIR/etc/features.conf" |
      while read -r nl leaf; do scontrol show hostnames "$nl" | grep -qx "$h" && echo "$leaf"; done
  done | sort | uniq -c | awk '{ printf "%s%s:%s", (NR > 1 ? " " : ""), $2, $1 }'
}

# check DESCRIPTION CMD...: PASS or FAIL (counted in $fails)
fails=0
check() {
  local d=$1; shift
  if "$@"; then echo "PASS: $d"; else echo "FAIL: $d"; fails=$((fails + 1)); fi
}

# wait_gone JOBID [SECONDS=60]: 0 once squeue no longer lists the job; 1 on the deadline
wait_gone() {
  local deadline=$(($(date +%s) + ${2:-60}))
  while [[ -n $(job_state "$1") ]]; do
    [[ $(date +%s) -ge $deadline ]] && return 1
    sleep 0.2
  done
}

# run_probe NAME SBATCH-ARGS...: submits a sleeping job, prints its nodes once it runs,
# then cancels it and waits until it is gone (1 if it did not start in 30 s)
run_probe() {
  local j
  j=$(sbatch --parsable -J "$1" -o /dev/null "${@:2}" --wrap 'sleep 600') || return 1
  wait_running "$j" 30 || { echo "probe $1 ($j) did not start: $(squeue -h -j "$j" -o '%T %r')" >&2; scancel "$j"; return 1; }
  squeue -h -j "$j" -o %N
  scancel "$j"
  wait_gone "$j" 30
}

# show_files FILE...: the head of each non-empty file, for a failing test's log
show_files() {
  local f
  for f in "$@"; do [[ -s $f ]] && { echo "---- $f"; head -40 "$f"; }; done
}

# ---- faults (tests/slurm/plugin_fault_*.sh) ------------------------------------------------

# job_field JOBID FIELD: one field of `scontrol show job` (JobState, ExitCode, NodeList,
# Features, ReqNodeList, Reason, ...); "" when the job or the field is unknown
job_field() {
  scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}

# wait_terminal JOBID [SECONDS=60]: 0 once the job is in a final state (COMPLETED, FAILED,
# NODE_FAIL, ...; slurmctld keeps it MinJobAge=300 s), 1 on the deadline
wait_terminal() {
  local deadline=$(($(date +%s) + ${2:-60})) st
  while :; do
    st=$(job_field "$1" JobState)
    case $st in
      COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|PREEMPTED|BOOT_FAIL|DEADLINE|OUT_OF_MEMORY) return 0 ;;
    esac
    [[ $(date +%s) -ge $deadline ]] && return 1
    sleep 0.2
  done
}

# wait_all_terminal SECONDS JOBID...: wait_terminal for each under one deadline; prints the
# jobs still not final (and their states) and returns 1 if any
wait_all_terminal() {
  local deadline=$(($(date +%s) + $1)) j left
  shift
  while :; do
    left=""
    for j in "$@"; do
      case $(job_field "$j" JobState) in
        COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|PREEMPTED|BOOT_FAIL|DEADLINE|OUT_OF_MEMORY) ;;
        *) left+=" $j" ;;
      esac
    done
    [[ -z $left ]] && return 0
    if [[ $(date +%s) -ge $deadline ]]; then
      for j in $left; do echo "  job $j: $(job_field "$j" JobState) $(job_field "$j" Reason)"; done
      return 1
    fi
    sleep 0.3
  done
}

# next_second: sleep until the wall clock's second changes. slurmctld refreshes the job table
# job_submit.lua sees (slurm.jobs) only when its last job change is in a later second than
# the last refresh: jobs created in the same second as the previous submission are missing.
next_second() {
  local s; s=$(date +%s)
  while [[ $(date +%s) == "$s" ]]; do sleep 0.05; done
}

# wait_nodes_registered [SECONDS=30]: 0 once slurmctld has heard from every node again (after
# a restart every node is UNKNOWN until its slurmd registers, a few seconds)
wait_nodes_registered() {
  local deadline=$(($(date +%s) + ${1:-30}))
  local states
  while :; do
    states=$(sinfo -h -N -o %t 2>/dev/null)
    [[ -n $states ]] && ! grep -qE 'unk|\*' <<<"$states" && return 0
    [[ $(date +%s) -ge $deadline ]] && return 1
    sleep 0.2
  done
}

# rank_set PREFIX: the job's rank-file set PREFIX.{rankfile,hosts,torchrun.env,json}:
#   "absent"                  none of the four, and no temporary of them
#   "complete HOST HOST ..."  all four, agreeing on the host order (printed: the ring)
#   "partial ..." / "inconsistent ..." otherwise, saying what is wrong
rank_set() {
  local p=$1 s have=() tmps
  for s in rankfile hosts torchrun.env json; do [[ -e $p.$s ]] && have+=(".$s"); done
  tmps=$(find "$(dirname "$p")" -maxdepth 1 -name ".$(basename "$p").*.tmp.*" 2>/dev/null | wc -l)
  if [[ ${#have[@]} == 0 && $tmps == 0 ]]; then echo absent; return 0; fi
  if [[ ${#have[@]} != 4 || $tmps != 0 ]]; then
    echo "partial: ${have[*]:-no files}, $tmps temporaries"
    return 0
  fi
  local r h t j
  r=$(sed -n 's/^rank [0-9]*=\([^ ]*\) .*/\1/p' "$p.rankfile" | uniq | paste -sd' ')
  h=$(grep -v '^#' "$p.hosts" | uniq | paste -sd' ')
  t=$(sed -n 's/^  \([^)*]*\)) NODE_RANK=\([0-9]*\) ;;$/\2 \1/p' "$p.torchrun.env" | sort -n | awk '{print $2}' | paste -sd' ')
  j=$(awk '/"hosts": \[/ {f = 1; next} f && /\]/ {f = 0} f {gsub(/[ ",]/, ""); print}' "$p.json" | paste -sd' ')
  if [[ -z $r || $r != "$h" || $r != "$t" || $r != "$j" ]]; then
    echo "inconsistent: rankfile '$r', hosts '$h', torchrun.env '$t', json '$j'"
    return 0
  fi
  echo "complete $r"
}

# same_hosts "HOST HOST ..." HOSTLIST: the same set of hosts
same_hosts() {
  [[ $(tr ' ' '\n' <<<"$1" | grep . | sort | paste -sd' ') == \
     "$(scontrol show hostnames "$2" | sort | paste -sd' ')" ]]
}

# no_crash_in_logs: slurmctld's and every slurmd's (and slurmstepd's) log are free of a
# fatal error, a crash or an exception the plugin let through; prints what it found
no_crash_in_logs() {
  local hits
  hits=$(grep -HiE 'fatal|segfault|segmentation|core dumped|signal 11|signal 6|sigsegv|sigabrt|terminate called|internal error|exception' \
           "$LAB_DIR"/log/slurmctld.log "$LAB_DIR"/log/slurmd-*.log "$LAB_DIR"/log/fabricplace.log 2>/dev/null)
  [[ -z $hits ]] && return 0
  head -20 <<<"$hits"
  return 1
}

# only_messages FILE REGEX...: every line of FILE that carries "fabricplace:" matches one of
# the (extended) regular expressions; prints those that do not
only_messages() {
  local f=$1 line re ok bad=0
  shift
  while IFS= read -r line; do
    ok=0
    for re in "$@"; do [[ $line =~ $re ]] && { ok=1; break; }; done
    [[ $ok == 1 ]] || { echo "unexpected: $line"; bad=1; }
  done < <(grep -F 'fabricplace:' "$f" 2>/dev/null)
  return $bad
}
