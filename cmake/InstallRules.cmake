install(TARGETS fabricplace RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(FABRICPLACE_WITH_SLURM)
  # Debian's slurm-wlm keeps its plugins in <libdir>/slurm-wlm; upstream Slurm in <libdir>/slurm.
  if(EXISTS /etc/debian_version)
    set(fabricplace_default_spank_dir "${CMAKE_INSTALL_LIBDIR}/slurm-wlm")
  else()
    set(fabricplace_default_spank_dir "${CMAKE_INSTALL_LIBDIR}/slurm")
  endif()
  set(FABRICPLACE_SPANK_DIR "${fabricplace_default_spank_dir}"
      CACHE STRING "Where Slurm looks for SPANK plugins (relative to the prefix)")
  install(TARGETS fabricplace_spank LIBRARY DESTINATION ${FABRICPLACE_SPANK_DIR})
endif()
# etc/examples/ (example fabric, topology.conf, tiers CSV) and etc/plugstack.conf.d/.
install(DIRECTORY etc/ DESTINATION ${CMAKE_INSTALL_DATADIR}/fabricplace)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
