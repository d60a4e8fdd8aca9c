#!/bin/sh
# kiln_ref_llama without the oracle (so it also runs in the sanitizer builds): greedy tokens of
# the committed fortunes model from BOS (the ids llama.cpp gives, checked by llm_ref_oracle), and
# bad input — usage, a token outside the vocabulary, a truncated or foreign file — each giving
# its exit code and one line on stderr, never a crash.
#   test_ref_cli.sh KILN_REF_LLAMA MODELS_DIR
set -u
ref=$1
models=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

expect() { # expect CODE NAME COMMAND...: exit code CODE and, on failure, exactly one stderr line
    code=$1; name=$2; shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    lines=$(wc -l <"$tmp/err")
    if [ "$got" -ne "$code" ] || { [ "$code" -ne 0 ] && [ "$lines" -ne 1 ]; }; then
        echo "FAIL $name: exit $got (want $code), stderr:"; cat "$tmp/err"; failures=$((failures + 1))
    else
        echo "ok   $name $(head -n 1 "$tmp/err")"
    fi
}

want="360 348 13 264 13 413 359 398 356 374 547 387"
for t in f32 q8_0; do
    expect 0 "greedy $t" "$ref" greedy "$models/fortunes-llama-$t.gguf" --tokens 1 -n 12
    if [ "$(cat "$tmp/out")" != "$want" ]; then
        echo "FAIL greedy $t: '$(cat "$tmp/out")', want '$want'"; failures=$((failures + 1))
    fi
done
expect 0 "logits to npy" "$ref" logits "$models/fortunes-llama-q8_0.gguf" --tokens 1,360,348 --out "$tmp/l.npy"
size=$(wc -c <"$tmp/l.npy")
[ "$size" -gt $((3 * 4 * 100)) ] || { echo "FAIL logits npy: $size bytes"; failures=$((failures + 1)); }

head -c 100000 "$models/fortunes-llama-f32.gguf" >"$tmp/truncated.gguf"
printf 'not a gguf file at all' >"$tmp/foreign.gguf"
expect 2 "usage" "$ref" logits "$models/fortunes-llama-f32.gguf"
expect 2 "bad token list" "$ref" logits "$models/fortunes-llama-f32.gguf" --tokens 1,x
expect 2 "token outside vocabulary" "$ref" logits "$models/fortunes-llama-f32.gguf" --tokens 1,99999
expect 4 "truncated file" "$ref" logits "$tmp/truncated.gguf" --tokens 1
expect 4 "foreign file" "$ref" logits "$tmp/foreign.gguf" --tokens 1
expect 1 "missing file" "$ref" logits "$tmp/absent.gguf" --tokens 1
[ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
echo "all passed"
