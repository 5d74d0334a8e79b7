# SPDX-License-Identifier: GPL-2.0-or-later
# Debian packages (docs/operations.md, "Packages"): `cpack -G DEB` in a build configured with
# CMAKE_INSTALL_PREFIX=/usr (the presets do) writes
#   fabricplace_<version>_<arch>.deb              the CLI, manual pages, bash completion,
#                                                 examples, docs, fabric watch's systemd units
#   fabricplace-slurm-<X.Y>_<version>_<arch>.deb  the SPANK plugin built against Slurm X.Y,
#                                                 its plugstack.conf.d line, job_submit.lua,
#                                                 cli_filter.lua, fabricplace-spank(8)
# Slurm loads a SPANK plugin only on the major.minor it was built for: the plugin package
# carries it in its name and depends on that Slurm (slurm-wlm-basic-plugins, which every
# Debian slurmd and slurm-client node has) from X.Y to before X.Y+1. Two of them never
# install together (they provide and conflict on fabricplace-slurm-plugin).
set(CPACK_GENERATOR DEB)
# Each package's summary is the first line of its component description (CPackDeb prepends
# the project's summary unless it is CPack's default).
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_NAME} built using CMake")
set(CPACK_PACKAGE_NAME fabricplace)
set(CPACK_PACKAGE_VENDOR fabricplace)
set(CPACK_PACKAGE_CONTACT "fabricplace maintainers <fabricplace@users.noreply.github.com>")
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING IGNORE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # dpkg-shlibdeps (dpkg-dev): the libraries' packages
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_CLI_PACKAGE_NAME fabricplace)
string(CONCAT CPACK_COMPONENT_CLI_DESCRIPTION
       "Topology-aware placement and rank ordering for Slurm GPU clusters\n"
       "fabricplace reads the fabric (libibnetdisc, ibnetdiscover dumps, topology.conf, tiers CSV),\n"
       "writes Slurm's topology files from it (slurm sync), keeps them in step (fabric watch, a\n"
       "systemd timer), places jobs by what the network gives them and writes rank files whose\n"
       "rings stay in one fabric zone.")
set(CPACK_DEBIAN_CLI_PACKAGE_RECOMMENDS "bash-completion, man-db")
set(CPACK_DEBIAN_CLI_PACKAGE_SUGGESTS "prometheus-node-exporter")

# Files under /etc are configuration: dpkg keeps an admin's edits.
set(fabricplace_cli_conffiles "${CMAKE_INSTALL_FULL_SYSCONFDIR}/default/fabricplace-watch\n")
file(WRITE ${PROJECT_BINARY_DIR}/deb/cli/conffiles "${fabricplace_cli_conffiles}")
# Maintainer scripts: systemd reloads the units; removal stops and disables the timer.
set(CPACK_DEBIAN_CLI_PACKAGE_CONTROL_EXTRA
    ${PROJECT_BINARY_DIR}/deb/cli/conffiles ${PROJECT_SOURCE_DIR}/cmake/deb/postinst
    ${PROJECT_SOURCE_DIR}/cmake/deb/prerm ${PROJECT_SOURCE_DIR}/cmake/deb/postrm)
set(CPACK_DEBIAN_CLI_PACKAGE_CONTROL_STRICT_PERMISSION ON)

if(FABRICPLACE_WITH_SLURM)
  set(CPACK_DEBIAN_SLURM_PACKAGE_NAME fabricplace-slurm-${FABRICPLACE_SLURM_SERIES})
  math(EXPR fabricplace_next_minor "${FABRICPLACE_SLURM_MINOR} + 1")
  if(fabricplace_next_minor LESS 10)
    set(fabricplace_next_minor "0${fabricplace_next_minor}")
  endif()
  set(fabricplace_slurm_next "${FABRICPLACE_SLURM_MAJOR}.${fabricplace_next_minor}")
  set(CPACK_DEBIAN_SLURM_PACKAGE_DEPENDS
      "slurm-wlm-basic-plugins (>= ${FABRICPLACE_SLURM_SERIES}), slurm-wlm-basic-plugins (<< ${fabricplace_slurm_next}~)")
  set(CPACK_DEBIAN_SLURM_PACKAGE_RECOMMENDS "fabricplace (= ${PROJECT_VERSION})")
  set(CPACK_DEBIAN_SLURM_PACKAGE_PROVIDES fabricplace-slurm-plugin)
  set(CPACK_DEBIAN_SLURM_PACKAGE_CONFLICTS fabricplace-slurm-plugin)
  set(CPACK_DEBIAN_SLURM_PACKAGE_REPLACES fabricplace-slurm-plugin)
  string(CONCAT CPACK_COMPONENT_SLURM_DESCRIPTION
      "fabricplace's SPANK plugin for Slurm ${FABRICPLACE_SLURM_SERIES}\n"
      "--fabric-tp for sbatch, salloc and srun: tensor-parallel groups inside leaf switches\n"
      "(job_submit.lua, cli_filter.lua on topology/block) and tasks in the fabric ring order.\n"
      "Built against Slurm ${FABRICPLACE_SLURM_SERIES}, it loads only on Slurm ${FABRICPLACE_SLURM_SERIES}.x.")
  file(WRITE ${PROJECT_BINARY_DIR}/deb/slurm/conffiles
       "${CMAKE_INSTALL_FULL_SYSCONFDIR}/slurm/plugstack.conf.d/fabricplace.conf\n")
  set(CPACK_DEBIAN_SLURM_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/deb/slurm/conffiles)
  set(CPACK_COMPONENTS_ALL cli slurm)
else()
  set(CPACK_COMPONENTS_ALL cli)
endif()
include(CPack)
