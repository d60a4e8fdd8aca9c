#!/usr/bin/env bash
# model_bench.sh — kiln against PyTorch on ResNet-18, MobileNetV2 and a BERT-like encoder at batch 1
# (issue 5 (b)): same model, same input, same thread count, in the same run; prints a Markdown
# table of min/median latency, the speed-up and PASS/FAIL against the 1.5x goal.
#
# Usage: model_bench.sh BUILD_DIR WORK_DIR [--threads "1 2"] [--iterations N] [--warmup N]
#   BUILD_DIR   holds the kiln tool (BUILD_DIR/kiln, with the `bench` command)
#   WORK_DIR    scratch: exported models (about 70 MB), compiled programs, results.jsonl
# Environment: KILN_PYTHON (default /usr/bin/python3) must import torch and torchvision.
#
# For each model and thread count kiln runs first, then PyTorch, back to back, so both see the
# same machine conditions. kiln: `kiln compile` once, then `kiln bench --inputs CASE --json`.
# PyTorch: bench/torch_bench.py (torch.set_num_threads, inference_mode, same warm-up and count).
# The BERT-like encoder runs in under a millisecond: both runners make 10x the calls there (20
# calls are 10 ms, where one scheduler tick or frequency step moved kiln's median 0.55 -> 0.58).
# The export is reused while export_models.py, torch_bench.py and torch are unchanged.
#
# Exit status: 0 measured (goals may FAIL; the table says so), 1 nothing could be measured,
# 2 usage.
set -u

usage() { echo "usage: model_bench.sh BUILD_DIR WORK_DIR [--threads \"1 2\"] [--iterations N] [--warmup N]" >&2; exit 2; }
[ $# -ge 2 ] || usage
build=$(cd "$1" && pwd) || usage
work=$2
shift 2
threads="1 2"
iterations=20
warmup=3
while [ $# -gt 0 ]; do
    case $1 in
    --threads) [ $# -ge 2 ] || usage; threads=$2; shift 2 ;;
    --iterations) [ $# -ge 2 ] || usage; iterations=$2; shift 2 ;;
    --warmup) [ $# -ge 2 ] || usage; warmup=$2; shift 2 ;;
    *) usage ;;
    esac
done
for n in $threads $iterations $warmup; do
    case $n in '' | *[!0-9]*) usage ;; esac
done

here=$(cd "$(dirname "$0")" && pwd)
python=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/kiln
torch_bench=$here/torch_bench.py
models="resnet18 mobilenet_v2 bert_encoder"

if ! "$kiln" bench --help > /dev/null 2>&1; then
    echo "model_bench.sh: $kiln is missing or has no 'bench' command; build the project first" >&2
    exit 1
fi
torch_version=$("$python" -c 'import torch, torchvision; print(torch.__version__)' 2> /dev/null)
if [ -z "$torch_version" ]; then
    echo "model_bench.sh: $python cannot import torch and torchvision (install python3-torch python3-torchvision)" >&2
    exit 1
fi

# ---- export, cached by the exporters' hashes and the torch version ----
mkdir -p "$work" || exit 1
exported=$work/exported
stamp="$(cat "$here/../tests/models/export_models.py" "$torch_bench" | sha256sum | cut -d' ' -f1) torch=$torch_version"
if [ -f "$exported/.stamp" ] && [ "$(cat "$exported/.stamp")" = "$stamp" ]; then
    echo "model_bench.sh: reusing the models exported in $exported" >&2
else
    rm -rf "$exported"
    mkdir -p "$exported"
    echo "model_bench.sh: exporting $models (torch $torch_version)" >&2
    if "$python" -W ignore "$torch_bench" export "$exported" >&2; then
        echo "$stamp" > "$exported/.stamp"
    fi
fi

# One-line JSON string of a log's last lines (quotes and backslashes dropped).
json_text() { tail -n 2 "$1" | tr '\n"\\' '   ' | sed 's/ *$//'; }

results=$work/results.jsonl
: > "$results"
for model in $models; do
    case_dir=$exported/${model}_op17
    program=$work/$model.kiln
    compiled=1
    if [ ! -f "$case_dir/model.onnx" ]; then
        compiled=0
        reason="model was not exported"
    elif ! "$kiln" compile "$case_dir/model.onnx" -o "$program" > "$work/$model.compile.log" 2>&1; then
        compiled=0
        reason="kiln compile: $(json_text "$work/$model.compile.log")"
    fi
    calls=$iterations
    warm=$warmup
    if [ "$model" = bert_encoder ]; then
        calls=$((iterations * 10))
        warm=$((warmup * 10))
    fi
    for t in $threads; do
        echo "model_bench.sh: $model at $t thread(s)" >&2
        if [ $compiled = 1 ] && "$kiln" bench "$program" --inputs "$case_dir" --threads "$t" \
            --iterations "$calls" --warmup "$warm" --json > "$work/$model.$t.kiln.json" 2> "$work/$model.$t.kiln.log"; then
            printf '{"runner": "kiln", "model": "%s", "threads": %s, "result": %s}\n' "$model" "$t" \
                "$(cat "$work/$model.$t.kiln.json")" >> "$results"
        else
            [ $compiled = 1 ] && reason="kiln bench: $(json_text "$work/$model.$t.kiln.log")"
            printf '{"runner": "kiln", "model": "%s", "threads": %s, "error": "%s"}\n' "$model" "$t" "$reason" >> "$results"
        fi
        if [ -f "$case_dir/model.onnx" ]; then
            "$python" -W ignore "$torch_bench" time "$model" "$case_dir" --threads "$t" --iterations "$calls" \
                --warmup "$warm" >> "$results" 2> "$work/$model.$t.torch.log"
        else
            printf '{"runner": "pytorch", "model": "%s", "threads": %s, "error": "model was not exported"}\n' \
                "$model" "$t" >> "$results"
        fi
    done
done

echo "## Models: kiln against PyTorch (batch 1)"
echo
echo "- kiln: \`kiln compile MODEL.onnx\`, then \`kiln bench PROGRAM --inputs CASE --threads N --iterations $iterations --warmup $warmup --json\`."
echo "- PyTorch $torch_version eager: \`torch.set_num_threads(N)\`, \`torch.inference_mode()\`, the same input files, $warmup untimed then $iterations timed calls."
echo "- The BERT-like encoder (under a millisecond a call): 10x the calls and warm-up calls for both runners ($((warmup * 10)) and $((iterations * 10)))."
echo "- Models from tests/models/export_models.py (random weights, fixed seeds), ONNX opset 17; ResNet-18 and MobileNetV2 on 1x3x224x224, the BERT-like encoder (2 layers, hidden 128) on 1x64 tokens."
echo "- Speed-up = PyTorch latency / kiln latency, of the medians (the goal: at least 1.5x at every thread count) and of the minima (least disturbed by other work on the machine)."
echo
"$python" "$torch_bench" report "$results"
grep -q '"runner": "kiln", "model": "[a-z0-9_]*", "threads": [0-9]*, "result"' "$results"
