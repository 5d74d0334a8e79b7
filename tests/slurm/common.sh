# shellcheck shell=bash
# common.sh - sourced by the Slurm lab tests (tests/slurm/*.sh): bring the lab up in a
# private directory, always bring it down again, poll with deadlines.
# The caller sets FABRICPLACE (the binary) before lab_start.

SLURM_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_SH=$SLURM_TESTS_DIR/lab.sh
LAB_DIR=""
LAB_KEEP=0   # keep DIR (logs) after a failure

lab_stop() {
  [[ -n $LAB_DIR ]] || return 0
  "$LAB_SH" down --dir "$LAB_DIR" >/dev/null 9>&- || echo "lab.sh down failed" >&2
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
# into DIR/work.
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
  lab_start "$spec" "${args[@]}"
  rm -rf "$tmp"
  mkdir -p "$LAB_DIR/work" && chmod 777 "$LAB_DIR/work" && cd "$LAB_DIR/work" || exit 1
  touch "$LAB_DIR/log/fabricplace.log" "$LAB_DIR/log/job_submit.log"
  chmod 666 "$LAB_DIR/log/fabricplace.log" "$LAB_DIR/log/job_submit.log"
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

# show_files FILE...: the head of each non-empty file, for a failing test's log
show_files() {
  local f
  for f in "$@"; do [[ -s $f ]] && { echo "---- $f"; head -40 "$f"; }; done
}
