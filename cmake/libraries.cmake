# libraries.cmake — the libraries a user links, built from the objects the tree already compiles:
#
#   libkiln.a (target kiln)                     static runtime: what the tree, the kiln tool and
#                                               the tests link (they use internal symbols too)
#   libkiln.so.0 (kiln_shared)                  the same objects as a shared library
#   libkiln_compiler.a (kiln_compiler_archive)  the compiler with its cpu lowering and ONNX
#                                               bindings in one archive (the tree's kiln_compiler
#                                               target leaves the bindings in a second one)
#   libkiln_compiler.so.0 (kiln_compiler_shared)
#
# Everything is compiled with -fvisibility=hidden (top-level CMakeLists), so a shared library
# exports only what an installed header marks KILN_API (include/kiln/export.h). The compiler's
# shared library carries its own hidden copy of the internal layers it uses (core, format,
# kernels, cpu packing, the cpu context-binary reader; not the runtime, so no process-wide
# state is duplicated) by linking
# libkiln.a with --exclude-libs, which keeps the archive's public functions local too: it
# exports only kiln_compile_*, and the kiln_* runtime functions its users call come from
# libkiln.so. tests/install/check_install.sh checks both export lists against the headers.
set(KILN_SOVERSION ${PROJECT_VERSION_MAJOR})

add_library(kiln_shared SHARED)
foreach(layer IN LISTS KILN_RUNTIME_OBJECTS)
  target_sources(kiln_shared PRIVATE $<TARGET_OBJECTS:${layer}>)
endforeach()
set_target_properties(kiln_shared PROPERTIES OUTPUT_NAME kiln EXPORT_NAME kiln
  VERSION ${PROJECT_VERSION} SOVERSION ${KILN_SOVERSION})
target_include_directories(kiln_shared PUBLIC
  $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(kiln_shared PRIVATE Threads::Threads m)
set_target_properties(kiln PROPERTIES EXPORT_NAME kiln_static)

# protobuf-c by path in the build tree, by name (-lprotobuf-c, as pkg-config gives it) once
# installed, so the exported package does not carry this machine's path.
set(KILN_PROTOBUF_C $<BUILD_INTERFACE:${PROTOBUF_C_LIB}>$<INSTALL_INTERFACE:protobuf-c>)
set(KILN_COMPILER_OBJECTS
  $<TARGET_OBJECTS:kiln_compiler> $<TARGET_OBJECTS:kiln_cpu_aot> $<TARGET_OBJECTS:kiln_onnx_proto>)

add_library(kiln_compiler_archive STATIC ${KILN_COMPILER_OBJECTS})
set_target_properties(kiln_compiler_archive PROPERTIES OUTPUT_NAME kiln_compiler EXPORT_NAME kiln_compiler_static
  ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
target_include_directories(kiln_compiler_archive PUBLIC
  $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(kiln_compiler_archive PUBLIC kiln ${KILN_PROTOBUF_C} m)

add_library(kiln_compiler_shared SHARED ${KILN_COMPILER_OBJECTS})
set_target_properties(kiln_compiler_shared PROPERTIES OUTPUT_NAME kiln_compiler EXPORT_NAME kiln_compiler
  VERSION ${PROJECT_VERSION} SOVERSION ${KILN_SOVERSION} LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
target_include_directories(kiln_compiler_shared PUBLIC
  $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(kiln_compiler_shared PRIVATE kiln ${PROTOBUF_C_LIB} PUBLIC kiln_shared)
target_link_options(kiln_compiler_shared PRIVATE -Wl,--exclude-libs,$<TARGET_FILE_NAME:kiln>)
