# SPDX-License-Identifier: GPL-2.0-or-later
# Dependencies. Optional ones are CMake options; ON with the dependency missing is a
# configure error, never a silent OFF (DESIGN.md section 2).
find_package(PkgConfig REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  find_path(FABRICPLACE_CLI11_INCLUDE CLI/CLI.hpp)
  if(NOT FABRICPLACE_CLI11_INCLUDE)
    message(FATAL_ERROR "CLI11 not found: install libcli11-dev (scripts/install-deps.sh)")
  endif()
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${FABRICPLACE_CLI11_INCLUDE})
endif()

function(fabricplace_missing what option package)
  message(FATAL_ERROR
    "${option}=ON but ${what} was not found.\n"
    "Install ${package} (scripts/install-deps.sh installs everything) "
    "or configure with -D${option}=OFF.")
endfunction()

if(FABRICPLACE_WITH_IBNETDISC)
  pkg_check_modules(IBNETDISC QUIET IMPORTED_TARGET libibnetdisc)
  find_path(FABRICPLACE_IBMAD_INCLUDE infiniband/mad.h)
  find_library(FABRICPLACE_IBMAD_LIB ibmad)
  find_library(FABRICPLACE_IBUMAD_LIB ibumad)
  if(NOT IBNETDISC_FOUND OR NOT FABRICPLACE_IBMAD_INCLUDE OR NOT FABRICPLACE_IBMAD_LIB
     OR NOT FABRICPLACE_IBUMAD_LIB)
    fabricplace_missing("libibnetdisc/libibmad/libibumad" FABRICPLACE_WITH_IBNETDISC
                        "libibnetdisc-dev libibmad-dev libibumad-dev")
  endif()
  add_library(fabricplace_ibnetdisc_deps INTERFACE)
  target_link_libraries(fabricplace_ibnetdisc_deps INTERFACE PkgConfig::IBNETDISC
                        ${FABRICPLACE_IBMAD_LIB} ${FABRICPLACE_IBUMAD_LIB})
endif()

if(FABRICPLACE_WITH_HWLOC)
  pkg_check_modules(HWLOC QUIET IMPORTED_TARGET hwloc)
  if(NOT HWLOC_FOUND)
    fabricplace_missing("hwloc" FABRICPLACE_WITH_HWLOC "libhwloc-dev")
  endif()
endif()

if(FABRICPLACE_WITH_SLURM)
  # libslurm-dev ships no .pc file; the SPANK plugin only needs the header (symbols come
  # from the host process, so we never link -lslurm).
  find_path(FABRICPLACE_SLURM_INCLUDE slurm/spank.h)
  if(NOT FABRICPLACE_SLURM_INCLUDE)
    fabricplace_missing("slurm/spank.h" FABRICPLACE_WITH_SLURM "libslurm-dev")
  endif()
  # The plugin loads only on the Slurm major.minor it is built for (SPANK_PLUGIN() stores
  # SLURM_VERSION_NUMBER; docs/slurm.md, "Slurm versions"): say which one, and record it
  # (FABRICPLACE_SLURM_SERIES names the lab tests' label, tests/slurm).
  file(STRINGS "${FABRICPLACE_SLURM_INCLUDE}/slurm/slurm_version.h" _fp_slurm_number
       REGEX "^#define SLURM_VERSION_NUMBER ")
  if(NOT _fp_slurm_number MATCHES "0x([0-9a-fA-F][0-9a-fA-F]?)([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])")
    message(FATAL_ERROR "no SLURM_VERSION_NUMBER in ${FABRICPLACE_SLURM_INCLUDE}/slurm/slurm_version.h")
  endif()
  math(EXPR _fp_major "0x${CMAKE_MATCH_1}")
  math(EXPR _fp_minor "0x${CMAKE_MATCH_2}")
  math(EXPR _fp_micro "0x${CMAKE_MATCH_3}")
  if(_fp_minor LESS 10)
    set(_fp_minor "0${_fp_minor}")
  endif()
  set(FABRICPLACE_SLURM_MAJOR ${_fp_major})
  math(EXPR FABRICPLACE_SLURM_MINOR "0x${CMAKE_MATCH_2}")
  set(FABRICPLACE_SLURM_VERSION "${_fp_major}.${_fp_minor}.${_fp_micro}")
  set(FABRICPLACE_SLURM_SERIES "${_fp_major}.${_fp_minor}")
  message(STATUS "fabricplace: SPANK plugin for Slurm ${FABRICPLACE_SLURM_SERIES} "
                 "(${FABRICPLACE_SLURM_INCLUDE}/slurm/slurm_version.h: ${FABRICPLACE_SLURM_VERSION}); "
                 "it loads only on Slurm ${FABRICPLACE_SLURM_SERIES}.x")
endif()

if(FABRICPLACE_DEVELOPER_MODE)
  find_package(GTest REQUIRED)
  if(FABRICPLACE_BUILD_BENCH)
    find_package(benchmark REQUIRED)
  endif()
endif()
