#!/usr/bin/env bash
# run_all.sh — the `make bench` step: runs the GEMM benchmark (build/bench/kiln_gemm_bench) and
# the model benchmark (bench/model_bench.sh: kiln against ONNX Runtime and PyTorch), the LLM
# benchmark (bench/llm_bench.py: kiln against llama.cpp's llama-bench) and writes
# bench/RESULTS.md: the date, the machine, how busy it was, the exact commands, every figure and
# every goal with PASS/FAIL.
#
# Usage: run_all.sh [BUILD_DIR] [--quick] [--strict] [--only SECTION] [--note TEXT] [--output FILE]
#   BUILD_DIR   build directory holding kiln and bench/kiln_gemm_bench (default: build)
#   --quick     smoke run: small GEMM shapes, few model iterations (not for RESULTS.md of record)
#   --strict    exit 1 when any goal FAILS (default: exit 0 once everything was measured)
#   --only      one section, to iterate on it: gemm, models (both model peers), models-ort
#               (kiln against ONNX Runtime only) or llm; the report then goes to
#               BUILD_DIR/bench-work/RESULTS-SECTION.md unless --output says otherwise
#   --note      a line added to the report's conditions (e.g. "other builds were running")
#   --output    report path (default: bench/RESULTS.md next to this script)
# Environment: KILN_BENCH_COMMAND names the command that was typed (make bench sets it) so the
# report can quote it; KILN_PYTHON as in model_bench.sh.
#
# Exit status: 0 done, 1 a benchmark could not run (or a goal failed with --strict), 2 usage.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# The command line as one could retype it: arguments with shell-special characters single-quoted.
quote_args() {
    local a out=""
    for a in "$@"; do
        case $a in
        *[!A-Za-z0-9_./=,:+-]* | '') a="'${a//\'/\'\\\'\'}'" ;;
        esac
        out="$out $a"
    done
    printf '%s' "$out"
}
invocation="bench/run_all.sh$(quote_args "$@")"
build=build
quick=0
strict=0
note=""
output=""
only=""
usage() {
    echo "usage: run_all.sh [BUILD_DIR] [--quick] [--strict] [--only gemm|models|models-ort|llm] [--note TEXT] [--output FILE]" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1; shift ;;
    --strict) strict=1; shift ;;
    --note) [ $# -ge 2 ] || usage; note=$2; shift 2 ;;
    --output) [ $# -ge 2 ] || usage; output=$2; shift 2 ;;
    --only) [ $# -ge 2 ] || usage; only=$2; shift 2
        case $only in gemm | models | models-ort | llm) ;; *) usage ;; esac ;;
    -*) usage ;;
    *) build=$1; shift ;;
    esac
done
build=$(cd "$build" 2> /dev/null && pwd) || { echo "run_all.sh: no build directory '$build'" >&2; exit 2; }
gemm=$build/bench/kiln_gemm_bench
if { [ ! -x "$gemm" ] && [ "${only#models}" = "$only" ] && [ "$only" != llm ]; } || [ ! -x "$build/kiln" ]; then
    echo "run_all.sh: $gemm or $build/kiln is missing; build first (make bench does)" >&2
    exit 1
fi
work=$build/bench-work
mkdir -p "$work" || exit 1
[ -n "$output" ] || output=${only:+$work/RESULTS-$only.md}
[ -n "$output" ] || output=$here/RESULTS.md
run_gemm=1
run_models=1
run_llm=1
[ -n "$only" ] && [ "$only" != gemm ] && run_gemm=0
[ -n "$only" ] && [ "${only#models}" = "$only" ] && run_models=0
[ -n "$only" ] && [ "$only" != llm ] && run_llm=0

gemm_args=""
model_args=""
llm_args=""
if [ $quick = 1 ]; then
    gemm_args="--quick"
    model_args="--iterations 3 --warmup 1 --rounds 2"
    llm_args="--quick"
fi
[ "$only" = models-ort ] && model_args="${model_args:+$model_args }--no-torch"

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u '+%Y-%m-%d %H:%M:%S UTC')

gemm_rc=0
models_rc=0
llm_rc=0
: > "$work/gemm.md"
: > "$work/models.md"
: > "$work/llm.md"
if [ $run_gemm = 1 ]; then
    echo "run_all.sh: GEMM benchmark: $gemm $gemm_args" >&2
    # shellcheck disable=SC2086 # the option lists are meant to split
    "$gemm" $gemm_args > "$work/gemm.md"
    gemm_rc=$?
fi
if [ $run_models = 1 ]; then
    echo "run_all.sh: model benchmark: bench/model_bench.sh $build $work $model_args" >&2
    # shellcheck disable=SC2086
    "$here/model_bench.sh" "$build" "$work" $model_args > "$work/models.md"
    models_rc=$?
fi
if [ $run_llm = 1 ]; then
    echo "run_all.sh: LLM benchmark: bench/llm_bench.py $build $work $llm_args" >&2
    # shellcheck disable=SC2086
    /usr/bin/python3 "$here/llm_bench.py" "$build" "$work" $llm_args > "$work/llm.md"
    llm_rc=$?
fi
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- the machine, as lscpu and the build describe it ----
lscpu_field() { lscpu | sed -n "s/^$1: *//p" | head -n 1; }
cpu_model=$(lscpu_field "Model name")
sockets=$(lscpu_field "Socket(s)")
cores_per_socket=$(lscpu_field "Core(s) per socket")
threads_per_core=$(lscpu_field "Thread(s) per core")
online=$(nproc)
l3=$(lscpu_field "L3 cache")
memory=$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
revision=$(git -C "$repo" rev-parse --short HEAD 2> /dev/null || echo unknown) # read-only: never touches the index
busy=$(awk -v l="${load_start%% *}" -v n="$online" 'BEGIN { print (l > 0.5 * n) ? 1 : 0 }')

count() { cat "$work/gemm.md" "$work/models.md" "$work/llm.md" | grep -c "| $1 |"; }
passed=$(count PASS)
failed=$(count FAIL)

tmp=$output.tmp.$$
{
    echo "# kiln benchmark results"
    echo
    if [ -n "${KILN_BENCH_COMMAND:-}" ]; then
        echo "Produced by \`$KILN_BENCH_COMMAND\`, which ran \`$invocation\`; the exact command of each part"
    else
        echo "Produced by \`$invocation\`; the exact command of each part"
    fi
    echo "is quoted in its section. See docs/benchmarks.md for what each figure means."
    echo
    echo "- date: $started"
    echo "- machine: $cpu_model, $((sockets * cores_per_socket)) cores ($sockets socket(s) x $cores_per_socket core(s), $threads_per_core thread(s) per core), $online CPUs online, L3 $l3, $memory RAM; $(uname -sr)"
    echo "- kiln: $("$build/kiln" --version) at $revision, built in $build"
    echo "- load average (1, 5, 15 min): $load_start at the start, $load_end at the end"
    if [ "$busy" = 1 ]; then
        echo "- **the machine was busy when the run started (load above half its CPUs): other work competed"
        echo "  for the cores, so figures are noisy — multi-threaded ones most (a library whose threads"
        echo "  spin-wait collapses when a core is taken). Compare ratios from a quiet machine.**"
    fi
    [ -n "$note" ] && echo "- note: $note"
    [ $quick = 1 ] && echo "- **quick run (--quick): reduced shapes and iterations; not a result of record**"
    [ -n "$only" ] && echo "- **one section only (--only $only)**"
    echo
    echo "**Goals: $passed PASS, $failed FAIL** (every figure below is from this one run)."
    echo
    if [ $run_gemm = 1 ]; then
        echo "Command: \`$gemm${gemm_args:+ $gemm_args}\`"
        echo
        if [ $gemm_rc -eq 0 ]; then cat "$work/gemm.md"; else echo "**kiln_gemm_bench failed (exit $gemm_rc)**"; echo; fi
    fi
    if [ $run_models = 1 ]; then
        echo "Command: \`bench/model_bench.sh $build $work${model_args:+ $model_args}\`"
        echo
        cat "$work/models.md"
        [ $models_rc -eq 0 ] || { echo; echo "**model_bench.sh failed (exit $models_rc)**"; }
    fi
    if [ $run_llm = 1 ]; then
        echo "Command: \`/usr/bin/python3 bench/llm_bench.py $build $work${llm_args:+ $llm_args}\`"
        echo
        cat "$work/llm.md"
        [ $llm_rc -eq 0 ] || { echo; echo "**llm_bench.py failed (exit $llm_rc)**"; }
    fi
    if [ $run_gemm = 1 ]; then # the goal below belongs to the GEMM section
        echo
        echo "## Goals not measured yet"
        echo
        echo "- bf16 AMX matmul at 1024-2048 against oneDNN's bf16 matmul and against kiln's own f32 GEMM: kiln's"
        echo "  precision bf16 runs on AVX512-BF16 (its figures against kiln f32 are in the bf16 section above), not on"
        echo "  AMX tiles: this machine exposes no AMX (docs/benchmarks.md), so no AMX kernel can run or be timed here."
    fi
} > "$tmp" && mv "$tmp" "$output" || { rm -f "$tmp"; echo "run_all.sh: cannot write $output" >&2; exit 1; }

cat "$output"
echo >&2
echo "run_all.sh: wrote $output — goals: $passed PASS, $failed FAIL" >&2
[ $gemm_rc -eq 0 ] && [ $models_rc -eq 0 ] && [ $llm_rc -eq 0 ] || exit 1
[ $strict = 1 ] && [ "$failed" -gt 0 ] && exit 1
exit 0
