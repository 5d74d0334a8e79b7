install(TARGETS fabricplace RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(FABRICPLACE_WITH_SLURM)
  install(TARGETS fabricplace_spank LIBRARY DESTINATION ${FABRICPLACE_SPANK_DIR})
endif()
# etc/examples/ (example fabric, topology.conf, tiers CSV) and etc/plugstack.conf.d/.
install(DIRECTORY etc/ DESTINATION ${CMAKE_INSTALL_DATADIR}/fabricplace)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
