#!/usr/bin/env bash
# run_generated_cases.sh — op forms the ONNX backend test data lacks, written as backend test
# cases by a generator script (GENERATOR OUTDIR writes OUTDIR/<case>/ and OUTDIR/cases.txt, with
# expected outputs from PyTorch or numpy) and run through kiln_conformance on the default path and
# on the portable kernels alone; every case must pass. The generators: tests/onnx/op_cases.py
# (Resize, Upsample, GridSample, scatters) and tests/conformance/generated/make_cases.py
# (Einsum, recurrent, quantized, signal and loss forms).
#
# Usage: run_generated_cases.sh GENERATOR BUILD_DIR WORKDIR. Exit 0 pass, 1 fail, 77 skip (no
# onnx/numpy/torch in /usr/bin/python3). Everything is written inside a fresh temporary folder
# under WORKDIR.
set -u
generator=$1
build=$2
mkdir -p "$3" || exit 1
work=$(mktemp -d "$3/$(basename "$generator" .py).XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
python=${KILN_PYTHON:-/usr/bin/python3}

if ! "$python" -c 'import onnx, numpy, torch' 2>/dev/null; then
    echo "SKIPPED: $python cannot import onnx, numpy and torch (install python3-onnx python3-numpy python3-torch)"
    exit 77
fi
"$python" "$generator" "$work" || { echo "FAIL: $(basename "$generator")"; exit 1; }
status=0
for mode in "" --no-delegate; do
    # --ratchet on the full list: any case failing fails the run.
    "$build/tests/kiln_conformance" --root "$work" $mode --ratchet "$work/cases.txt" "$work/cases.txt" \
        >"$work/run.out" 2>&1 || { cat "$work/run.out"; echo "FAIL: kiln_conformance $mode"; status=1; }
    tail -n 1 "$work/run.out"
done
exit $status
