# layers.cmake — one OBJECT library per layer with an include root that holds only the layers
# it may use. For layer L we create ${CMAKE_BINARY_DIR}/layers/L/ with symlinks named after the
# allowed folders of src/ (core, format, kernels, runtime, backends, compiler); sources include
# "core/check.h" etc., so including a layer that is not linked there is a compile error.
function(kiln_layer_root name)
  set(root ${CMAKE_BINARY_DIR}/layers/${name})
  file(MAKE_DIRECTORY ${root})
  foreach(dep IN LISTS ARGN)
    if(NOT EXISTS ${root}/${dep})
      file(CREATE_LINK ${CMAKE_SOURCE_DIR}/src/${dep} ${root}/${dep} SYMBOLIC)
    endif()
  endforeach()
  set(KILN_LAYER_ROOT ${root} PARENT_SCOPE)
endfunction()

function(kiln_layer target dir)
  cmake_parse_arguments(L "" "" "DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${dir}/*.c)
  add_library(${target} OBJECT ${srcs})
  kiln_layer_root(${target} ${L_DEPS})
  target_include_directories(${target} PRIVATE ${KILN_LAYER_ROOT} ${CMAKE_SOURCE_DIR}/include)
endfunction()
