#!/usr/bin/env bash
# shards.sh — sharded real models (issue 4 item 6) and `kiln scratch-size` (item 5), end to end
# through the kiln tool.
#
# Usage: shards.sh BUILD_DIR OUTDIR [MODEL...]     (MODEL default: resnet18_op17 bert_encoder_op17)
#   BUILD_DIR  holds BUILD_DIR/kiln and BUILD_DIR/tests/models/kiln_compare_npy
#   OUTDIR     the real-model test's work directory: its exported/ models are reused when present
#              (run_models.sh makes them); missing ones are exported into OUTDIR/shards-export/
# For each model:
#   1. compile it whole and run it: the reference outputs;
#   2. compile it with --shards 4: four shard programs and a manifest;
#   3. `kiln scratch-size` over the shards: every shard records the largest need as group size;
#   4. `kiln run MANIFEST --stats`: outputs equal the whole model's (and PyTorch's) within the
#      real-model tolerance (kiln_compare_npy), and the runtime holds exactly one scratch group
#      whose one buffer is the group size — not one buffer per shard;
# then `kiln scratch-size --write` over the whole models (group sizes unset): each gets the
# largest need of all of them, still loads, gives the same outputs and reserves that size;
# and the command's refusals (no program, a corrupt file) with their exit statuses.
# Exit status: 0 pass, 1 failure, 2 usage, 77 (skip) when no model can be exported (no torch).
set -u

if [ $# -lt 2 ]; then
    echo "usage: shards.sh BUILD_DIR OUTDIR [MODEL...]" >&2
    exit 2
fi
build=$(cd "$1" && pwd) || exit 2
outdir=$2
shift 2
models=("$@")
[ ${#models[@]} -eq 0 ] && models=(resnet18_op17 bert_encoder_op17)
here=$(cd "$(dirname "$0")" && pwd)
python=${KILN_PYTHON:-/usr/bin/python3}
kiln=$build/kiln
compare=$build/tests/models/kiln_compare_npy
work=$outdir/shards
failed=0

fail() {
    echo "FAIL: $*"
    failed=1
}

# The exported case directory of a model: the real-model test's, else our own export.
case_dir() {
    local name=$1 base=${1%_op*}
    if [ -f "$outdir/exported/$name/model.onnx" ]; then
        echo "$outdir/exported/$name"
        return 0
    fi
    if [ ! -f "$outdir/shards-export/$name/model.onnx" ]; then
        "$python" -c 'import torch' 2>/dev/null || return 1
        mkdir -p "$outdir/shards-export"
        "$python" -W ignore "$here/export_models.py" "$outdir/shards-export" "$base" > "$outdir/shards-export/$base.log" 2>&1
    fi
    [ -f "$outdir/shards-export/$name/model.onnx" ] || return 1
    echo "$outdir/shards-export/$name"
}

# compare_outputs DIR_ACTUAL DIR_EXPECTED WHAT
compare_outputs() {
    local n=0
    for expected in "$2"/output_*.npy; do
        local out=$1/$(basename "$expected")
        if ! line=$("$compare" "$out" "$expected" 2>&1); then
            fail "$3: $(basename "$expected"): $line"
        fi
        n=$((n + 1))
    done
    [ $n -gt 0 ] || fail "$3: no outputs to compare"
}

# field NAME FILE: the value of NAME=VALUE on the "runtime stats:" line
stat_field() { sed -n "s/^runtime stats:.* $1=\([0-9]*\).*/\1/p" "$2" | head -n 1; }

mkdir -p "$work" || exit 2
rm -rf "${work:?}"/*
tested=0
wholes=()
for name in "${models[@]}"; do
    if ! dir=$(case_dir "$name"); then
        echo "SKIPPED: $name (not exported; $python cannot import torch or the export failed)"
        continue
    fi
    tested=$((tested + 1))
    w=$work/$name
    mkdir -p "$w"
    # 1. the whole model
    if ! "$kiln" compile "$dir/model.onnx" -o "$w/whole.kiln" > "$w/whole.log" 2>&1 ||
        ! "$kiln" run "$w/whole.kiln" --inputs "$dir" --outputs "$w/whole_out" >> "$w/whole.log" 2>&1; then
        fail "$name: whole model: $(tail -n 2 "$w/whole.log" | tr '\n' ' ')"
        continue
    fi
    wholes+=("$w/whole.kiln")
    # 2. four shards
    if ! "$kiln" compile "$dir/model.onnx" --shards 4 -o "$w/model.shards" > "$w/compile.log" 2>&1; then
        fail "$name: compile --shards 4: $(tail -n 2 "$w/compile.log" | tr '\n' ' ')"
        continue
    fi
    shards=("$w"/model-shard{0,1,2,3}.kiln)
    for s in "${shards[@]}"; do [ -f "$s" ] || fail "$name: $s was not written"; done
    [ "$(head -n 1 "$w/model.shards")" = "kiln-shards 1" ] || fail "$name: the manifest does not start with 'kiln-shards 1'"
    # 3. scratch-size without --write: one group size everywhere, the largest need
    "$kiln" scratch-size "${shards[@]}" > "$w/scratch.log" 2>&1 || fail "$name: scratch-size: $(tail -n 1 "$w/scratch.log")"
    group=$(sed -n 's/^largest scratch need: \([0-9]*\) bytes.*/\1/p' "$w/scratch.log")
    with_group=$(grep -c "group size $group bytes\$" "$w/scratch.log")
    [ -n "$group" ] && [ "$group" -gt 0 ] || fail "$name: scratch-size reported no need"
    [ "$with_group" -eq 4 ] || fail "$name: not every shard records group size $group: $(cat "$w/scratch.log")"
    # 4. run the manifest
    if ! "$kiln" run "$w/model.shards" --inputs "$dir" --outputs "$w/shard_out" --stats > "$w/run.log" 2>&1; then
        fail "$name: run of the manifest: $(tail -n 2 "$w/run.log" | tr '\n' ' ')"
        continue
    fi
    compare_outputs "$w/shard_out" "$w/whole_out" "$name: sharded vs whole"
    compare_outputs "$w/shard_out" "$dir" "$name: sharded vs PyTorch"
    groups=$(stat_field live_scratch_groups "$w/run.log")
    reserved=$(stat_field scratch_bytes_reserved "$w/run.log")
    contexts=$(stat_field live_contexts "$w/run.log")
    [ "$groups" = 1 ] || fail "$name: $groups live scratch groups, expected 1"
    [ "$reserved" = "$group" ] || fail "$name: $reserved scratch bytes reserved, expected the group size $group"
    sizes=$(stat -c %s "${shards[@]}" | tr '\n' ' ')
    echo "$name: 4 shards (bytes: $sizes), $contexts contexts, group $group bytes; $(grep '^runtime stats' "$w/run.log")"
done

if [ $tested -eq 0 ]; then
    echo "SKIPPED: no model could be exported"
    exit 77
fi

# ---- scratch-size --write over programs compiled apart (each records its own largest need) ----
if [ ${#wholes[@]} -gt 0 ]; then
    "$kiln" scratch-size "${wholes[@]}" > "$work/before.log" 2>&1 || fail "scratch-size (whole models): $(cat "$work/before.log")"
    need=$(sed -n 's/^largest scratch need: \([0-9]*\) bytes.*/\1/p' "$work/before.log")
    own_count=$(grep -cE "scratch need ([0-9]+) bytes, group size \1 bytes" "$work/before.log")
    [ "$own_count" -eq ${#wholes[@]} ] || fail "whole models should record their own need as group size: $(cat "$work/before.log")"
    "$kiln" scratch-size --write "${wholes[@]}" > "$work/write.log" 2>&1 || fail "scratch-size --write: $(cat "$work/write.log")"
    grep -q "^recorded group size $need bytes" "$work/write.log" || fail "scratch-size --write did not record $need: $(cat "$work/write.log")"
    "$kiln" scratch-size --json "${wholes[@]}" > "$work/after.json" 2>&1 || fail "scratch-size --json"
    [ "$(grep -o "\"group_scratch_size\": $need" "$work/after.json" | wc -l)" -eq ${#wholes[@]} ] ||
        fail "after --write not every program records $need: $(cat "$work/after.json")"
    for p in "${wholes[@]}"; do
        d=$(dirname "$p")
        name=$(basename "$d")
        dir=$(case_dir "$name")
        "$kiln" inspect --json "$p" | grep -q '"signature_ok": true' || fail "$p: signature no longer matches after --write"
        if ! "$kiln" run "$p" --inputs "$dir" --outputs "$d/written_out" --stats > "$d/written.log" 2>&1; then
            fail "$p after --write: $(tail -n 2 "$d/written.log" | tr '\n' ' ')"
            continue
        fi
        compare_outputs "$d/written_out" "$d/whole_out" "$name: after --write vs before"
        [ "$(stat_field scratch_bytes_reserved "$d/written.log")" = "$need" ] ||
            fail "$name after --write: reserved $(stat_field scratch_bytes_reserved "$d/written.log"), expected $need"
    done
    echo "scratch-size --write: group size $need bytes recorded in ${#wholes[@]} programs, each still runs and reserves it"
fi

# ---- refusals ----
"$kiln" scratch-size > /dev/null 2>&1
[ $? -eq 2 ] || fail "scratch-size without a program should exit 2"
head -c 1000 /dev/zero > "$work/corrupt.kiln"
"$kiln" scratch-size "$work/corrupt.kiln" > /dev/null 2>&1
[ $? -eq 4 ] || fail "scratch-size on a corrupt file should exit 4"
"$kiln" scratch-size "$work/missing.kiln" > /dev/null 2>&1
[ $? -eq 1 ] || fail "scratch-size on a missing file should exit 1"

if [ $failed -ne 0 ]; then
    echo "shards: FAILED"
    exit 1
fi
echo "shards: all checks passed"
