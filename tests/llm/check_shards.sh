#!/bin/bash
# ctest driver for GGUF LLM shards (docs/llm.md "Sharded LLMs"): test_llm_shards on the committed
# fortunes model (5 blocks) in 2, 4 and 5 shards and on a random qwen2 of gguf_write.py (4 blocks,
# F32 and Q8_0, GQA, untied output) in 2 and 4; 6 and 5 shards refused; allocation failures while
# compiling shards; then `kiln run MANIFEST` of
# prefill and decode gives the whole program's outputs, and `kiln generate` / `tokenize` of the
# manifest its tokens. Works in a temporary folder of its own; skips
# (exit 77) without /usr/bin/python3's numpy (the writer's).
set -euo pipefail
if [ $# -ne 1 ]; then echo "usage: $0 BUILD_DIR" >&2; exit 2; fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
t=$build/tests/llm/test_llm_shards
py=/usr/bin/python3
if ! $py -c 'import numpy' 2>/dev/null; then echo "SKIP: /usr/bin/python3 has no numpy (Debian python3-numpy)"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# check MODEL N CONTEXT PREFILL: in a folder of its own
check() {
    local d="$tmp/$(basename "$1" .gguf)-$2"
    mkdir -p "$d"
    "$t" check "$1" "$d" "$2" "$3" "$4" > "$d.log" 2>&1 || { cat "$d.log"; fail "$(basename "$1") in $2 shards"; }
    grep -E "shard [0-9]+: blocks|max abs diff|live_scratch" "$d.log" | sed "s|^|$(basename "$1") x$2:|"
}
refuse() {
    local d="$tmp/refuse-$(basename "$1" .gguf)"
    mkdir -p "$d"
    "$t" refuse "$1" "$d" "$2" > "$d.log" 2>&1 || { cat "$d.log"; fail "refusals of $(basename "$1")"; }
}

fortunes=$root/models/llm/fortunes-llama-f32.gguf
for n in 2 4 5; do check "$fortunes" $n 64 8; done
refuse "$fortunes" 5
# F32 (cpu delegates with scratch) and Q8_0 (kiln.Linear) random qwen2 models, GQA, untied output
$py "$here/gguf_write.py" random "$tmp/qwen2.gguf" --arch qwen2 --layers 4 --kv-heads 1 --untied --context 96 > /dev/null
$py "$here/gguf_write.py" random "$tmp/qwen2q8.gguf" --arch qwen2 --type q8_0 --layers 4 --kv-heads 1 --untied \
    --context 96 > /dev/null
for n in 2 4; do check "$tmp/qwen2.gguf" $n 32 6; done
check "$tmp/qwen2q8.gguf" 4 32 6
refuse "$tmp/qwen2.gguf" 4
mkdir "$tmp/oom"
"$t" oom "$tmp/qwen2.gguf" "$tmp/oom" 2 > "$tmp/oom.log" 2>&1 || { tail -20 "$tmp/oom.log"; fail "allocation failures"; }
grep survived "$tmp/oom.log"

# kiln run MANIFEST (the manifest's default method, prefill; then --method decode) against the
# whole program on the same inputs: every output equal.
kiln=$build/kiln
run_both() { # METHOD T
    rm -rf "$tmp/in" "$tmp/o1" "$tmp/o2" && mkdir "$tmp/in" "$tmp/o1" "$tmp/o2"
    $py - "$tmp/in" "$2" <<'PY'
import sys, numpy as np
d, T = sys.argv[1], int(sys.argv[2]); C, L, kvd = 64, 5, 64
n = min(T, 3)
np.save(d + "/input_0.npy", np.array([(5 * t + 2) % 97 for t in range(T)], np.int32))
np.save(d + "/input_1.npy", np.array([t + 4 if t < n else 0 for t in range(T)], np.int32))
m = np.full((T, C + T), -np.inf, np.float32)
for t in range(T):
    m[t, C + t] = 0
    if t < n: m[t, :4] = 0; m[t, C:C + t + 1] = 0
np.save(d + "/input_2.npy", m)
rng = np.random.default_rng(1)
for i in range(2 * L): np.save(d + "/input_%d.npy" % (3 + i), rng.standard_normal((C, kvd)).astype(np.float32))
PY
    local args=(--inputs "$tmp/in" -q)
    [ "$1" = default ] || args+=(--method "$1")
    "$kiln" run "$tmp/whole.kiln" --method "${1/default/prefill}" --inputs "$tmp/in" -q --outputs "$tmp/o1" ||
        fail "kiln run whole.kiln ($1)"
    "$kiln" run "$tmp/fortunes-llama-f32-4/m.manifest" "${args[@]}" --outputs "$tmp/o2" || fail "kiln run MANIFEST ($1)"
    $py -c '
import sys, numpy as np
for i in range(11):
    a, b = np.load(sys.argv[1] + "/output_%d.npy" % i), np.load(sys.argv[2] + "/output_%d.npy" % i)
    assert a.shape == b.shape and np.abs(a - b).max() <= 1e-6, (i, a.shape, b.shape)
' "$tmp/o1" "$tmp/o2" || fail "kiln run MANIFEST ($1): outputs differ from the whole program's"
}
"$kiln" compile "$fortunes" --context 64 --prefill 8 -o "$tmp/whole.kiln" > /dev/null
run_both default 8
run_both decode 1

# The LLM commands take the manifest: kiln generate (greedy, past one prefill chunk) gives the
# whole program's tokens, kiln tokenize its ids.
"$kiln" generate "$tmp/whole.kiln" -p "Q: What is" -n 24 --temp 0 --json > "$tmp/g1.json" || fail "kiln generate whole.kiln"
"$kiln" generate "$tmp/fortunes-llama-f32-4/m.manifest" -p "Q: What is" -n 24 --temp 0 --json > "$tmp/g2.json" ||
    fail "kiln generate MANIFEST"
$py -c '
import sys, json
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert len(a["tokens"]) == 24 and a["tokens"] == b["tokens"], (a["tokens"], b["tokens"])
print("kiln generate MANIFEST: the whole program'"'"'s 24 tokens")
' "$tmp/g1.json" "$tmp/g2.json" || fail "kiln generate MANIFEST: tokens differ from the whole program's"
[ "$("$kiln" tokenize "$tmp/fortunes-llama-f32-4/m.manifest" --text "Hello world")" = \
  "$("$kiln" tokenize "$fortunes" --text "Hello world")" ] || fail "kiln tokenize MANIFEST"

if [ "$fails" -ne 0 ]; then echo "$fails check(s) failed"; exit 1; fi
echo "all shard checks passed"
