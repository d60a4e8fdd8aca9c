#!/usr/bin/env bash
# cross_build_aarch64.sh SOURCE_DIR — the test cross_build_aarch64: the runtime library builds
# for aarch64 Linux (cmake/aarch64-linux-gnu.cmake, KILN_RUNTIME_ONLY), i.e. no x86 code is left
# outside the x86 build, and every object of libkiln.a links into an aarch64 program (no symbol
# of an x86-only table or probe is still referenced). Skips (77) without Debian's
# gcc-aarch64-linux-gnu. Builds with -Werror in a temporary folder, which it removes.
set -euo pipefail
src=$1
cc=aarch64-linux-gnu-gcc
if ! command -v "$cc" > /dev/null; then
  echo "SKIPPED: $cc not found (apt-get install gcc-aarch64-linux-gnu; make test installs it)"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-cross-aarch64.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "cross_build_aarch64: $*" >&2; exit 1; }

cmake -S "$src" -B "$work/build" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu.cmake" -DKILN_RUNTIME_ONLY=ON \
  -DKILN_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; fail "configure failed"; }
cmake --build "$work/build" -j2 --target kiln > "$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build failed"; }
lib=$work/build/libkiln.a
[[ -f $lib ]] || fail "no libkiln.a"
aarch64-linux-gnu-nm -A "$lib" 2> /dev/null | grep -E 'kiln_cpu_kernels_avx|cpuid' && fail "x86 symbols in the aarch64 library"
# Every object linked (whole archive): an undefined reference to anything x86-only fails here.
printf '#include "kiln/kiln.h"\nint main(void) { return kiln_status_name(KILN_OK) ? 0 : 1; }\n' > "$work/main.c"
"$cc" -I"$src/include" "$work/main.c" -Wl,--whole-archive "$lib" -Wl,--no-whole-archive -lpthread -lm \
  -o "$work/main" > "$work/link.log" 2>&1 || { cat "$work/link.log"; fail "libkiln.a does not link for aarch64"; }
file "$work/main" 2> /dev/null | grep -q aarch64 || [[ ! -x $(command -v file) ]] || fail "the program is not aarch64"
echo "cross_build_aarch64: libkiln.a builds and links for aarch64"
