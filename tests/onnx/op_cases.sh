#!/usr/bin/env bash
# op_cases.sh — op variants the ONNX backend test data lacks (tests/onnx/op_cases.py: Resize
# antialias, keep_aspect_ratio_policy, axes, half_pixel_symmetric, tf_crop_and_resize with
# scales, Upsample linear; GridSample's modes, paddings and 3-D grids; max/min scatters), written
# as backend test cases with outputs from PyTorch or numpy and run through kiln_conformance on
# the default path and on the portable kernels alone; every case must pass.
#
# Usage: op_cases.sh BUILD_DIR WORKDIR. Exit 0 pass, 1 fail, 77 skip (no onnx/numpy/torch in
# /usr/bin/python3). Everything is written inside a fresh temporary folder under WORKDIR.
set -u
build=$1
mkdir -p "$2" || exit 1
work=$(mktemp -d "$2/op_cases.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
python=${KILN_PYTHON:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)

if ! "$python" -c 'import onnx, numpy, torch' 2>/dev/null; then
    echo "SKIPPED: $python cannot import onnx, numpy and torch (install python3-onnx python3-numpy python3-torch)"
    exit 77
fi
"$python" "$here/op_cases.py" "$work" || { echo "FAIL: op_cases.py"; exit 1; }
status=0
for mode in "" --no-delegate; do
    # --ratchet on the full list: any case failing fails the run.
    "$build/tests/kiln_conformance" --root "$work" $mode --ratchet "$work/cases.txt" "$work/cases.txt" \
        >"$work/run.out" 2>&1 || { cat "$work/run.out"; echo "FAIL: kiln_conformance $mode"; status=1; }
    tail -n 1 "$work/run.out"
done
exit $status
