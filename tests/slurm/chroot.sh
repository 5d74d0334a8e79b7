#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# chroot.sh - a Debian 13 (trixie) chroot with Slurm 24.11, for the second Slurm version of
# the lab tests (tests/slurm/README.md, "Two Slurm versions").
#
#   chroot.sh ensure                        create it, or reuse the cached one
#   chroot.sh build SRC OUT                 ensure; configure and build fabricplace and its
#                                           SPANK plugin from SRC into OUT, inside it
#   chroot.sh run [--bind DIR]... -- CMD... run CMD inside it (as root)
#   chroot.sh status                        where it is, its Slurm version; exit 3 if absent
#   chroot.sh remove                        delete it (and its lock and temporaries)
#   chroot.sh fresh SUITE DIR               a clean Debian SUITE (bookworm, trixie) at DIR:
#                                           minbase and nothing else, from a cached tarball
#                                           (debootstrap once); the package tests install
#                                           into it (tests/package/deb.sh)
#   chroot.sh run-in DIR [--bind D]... -- CMD...  run CMD in the chroot at DIR
#
# ensure: debootstrap --variant=minbase trixie from the Debian mirror of this machine's apt
# sources (FABRICPLACE_DEBIAN_MIRROR overrides), then apt-get install --no-install-recommends
# of the packages below. About 3 minutes once; later calls reuse it (a stamp file names the
# suite and packages; another list rebuilds it). Concurrent callers take turns on DIR.lock.
#
# run: CMD runs in a private mount namespace (unshare --mount) holding /proc, /dev, /sys,
# this machine's /etc/hosts and /etc/resolv.conf, and its /tmp (the labs' directories, ports lock and munge sockets are shared
# with the host's Slurm 22.05 labs, so the two never run at once), plus each --bind DIR at
# its own path. Nothing is mounted in the host's namespace: the mounts end with the last
# process of CMD (the lab's daemons included), and `remove` never meets a busy mount.
#
# Exit status: CMD's for run; 0 ok; 1 error; 2 usage; 77 a chroot cannot be made here
# ("slurm chroot: cannot run here: ...": not root, no debootstrap, no mirror), which the
# tests turn into SKIP (or a failure in CI, tests/slurm/common.sh).
#
# Environment: FABRICPLACE_CHROOT (DIR, default /var/cache/fabricplace/slurm-24.11-trixie),
# FABRICPLACE_DEBIAN_MIRROR (default: the first deb.debian.org-style URI in
# /etc/apt/sources.list{,.d/*}).
set -uo pipefail

prog=chroot.sh
die()  { echo "slurm chroot: $*" >&2; exit 1; }
skip() {  # 77 = SKIP for ctest; CI must run the 24.11 tests (tests/slurm/common.sh)
  echo "slurm chroot: cannot run here: $*" >&2
  [[ ${CI:-} == true || ${FABRICPLACE_LAB_REQUIRED:-0} == 1 ]] && exit 1
  exit 77
}
usage() { sed -n '/^#   chroot.sh ensure /,/^#$/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }

SUITE=trixie
SLURM_SERIES=24.11
ROOT=${FABRICPLACE_CHROOT:-/var/cache/fabricplace/slurm-$SLURM_SERIES-$SUITE}
case $ROOT in /*) ;; *) ROOT=$PWD/$ROOT ;; esac
ROOT=${ROOT%/}
# What the lab tests need inside (tests/slurm/*.sh), and what the build needs
# (cmake/Dependencies.cmake with IBNETDISC OFF): keep in step with scripts/install-deps.sh.
PACKAGES=(
  slurmctld slurmd slurm-client munge libslurm-dev
  g++ make cmake pkg-config libcli11-dev nlohmann-json3-dev zlib1g-dev libhwloc-dev
  dpkg-dev file
  openmpi-bin hwloc util-linux procps iproute2 hostname
)
STAMP="suite=$SUITE packages=${PACKAGES[*]}"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.0f", b-a}'; }

mirror() {
  if [[ -n ${FABRICPLACE_DEBIAN_MIRROR:-} ]]; then echo "$FABRICPLACE_DEBIAN_MIRROR"; return; fi
  local m
  m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null |
        grep -v '^[[:space:]]*#' | grep -oE 'https?://[^ ]+/debian/?( |$)' | grep -v security | head -1 | tr -d ' ')
  echo "${m:-http://deb.debian.org/debian}"
}

# in_ns ROOT BIND... -- CMD...: CMD chrooted into ROOT in a private mount namespace
in_ns() {
  local root=$1; shift
  local binds=()
  while [[ $1 != -- ]]; do binds+=("$1"); shift; done
  shift
  unshare --mount --propagation private -- bash -c '
    set -e
    root=$1; shift; binds=()
    while [[ $1 != -- ]]; do binds+=("$1"); shift; done; shift
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    mount --rbind /sys "$root/sys"
    mkdir -p "$root/tmp" && mount --bind /tmp "$root/tmp"
    # This machine'"'"'s name and resolver: debootstrap writes neither, and every lookup of the
    # host name (munged'"'"'s origin, Slurm'"'"'s daemons) would wait on a resolver that is not there.
    for f in /etc/hosts /etc/resolv.conf; do
      [[ -e $f ]] || continue
      [[ -e $root$f ]] || : >"$root$f"
      mount --bind "$f" "$root$f"
    done
    for b in "${binds[@]}"; do mkdir -p "$root$b"; mount --bind "$b" "$root$b"; done
    cd /
    exec chroot "$root" /usr/bin/env -i PATH="$PATH" HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
      ${CI:+CI=$CI} ${FABRICPLACE_LAB_REQUIRED:+FABRICPLACE_LAB_REQUIRED=$FABRICPLACE_LAB_REQUIRED} \
      ${FABRICPLACE_LAB_KEEP:+FABRICPLACE_LAB_KEEP=$FABRICPLACE_LAB_KEEP} "$@"
  ' in_ns "$root" "${binds[@]}" -- "$@"
}

cached() { [[ -f $ROOT/.fabricplace-stamp && $(cat "$ROOT/.fabricplace-stamp") == "$STAMP" ]]; }

create() {
  local t0 tmp m
  t0=$(now)
  [[ $(id -u) == 0 ]] || skip "not root (debootstrap and chroot need root)"
  command -v debootstrap >/dev/null || skip "no debootstrap (scripts/install-deps.sh installs it)"
  command -v unshare >/dev/null || skip "no unshare (util-linux)"
  m=$(mirror)
  tmp=$ROOT.new
  rm -rf --one-file-system "$tmp" || die "cannot remove $tmp"
  mkdir -p "$tmp" || die "cannot create $tmp"
  echo "slurm chroot: debootstrap --variant=minbase $SUITE $tmp $m"
  # In a private mount namespace: what debootstrap mounts in the target (/proc, /sys) ends
  # with it, even when it fails half-way.
  if ! unshare --mount --propagation private -- debootstrap --variant=minbase "$SUITE" "$tmp" "$m" >"$tmp.log" 2>&1; then
    tail -15 "$tmp.log" >&2
    rm -rf --one-file-system "$tmp"
    if grep -qiE 'Failed getting release file|Couldn.t download|Temporary failure|Could not resolve|unable to fetch' "$tmp.log"; then
      skip "debootstrap cannot reach $m (set FABRICPLACE_DEBIAN_MIRROR)"
    fi
    die "debootstrap $SUITE failed (log: $tmp.log)"
  fi
  echo "slurm chroot: apt-get install ${PACKAGES[*]}"
  # Daemons must not start inside the chroot while packages install.
  printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d" && chmod 755 "$tmp/usr/sbin/policy-rc.d"
  if ! in_ns "$tmp" -- sh -c "export DEBIAN_FRONTEND=noninteractive; apt-get update -q &&
        apt-get install -y -q --no-install-recommends ${PACKAGES[*]} && apt-get clean" >>"$tmp.log" 2>&1; then
    tail -15 "$tmp.log" >&2
    rm -rf --one-file-system "$tmp"
    die "apt-get install in the $SUITE chroot failed (log: $tmp.log)"
  fi
  local v
  v=$(in_ns "$tmp" -- slurmctld -V 2>/dev/null | awk '{print $NF}')
  [[ $v == "$SLURM_SERIES".* ]] || { rm -rf --one-file-system "$tmp"; die "the $SUITE chroot has Slurm '$v', expected $SLURM_SERIES.x"; }
  echo "$STAMP" >"$tmp/.fabricplace-stamp"
  rm -rf --one-file-system "$ROOT" && mv "$tmp" "$ROOT" || die "cannot move $tmp to $ROOT"
  rm -f "$tmp.log"
  echo "slurm chroot: created $ROOT (Slurm $v) in $(elapsed "$t0") s"
}

ensure() {
  [[ $(id -u) == 0 ]] || skip "not root (debootstrap and chroot need root)"
  mkdir -p "$(dirname "$ROOT")" || die "cannot create $(dirname "$ROOT")"
  exec 8>>"$ROOT.lock"
  flock -w 900 8 || die "$ROOT.lock still held after 900 s"
  if cached; then return 0; fi
  (create)
  local rc=$?
  [[ $rc == 0 ]] || exit "$rc"
}

# fresh SUITE DIR: DIR becomes a clean minbase SUITE, extracted from a tarball made once by
# debootstrap (/var/cache/fabricplace/minbase-SUITE.tar).
fresh() {
  local suite=$1 dir=$2 cache t0 m tmp
  t0=$(now)
  [[ $(id -u) == 0 ]] || skip "not root (debootstrap and chroot need root)"
  command -v debootstrap >/dev/null || skip "no debootstrap (scripts/install-deps.sh installs it)"
  cache=/var/cache/fabricplace/minbase-$suite.tar
  mkdir -p /var/cache/fabricplace || die "cannot create /var/cache/fabricplace"
  exec 9>>"$cache.lock"
  flock -w 900 9 || die "$cache.lock still held after 900 s"
  if [[ ! -s $cache ]]; then
    m=$(mirror)
    tmp=$cache.d
    rm -rf --one-file-system "$tmp"
    echo "slurm chroot: debootstrap --variant=minbase $suite (cached as $cache)"
    if ! unshare --mount --propagation private -- debootstrap --variant=minbase "$suite" "$tmp" "$m" >"$cache.log" 2>&1; then
      tail -15 "$cache.log" >&2
      rm -rf --one-file-system "$tmp"
      grep -qiE 'Failed getting release file|Couldn.t download|Temporary failure|Could not resolve|unable to fetch' "$cache.log" &&
        skip "debootstrap cannot reach $m (set FABRICPLACE_DEBIAN_MIRROR)"
      die "debootstrap $suite failed (log: $cache.log)"
    fi
    printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d" && chmod 755 "$tmp/usr/sbin/policy-rc.d"
    tar -C "$tmp" -cf "$cache.new" . && mv "$cache.new" "$cache" || die "cannot write $cache"
    rm -rf --one-file-system "$tmp" "$cache.log"
  fi
  exec 9>&-
  rm -rf --one-file-system "$dir" || die "cannot remove $dir"
  mkdir -p "$dir" && tar -C "$dir" -xf "$cache" || die "cannot extract $cache into $dir"
  echo "slurm chroot: a clean $suite at $dir in $(elapsed "$t0") s"
}

# parse_binds [--bind DIR]... -- CMD...: run's and run-in's arguments, the directories (made
# absolute) into `binds` and the command into `run_cmd` (the caller's locals)
parse_binds() {
  binds=() run_cmd=()
  while [[ $# -gt 0 && $1 != -- ]]; do
    case $1 in
      --bind) [[ -d ${2:-} ]] || die "--bind needs a directory"; binds+=("$(cd "$2" && pwd)"); shift 2 ;;
      *) usage ;;
    esac
  done
  [[ ${1:-} == -- ]] || usage
  shift
  [[ $# -gt 0 ]] || usage
  run_cmd=("$@")
}

# The whole command in one function: bash reads it before running any of it, so editing
# this file while a long `ensure` runs cannot change what that run does.
main() {
  local cmd=${1:-} src out t0 binds=() run_cmd=()
  [[ -n $cmd ]] || usage
  shift
  case $cmd in
    ensure)
      ensure
      echo "slurm chroot: $ROOT (Slurm $(in_ns "$ROOT" -- slurmctld -V | awk '{print $NF}'))"
      ;;
    build)
      [[ $# == 2 ]] || usage
      src=$(cd "$1" && pwd) || die "no source directory $1"
      mkdir -p "$2" || die "cannot create $2"
      out=$(cd "$2" && pwd)
      ensure
      exec 8>&-
      t0=$(now)
      in_ns "$ROOT" "$src" "$out" -- sh -c '
        cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFABRICPLACE_DEVELOPER_MODE=OFF \
          -DCMAKE_INSTALL_PREFIX=/usr \
          -DFABRICPLACE_WITH_SLURM=ON -DFABRICPLACE_WITH_HWLOC=ON -DFABRICPLACE_WITH_IBNETDISC=OFF \
          -DFABRICPLACE_WARNINGS_AS_ERRORS=ON >"$2/configure.log" 2>&1 ||
          { tail -30 "$2/configure.log"; exit 1; }
        grep -E "SPANK plugin" "$2/configure.log"
        cmake --build "$2" -j "$(nproc)" --target fabricplace fabricplace_spank fabricplace_spank_manpage' sh "$src" "$out" ||
        die "building $src in the $SUITE chroot failed"
      echo "slurm chroot: built $out in $(elapsed "$t0") s"
      ;;
    run)
      parse_binds "$@"
      ensure
      exec 8>&-
      in_ns "$ROOT" "${binds[@]}" -- "${run_cmd[@]}"
      ;;
    status)
      if cached; then
        echo "slurm chroot: $ROOT (Slurm $(in_ns "$ROOT" -- slurmctld -V | awk '{print $NF}'))"
      else
        echo "slurm chroot: none at $ROOT"; exit 3
      fi
      ;;
    remove)
      [[ $(id -u) == 0 ]] || die "not root"
      exec 8>>"$ROOT.lock"
      flock -w 900 8 || die "$ROOT.lock still held after 900 s"
      rm -rf --one-file-system "$ROOT" "$ROOT.new" "$ROOT.new.log" || die "cannot remove $ROOT"
      rm -f "$ROOT.lock"
      echo "slurm chroot: removed $ROOT"
      ;;
    fresh)
      [[ $# == 2 ]] || usage
      fresh "$1" "$2"
      ;;
    run-in)
      [[ $# -ge 1 && -d $1/usr ]] || die "run-in: no chroot at ${1:-?}"
      local r
      r=$(cd "$1" && pwd); shift
      parse_binds "$@"
      in_ns "$r" "${binds[@]}" -- "${run_cmd[@]}"
      ;;
    -h|--help) usage ;;
    *) echo "$prog: unknown command: $cmd" >&2; usage ;;
  esac
}

main "$@"; exit $?  # one line: read whole before it runs
