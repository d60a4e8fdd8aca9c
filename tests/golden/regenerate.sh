#!/bin/sh
# regenerate.sh — writes the version 2 golden files, the files that must be refused (reject/)
# and the fuzz_ctxbin seed corpus (fuzz/corpus/ctxbin/) from them. See README.md.
#
# usage: tests/golden/regenerate.sh BUILD_DIR   (BUILD_DIR holds the kiln tool)
#
# Run it only when the format version changes (write the files of the new version under the
# new suffix), or to add a file. Never to make test_golden pass again at the same version:
# the version 1 files are never rewritten here.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kiln=$(cd "${1:?usage: regenerate.sh BUILD_DIR}" && pwd)/kiln
py=/usr/bin/python3
data=/usr/share/libonnx-testdata/data
linear=$data/pytorch-converted/test_Linear/model.onnx

$py "$here/make_cases.py" "$here/cases"
cd "$here"
"$kiln" compile "$linear" --target generic -o linear_cpu_generic_v2.kiln
"$kiln" compile "$linear" --target x86-64-v3 --no-strassen -o linear_cpu_x86-64-v3_nostrassen_v2.kiln
"$kiln" compile "$linear" --target x86-64-v4 -o linear_cpu_x86-64-v4_v2.kiln
"$kiln" compile "$linear" --target x86-64-v4-bf16 --precision bf16 -o linear_cpu_x86-64-v4-bf16_v2.kiln
"$kiln" compile cases/layernorm_residual/model.onnx --target x86-64-v3 -o layernorm_residual_cpu_x86-64-v3_v2.kiln
"$kiln" compile cases/conv_pixel_rows/model.onnx --target generic -o conv_pixel_rows_cpu_generic_v2.kiln
$py "$here/make_rejects.py" "$here" "$here/../../fuzz/corpus/ctxbin"
