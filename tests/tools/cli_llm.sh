#!/usr/bin/env bash
# cli_llm.sh — the LLM commands' command lines (docs/cli.md, "LLMs"): --help, usage errors
# (exit 2), files that are not LLMs (exit 4, one line saying so), and what generate prints when
# it stops: a full context (and the shift past it), a stop string, a prompt that does not fit.
# Uses the committed fortunes model and the demo's ONNX model; needs no python or node.
# Usage: cli_llm.sh BUILD_DIR. Exit status: 0 pass, 1 failure, 2 usage.
set -u
if [ $# -ne 1 ]; then echo "usage: cli_llm.sh BUILD_DIR" >&2; exit 2; fi
kiln=$(cd "$1" && pwd)/kiln
root=$(cd "$(dirname "$0")/../.." && pwd)
model=$root/models/llm/fortunes-llama-f32.gguf
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln_cli_llm.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }
run_kiln() { timeout 60 "$kiln" "$@" > "$work/out" 2> "$work/err"; rc=$?; }
# expect RC PATTERN ARGS...: exit status RC and, unless PATTERN is empty, one stderr line holding it.
expect() {
    local want=$1 pattern=$2; shift 2
    run_kiln "$@"
    [ "$rc" = "$want" ] || { fail "kiln $* exited $rc, expected $want: $(head -c 300 "$work/err")"; return; }
    if [ -n "$pattern" ]; then
        [ "$(wc -l < "$work/err")" = 1 ] || fail "kiln $*: expected one line on stderr, got: $(cat "$work/err")"
        grep -qF -- "$pattern" "$work/err" || fail "kiln $*: stderr lacks '$pattern': $(cat "$work/err")"
    fi
}

for cmd in generate perplexity tokenize; do
    expect 0 "" "$cmd" --help
    grep -q "usage: kiln $cmd" "$work/out" || fail "kiln $cmd --help prints no usage"
done

# Usage errors.
expect 2 "no prompt" generate "$model"
expect 2 "--top-p wants" generate "$model" -p x --top-p 2
expect 2 "--temp wants" generate "$model" -p x --temp nan
expect 2 "unknown or incomplete option" generate "$model" -p x --frobnicate
expect 2 "exactly one of" tokenize "$model" --text a --file "$model"
expect 2 "no text" perplexity "$model"
expect 2 "one of the input files" perplexity "$model" --file "$root/models/llm/test.txt" --logits "$model"
: > "$work/empty.txt"
expect 2 "at least 2 are needed" perplexity "$model" --file "$work/empty.txt"

# Not an LLM: a program without llm.gguf, a text file, a FIFO.
"$kiln" compile "$root/demo/digits.onnx" --input-shape image=1,1,8,8 -o "$work/digits.kiln" > /dev/null ||
    fail "cannot compile the demo model"
expect 4 "not an LLM program" generate "$work/digits.kiln" -p x
expect 4 "not an LLM program" tokenize "$work/digits.kiln" --text x
expect 4 "neither a GGUF model nor a kiln program" tokenize "$root/models/llm/test.txt" --text x
mkfifo "$work/fifo"
expect 4 "FIFO" tokenize "$work/fifo" --text x
expect 4 "is not in a format kiln can import" generate "$root/models/llm/test.txt" -p x

# Stops. A context of 16 after a prompt of 2 tokens (BOS, "The") holds 14 generated tokens, and
# the 15th finds it full.
"$kiln" compile "$model" --context 16 -o "$work/c16.kiln" > /dev/null || fail "cannot compile with --context 16"
expect 0 "" generate "$work/c16.kiln" -p The -n 0 --temp 0 --json
grep -q '"generated_tokens": 15,' "$work/out" && grep -q '"stop": "context full"' "$work/out" ||
    fail "a full context: $(cat "$work/out")"
expect 0 "" generate "$work/c16.kiln" -p The -n 40 --temp 0 --context-shift --json
grep -q '"generated_tokens": 40,' "$work/out" && grep -q '"stop": "max tokens"' "$work/out" ||
    fail "--context-shift: $(cat "$work/out")"
expect 2 "does not fit the context of 16" generate "$work/c16.kiln" -p "$(printf 'w%d ' $(seq 1 20))"
# Greedy from "The" is "There's a barge of the" (models/llm/README.md): the prompt, the text up
# to the stop string, then the newline that ends the text; the summary says why it stopped.
expect 0 "stopped: stop string" generate "$model" -p The --temp 0 --stop barge
printf "There's a \n" | cmp -s - "$work/out" || fail "--stop barge printed: $(od -c "$work/out" | head -3)"
# Same seed, same text; another seed, other text.
run_kiln generate "$model" -p The -n 24 --seed 5 --json; a=$(grep -o '"tokens": \[[^]]*\]' "$work/out")
run_kiln generate "$model" -p The -n 24 --seed 5 --json; b=$(grep -o '"tokens": \[[^]]*\]' "$work/out")
run_kiln generate "$model" -p The -n 24 --seed 6 --json; c=$(grep -o '"tokens": \[[^]]*\]' "$work/out")
[ -n "$a" ] && [ "$a" = "$b" ] || fail "the same seed gave other tokens: $a / $b"
[ "$a" != "$c" ] || fail "seeds 5 and 6 gave the same 24 tokens"

[ $failed = 0 ] && echo "cli_llm: ok"
exit $failed
