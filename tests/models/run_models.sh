#!/usr/bin/env bash
# run_models.sh — real-model test: export CNNs and transformers from PyTorch, compile and run them
# with kiln, and compare every output with PyTorch's.
#
# Usage: run_models.sh BUILD_DIR OUTDIR [MODEL...]
#   BUILD_DIR  holds the kiln tool (BUILD_DIR/kiln) and BUILD_DIR/tests/models/kiln_compare_npy
#   OUTDIR     scratch space for the exported models (about 200 MB) and kiln's outputs
#   MODEL      export and test only these (names as in export_models.py), default all
# Environment: KILN_PYTHON (default /usr/bin/python3) must import torch (and torchvision for the
# CNNs). The export is skipped when OUTDIR already holds one made by the same export_models.py
# with the same torch, so reruns cost only the kiln part.
#
# Exit status: 0 all exported models pass; 1 some model failed to export, compile, run or match;
# 2 usage; 77 (CTest's SKIP_RETURN_CODE) when the Python has no torch.
set -u

if [ $# -lt 2 ]; then
    echo "usage: run_models.sh BUILD_DIR OUTDIR [MODEL...]" >&2
    exit 2
fi
build=$(cd "$1" && pwd) || exit 2
outdir=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
python=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/kiln
compare=$build/tests/models/kiln_compare_npy

for tool in "$kiln" "$compare"; do
    if [ ! -x "$tool" ]; then
        echo "run_models.sh: $tool is missing; build the project first" >&2
        exit 2
    fi
done

torch_version=$("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null)
if [ -z "$torch_version" ]; then
    echo "SKIPPED: real-model test because $python cannot import torch (install python3-torch)"
    exit 77
fi

now() { date +%s.%N; }
# Milliseconds between two `now` stamps.
elapsed_ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (b - a) * 1000 }'; }

# ---- export (cached by a stamp of the exporter's hash, the torch version and the model list) ----
mkdir -p "$outdir/exported" || exit 2
stamp_file=$outdir/exported/.stamp
stamp="$(sha256sum "$here/export_models.py" | cut -d' ' -f1) torch=$torch_version models=${*:-all}"
export_failed=0
t0=$(now)
if [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ]; then
    echo "export: reusing models in $outdir/exported (exporter and torch unchanged)"
else
    rm -rf "$outdir/exported"
    mkdir -p "$outdir/exported"
    echo "export: $python export_models.py (torch $torch_version)"
    # torch's export warnings are noise here; keep its own lines and any traceback
    "$python" -W ignore "$here/export_models.py" "$outdir/exported" "$@" 2>&1 | sed 's/^/  /'
    if [ "${PIPESTATUS[0]}" -ne 0 ]; then
        export_failed=1
        echo "FAIL: export of some model failed (see above); testing the ones that were exported"
    else
        echo "$stamp" > "$stamp_file"
    fi
fi
t1=$(now)
echo "export wall time: $(elapsed_ms "$t0" "$t1") ms"

# ---- compile, run, compare each exported model ----
passed=0
failed=0
failed_names=()
mkdir -p "$outdir/kiln"
for case_dir in "$outdir"/exported/*/; do
    [ -f "$case_dir/model.onnx" ] || continue
    name=$(basename "$case_dir")
    work=$outdir/kiln/$name
    rm -rf "$work"
    mkdir -p "$work/outputs"
    status=PASS
    detail=""
    compile_ms=-
    run_ms=-
    execute_ms=-
    max_err=-

    t0=$(now)
    if ! "$kiln" compile "$case_dir/model.onnx" -o "$work/model.kiln" > "$work/compile.log" 2>&1; then
        status=FAIL
        detail="compile: $(tail -n 3 "$work/compile.log" | tr '\n' ' ')"
    fi
    t1=$(now)
    compile_ms=$(elapsed_ms "$t0" "$t1")

    if [ $status = PASS ]; then
        t0=$(now)
        if ! "$kiln" run "$work/model.kiln" --inputs "$case_dir" --outputs "$work/outputs" > "$work/run.log" 2>&1; then
            status=FAIL
            detail="run: $(tail -n 3 "$work/run.log" | tr '\n' ' ')"
        fi
        t1=$(now)
        run_ms=$(elapsed_ms "$t0" "$t1")
        execute_ms=$(sed -n 's/^execute: \([0-9.]*\) ms.*/\1/p' "$work/run.log" | head -n 1)
    fi

    if [ $status = PASS ]; then
        max_err=0
        for expected in "$case_dir"/output_*.npy; do
            out=$(basename "$expected")
            if [ ! -f "$work/outputs/$out" ]; then
                status=FAIL
                detail="$detail $out: kiln wrote no such output;"
                continue
            fi
            line=$("$compare" "$work/outputs/$out" "$expected" 2>&1)
            rc=$?
            err=$(printf '%s\n' "$line" | sed -n 's/.*max_abs_err=\([^ ]*\).*/\1/p')
            max_err=$(awk -v a="$max_err" -v b="${err:-inf}" 'BEGIN { print (b + 0 > a + 0 || b == "inf") ? b : a }')
            if [ $rc -ne 0 ]; then
                status=FAIL
                detail="$detail $out: $line;"
            fi
        done
    fi

    printf '%-22s %s  compile %6s ms  run %6s ms (execute %s ms)  max_abs_err %s\n' \
        "$name" "$status" "$compile_ms" "$run_ms" "${execute_ms:--}" "$max_err"
    if [ $status = PASS ]; then
        passed=$((passed + 1))
    else
        echo "    $detail"
        failed=$((failed + 1))
        failed_names+=("$name")
    fi
done

if [ $((passed + failed)) -eq 0 ]; then
    echo "no model was exported"
    failed=1
fi
[ $failed -gt 0 ] && echo "failed: ${failed_names[*]:-export}"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ] && [ $export_failed -eq 0 ]
