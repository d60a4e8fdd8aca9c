#!/bin/sh
# Installs the llama.cpp oracle (npm package node-llama-cpp, pinned, with its prebuilt
# CPU binaries for linux-x64) into CACHE_DIR. Idempotent: a cache that already holds the
# pinned versions is left as it is. Nothing is compiled or downloaded beyond the npm
# packages: --ignore-scripts skips the postinstall that would fetch or build llama.cpp,
# and --omit=optional skips the GPU variants (CUDA, Vulkan) the oracle never loads.
set -eu

VERSION=3.22.1
if [ $# -ne 1 ]; then
    echo "usage: $0 CACHE_DIR" >&2
    exit 2
fi
mkdir -p "$1"
cache=$(cd "$1" && pwd)

installed_version() {
    # Prints the version of an installed package, or nothing.
    f="$cache/node_modules/$1/package.json"
    [ -f "$f" ] && node -e 'process.stdout.write(require(process.argv[1]).version)' "$f" 2>/dev/null || true
}

if [ "$(installed_version node-llama-cpp)" = "$VERSION" ] &&
   [ "$(installed_version @node-llama-cpp/linux-x64)" = "$VERSION" ]; then
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "install_oracle: npm not found (Debian package npm)" >&2
    exit 1
fi

mkdir -p "$cache"
cat > "$cache/package.json" <<JSON
{
  "name": "kiln-llm-oracle",
  "private": true,
  "dependencies": {
    "node-llama-cpp": "$VERSION",
    "@node-llama-cpp/linux-x64": "$VERSION"
  }
}
JSON

if ! (cd "$cache" && npm install --ignore-scripts --omit=optional --no-audit --no-fund \
        --loglevel=error >"$cache/npm-install.log" 2>&1); then
    echo "install_oracle: npm install of node-llama-cpp $VERSION into $cache failed;" >&2
    echo "install_oracle: last lines of $cache/npm-install.log:" >&2
    tail -n 20 "$cache/npm-install.log" >&2
    exit 1
fi

if [ "$(installed_version node-llama-cpp)" != "$VERSION" ] ||
   [ "$(installed_version @node-llama-cpp/linux-x64)" != "$VERSION" ]; then
    echo "install_oracle: npm finished but node-llama-cpp $VERSION or its linux-x64 binaries are missing in $cache/node_modules" >&2
    exit 1
fi
