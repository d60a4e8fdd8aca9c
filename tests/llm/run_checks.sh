#!/bin/bash
# ctest driver for the Python/JS side of issue 14: installs the llama.cpp oracle
# (node-llama-cpp, tests/llm/install_oracle.sh) into BUILD_DIR/llm-oracle, then runs
#   writer: tests/llm/check_writer.py (random llama/qwen2 GGUFs, every tensor type, vs llama.cpp)
#   model:  tests/llm/check_model.py on the committed models/llm GGUFs (F32 and Q8_0)
#   ref:    tests/llm/check_ref.py, kiln's reference decoder (BUILD_DIR/kiln_ref_llama) vs
#           llama.cpp, with llama-quantize built once (tests/llm/build_llama_quantize.sh) into
#           $KILN_LLAMA_QUANTIZE_DIR (default BUILD_DIR/llama-quantize)
#   types:  tests/llm/check_types.py, kiln's logits (prefill chunks and decode over the cache) vs
#           llama.cpp and the reference decoder on random GGUFs of every type (llama-quantize's
#           too, built as for ref), and the size of llama-quantize's files compiled by kiln
# Skips (exit 77), saying why, without /usr/bin/python3's torch or without node/npm.
set -euo pipefail
if [ $# -ne 2 ]; then echo "usage: $0 BUILD_DIR writer|model|ref|types" >&2; exit 2; fi
build=$1
what=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if ! /usr/bin/python3 -c 'import torch, numpy' 2>/dev/null; then
    echo "SKIP: /usr/bin/python3 has no torch/numpy (Debian python3-torch python3-numpy)"; exit 77
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "SKIP: node and npm are needed for the llama.cpp oracle (Debian nodejs npm)"; exit 77
fi
export KILN_LLM_ORACLE_DIR="$build/llm-oracle"
"$here/install_oracle.sh" "$KILN_LLM_ORACLE_DIR"

case $what in
writer)
    /usr/bin/python3 "$here/check_writer.py" ;;
model)
    for t in f32 q8_0; do
        /usr/bin/python3 "$here/check_model.py" "$root/models/llm/fortunes-llama-$t.gguf" \
            --file "$root/models/llm/test.txt" --prompt "The" -n 64 > "$build/llm-check-$t.json" ||
            { cat "$build/llm-check-$t.json"; echo "FAIL: $t"; exit 1; }
        /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], "tokens equal:", r["tokens_equal"], "ppl torch %.4f llama.cpp %.4f (rel %.1e)" % (r["ppl_torch"], r["ppl_llama_cpp"], r["ppl_relative_difference"]), "greedy equal prefix", r["greedy_equal_prefix"])' "$build/llm-check-$t.json" "$t"
    done ;;
ref|types)
    quantize_dir=${KILN_LLAMA_QUANTIZE_DIR:-$build/llama-quantize}
    quantize=()
    if [ -f "$root/../shared/peers/llama.cpp.tar.xz" ]; then
        quantize=(--quantize "$("$here/build_llama_quantize.sh" "$quantize_dir")")
    else
        echo "no ../shared/peers/llama.cpp.tar.xz beside the repo: the llama-quantize files are skipped"
    fi
    if [ "$what" = ref ]; then
        /usr/bin/python3 "$here/check_ref.py" --ref "$build/kiln_ref_llama" "${quantize[@]}"
    else
        /usr/bin/python3 "$here/check_types.py" --build "$build" "${quantize[@]}"
    fi ;;
*)
    echo "usage: $0 BUILD_DIR writer|model|ref|types" >&2; exit 2 ;;
esac
