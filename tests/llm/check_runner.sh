#!/bin/bash
# ctest driver for the LLM commands against llama.cpp (node-llama-cpp, installed into
# BUILD_DIR/llm-oracle by install_oracle.sh), on the committed fortunes models:
#   tokenize:   kiln tokenize (a .gguf, and a .kiln compiled from it) = the oracle's ids, with and
#               without BOS, on models/llm/test.txt and a short text
#   generate:   kiln generate --temp 0 -n 64 -p "The" = the oracle's greedy tokens (F32, Q8_0)
#   perplexity: kiln perplexity on models/llm/test.txt within 0.5% of the oracle's (F32, Q8_0)
# Skips (exit 77), saying why, without node/npm or /usr/bin/python3 (which compares the JSON).
set -euo pipefail
if [ $# -ne 2 ]; then echo "usage: $0 BUILD_DIR tokenize|generate|perplexity" >&2; exit 2; fi
build=$(cd "$1" && pwd)
what=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
kiln="$build/kiln"
models="$root/models/llm"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "SKIP: node and npm are needed for the llama.cpp oracle (Debian nodejs npm)"; exit 77
fi
if [ ! -x /usr/bin/python3 ]; then echo "SKIP: /usr/bin/python3 compares the results"; exit 77; fi
export KILN_LLM_ORACLE_DIR="$build/llm-oracle"
"$here/install_oracle.sh" "$KILN_LLM_ORACLE_DIR"
tmp=$(mktemp -d "$build/llm-runner-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
oracle() { node "$here/oracle.mjs" "$@"; }

# same_ids WHAT KILN_IDS_LINE ORACLE_JSON FIELD: the space-separated ids equal the JSON list.
same_ids() {
    /usr/bin/python3 - "$@" <<'PY'
import json, sys
what, line, oracle, field = sys.argv[1:5]
ours = [int(x) for x in open(line).read().split()]
theirs = json.load(open(oracle))[field]
if ours != theirs:
    first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    print(f"FAIL {what}: {len(ours)} ids vs llama.cpp's {len(theirs)}, first difference at {first}: "
          f"{ours[first:first + 8]} vs {theirs[first:first + 8]}")
    sys.exit(1)
print(f"ok {what}: {len(ours)} ids equal llama.cpp's")
PY
}

case $what in
tokenize)
    f32="$models/fortunes-llama-f32.gguf"
    "$kiln" compile "$f32" -o "$tmp/f32.kiln" --context 64
    printf 'The cat sat on the mat.\n%%\n\tTabs, "quotes" and caf\xc3\xa9 \xe2\x82\xac5.' > "$tmp/short.txt"
    for text in "$models/test.txt" "$tmp/short.txt"; do
        oracle tokenize "$f32" --file "$text" > "$tmp/oracle.json"
        for model in "$f32" "$tmp/f32.kiln"; do
            "$kiln" tokenize "$model" --file "$text" > "$tmp/ids.txt"
            same_ids "$(basename "$model") $(basename "$text")" "$tmp/ids.txt" "$tmp/oracle.json" ids_special
            "$kiln" tokenize "$model" --file "$text" --no-bos > "$tmp/ids.txt"
            same_ids "$(basename "$model") $(basename "$text") --no-bos" "$tmp/ids.txt" "$tmp/oracle.json" ids
        done
    done
    "$kiln" tokenize "$f32" --text "Hello world" > "$tmp/ids.txt"
    oracle tokenize "$f32" "Hello world" > "$tmp/oracle.json"
    same_ids "--text" "$tmp/ids.txt" "$tmp/oracle.json" ids_special ;;
generate)
    for t in f32 q8_0; do
        model="$models/fortunes-llama-$t.gguf"
        "$kiln" generate "$model" -p "The" --temp 0 -n 64 --json > "$tmp/kiln.json"
        oracle greedy "$model" --prompt "The" -n 64 > "$tmp/oracle.json"
        /usr/bin/python3 - "$t" "$tmp/kiln.json" "$tmp/oracle.json" <<'PY'
import json, sys
t, ours, theirs = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
a, b = ours["tokens"], theirs["tokens"]
for key in ("tokens", "text", "load_ms", "prompt_tokens", "prompt_tok_s", "generated_tokens", "gen_tok_s", "peak_rss_bytes"):
    assert key in ours, f"--json lacks {key}"
if a != b:
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    print(f"FAIL {t}: greedy tokens differ from llama.cpp's at {first} of {len(b)}: {a[first:first+8]} vs {b[first:first+8]}")
    sys.exit(1)
assert ours["text"] == theirs["text"], (ours["text"], theirs["text"])
assert ours["prompt_tokens"] == len(theirs["prompt_ids"]) and ours["generated_tokens"] == len(b)
print(f"ok {t}: {len(a)} greedy tokens and the text equal llama.cpp's; load {ours['load_ms']:.1f} ms, "
      f"prompt {ours['prompt_tok_s']:.0f} tok/s, generation {ours['gen_tok_s']:.0f} tok/s")
PY
    done ;;
perplexity)
    for t in f32 q8_0; do
        model="$models/fortunes-llama-$t.gguf"
        "$kiln" perplexity "$model" --file "$models/test.txt" --json > "$tmp/kiln.json"
        oracle perplexity "$model" --file "$models/test.txt" > "$tmp/oracle.json"
        /usr/bin/python3 - "$t" "$tmp/kiln.json" "$tmp/oracle.json" <<'PY'
import json, sys
t, ours, theirs = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
for key in ("tokens", "chunks", "scored"):
    if ours[key] != theirs[key]:
        print(f"FAIL {t}: {key} {ours[key]} vs llama.cpp's {theirs[key]}"); sys.exit(1)
rel = abs(ours["perplexity"] - theirs["perplexity"]) / theirs["perplexity"]
print(f"{t}: perplexity kiln {ours['perplexity']:.4f}, llama.cpp {theirs['perplexity']:.4f}, relative difference {rel:.1e}")
if not rel < 0.005:
    print(f"FAIL {t}: more than 0.5% apart"); sys.exit(1)
PY
    done
    # --logits: f32 [positions, vocab], row i the logits after tokens 0..i of its chunk, equal to
    # llama.cpp's teacher-forced logits of the text (one chunk here). The oracle is given one
    # token more: the last row node-llama-cpp's controlledEvaluate returns differs from what the
    # same position gives when it is not last (by 0.35 here), so it is not compared. Tolerance
    # 5e-3 on logits up to 16: llama.cpp keeps its KV cache in f16 (node-llama-cpp's default),
    # whose rounding (2^-11 relative) reaches the logits as about 1e-3 (2.0e-3 measured); a wrong
    # mask, position or cache row moves them by 0.1 and more.
    model="$models/fortunes-llama-f32.gguf"
    head -c 300 "$models/test.txt" > "$tmp/head.txt"
    "$kiln" perplexity "$model" --file "$tmp/head.txt" --logits "$tmp/logits.npy" --json > "$tmp/kiln.json"
    "$kiln" tokenize "$model" --file "$tmp/head.txt" | tr ' ' ',' > "$tmp/ids.txt"
    oracle logits "$model" --tokens "$(cat "$tmp/ids.txt"),300" --out "$tmp/oracle.json"
    /usr/bin/python3 - "$tmp/logits.npy" "$tmp/oracle.json" "$tmp/kiln.json" <<'PY'
import json, sys
import numpy as np
ours = np.load(sys.argv[1]); theirs = np.array(json.load(open(sys.argv[2]))["logits"], dtype=np.float64)
info = json.load(open(sys.argv[3]))
assert ours.dtype == np.float32 and ours.shape == (info["tokens"], theirs.shape[1]), (ours.shape, theirs.shape)
assert len(theirs) == len(ours) + 1
n = len(ours)
d = float(np.max(np.abs(ours[:n] - theirs[:n])))
print(f"--logits: {ours.shape}, max |kiln - llama.cpp| over {n} rows {d:.2e}")
if not d < 5e-3:
    print("FAIL: --logits differ from llama.cpp's"); sys.exit(1)
PY
    ;;
*)
    echo "usage: $0 BUILD_DIR tokenize|generate|perplexity" >&2; exit 2 ;;
esac
