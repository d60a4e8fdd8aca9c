# install.cmake — libraries (shared and static, cmake/libraries.cmake), headers, the docs/ pages,
# the kiln tool, pkg-config files and the CMake package config.
#
# CMake targets of find_package(kiln):   kiln::kiln (libkiln.so)      kiln::kiln_static (libkiln.a)
#   kiln::kiln_compiler (libkiln_compiler.so)   kiln::kiln_compiler_static (libkiln_compiler.a)
# pkg-config: kiln (`--static` for libkiln.a) and kiln-compiler (requires kiln and libprotobuf-c).
include(CMakePackageConfigHelpers)
install(TARGETS kiln kiln_shared kiln_compiler_archive kiln_compiler_shared EXPORT kilnTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# kiln/llm.h stays in the tree until the runner (kiln_llm) is installed as a library of its own:
# a header whose functions no installed library holds would only fail at link time.
install(DIRECTORY include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN llm.h EXCLUDE)
# The pages the headers cite as docs/<page>.md (formats, targets, command line), in share/doc/kiln.
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md" PATTERN gen EXCLUDE)
install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
configure_package_config_file(cmake/kilnConfig.cmake.in ${CMAKE_BINARY_DIR}/kilnConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/kilnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/kilnConfig.cmake ${CMAKE_BINARY_DIR}/kilnConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
file(RELATIVE_PATH KILN_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
foreach(pc kiln kiln-compiler)
  configure_file(cmake/${pc}.pc.in ${CMAKE_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
