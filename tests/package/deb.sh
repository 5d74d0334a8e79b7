#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# deb.sh BUILD SRC SUITE SERIES VERSION [SPEC]: the Debian packages of BUILD (its plugin built
# for Slurm SERIES; fabricplace VERSION), built and used as an admin would.
#   - `cpack -G DEB` in BUILD writes fabricplace_V_ARCH.deb and fabricplace-slurm-X.Y_V_ARCH.deb
#     (X.Y: the Slurm the plugin was built for), with the right names, Depends and conffiles;
#   - into a clean Debian SUITE chroot (minbase and nothing else, tests/slurm/chroot.sh fresh)
#     `dpkg -i` installs both once their Depends are there (apt-get, from the packages' own
#     Depends fields: a missing one fails here), and from the installed files only
#     (tests/package/deb_checks.sh): fabricplace --version, man pages, bash completion,
#     fabricplace slurm check, a Slurm lab whose plugin, job_submit.lua and fabric files are
#     the installed ones (`slurm sync`), `sbatch --help` agreeing with fabricplace-spank(8);
#     dpkg --purge removes every file.
# Exit 77 (SKIP) where a chroot cannot be made (not root, no debootstrap, no mirror); never in CI.
set -uo pipefail
build=${1:?usage: deb.sh BUILD SRC SUITE SERIES VERSION [SPEC]} src=${2:?} suite=${3:?}
series=${4:?} version=${5:?} spec=${6:-fat3:pods=2,leaves=2,down=4,up=4}
chroot_sh=$src/tests/slurm/chroot.sh
t0=$(date +%s)
tmp=$(mktemp -d /tmp/fp-deb.XXXXXX)
root=/var/cache/fabricplace/pkgtest-$suite
cleanup() { rm -rf "$tmp"; [[ ${FABRICPLACE_LAB_KEEP:-0} == 1 ]] || rm -rf --one-file-system "$root"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

command -v cpack >/dev/null || fail "no cpack"
# The packages are made where the build was: on this machine, or for the Slurm of the build
# chroot (tests/slurm/chroot.sh: trixie, 24.11) inside it (dpkg-shlibdeps reads its libraries).
if [[ $suite == trixie ]]; then
  "$chroot_sh" run --bind "$src" --bind "$build" --bind "$tmp" -- sh -c 'cd "$1" && cpack -G DEB -B "$2"' sh "$build" "$tmp/debs"
else
  (cd "$build" && cpack -G DEB -B "$tmp/debs")
fi >"$tmp/cpack.log" 2>&1 || { cat "$tmp/cpack.log"; fail "cpack -G DEB failed"; }
arch=$(dpkg --print-architecture)
cli=$tmp/debs/fabricplace_${version}_$arch.deb
plugin=$tmp/debs/fabricplace-slurm-${series}_${version}_$arch.deb
[[ -f $cli && -f $plugin ]] || fail "cpack wrote $(ls "$tmp/debs"), expected $(basename "$cli") and $(basename "$plugin")"
next=$(awk -F. '{printf "%d.%02d", $1, $2 + 1}' <<<"$series")
dpkg-deb -f "$plugin" Depends | grep -qF "slurm-wlm-basic-plugins (>= $series), slurm-wlm-basic-plugins (<< $next~)" ||
  fail "the plugin package's Depends: $(dpkg-deb -f "$plugin" Depends)"
[[ $(dpkg-deb -f "$plugin" Provides)/$(dpkg-deb -f "$plugin" Conflicts) == fabricplace-slurm-plugin/fabricplace-slurm-plugin ]] ||
  fail "the plugin package does not provide and conflict on fabricplace-slurm-plugin"
dpkg-deb --ctrl-tarfile "$plugin" | tar -xO ./conffiles | grep -qx /etc/slurm/plugstack.conf.d/fabricplace.conf ||
  fail "the plugstack line is not a conffile"
dpkg-deb --ctrl-tarfile "$cli" | tar -xO ./conffiles | grep -qx /etc/default/fabricplace-watch ||
  fail "/etc/default/fabricplace-watch is not a conffile"
echo "PASS: cpack -G DEB: $(basename "$cli"), $(basename "$plugin") ($(($(date +%s) - t0)) s)"

"$chroot_sh" fresh "$suite" "$root" || exit $?
mkdir -p "/var/cache/fabricplace/apt-$suite/partial"
"$chroot_sh" run-in "$root" --bind "$src" --bind "$tmp" --bind "/var/cache/fabricplace/apt-$suite" -- \
  bash "$src/tests/package/deb_checks.sh" "$tmp/debs" "$src" "$series" "$version" "$spec" "/var/cache/fabricplace/apt-$suite"
rc=$?
echo "deb.sh: $suite, Slurm $series, $(($(date +%s) - t0)) s"
exit $rc
