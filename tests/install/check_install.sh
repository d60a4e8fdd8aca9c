#!/usr/bin/env bash
# check_install.sh BUILD_DIR WORK_DIR — install kiln into a scratch prefix and build a consumer
# with pkg-config and with find_package(kiln); both must compile, link and run.
set -euo pipefail
build=$1 work=$2 here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
libdir=$(ls -d "$work"/prefix/lib*/pkgconfig | head -1)
export PKG_CONFIG_PATH=$libdir
cc -o "$work/consumer-pc" "$here/consumer.c" $(pkg-config --cflags --libs --static kiln)
"$work/consumer-pc"
cmake -S "$here" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer"
test -x "$work/prefix/bin/kiln" && "$work/prefix/bin/kiln" --version
echo "install check passed"
