#!/bin/sh
# make_programs.sh — writes the programs of the inspect golden test (programs/) with a kiln
# tool, and with --expected their expected outputs (expected/, through inspect_golden.sh).
#
# usage: tests/tools/inspect/make_programs.sh BUILD_DIR [--expected]
#
# The programs are committed because the compiler's output may change; the expected outputs
# pin what inspect, verify and scratch-size print for them (README.md). Write the expected
# outputs with the build whose output is known good, review them, and never rewrite them to
# make the test pass without reading the difference.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: make_programs.sh BUILD_DIR [--expected]}" && pwd)
kiln=$build/kiln
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$py "$here/make_programs.py" "$tmp"
mkdir -p "$here/programs"
cd "$here/programs"
"$kiln" compile "$tmp/mlp.onnx" --target generic -o plain.kiln
"$kiln" compile "$tmp/mlp.onnx" --target generic --target x86-64-v3 -o multi_target.kiln
"$kiln" compile --method prefill="$tmp/mlp.onnx" --method decode="$tmp/mlp_row.onnx" --weight-sharing \
    --target generic --target x86-64-v3 -o two_methods_shared.kiln
"$kiln" compile "$tmp/mlp.onnx" --target generic --slc --no-strassen -o slc.kiln
"$kiln" compile "$tmp/mlp.onnx" --no-delegate -o portable.kiln
"$kiln" compile "$tmp/mlp.onnx" --target generic --shards 2 -o "$tmp/sharded.manifest"
cp "$tmp"/sharded-shard0.kiln "$tmp"/sharded-shard1.kiln .
$py "$here/corrupt.py" plain.kiln signature_changed.kiln invalid_context.kiln
if [ "${2:-}" = --expected ]; then
    rm -rf "$here/expected"
    mkdir -p "$here/expected"
    bash "$here/inspect_golden.sh" "$build" --write
fi
