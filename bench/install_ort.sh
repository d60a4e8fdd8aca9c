#!/usr/bin/env bash
# install_ort.sh — installs ONNX Runtime (the npm package onnxruntime-node, pinned at 1.30.0) into
# a cache folder for the model benchmark's ORT peer (bench/ort_bench.mjs), and checks it loads.
#
# Benchmark support (not part of kiln; `make test` never calls it). Usage: install_ort.sh CACHE_DIR
#
# The versions come from bench/ort/package-lock.json (onnxruntime-node 1.30.0 and its
# dependencies, with their integrity hashes), installed with `npm ci --ignore-scripts`: the
# lockfile decides every version, so each machine gets the same files. --ignore-scripts because
# the package's install script only downloads GPU libraries; the CPU library for linux-x64 is in
# the package itself (bin/napi-v6/linux/x64/libonnxruntime.so.1).
#
# Idempotent: CACHE_DIR/.stamp holds the lockfile's hash; a cache whose stamp matches and whose
# library loads is reused without touching the network. Concurrent calls are serialised with
# flock on CACHE_DIR/.lock. On success prints the package folder (CACHE_DIR/node_modules/
# onnxruntime-node) on stdout; progress goes to stderr.
#
# Exit status: 0 installed and loadable, 1 cannot install or load (the reason on stderr), 2 usage.
set -u

[ $# -eq 1 ] || { echo "usage: install_ort.sh CACHE_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
lock=$here/ort/package-lock.json
mkdir -p "$1" || exit 1
cache=$(cd "$1" && pwd)
package=$cache/node_modules/onnxruntime-node
binding=$package/bin/napi-v6/linux/x64/onnxruntime_binding.node

if [ "$(uname -sm)" != "Linux x86_64" ]; then
    echo "install_ort.sh: onnxruntime-node ships its CPU library for linux-x64; this is $(uname -sm)" >&2
    exit 1
fi
if ! command -v node > /dev/null; then
    echo "install_ort.sh: node is missing (install the Debian package nodejs)" >&2
    exit 1
fi
if ! command -v npm > /dev/null; then
    # Debian's nodejs comes without npm (another Debian package); NodeSource's includes it.
    "$here/../scripts/ensure-packages.sh" npm >&2 || exit 1
fi

# Loads the native binding (which dlopens libonnxruntime.so.1) and the JS API; prints the version.
loads() {
    node -e '
        const [pkg, binding] = process.argv.slice(1);
        require(binding);
        const ort = require(pkg);
        if (typeof ort.InferenceSession?.create !== "function") throw new Error("no InferenceSession");
        console.log(ort.env.versions.node);' "$package" "$binding"
}

stamp="$(sha256sum "$lock" | cut -d' ' -f1)"
exec 9> "$cache/.lock" && flock 9 || { echo "install_ort.sh: cannot lock $cache/.lock" >&2; exit 1; }
if [ -f "$cache/.stamp" ] && [ "$(cat "$cache/.stamp")" = "$stamp" ] && version=$(loads 2> /dev/null); then
    echo "install_ort.sh: onnxruntime-node $version already in $cache" >&2
    echo "$package"
    exit 0
fi
rm -f "$cache/.stamp"
cp "$here/ort/package.json" "$lock" "$cache/" || exit 1
echo "install_ort.sh: npm ci --ignore-scripts in $cache (onnxruntime-node 1.30.0, about 300 MB)" >&2
if ! (cd "$cache" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >&2; then
    echo "install_ort.sh: npm ci failed in $cache" >&2
    exit 1
fi
if ! version=$(loads); then
    echo "install_ort.sh: onnxruntime-node was installed in $cache but does not load (see above)" >&2
    exit 1
fi
if [ "$version" != 1.30.0 ]; then
    echo "install_ort.sh: expected onnxruntime-node 1.30.0, the cache holds $version" >&2
    exit 1
fi
echo "$stamp" > "$cache/.stamp"
echo "install_ort.sh: onnxruntime-node $version installed in $cache" >&2
echo "$package"
