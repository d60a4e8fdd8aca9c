#!/usr/bin/env bash
# external_data.sh — ONNX external data (issue 12, items 12 and 5): a model saved with
# save_as_external_data (every tensor, initializers and tensor attributes, in weights.bin)
# compiles and runs exactly as the same model saved inline, also as shards; an absolute
# location, a '..' component, a symbolic link leading out of the model's folder, a missing file,
# a truncated one and a FIFO are refused with exit 4 and a message naming the tensor; a FIFO
# given as the model itself is refused at once. Commands that could block run under `timeout`,
# so a regression fails instead of hanging.
#
# Usage: external_data.sh BUILD_DIR WORKDIR. Exit 0 pass, 1 fail, 77 skip (no onnx/numpy in
# /usr/bin/python3). Everything is written inside a fresh temporary folder under WORKDIR.
set -u
build=$1
mkdir -p "$2" || exit 1
work=$(mktemp -d "$2/external.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
kiln=$build/kiln
python=${KILN_PYTHON:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)

if ! "$python" -c 'import onnx, numpy' 2>/dev/null; then
    echo "SKIPPED: $python cannot import onnx and numpy (install python3-onnx python3-numpy)"
    exit 77
fi
"$python" "$here/external_data.py" "$work" || { echo "FAIL: external_data.py"; exit 1; }

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# run_ok NAME CMD...: the command must succeed within 60 s.
run_ok() {
    local name=$1
    shift
    if ! timeout 60 "$@" >"$work/$name.out" 2>&1; then
        fail "$name: '$*' failed: $(cat "$work/$name.out")"
        return 1
    fi
}

# refused NAME STATUS NEEDLE CMD...: the command must exit STATUS within 10 s, with one stderr line
# containing NEEDLE.
refused() {
    local name=$1 want=$2 needle=$3
    shift 3
    timeout 10 "$@" >"$work/$name.out" 2>"$work/$name.err"
    local st=$?
    if [ $st -eq 124 ]; then fail "$name: '$*' hung (killed after 10 s)"; return; fi
    if [ $st -ne "$want" ]; then fail "$name: exit $st, expected $want: $(cat "$work/$name.err")"; return; fi
    if [ "$(wc -l <"$work/$name.err")" -ne 1 ]; then fail "$name: not one line: $(cat "$work/$name.err")"; return; fi
    if ! grep -qF -- "$needle" "$work/$name.err"; then
        fail "$name: message lacks '$needle': $(cat "$work/$name.err")"
        return
    fi
    echo "ok: $name: $(cat "$work/$name.err")"
}

# ---- inline and external give the same program and the same outputs -----------------------------
ext=$work/ext
run_ok inline "$kiln" compile "$work/inline.onnx" -o "$work/inline.kiln" &&
    run_ok inline_run "$kiln" run "$work/inline.kiln" --inputs "$work/inputs" --outputs "$work/out_inline"
run_ok external "$kiln" compile "$ext/model.onnx" -o "$work/external.kiln" &&
    run_ok external_run "$kiln" run "$work/external.kiln" --inputs "$work/inputs" --outputs "$work/out_external"
if [ -f "$work/out_inline/output_0.npy" ] && [ -f "$work/out_external/output_0.npy" ]; then
    cmp -s "$work/out_inline/output_0.npy" "$work/out_external/output_0.npy" ||
        fail "external data: outputs differ from the inline model's"
    cmp -s "$work/inline.kiln" "$work/external.kiln" || fail "external data: program differs from the inline model's"
    "$python" -c 'import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
sys.exit(0 if a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-6) else 1)' \
        "$work/out_external/output_0.npy" "$work/expected.npy" || fail "external data: outputs differ from numpy's"
    echo "ok: external data: same program and outputs as inline, and as numpy"
fi
# From a folder other than the model's: locations are relative to the model file, not the cwd.
run_ok external_cwd env --chdir="$work/inputs" "$kiln" compile ../ext/model.onnx -o "$work/external_cwd.kiln" &&
    { cmp -s "$work/inline.kiln" "$work/external_cwd.kiln" || fail "external data from another cwd: program differs"; }
mkdir -p "$work/shards"
run_ok shards "$kiln" compile "$ext/model.onnx" --shards 2 --no-delegate -o "$work/shards/model.shards" &&
    run_ok shards_run "$kiln" run "$work/shards/model.shards" --inputs "$work/inputs" --outputs "$work/out_shards" &&
    { cmp -s "$work/out_inline/output_0.npy" "$work/out_shards/output_0.npy" || fail "shards: outputs differ"; }

# ---- locations that are refused ---------------------------------------------------------------
echo "outside the folder" >"$work/outside.bin"
ln -s ../outside.bin "$ext/link_outside.bin"
ln -s weights.bin "$ext/link_inside.bin"
mkfifo "$ext/pipe.bin" || fail "mkfifo"
run_ok link_inside "$kiln" compile "$ext/link_inside.onnx" -o "$work/link_inside.kiln" &&
    { cmp -s "$work/inline.kiln" "$work/link_inside.kiln" || fail "link inside the folder: program differs"; }
refused absolute 4 "initializer 'W': external data location '/etc/hostname' is an absolute path" \
    "$kiln" compile "$ext/absolute.onnx" -o "$work/bad.kiln"
refused dotdot 4 "initializer 'W': external data location '../outside.bin' has a '..' component" \
    "$kiln" compile "$ext/dotdot.onnx" -o "$work/bad.kiln"
refused link_outside 4 "initializer 'W': external data location 'link_outside.bin' resolves outside the model's folder" \
    "$kiln" compile "$ext/link_outside.onnx" -o "$work/bad.kiln"
refused missing 4 "initializer 'W': cannot open external data file 'no_such_file.bin'" \
    "$kiln" compile "$ext/missing.onnx" -o "$work/bad.kiln"
refused fifo_data 4 "cannot open external data file 'pipe.bin': is a FIFO, not a regular file" \
    "$kiln" compile "$ext/fifo.onnx" -o "$work/bad.kiln"
# A truncated weights file: the last tensor's range runs past its end.
mkdir -p "$work/trunc"
cp "$ext/model.onnx" "$work/trunc/model.onnx"
head -c 90 "$ext/weights.bin" >"$work/trunc/weights.bin"
refused truncated 4 "external data file 'weights.bin' holds 90 bytes" \
    "$kiln" compile "$work/trunc/model.onnx" -o "$work/bad.kiln"
[ -e "$work/bad.kiln" ] && fail "a refused compile left $work/bad.kiln"

# ---- a FIFO as the model file ------------------------------------------------------------------------
mkfifo "$work/model.fifo" || fail "mkfifo"
refused fifo_model 4 "model.fifo': is a FIFO" "$kiln" compile "$work/model.fifo" -o "$work/bad.kiln"

if [ $failures -ne 0 ]; then
    echo "external_data.sh: $failures failure(s)"
    exit 1
fi
echo "external_data.sh: all passed"
