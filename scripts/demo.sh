#!/usr/bin/env bash
# demo.sh BUILD_DIR — the `make demo` steps: compile the committed digits model with
# `kiln compile`, describe it, run it with `kiln run` on the 32 held-back test images, and
# report predictions, accuracy and timing (demo/README.md says how the model was trained); then
# compile the committed tiny llama (models/llm/) and generate a few lines with it.
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
echo "== kiln compile models/llm/fortunes-llama-q8_0.gguf (a 1.2M-parameter llama trained on Debian's fortunes, models/llm/README.md)"
"$build/kiln" compile models/llm/fortunes-llama-q8_0.gguf -o "$out/fortunes.kiln"
echo "== kiln generate: 48 tokens after \"Q: What\" (temperature 0.7, top-k 40, seed 3)"
"$build/kiln" generate "$out/fortunes.kiln" -p "Q: What" -n 48 --temp 0.7 --top-k 40 --seed 3
