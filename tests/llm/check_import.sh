#!/bin/bash
# ctest driver for the GGUF LLM importer (docs/llm.md "The GGUF importer"):
#   import: random models of tests/llm/gguf_write.py and the committed fortunes models compile
#           into the program layout (test_llm_import layout), --context/--prefill reach the
#           program (kiln inspect --json), a Q8_0 program (and tied Q8_0 and Q4_0 ones: the
#           embedding stored once) stays within 10% of its GGUF file,
#           every refusal names its cause, allocation failures unwind, and prefill's logits
#           (and decode's over prefill's cache) equal torch's in float64 (compare_logits.py)
#   oracle: prefill's logits on the fortunes F32 model against llama.cpp (node-llama-cpp,
#           installed into BUILD_DIR/llm-oracle by install_oracle.sh)
# Works in a temporary folder of its own. Skips (exit 77), saying why, without /usr/bin/python3's
# numpy and torch, or (oracle) without node/npm.
set -euo pipefail
if [ $# -ne 2 ]; then echo "usage: $0 BUILD_DIR import|oracle" >&2; exit 2; fi
build=$(cd "$1" && pwd)
what=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
kiln=$build/kiln
t=$build/tests/llm/test_llm_import
py=/usr/bin/python3
if ! $py -c 'import numpy, torch' 2>/dev/null; then
    echo "SKIP: /usr/bin/python3 has no numpy/torch (Debian python3-numpy python3-torch)"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# "L KVD VOCAB CONTEXT_LENGTH" of a GGUF LLM, read with our own reader.
dims() {
    $py -c '
import sys; sys.path.insert(0, sys.argv[2]); import gguf_read
m, t = gguf_read.read(sys.argv[1]); a = m["general.architecture"]
h, kv = m[a + ".attention.head_count"], m.get(a + ".attention.head_count_kv", m[a + ".attention.head_count"])
print(m[a + ".block_count"], kv * m[a + ".embedding_length"] // h, len(m["tokenizer.ggml.tokens"]), m[a + ".context_length"])
' "$1" "$here"
}

# layout MODEL CONTEXT PREFILL WANT_C WANT_T
layout() {
    read -r L kvd vocab ctx < <(dims "$1")
    "$t" layout "$1" "$2" "$3" "$L" "$kvd" "$vocab" "$4" "$5" > "$tmp/layout.log" 2>&1 ||
        { cat "$tmp/layout.log"; fail "layout of $(basename "$1") (context $2, prefill $3)"; }
}

# refuse EXIT_STATUS MESSAGE-PART kiln compile arguments...
refuse() {
    local want=$1 part=$2; shift 2
    set +e
    "$kiln" compile "$@" -o "$tmp/refused.kiln" > "$tmp/out.txt" 2> "$tmp/err.txt"
    local got=$?
    set -e
    if [ "$got" != "$want" ] || ! grep -qF -- "$part" "$tmp/err.txt" || [ "$(wc -l < "$tmp/err.txt")" != 1 ] ||
       [ -e "$tmp/refused.kiln" ]; then
        fail "kiln compile $* : exit $got (want $want), message: $(cat "$tmp/err.txt") (want one line with '$part')"
    fi
}

# logits MODEL IDS [--oracle]: prefill (and decode) through the runtime against the references.
logits() {
    local model=$1 ids=$2; shift 2
    "$t" logits "$model" "$ids" "$tmp/logits.json" > "$tmp/logits.log" 2>&1 ||
        { cat "$tmp/logits.log"; fail "running $(basename "$model")"; return; }
    grep "decode vs prefill" "$tmp/logits.log" || true
    echo -n "$(basename "$model"): "
    $py "$here/compare_logits.py" "$tmp/logits.json" "$model" --tokens "$ids" "$@" ||
        fail "logits of $(basename "$model") differ from the reference"
}

f32=$root/models/llm/fortunes-llama-f32.gguf
q8=$root/models/llm/fortunes-llama-q8_0.gguf
case $what in
import)
    echo "== program layout"
    layout "$f32" 0 0 128 128
    layout "$q8" 100 16 100 16
    $py "$here/gguf_write.py" random "$tmp/qwen2.gguf" --arch qwen2 --type q8_0 --kv-heads 1 --untied --context 96
    layout "$tmp/qwen2.gguf" 0 0 96 96
    layout "$tmp/qwen2.gguf" 0 7 96 7
    $py "$here/gguf_write.py" random "$tmp/long.gguf" --type q4_0 --context 4096 --version 2 --alignment 64
    layout "$tmp/long.gguf" 0 0 2048 128

    echo "== --context and --prefill"
    "$kiln" compile "$q8" --context 100 --prefill 16 -o "$tmp/cp.kiln" > /dev/null
    "$kiln" inspect --json "$tmp/cp.kiln" > "$tmp/cp.json"
    $py - "$tmp/cp.json" <<'PY' || fail "--context 100 --prefill 16 not in the program"
import json, sys
p = json.load(open(sys.argv[1]))
types = {m["name"]: {i["name"]: i["type"] for i in m["inputs"] + m["outputs"]} for m in p["methods"]}
want = {"prefill": {"tokens": "i32 [16]", "mask": "f32 [16,116]", "cache_k.4": "f32 [100,64]", "logits": "f32 [16,1024]",
                    "v.4": "f32 [16,64]"},
        "decode": {"tokens": "i32 [1]", "mask": "f32 [1,101]", "cache_v.0": "f32 [100,64]", "k.0": "f32 [1,64]"}}
bad = [(m, k, types.get(m, {}).get(k), v) for m in want for k, v in want[m].items() if types.get(m, {}).get(k) != v]
print("inspect:", "ok" if not bad else bad)
sys.exit(1 if bad else 0)
PY

    echo "== sizes"
    "$kiln" compile "$q8" -o "$tmp/q8.kiln" > /dev/null
    $py -c '
import os, sys
g, k = os.path.getsize(sys.argv[1]), os.path.getsize(sys.argv[2])
print("Q8_0: gguf %d bytes, kiln %d bytes (%+.1f%%)" % (g, k, 100.0 * (k - g) / g))
sys.exit(0 if abs(k - g) <= 0.1 * g else 1)' "$q8" "$tmp/q8.kiln" || fail "Q8_0 program more than 10% off its GGUF"
    # Tied classifiers (gguf_write.py's default): the embedding and the logits read one tensor,
    # which must be stored once (the EMBED and QLINEAR steps share a context binary). Shaped as
    # stories15M, so the 9.2M-element embedding is more than half of the file.
    for type in q8_0 q4_0; do
        $py "$here/gguf_write.py" random "$tmp/tied-$type.gguf" --type $type --seed 1 --dim 288 --layers 6 \
            --heads 6 --kv-heads 6 --ffn 768 --context 256 --vocab 32000
        "$kiln" compile "$tmp/tied-$type.gguf" -o "$tmp/tied-$type.kiln" > /dev/null
        $py -c '
import os, sys
g, k = os.path.getsize(sys.argv[1]), os.path.getsize(sys.argv[2])
print("tied %s: gguf %d bytes, kiln %d bytes (%+.1f%%)" % (sys.argv[3], g, k, 100.0 * (k - g) / g))
sys.exit(0 if abs(k - g) <= 0.1 * g else 1)' "$tmp/tied-$type.gguf" "$tmp/tied-$type.kiln" $type ||
            fail "tied $type program more than 10% off its GGUF"
        rm -f "$tmp/tied-$type.gguf" "$tmp/tied-$type.kiln"
    done

    echo "== refusals"
    $py "$here/make_bad_gguf.py" "$tmp/bad" > /dev/null
    refuse 1 "GGUF model of architecture 'gpt2': kiln builds llama and qwen2" "$tmp/bad/unknown_arch.gguf"
    refuse 4 "lacks the metadata key 'general.architecture'" "$tmp/bad/no_arch.gguf"
    refuse 4 "lacks the metadata key 'llama.block_count'" "$tmp/bad/missing_key.gguf"
    refuse 4 "lacks the tensor 'blk.1.ffn_up.weight'" "$tmp/bad/missing_tensor.gguf"
    refuse 4 "GGUF tensor 'blk.0.attn_k.weight' has dims (64, 64); the hyperparameters want (64, 32)" \
        "$tmp/bad/bad_shape.gguf"
    refuse 4 "GGUF tensor 'blk.0.attn_norm.weight' has type F16; a norm weight or bias must be F32" \
        "$tmp/bad/f16_norm.gguf"
    refuse 4 "(architecture qwen2) lacks the tensor 'blk.0.attn_v.bias'" "$tmp/bad/qwen2_no_bias.gguf"
    refuse 1 "GGUF model: llama.rope.scaling.type is 'yarn'; kiln builds RoPE scaling none and linear" \
        "$tmp/bad/yarn.gguf"
    refuse 4 "head_count 4 is not a multiple of llama.attention.head_count_kv 3" "$tmp/bad/bad_heads.gguf"
    refuse 2 "a GGUF LLM has the methods 'prefill' and 'decode', not 'forward2'" --method "forward2=$q8"
    refuse 2 "context length 129 is more than the 128 the model was trained for" "$q8" --context 129
    refuse 2 "prefill length 65 is more than the context length 64" "$q8" --context 64 --prefill 65
    refuse 2 "input shapes do not apply to a GGUF LLM" "$q8" --input-shape tokens=4
    refuse 2 "--context wants a length" "$q8" --context 0
    # Sharding by blocks (check_shards.sh tests the shards): no more shards than blocks.
    refuse 2 "--shards 6: the model has 5 blocks, so at most 5 shards" "$q8" --shards 6
    refuse 2 "a GGUF LLM is sharded whole" --method "prefill=$q8" --shards 2
    # Both methods named by hand compile too (without weight sharing unless asked for).
    "$kiln" compile --method "prefill=$q8" --method "decode=$q8" --prefill 8 -o "$tmp/two.kiln" > /dev/null ||
        fail "prefill and decode given as --method"

    echo "== allocation failures"
    $py "$here/gguf_write.py" random "$tmp/tiny.gguf" --type q8_0 --dim 32 --layers 1 --heads 2 --ffn 32 --context 8
    "$t" oom "$tmp/tiny.gguf" > "$tmp/oom.log" 2>&1 || { tail -20 "$tmp/oom.log"; fail "allocation failures"; }
    tail -1 "$tmp/oom.log"

    echo "== logits against torch"
    logits "$f32" 1,2,3,4,5,6,7,8
    logits "$q8" 1,300,2,77
    $py "$here/gguf_write.py" random "$tmp/q4.gguf" --arch qwen2 --type q4_0 --kv-heads 2 --untied
    logits "$tmp/q4.gguf" 3,9,27,81,243
    logits "$tmp/qwen2.gguf" 5,6,7
    # Linear RoPE scaling (positions divided by the factor) on a copy of the fortunes model.
    $py - "$f32" "$tmp/linear.gguf" "$here" <<'PY'
import sys
sys.path.insert(0, sys.argv[3])
import gguf_read, gguf_write as gw
meta, tensors = gguf_read.read(sys.argv[1])
w = gw.GGUFWriter()
for k, v in meta.items():
    if k.startswith("tokenizer.ggml.") and isinstance(v, list):
        w.add_array(k, {str: gw.STRING, float: gw.FLOAT32, int: gw.INT32}[type(v[0])], v)
    elif not isinstance(v, list):
        w.add(k, gw.STRING if isinstance(v, str) else gw.BOOL if isinstance(v, bool) else
              gw.FLOAT32 if isinstance(v, float) else gw.UINT32, v)
w.add("llama.rope.scaling.type", gw.STRING, "linear")
w.add("llama.rope.scaling.factor", gw.FLOAT32, 4.0)
for name, a in tensors.items():
    w.add_tensor(name, a)
w.write(sys.argv[2])
PY
    logits "$tmp/linear.gguf" 1,2,3,4,5,6
    ;;
oracle)
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        echo "SKIP: node and npm are needed for the llama.cpp oracle (Debian nodejs npm)"; exit 77
    fi
    export KILN_LLM_ORACLE_DIR="$build/llm-oracle"
    "$here/install_oracle.sh" "$KILN_LLM_ORACLE_DIR"
    logits "$f32" 1,2,3,4,5,6,7,8,9,10,11,12 --oracle
    # llama.cpp multiplies a Q8_0 weight with activations quantized to Q8_0 (torch, exact, is as far
    # from it as kiln is), so its logits are 0.1 off here.
    logits "$q8" 1,2,3,4,5,6 --oracle --oracle-tolerance 0.25
    ;;
*)
    echo "usage: $0 BUILD_DIR import|oracle" >&2; exit 2 ;;
esac
if [ "$fails" != 0 ]; then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
