#!/usr/bin/python3
"""compare_outputs.py ACTUAL_DIR EXPECTED_DIR — do two runtimes' outputs of one model agree?

Benchmark support (not part of kiln); bench/model_bench.sh checks kiln's outputs against ONNX
Runtime's with it, and ONNX Runtime's against PyTorch's. Every EXPECTED_DIR/output_<j>.npy needs an
ACTUAL_DIR/output_<j>.npy of the same dtype and shape, and elementwise

    |actual - expected| <= RTOL * |expected| + ATOL_SCALE * max|expected|

RTOL is the real-model tests' (tests/models/compare_npy.c); the absolute floor is ten times
theirs, 1e-4 of the tensor's largest magnitude: the benchmark's deepest networks (ResNet-50's 53
convolutions over sums of up to 4608 products) leave f32 rounding of a few 1e-5 of the largest
logit on logits near zero, between any two runtimes — ONNX Runtime and PyTorch differ by that
much too. Prints one line per output; exit status 0 all match, 1 a mismatch, 2 usage or a
missing file.
"""
import glob
import os
import sys

import numpy as np

RTOL = 1e-3
ATOL_SCALE = 1e-4


def compare(actual, expected):
    """(matches, one-line description)."""
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return False, f"MISMATCH: {actual.dtype}{list(actual.shape)} against {expected.dtype}{list(expected.shape)}"
    if actual.dtype.kind not in "fc":
        bad = int(np.count_nonzero(actual != expected))
        return bad == 0, f"{'MATCH' if bad == 0 else 'MISMATCH'} {bad} of {actual.size} elements differ"
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    scale = float(np.max(np.abs(e[np.isfinite(e)]), initial=0.0))
    bound = RTOL * np.abs(e) + ATOL_SCALE * scale
    same = (a == e) | (np.isnan(a) & np.isnan(e))  # NaN matches NaN, an infinity itself
    err = np.where(same, 0.0, np.abs(a - e))
    over = np.where(same, 0.0, err / np.maximum(bound, np.finfo(np.float64).tiny))
    bad = int(np.count_nonzero(over > 1.0))
    worst = int(np.argmax(over)) if over.size else 0
    text = (f"{'MATCH' if bad == 0 else 'MISMATCH'} max_abs_err={float(np.max(err, initial=0)):.3g} "
            f"max|expected|={scale:.4g} worst={float(over.flat[worst]) if over.size else 0:.3g} of tolerance")
    if bad:
        text += f", {bad} of {a.size} elements out of tolerance"
    if scale == 0:
        text += " (the expected output is all zero: this check shows little)"
    return bad == 0, text


def main(argv):
    if len(argv) != 3:
        print("usage: compare_outputs.py ACTUAL_DIR EXPECTED_DIR", file=sys.stderr)
        return 2
    expected_files = sorted(glob.glob(os.path.join(argv[2], "output_*.npy")))
    if not expected_files:
        print(f"{argv[2]}: no output_<j>.npy", file=sys.stderr)
        return 2
    status = 0
    for path in expected_files:
        name = os.path.basename(path)
        try:
            ok, text = compare(np.load(os.path.join(argv[1], name)), np.load(path))
        except OSError as e:
            print(f"{name}: cannot read: {e}")
            return 2
        print(f"{name[:-4]}: {text}")
        status = status or (0 if ok else 1)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
