#!/usr/bin/env bash
# demo.sh BUILD_DIR — the `make demo` steps: compile the committed digits model with
# `kiln compile`, describe it, run it with `kiln run` on the 32 held-back test images, and
# report predictions, accuracy and timing (demo/README.md says how the model was trained).
set -euo pipefail
build=${1:-build}
out=$build/demo
mkdir -p "$out"
echo "== kiln compile demo/digits.onnx (batch of 32 images)"
"$build/kiln" compile demo/digits.onnx --input-shape image=32,1,8,8 -o "$out/digits.kiln"
echo "== kiln inspect"
"$build/kiln" inspect "$out/digits.kiln"
echo "== kiln run on demo/test_images.npy (100 runs for a stable time)"
"$build/kiln" run "$out/digits.kiln" --input demo/test_images.npy --outputs "$out/out" --iterations 100
echo "== predictions (checked against PyTorch's logits in demo/expected_logits.npy)"
"$build/digits_report" "$out/out/output_0.npy" demo/test_labels.npy demo/expected_logits.npy
