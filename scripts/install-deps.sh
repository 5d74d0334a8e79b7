#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs everything fabricplace needs to build and test on Debian 12 (as root, or with sudo).
set -euo pipefail
packages=(
  # toolchain
  g++ make cmake pkg-config binutils
  clang-16 libclang-rt-16-dev                    # scripts/fuzz.sh: libFuzzer, ASan, UBSan (docs/fuzzing.md)
  llvm-16                                        # llvm-symbolizer-16: function names and lines in fuzz reports
  # libraries
  libcli11-dev nlohmann-json3-dev zlib1g-dev     # zlib: gzip-compressed traces and dumps (sim)
  libhwloc-dev                                   # FABRICPLACE_WITH_HWLOC
  libibnetdisc-dev libibmad-dev libibumad-dev     # FABRICPLACE_WITH_IBNETDISC
  libslurm-dev                                   # FABRICPLACE_WITH_SLURM (spank.h)
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  ibsim-utils opensm infiniband-diags             # the simulated fabric, its SM, ibnetdiscover
  slurmctld slurmd slurm-client munge             # the Slurm lab cluster (tests/slurm/lab.sh)
  openmpi-bin                                    # mpirun for rank-order checks on the lab
  hwloc                                          # lstopo (node topology: GPUs, HCAs, cores)
  lua5.1                                         # etc/job_submit.lua's unit test (slurmctld's Lua)
  lua5.4                                         # the same under Lua 5.4 (Slurm 24.11 and later)
  util-linux                                     # unshare (a UTS namespace per slurmd), flock
  debootstrap                                    # the Debian 13 chroot of the Slurm 24.11 tests (tests/slurm/chroot.sh)
  time                                           # GNU time: peak memory of the hostile-input tests
  python3                                        # the CLI tests generate inputs and read JSON with it
  python3-yaml                                   # tests/cli/slurm_yaml.sh parses topology.yaml
  python3-debian                                 # tests/source/spdx.sh reads cmake/deb/copyright as DEP-5
  prometheus                                     # promtool: tests/cli/metrics_promtool.sh checks `fabric metrics`
  groff-base                                     # tests/cli/man_pages.sh renders the manual pages
  dpkg-dev file                                  # cpack -G DEB: dpkg-shlibdeps finds the packages of the libraries
  strace                                         # tests/cli/slurm_sync.sh kills a sync at every system call
)
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root (or install sudo)" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${packages[@]}"
