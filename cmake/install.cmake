# install.cmake — library, headers, the kiln tool, pkg-config file and CMake package config.
include(CMakePackageConfigHelpers)
install(TARGETS kiln EXPORT kilnTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
configure_package_config_file(cmake/kilnConfig.cmake.in ${CMAKE_BINARY_DIR}/kilnConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/kilnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/kilnConfig.cmake ${CMAKE_BINARY_DIR}/kilnConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
file(RELATIVE_PATH KILN_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(cmake/kiln.pc.in ${CMAKE_BINARY_DIR}/kiln.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/kiln.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
