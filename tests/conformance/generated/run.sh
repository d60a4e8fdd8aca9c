#!/usr/bin/env bash
# run.sh — the generated cases of make_cases.py (issue 15's Einsum, recurrent, quantized, signal
# and loss forms the ONNX backend data lacks), each compared with numpy/torch's result by
# kiln_conformance. Every case must pass.
#
# Usage: run.sh BUILD_DIR WORKDIR. Exit 0 pass, 1 fail, 77 skip (no onnx/numpy/torch in
# /usr/bin/python3). Everything is written inside a fresh temporary folder under WORKDIR.
set -u
build=$1
mkdir -p "$2" || exit 1
work=$(mktemp -d "$2/generated.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
python=${KILN_PYTHON:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)

if ! "$python" -c 'import onnx, numpy, torch' 2>/dev/null; then
    echo "SKIPPED: $python cannot import onnx, numpy and torch (install python3-onnx python3-numpy python3-torch)"
    exit 77
fi
"$python" "$here/make_cases.py" "$work" || { echo "FAIL: make_cases.py"; exit 1; }
"$build/tests/kiln_conformance" --root "$work" "$work/cases.txt" || exit 1
"$build/tests/kiln_conformance" --root "$work" --no-delegate "$work/cases.txt"
