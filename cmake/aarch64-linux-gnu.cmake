# aarch64-linux-gnu.cmake — CMake toolchain file for a cross build of the runtime for 64-bit ARM
# Linux with Debian's cross compiler (package gcc-aarch64-linux-gnu):
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DKILN_RUNTIME_ONLY=ON
# Only libkiln.a is built (the compiler needs the host's protobuf-c); it has the generic kernel
# table and no x86 code (CMakeLists.txt keys that off CMAKE_SYSTEM_PROCESSOR). The ctest
# cross_build_aarch64 (tests/scripts/cross_build_aarch64.sh) runs exactly this.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
