#!/usr/bin/env bash
# weight_sharing.sh — a prefill/decode program with and without --weight-sharing (issue 4,
# item 4), on a llama-style decoder exported at two sequence lengths (export_llama_pair.py):
#   - both programs compile for generic, x86-64-v3 and x86-64-v4;
#   - with sharing the program is smaller by about the weight bytes of one method's context
#     binaries (within 10%), since partition i of both methods is one binary over one weight pool;
#   - every method of both programs matches PyTorch, and the shared program's outputs equal the
#     unshared one's (same records, same kernels: bit for bit).
# (That both methods then share one context at run time is checked by the unit test
# test_compile_weight_sharing through kiln_method_context_id.)
#
# Usage: weight_sharing.sh BUILD_DIR WORKDIR
# Exit status: 0 pass, 1 fail, 2 usage, 77 (skip) when /usr/bin/python3 has no torch.
set -u
if [ $# -ne 2 ]; then
    echo "usage: weight_sharing.sh BUILD_DIR WORKDIR" >&2
    exit 2
fi
build=$(cd "$1" && pwd) || exit 2
work=$2
here=$(cd "$(dirname "$0")" && pwd)
python=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/kiln
compare=$build/tests/models/kiln_compare_npy
mkdir -p "$work" || exit 2

torch_version=$("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null)
if [ -z "$torch_version" ]; then
    echo "SKIPPED: weight-sharing test: $python cannot import torch"
    exit 77
fi
pair=$work/llama_pair
stamp="$(cat "$here/export_llama_pair.py" "$here/export_models.py" | sha256sum | cut -d' ' -f1) torch=$torch_version"
if [ ! -f "$pair/.stamp" ] || [ "$(cat "$pair/.stamp")" != "$stamp" ]; then
    rm -rf "$pair"
    "$python" -W ignore "$here/export_llama_pair.py" "$pair" 2>&1 | sed 's/^/  /'
    [ -f "$pair/decode/model.onnx" ] || { echo "FAIL: export of the llama pair"; exit 1; }
    echo "$stamp" > "$pair/.stamp"
fi

failed=0
fail() {
    echo "FAIL: $*"
    failed=1
}
targets=(--target generic --target x86-64-v3 --target x86-64-v4)
methods=(--method "prefill=$pair/prefill/model.onnx" --method "decode=$pair/decode/model.onnx")
shared=$work/llama_shared.kiln
unshared=$work/llama_unshared.kiln
"$kiln" compile "${methods[@]}" "${targets[@]}" --weight-sharing -o "$shared" | sed 's/^/  /' || fail "compile with sharing"
"$kiln" compile "${methods[@]}" "${targets[@]}" -o "$unshared" | sed 's/^/  /' || fail "compile without sharing"
[ $failed -eq 0 ] || exit 1

"$kiln" inspect --json "$shared" > "$shared.json" && "$kiln" inspect --json "$unshared" > "$unshared.json" ||
    fail "inspect"
"$python" - "$shared.json" "$unshared.json" <<'EOF' || failed=1
import json, sys
shared, unshared = (json.load(open(p)) for p in sys.argv[1:3])
def weights(d):  # each distinct context binary once (identical ones share a segment)
    return sum(b["weight_bytes"] for b in d["context_binaries"])
saved = unshared["file_size"] - shared["file_size"]
per_method = weights(unshared) / 2  # both methods' binaries hold the same weights
print(f"  program bytes: {unshared['file_size']} without sharing, {shared['file_size']} with; saved {saved}")
print(f"  weight bytes in context binaries: {weights(unshared)} without sharing, {weights(shared)} with "
      f"(one method's: {per_method:.0f})")
print(f"  context binaries: {len(unshared['context_binaries'])} without sharing, {len(shared['context_binaries'])} with")
ok = abs(saved - per_method) <= 0.1 * per_method and all(b["weight_sharing"] for b in shared["context_binaries"])
if not ok:
    print("  FAIL: the saving is not about one method's weight bytes, or a binary lacks the weight-sharing flag")
sys.exit(0 if ok else 1)
EOF

for m in prefill decode; do
    for p in shared unshared; do
        out=$work/out_${p}_$m
        rm -rf "$out"
        mkdir -p "$out"
        "$kiln" run "$work/llama_$p.kiln" --method "$m" --inputs "$pair/$m" --outputs "$out" > "$out.log" 2>&1 ||
            { fail "run $p $m: $(tail -n 2 "$out.log" | tr '\n' ' ')"; continue; }
        line=$("$compare" "$out/output_0.npy" "$pair/$m/output_0.npy") || fail "$p $m against PyTorch: $line"
        echo "  $p $m vs PyTorch: $line"
    done
    cmp -s "$work/out_shared_$m/output_0.npy" "$work/out_unshared_$m/output_0.npy" ||
        fail "$m: outputs with and without sharing differ"
done
[ $failed -eq 0 ] && echo "PASS: prefill/decode with weight sharing"
exit $failed
