# layers.cmake — one OBJECT library per layer with an include root that holds only what it may
# use. For layer L we create ${CMAKE_BINARY_DIR}/layers/L/ with symlinks to the allowed parts of
# src/: whole layers ("core", "format") or single folders and headers deeper down
# ("backends/cpu/kernels", "backends/cpu/cpu_ops.h"). Sources include "core/check.h" etc., so
# including anything not linked there is a compile error.
function(kiln_layer_root name)
  set(root ${CMAKE_BINARY_DIR}/layers/${name})
  file(MAKE_DIRECTORY ${root})
  foreach(dep IN LISTS ARGN)
    get_filename_component(parent ${root}/${dep} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    if(NOT EXISTS ${root}/${dep})
      file(CREATE_LINK ${CMAKE_SOURCE_DIR}/src/${dep} ${root}/${dep} SYMBOLIC)
    endif()
  endforeach()
  set(KILN_LAYER_ROOT ${root} PARENT_SCOPE)
endfunction()

# kiln_layer(target DIRS dir... DEPS dep... [OPTIONS flag...])
function(kiln_layer target)
  cmake_parse_arguments(L "" "" "DIRS;DEPS;OPTIONS;FILES" ${ARGN})
  set(srcs ${L_FILES})
  foreach(dir IN LISTS L_DIRS)
    file(GLOB dir_srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${dir}/*.c)
    list(APPEND srcs ${dir_srcs})
  endforeach()
  add_library(${target} OBJECT ${srcs})
  kiln_layer_root(${target} ${L_DEPS})
  target_include_directories(${target} PRIVATE ${KILN_LAYER_ROOT} ${CMAKE_SOURCE_DIR}/include)
  if(L_OPTIONS)
    target_compile_options(${target} PRIVATE ${L_OPTIONS})
  endif()
endfunction()
