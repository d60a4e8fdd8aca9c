#!/bin/sh
# regenerate.sh — writes the golden files that are missing (versions 2 and 3), the files that
# must be refused (reject/) and the fuzz_ctxbin seed corpus (fuzz/corpus/ctxbin/) from them.
# See README.md.
#
# usage: tests/golden/regenerate.sh BUILD_DIR   (BUILD_DIR holds the kiln tool)
#
# Run it only when the format version changes (write the files of the new version under the
# new suffix), or to add a file. Never to make test_golden pass again at the same version:
# a file that exists is never rewritten here (delete it first, deliberately, to replace it).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kiln=$(cd "${1:?usage: regenerate.sh BUILD_DIR}" && pwd)/kiln
py=/usr/bin/python3
data=/usr/share/libonnx-testdata/data
linear=$data/pytorch-converted/test_Linear/model.onnx

$py "$here/make_cases.py" "$here/cases"
cd "$here"
# golden FILE ARGS...: `kiln compile ARGS -o FILE`, unless FILE exists: a committed golden file
# is never rewritten (adding a file must not regenerate the others at their version).
golden() {
    out=$1
    shift
    if [ -e "$out" ]; then
        echo "kept $out"
    else
        "$kiln" compile "$@" -o "$out"
    fi
}
golden linear_cpu_generic_v2.kiln "$linear" --target generic
golden linear_cpu_x86-64-v3_nostrassen_v2.kiln "$linear" --target x86-64-v3 --no-strassen
golden linear_cpu_x86-64-v4_v2.kiln "$linear" --target x86-64-v4
golden linear_cpu_x86-64-v4-bf16_v2.kiln "$linear" --target x86-64-v4-bf16 --precision bf16
golden layernorm_residual_cpu_x86-64-v3_v2.kiln cases/layernorm_residual/model.onnx --target x86-64-v3
golden conv_pixel_rows_cpu_generic_v2.kiln cases/conv_pixel_rows/model.onnx --target generic
# version 3 (program format version 2: the METADATA section)
golden layout_ops_cpu_generic_v3.kiln cases/layout_ops/model.onnx --target generic
golden conv3d_taps_cpu_x86-64-v3_v3.kiln cases/conv3d_taps/model.onnx --target x86-64-v3
$py "$here/make_rejects.py" "$here" "$here/../../fuzz/corpus/ctxbin"
