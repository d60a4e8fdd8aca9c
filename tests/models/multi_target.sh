#!/usr/bin/env bash
# multi_target.sh — one program for every CPU (issue 4, item 1): ResNet-18 compiled for generic,
# x86-64-v3 and x86-64-v4 in one context binary, then
#   - `kiln inspect --json` must show the sizes and the sharing: every record after the first
#     whose register tile an earlier record already has (generic and x86-64-v3 share 6x16) may add
#     at most 2% to the binary, and x86-64-v4 (12x32) must still share the unpacked weights;
#     the check runs on two target orders so that generic and x86-64-v3 are each the added one;
#   - every record, forced in turn, must run and match PyTorch's output and every other record's
#     output within the real-model tolerance (kiln_compare_npy). A record this CPU cannot run is
#     reported as skipped.
#
# Usage: multi_target.sh BUILD_DIR WORKDIR
#   BUILD_DIR  holds kiln and tests/models/kiln_compare_npy
#   WORKDIR    scratch space; the model exported by run_models.sh (WORKDIR/../work/exported or
#              WORKDIR/exported) is reused when present, else exported here with export_models.py
# Exit status: 0 pass, 1 fail, 2 usage, 77 (skip) when /usr/bin/python3 has no torch/torchvision
# and no exported model exists.
set -u
if [ $# -ne 2 ]; then
    echo "usage: multi_target.sh BUILD_DIR WORKDIR" >&2
    exit 2
fi
build=$(cd "$1" && pwd) || exit 2
work=$2
here=$(cd "$(dirname "$0")" && pwd)
python=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/kiln
compare=$build/tests/models/kiln_compare_npy
mkdir -p "$work" || exit 2

# ---- the exported model ----
model_dir=""
for d in "$build/tests/models/work/exported/resnet18_op13" "$work/exported/resnet18_op13"; do
    if [ -f "$d/model.onnx" ] && [ -f "$d/input_0.npy" ] && [ -f "$d/output_0.npy" ]; then
        model_dir=$d
        break
    fi
done
if [ -z "$model_dir" ]; then
    if ! "$python" -c 'import torch, torchvision' 2>/dev/null; then
        echo "SKIPPED: multi-target test: $python cannot import torch and torchvision, and no exported ResNet-18"
        exit 77
    fi
    echo "export: resnet18 into $work/exported"
    "$python" -W ignore "$here/export_models.py" "$work/exported" resnet18 2>&1 | sed 's/^/  /'
    model_dir=$work/exported/resnet18_op13
    [ -f "$model_dir/model.onnx" ] || { echo "FAIL: export of resnet18"; exit 1; }
fi
echo "model: $model_dir"

failed=0
fail() {
    echo "FAIL: $*"
    failed=1
}

# ---- sizes and sharing, in two target orders ----
check_sizes() { # program.kiln
    "$kiln" inspect --json "$1" > "$1.json" || { fail "inspect $1"; return; }
    "$python" - "$1.json" <<'EOF' || failed=1
import json, sys
d = json.load(open(sys.argv[1]))
ok = True
for b in d["context_binaries"]:
    if not b["valid"]:
        print(f"  context binary in segment {b['segment']} is invalid: {b.get('error')}")
        ok = False
        continue
    seen_tiles = []
    print(f"  context binary in segment {b['segment']}: {b['size']} bytes, weights {b['weight_bytes']} bytes in {b['weight_blocks']} blocks")
    for r in b["records"]:
        tile = (r["gemm_mr"], r["gemm_nr"])
        pct = r["added_percent"]
        print(f"    {r['target']:10s} tile {tile[0]}x{tile[1]}: {r['bytes']} bytes, {r['shared_bytes']} shared, "
              f"added {r['added_bytes']} bytes" + ("" if pct is None else f" (+{pct:.3f}%)"))
        if pct is not None and tile in seen_tiles and pct >= 2.0:
            print(f"    FAIL: {r['target']} packs like an earlier record but added {pct:.3f}% (limit 2%)")
            ok = False
        if r["shared_bytes"] <= 0 and len(b["records"]) > 1:
            print(f"    FAIL: {r['target']} shares nothing with the other records (unpacked weights must be shared)")
            ok = False
        seen_tiles.append(tile)
sys.exit(0 if ok else 1)
EOF
}

prog=$work/resnet18_3targets.kiln
for order in "generic x86-64-v3 x86-64-v4" "x86-64-v3 generic x86-64-v4"; do
    args=()
    for t in $order; do args+=(--target "$t"); done
    echo "compile --target ${order// / --target }"
    "$kiln" compile "$model_dir/model.onnx" -o "$prog" "${args[@]}" | sed 's/^/  /' || { fail "compile"; continue; }
    check_sizes "$prog"
done
[ -f "$prog" ] || exit 1 # the last one (x86-64-v3 first) is what runs below

# ---- every record forced in turn ----
ran=()
for t in generic x86-64-v3 x86-64-v4; do
    out=$work/out_$t
    rm -rf "$out"
    mkdir -p "$out"
    if ! "$kiln" run "$prog" --target "$t" --inputs "$model_dir" --outputs "$out" > "$out.log" 2>&1; then
        if grep -q "no record of the context binary can run on this CPU" "$out.log"; then
            echo "SKIPPED: record $t: this CPU cannot run it"
            continue
        fi
        fail "run with record $t forced: $(tail -n 2 "$out.log" | tr '\n' ' ')"
        continue
    fi
    line=$("$compare" "$out/output_0.npy" "$model_dir/output_0.npy") || fail "record $t against PyTorch: $line"
    echo "  $t vs PyTorch: $line"
    for prev in "${ran[@]}"; do
        line=$("$compare" "$out/output_0.npy" "$work/out_$prev/output_0.npy") || fail "record $t against $prev: $line"
        echo "  $t vs $prev: $line"
    done
    ran+=("$t")
done
[ ${#ran[@]} -ge 1 ] || fail "no record could run"
[ $failed -eq 0 ] && echo "PASS: multi-target ResNet-18 (${ran[*]} ran)"
exit $failed
