#!/usr/bin/env bash
# model_bench.sh — kiln against ONNX Runtime (the main peer, issue 15) and PyTorch (the second
# peer, issue 5 (b)) on whole models at batch 1: same model file, same input files, same thread
# count, in the same run. Prints Markdown tables: per model and thread count the latencies, the
# ratio to kiln, PASS/FAIL against each goal and whether kiln's outputs match ONNX Runtime's.
#
# Usage: model_bench.sh BUILD_DIR WORK_DIR [--threads "1 2"] [--iterations N] [--warmup N]
#                       [--rounds R] [--models "NAME..."] [--torch-models "NAME..."] [--no-torch]
#   BUILD_DIR      holds the kiln tool (BUILD_DIR/kiln)
#   WORK_DIR       scratch: exported models (about 900 MB), compiled programs, ONNX Runtime's
#                  npm cache (about 300 MB), results.jsonl
#   --rounds R     interleaved runs per model and thread count (default 3): kiln, ORT, kiln, ORT...
#   --models       models for the ONNX Runtime table (default: all of bench_models.py list)
#   --torch-models models for the PyTorch table (default: resnet18 mobilenet_v2 bert_encoder);
#                  --no-torch leaves the PyTorch table out
# Environment: KILN_PYTHON (default /usr/bin/python3) must import torch, torchvision and onnx;
# KILN_ORT_CACHE overrides WORK_DIR/ort-cache (where bench/install_ort.sh puts onnxruntime-node).
#
# Per model and thread count: R rounds, each one `kiln bench` and one bench/ort_bench.mjs process
# of N timed calls after the warm-up, one right after the other, so both meet the same machine
# conditions; the best round of each counts (see bench/ort_report.py). Then `kiln run` writes
# kiln's outputs and they are compared with ORT's (bench/compare_outputs.py states the
# tolerance), and ORT's with PyTorch's. PyTorch (bench/torch_bench.py) is timed once after them. Models of a millisecond
# or so make 10x the calls, the slowest ones a quarter (at least 3 timed and 1 untimed). A model
# kiln cannot compile is a row saying so; ORT is still timed there.
#
# Exit status: 0 measured (goals may FAIL; the tables say so), 1 nothing could be measured,
# 2 usage.
set -u

usage() {
    echo "usage: model_bench.sh BUILD_DIR WORK_DIR [--threads \"1 2\"] [--iterations N] [--warmup N] [--rounds R]" \
        "[--models \"NAME...\"] [--torch-models \"NAME...\"] [--no-torch]" >&2
    exit 2
}
[ $# -ge 2 ] || usage
build=$(cd "$1" && pwd) || usage
work=$2
shift 2
threads="1 2"
iterations=20
warmup=3
rounds=3
models=""
torch_models="resnet18 mobilenet_v2 bert_encoder"
while [ $# -gt 0 ]; do
    case $1 in
    --threads) [ $# -ge 2 ] || usage; threads=$2; shift 2 ;;
    --iterations) [ $# -ge 2 ] || usage; iterations=$2; shift 2 ;;
    --warmup) [ $# -ge 2 ] || usage; warmup=$2; shift 2 ;;
    --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
    --models) [ $# -ge 2 ] || usage; models=$2; shift 2 ;;
    --torch-models) [ $# -ge 2 ] || usage; torch_models=$2; shift 2 ;;
    --no-torch) torch_models=""; shift ;;
    *) usage ;;
    esac
done
for n in $threads $iterations $warmup $rounds; do
    case $n in '' | *[!0-9]*) usage ;; esac
done
[ "$rounds" -ge 1 ] && [ "$iterations" -ge 1 ] || usage

here=$(cd "$(dirname "$0")" && pwd)
python=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/kiln
compare=$here/compare_outputs.py
torch_bench=$here/torch_bench.py
exporter=$here/bench_models.py
known=$("$python" "$exporter" list 2> /dev/null)
[ -n "$models" ] || models=$(echo $known)
for m in $models $torch_models; do
    printf '%s\n' "$known" | grep -qx "$m" || { echo "model_bench.sh: unknown model $m; known: $(echo $known)" >&2; exit 2; }
done

if ! "$kiln" bench --help > /dev/null 2>&1; then
    echo "model_bench.sh: $kiln is missing or has no 'bench' command; build the project first" >&2
    exit 1
fi
torch_version=$("$python" -c 'import onnx, torch, torchvision; print(torch.__version__)' 2> /dev/null)
if [ -z "$torch_version" ]; then
    echo "model_bench.sh: $python cannot import torch, torchvision and onnx (install python3-torch python3-torchvision python3-onnx)" >&2
    exit 1
fi
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)
ort_package=$("$here/install_ort.sh" "${KILN_ORT_CACHE:-$work/ort-cache}") || ort_package=""
[ -n "$ort_package" ] || echo "model_bench.sh: ONNX Runtime is not available (above); its rows will say so" >&2

# ---- export, cached by the exporters' hashes, the torch version and the model list ----
exported=$work/exported
wanted=$(printf '%s\n' $models $torch_models | sort -u | tr '\n' ' ')
stamp="$(cat "$here/../tests/models/export_models.py" "$exporter" | sha256sum | cut -d' ' -f1) torch=$torch_version"
missing=""
if [ -f "$exported/.stamp" ] && [ "$(cat "$exported/.stamp")" = "$stamp" ]; then
    for m in $wanted; do [ -f "$exported/${m}_op17/model.onnx" ] || missing="$missing $m"; done
else
    rm -rf "$exported"
    mkdir -p "$exported"
    echo "$stamp" > "$exported/.stamp"
    missing=$wanted
fi
if [ -n "$missing" ]; then
    echo "model_bench.sh: exporting$missing (torch $torch_version)" >&2
    # shellcheck disable=SC2086 # one argument a model
    "$python" -W ignore "$exporter" export "$exported" $missing >&2
else
    echo "model_bench.sh: reusing the models exported in $exported" >&2
fi

# Text as one line fit for a JSON string (newlines, quotes and backslashes dropped); a log's last lines.
one_line() { tr '\n"\\' '   ' | sed 's/ *$//' | head -c 600; }
json_text() { tail -n "${2:-2}" "$1" | one_line; }
# Calls per process (model count floor): ~1 ms models make 10x, the slowest a quarter (at least floor).
calls_for() {
    case $1 in
    bert_encoder | llama_decoder) echo $(($2 * 10)) ;;
    resnet50 | densenet121 | convnext_tiny | vit_b_16 | gpt2_decoder) echo $(($2 / 4 > $3 ? $2 / 4 : $3)) ;;
    *) echo "$2" ;;
    esac
}
error_record() { # runner model threads reason
    printf '{"runner": "%s", "model": "%s", "threads": %s, "error": "%s"}\n' "$1" "$2" "$3" "$4" >> "$results"
}

results=$work/results.jsonl
: > "$results"
for model in $(printf '%s\n' $models $torch_models | awk '!seen[$0]++'); do
    case_dir=$exported/${model}_op17
    program=$work/$model.kiln
    out=$work/outputs/$model
    compiled=1
    if [ ! -f "$case_dir/model.onnx" ]; then
        compiled=0
        reason="model was not exported"
    elif ! "$kiln" compile "$case_dir/model.onnx" -o "$program" > "$work/$model.compile.log" 2>&1; then
        compiled=0
        reason="kiln cannot compile it: $(json_text "$work/$model.compile.log" 1)"
    fi
    calls=$(calls_for "$model" "$iterations" 3)
    warm=$(calls_for "$model" "$warmup" $((warmup > 0)))
    with_ort=0
    case " $models " in *" $model "*) with_ort=1 ;; esac
    for t in $threads; do
        echo "model_bench.sh: $model at $t thread(s)" >&2
        rm -rf "$out"
        for r in $(seq "$rounds"); do
            if [ $compiled = 1 ] && "$kiln" bench "$program" --inputs "$case_dir" --threads "$t" --iterations "$calls" \
                --warmup "$warm" --json > "$work/$model.$t.kiln.json" 2> "$work/$model.$t.kiln.log"; then
                printf '{"runner": "kiln", "model": "%s", "threads": %s, "round": %s, "result": %s}\n' \
                    "$model" "$t" "$r" "$(cat "$work/$model.$t.kiln.json")" >> "$results"
            elif [ $compiled = 1 ]; then
                error_record kiln "$model" "$t" "kiln bench: $(json_text "$work/$model.$t.kiln.log")"
            else
                error_record kiln "$model" "$t" "$reason"
            fi
            [ $with_ort = 1 ] || continue
            if [ -z "$ort_package" ] || [ ! -f "$case_dir/model.onnx" ]; then
                [ -n "$ort_package" ] && why="model was not exported" || why="ONNX Runtime could not be installed"
                error_record ort "$model" "$t" "$why"
            else
                # the last round writes ORT's outputs for the check below
                [ "$r" = "$rounds" ] && keep="--outputs $out/ort" || keep=""
                # shellcheck disable=SC2086
                node "$here/ort_bench.mjs" --ort "$ort_package" "$case_dir/model.onnx" "$case_dir" --name "$model" \
                    --threads "$t" --iterations "$calls" --warmup "$warm" $keep >> "$results" 2> "$work/$model.$t.ort.log"
            fi
        done
        # ---- do kiln's outputs match ONNX Runtime's? ----
        if [ $with_ort = 1 ] && [ $compiled = 1 ] && [ -d "$out/ort" ]; then
            match=true
            detail=""
            if ! "$kiln" run "$program" --inputs "$case_dir" --threads "$t" --outputs "$out/kiln" -q \
                > "$work/$model.$t.run.log" 2>&1; then
                match=false
                detail="kiln run: $(json_text "$work/$model.$t.run.log")"
            else
                detail=$("$python" "$compare" "$out/kiln" "$out/ort" 2>&1) || match=false
            fi
            printf '{"runner": "check", "model": "%s", "threads": %s, "match": %s, "detail": "%s"}\n' \
                "$model" "$t" "$match" "$(printf '%s' "$detail" | one_line)" >> "$results"
        fi
        if [ $with_ort = 1 ] && [ "$t" = "${threads%% *}" ] && [ -d "$out/ort" ]; then
            # ONNX Runtime against PyTorch's own outputs: is the exported graph the model?
            line=$("$python" "$compare" "$out/ort" "$case_dir" 2>&1) && ok=true || ok=false
            printf '{"runner": "ort-vs-torch", "model": "%s", "threads": %s, "match": %s, "detail": "%s"}\n' \
                "$model" "$t" "$ok" "$(printf '%s' "$line" | one_line)" >> "$results"
        fi
        case " $torch_models " in *" $model "*) ;; *) continue ;; esac
        if [ -f "$case_dir/model.onnx" ]; then
            "$python" -W ignore "$torch_bench" time "$model" "$case_dir" --threads "$t" --iterations "$calls" \
                --warmup "$warm" >> "$results" 2> "$work/$model.$t.torch.log"
        else
            error_record pytorch "$model" "$t" "model was not exported"
        fi
    done
done

ort_version=$(sed -n 's/.*"ort":"\([0-9.]*\)".*/\1/p' "$results" | head -n 1)
echo "## Models: kiln against ONNX Runtime (batch 1)"
echo
echo "- kiln: \`kiln compile MODEL.onnx\`, then \`kiln bench PROGRAM --inputs CASE --threads N --iterations $iterations --warmup $warmup --json\`."
echo "- ONNX Runtime ${ort_version:-(not available)} CPU (npm onnxruntime-node, bench/install_ort.sh): \`node bench/ort_bench.mjs\`, graph optimisation \"all\", intra-op threads = N, inter-op 1, sequential; the same model file and input files."
echo "- $rounds interleaved rounds (kiln, ORT, kiln, ORT, ...) of $warmup untimed then $iterations timed calls each; the BERT-like encoder and the llama-like decoder make 10x the calls, ResNet-50, DenseNet-121, ConvNeXt-T, ViT-B/16 and the GPT-2-style decoder a quarter (at least 3 timed and 1 untimed)."
echo "- Ratio = ORT latency / kiln latency of the best rounds (the round with the lowest median; the ratio of the minima beside it). Goal (issue 15): at least 1.2x at every thread count."
echo "- Outputs match: kiln's outputs (\`kiln run\`) against ORT's, |kiln - ORT| <= 1e-3 |ORT| + 1e-4 max|ORT| elementwise (bench/compare_outputs.py)."
echo "- Models from bench/bench_models.py (random weights, fixed seeds, ONNX opset 17): the six of tests/models (the BERT-like encoder at batch 1), torchvision ResNet-50, MobileNetV3-Large, DenseNet-121, ConvNeXt-T and ViT-B/16 on 1x3x224x224, a GPT-2-style decoder (4 layers, hidden 512, 64 tokens)."
echo
"$python" "$here/ort_report.py" "$results"
if [ -n "$torch_models" ]; then
    echo
    echo "## Models: kiln against PyTorch (batch 1)"
    echo
    echo "- PyTorch $torch_version eager: \`torch.set_num_threads(N)\`, \`torch.inference_mode()\`, the same input files and call counts, timed once after the rounds above; kiln's figures are its best round."
    echo "- Speed-up = PyTorch latency / kiln latency, of the medians (the goal of issue 5: at least 1.5x at every thread count) and of the minima (least disturbed by other work on the machine)."
    echo
    "$python" "$torch_bench" report "$results"
fi
grep -q '"runner": "kiln", "model": "[a-z0-9_]*", "threads": [0-9]*, "round": [0-9]*, "result"' "$results"
