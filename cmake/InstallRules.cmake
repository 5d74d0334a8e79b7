# SPDX-License-Identifier: GPL-2.0-or-later
# What `cmake --install` and the Debian packages (cmake/Packaging.cmake) install, in two
# components: `cli` (package fabricplace) and `slurm` (package fabricplace-slurm-X.Y, the
# SPANK plugin for the Slurm major.minor it was built against, and its Slurm-side files).
install(TARGETS fabricplace RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
# Examples (fabric, topology.conf, tiers CSV), the default health and policy settings.
install(DIRECTORY etc/examples etc/fabricplace DESTINATION ${CMAKE_INSTALL_DATADIR}/fabricplace
        COMPONENT cli)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT cli)
# The licence in Debian's machine-readable form, where Debian policy wants it: every package's
# /usr/share/doc/PACKAGE/copyright (README.md, "Licence").
install(FILES cmake/deb/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT cli)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT cli)
# fabric watch on a systemd timer (docs/operations.md); its settings in /etc/default.
install(FILES etc/systemd/fabricplace-watch.service etc/systemd/fabricplace-watch.timer
        DESTINATION lib/systemd/system COMPONENT cli)
install(FILES etc/systemd/fabricplace-watch.default DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default
        RENAME fabricplace-watch COMPONENT cli)

if(FABRICPLACE_WITH_SLURM)
  install(TARGETS fabricplace_spank LIBRARY DESTINATION ${FABRICPLACE_SPANK_INSTALL_DIR} COMPONENT slurm)
  install(FILES ${PROJECT_BINARY_DIR}/plugin/fabricplace-spank.8
          DESTINATION ${CMAKE_INSTALL_MANDIR}/man8 COMPONENT slurm)
  # The plugin's line, as Debian's slurm-wlm-basic-plugins includes it (plugstack.conf:
  # `include /etc/slurm/plugstack.conf.d/*.conf`), naming the plugin where it is installed.
  file(READ etc/plugstack.conf.d/fabricplace.conf fabricplace_plugstack)
  string(REPLACE "/usr/lib/x86_64-linux-gnu/slurm-wlm/fabricplace.so"
                 "${CMAKE_INSTALL_PREFIX}/${FABRICPLACE_SPANK_INSTALL_DIR}/fabricplace.so"
                 fabricplace_plugstack "${fabricplace_plugstack}")
  file(WRITE ${PROJECT_BINARY_DIR}/etc/plugstack.conf.d/fabricplace.conf "${fabricplace_plugstack}")
  install(FILES ${PROJECT_BINARY_DIR}/etc/plugstack.conf.d/fabricplace.conf
          DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/slurm/plugstack.conf.d COMPONENT slurm)
  install(FILES etc/job_submit.lua etc/cli_filter.lua
          DESTINATION ${CMAKE_INSTALL_DATADIR}/fabricplace/slurm COMPONENT slurm)
  install(FILES cmake/deb/copyright
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/fabricplace-slurm-${FABRICPLACE_SLURM_SERIES}
          COMPONENT slurm)
endif()
