#!/bin/sh
# Builds llama.cpp's llama-quantize (the pinned copy in ../shared/peers/llama.cpp.tar.xz, see
# ../shared/peers/README.md) into CACHE_DIR and prints the binary's path. It only makes the
# GGUF files of llama.cpp's own quantization types (Q4_K_M, Q6_K, ...) that the oracle tests
# feed to kiln's reference decoder; no llama.cpp code is used by kiln. Idempotent: a cache
# holding a binary built from the same tarball (checked by its sha256) is left as it is.
# The first build takes several minutes on two cores (only the llama-quantize target, -j2).
#
#   tests/llm/build_llama_quantize.sh CACHE_DIR [TARBALL]
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 CACHE_DIR [llama.cpp.tar.xz]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
tarball=${2:-$here/../../../shared/peers/llama.cpp.tar.xz}
if [ ! -f "$tarball" ]; then
    echo "build_llama_quantize: $tarball not found (../shared/peers/llama.cpp.tar.xz beside the repo)" >&2
    exit 1
fi
mkdir -p "$1"
cache=$(cd "$1" && pwd)
binary=$cache/lcpp/build/bin/llama-quantize
stamp=$cache/llama-quantize.sha256
sum=$(sha256sum "$tarball" | cut -d' ' -f1)

if [ -x "$binary" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ]; then
    echo "$binary"
    exit 0
fi
for tool in cmake cc c++ tar xz; do
    command -v $tool >/dev/null 2>&1 || { echo "build_llama_quantize: $tool not found" >&2; exit 1; }
done

echo "build_llama_quantize: building llama-quantize into $cache (once, about 6 minutes on 2 cores; cached)" >&2
rm -rf "$cache/lcpp" "$stamp"
tar -xJf "$tarball" -C "$cache"
log=$cache/llama-quantize-build.log
if ! { cmake -S "$cache/lcpp" -B "$cache/lcpp/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
           -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF &&
       cmake --build "$cache/lcpp/build" -j2 --target llama-quantize; } >"$log" 2>&1; then
    echo "build_llama_quantize: the build failed; last lines of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
fi
if [ ! -x "$binary" ]; then
    echo "build_llama_quantize: the build finished but $binary is missing" >&2
    exit 1
fi
echo "$sum" > "$stamp"
echo "$binary"
