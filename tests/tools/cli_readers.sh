#!/usr/bin/env bash
# cli_readers.sh — what the kiln tool does with the files it reads (issue 12, items 5, 7, 11, 17
# and 18), through the tool itself.
#
# Usage: cli_readers.sh BUILD_DIR SECTION
#   BUILD_DIR  holds BUILD_DIR/kiln
#   SECTION    one of:
#     special_files  a FIFO as a .npy or .pb input, in --inputs DIR, as a shard manifest, as a
#                    manifest's shard and as a program: refused at once (exit 4, one line saying
#                    it is a FIFO). Every command runs under `timeout`, so a regression fails
#                    instead of hanging.
#     tensor_errors  truncated, Fortran-order and pickled .npy files, empty and garbage .pb files,
#                    a missing --inputs DIR: exit 4, one line naming the file and what is wrong
#     run_dtypes     `kiln run` prints the values of outputs of every dtype (Cast to each)
#     target_method  --target naming a record the program lacks, several methods without --method,
#                    an unknown --method: exit 2, one line listing what the program has
#     verify         `kiln inspect` and `kiln verify` on a clean program (exit 0) and on one whose
#                    weight byte was changed in place, structure intact (exit 4 naming the binary)
#     model_content  the tool tells a program from a model by its bytes, not its name: an ONNX
#                    model named .bin compiles and runs, an ONNX model named .kiln runs too, bench
#                    refuses one as a model (exit 2); a truncated GGUF header named .onnx is the
#                    GGUF importer's (exit 4 naming what is missing), a GGUF v4 header or random
#                    bytes are no model kiln imports (exit 4, one line naming how the file starts)
#     escape         names holding a newline and an ANSI escape, from a model and from the command
#                    line, reach the terminal escaped and never split a message
# The models and tensor files come from make_inputs.py (/usr/bin/python3 with onnx and numpy;
# without them the test is skipped, exit 77). Everything is written into one mktemp -d folder,
# removed at the end. Exit status: 0 pass, 1 failure, 2 usage, 77 skip.
set -u

if [ $# -ne 2 ]; then
    echo "usage: cli_readers.sh BUILD_DIR SECTION" >&2
    exit 2
fi
kiln=$(cd "$1" && pwd)/kiln
section=$2
here=$(cd "$(dirname "$0")" && pwd)
python=${KILN_PYTHON:-/usr/bin/python3}
[ -x "$kiln" ] || { echo "no kiln tool at $kiln" >&2; exit 2; }
if ! "$python" -c 'import onnx, numpy' 2>/dev/null; then
    echo "SKIP: $python lacks onnx or numpy, which make the test's models"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln_cli_readers.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
"$python" "$here/make_inputs.py" "$work" || { echo "FAIL: make_inputs.py"; exit 1; }
failed=0

fail() {
    echo "FAIL: $*"
    failed=1
}

# run_kiln ARGS...: runs the tool under a timeout; stdout in $work/out, stderr in $work/err, the
# exit status in $rc (124: it hung).
run_kiln() {
    timeout 30 "$kiln" "$@" > "$work/out" 2> "$work/err"
    rc=$?
}

# expect RC TEXT DESCRIPTION: the last command exited RC and wrote exactly one stderr line that
# starts with "kiln: " and holds TEXT.
expect() {
    local want=$1 text=$2 what=$3
    if [ "$rc" -ne "$want" ]; then
        fail "$what: exit $rc, expected $want ($(head -c 300 "$work/err" | tr '\n' '|'))"
        return
    fi
    local lines
    lines=$(wc -l < "$work/err")
    if [ "$lines" -ne 1 ] || ! head -n 1 "$work/err" | grep -q '^kiln: '; then
        fail "$what: expected one 'kiln: ' line on stderr, got $lines: $(tr '\n' '|' < "$work/err")"
        return
    fi
    if ! grep -qF -- "$text" "$work/err"; then
        fail "$what: stderr '$(cat "$work/err")' does not say '$text'"
        return
    fi
    echo "ok: $what: $(cat "$work/err")"
}

compile() {
    "$kiln" compile "$@" > /dev/null || fail "compile $*"
}

section_special_files() {
    compile mm.onnx -o mm.kiln
    mkfifo fifo.npy fifo.pb fifo.kiln fifo.manifest
    mkdir fifodir && mkfifo fifodir/input_0.npy
    cat > shard_fifo.manifest <<'EOF'
kiln-shards 1
shards 1
shard 0 fifo.kiln
graph-input 0 x
input 0 0 graph 0 x
output 0 shard 0 0 y
EOF
    run_kiln run mm.kiln --input fifo.npy
    expect 4 "cannot read input 'fifo.npy': is a FIFO, not a regular file" "run --input FIFO.npy"
    run_kiln run mm.kiln --input x=fifo.pb
    expect 4 "cannot read input 'fifo.pb': is a FIFO, not a regular file" "run --input FIFO.pb"
    run_kiln run mm.kiln --inputs fifodir
    expect 4 "cannot read input 'fifodir/input_0.npy': is a FIFO, not a regular file" "run --inputs DIR holding a FIFO"
    run_kiln bench mm.kiln --inputs fifodir --iterations 1 --warmup 0
    expect 4 "is a FIFO, not a regular file" "bench --inputs DIR holding a FIFO"
    run_kiln run fifo.manifest --input x14.npy
    expect 4 "'fifo.manifest': is a FIFO, not a regular file" "run FIFO (as manifest or program)"
    run_kiln run shard_fifo.manifest --input x14.npy
    expect 4 "shard 0: cannot open program 'fifo.kiln': is a FIFO, not a regular file" "run a manifest whose shard is a FIFO"
    run_kiln inspect fifo.kiln
    expect 4 "'fifo.kiln': cannot read it: is a FIFO, not a regular file" "inspect FIFO"
    run_kiln bench fifo.kiln
    expect 4 "'fifo.kiln': is a FIFO, not a regular file" "bench FIFO"
    run_kiln verify fifo.kiln
    if [ "$rc" -eq 4 ] && grep -qF "fifo.kiln: cannot read it: is a FIFO, not a regular file" out; then
        echo "ok: verify FIFO: $(cat out)"
    else
        fail "verify FIFO: exit $rc, $(cat out err)"
    fi
}

section_tensor_errors() {
    compile mm.onnx -o mm.kiln
    run_kiln run mm.kiln --input truncated.npy
    expect 4 "cannot read input 'truncated.npy': truncated: the header announces 16 data bytes, the file holds 13" \
        "truncated .npy"
    run_kiln run mm.kiln --input fortran.npy
    expect 4 "cannot read input 'fortran.npy': Fortran-order arrays are not supported (save with numpy.ascontiguousarray)" \
        "Fortran-order .npy"
    run_kiln run mm.kiln --input pickled.npy
    expect 4 "cannot read input 'pickled.npy': object arrays (pickled Python objects) are not supported" "pickled .npy"
    run_kiln run mm.kiln --input empty.pb
    expect 4 "cannot read input 'empty.pb': empty file; not an ONNX TensorProto" "empty .pb"
    run_kiln run mm.kiln --input garbage.pb
    expect 4 "cannot read input 'garbage.pb': not a serialized ONNX TensorProto" "garbage .pb"
    run_kiln run mm.kiln --input missing.npy
    expect 4 "cannot read input 'missing.npy': No such file or directory" "missing .npy"
    run_kiln run mm.kiln --inputs no_such_dir
    expect 4 "--inputs 'no_such_dir': no such directory" "missing --inputs DIR"
    run_kiln bench mm.kiln --inputs no_such_dir
    expect 4 "--inputs 'no_such_dir': no such directory" "bench: missing --inputs DIR"
    run_kiln run mm.kiln --inputs x14.npy
    expect 4 "--inputs 'x14.npy' is a regular file, not a directory" "--inputs naming a file"
}

section_run_dtypes() {
    compile cast.onnx -o cast.kiln
    local want
    want=$(cat <<'EOF'
output 0 'o_i8': i8 [5] = [1, -2, 0, 0, 100]
output 1 'o_i16': i16 [5] = [1, -2, 0, 0, 100]
output 2 'o_i32': i32 [5] = [1, -2, 0, 0, 100]
output 3 'o_i64': i64 [5] = [1, -2, 0, 0, 100]
output 4 'o_f16': f16 [5] = [1.5, -2.25, 0, 0.0999756, 100]
output 5 'o_bf16': bf16 [5] = [1.5, -2.25, 0, 0.100098, 100]
output 6 'o_f64': f64 [5] = [1.5, -2.25, 0, 0.1, 100]
output 7 'o_bool': bool [5] = [1, 1, 0, 1, 1]
output 8 'o_u8': u8 [5] = [1, 2, 0, 0, 200]
output 9 'o_u16': u16 [5] = [1, 2, 0, 0, 200]
output 10 'o_u32': u32 [5] = [1, 2, 0, 0, 200]
output 11 'o_u64': u64 [5] = [1, 2, 0, 0, 200]
output 12 'o_big': i64 [2] = [9007199254740993, -5]
EOF
)
    for prog in cast.kiln cast.onnx; do
        run_kiln run "$prog" --input x=x5.npy --input p=p5.npy --input big=big.npy
        if [ "$rc" -ne 0 ]; then
            fail "run $prog: exit $rc: $(cat err)"
            continue
        fi
        if [ "$(grep '^output' out)" != "$want" ]; then
            fail "run $prog printed other values:"
            diff <(echo "$want") <(grep '^output' out)
            continue
        fi
        echo "ok: run $prog prints the values of every dtype"
    done
}

section_target_method() {
    compile mm.onnx -o mm.kiln --target generic --target x86-64-v3
    compile --method prefill=mm.onnx --method decode=mm.onnx -o two.kiln --target generic
    compile cast.onnx -o cast.kiln
    run_kiln run mm.kiln --input x14.npy --target armv8
    expect 2 "run: 'mm.kiln' has no record 'armv8'; its records: 'generic', 'x86-64-v3' (pass one of them to --target" \
        "run --target with no such record"
    run_kiln bench mm.kiln --target x86-64-v4 --iterations 1 --warmup 0
    expect 2 "bench: 'mm.kiln' has no record 'x86-64-v4'; its records: 'generic', 'x86-64-v3'" \
        "bench --target a known target the file has no record for"
    run_kiln run mm.kiln --input x14.npy --target generic
    [ "$rc" -eq 0 ] || fail "run --target generic (a record the file has): exit $rc: $(cat err)"
    run_kiln run mm.onnx --input x14.npy --target generic
    [ "$rc" -eq 0 ] || fail "run MODEL.onnx --target generic compiles for that target: exit $rc: $(cat err)"
    run_kiln run two.kiln --input x14.npy
    expect 2 "run: 'two.kiln' has 2 methods ('prefill', 'decode'); pass --method NAME to choose one" \
        "run a two-method program without --method"
    run_kiln bench two.kiln --iterations 1 --warmup 0
    expect 2 "bench: 'two.kiln' has 2 methods ('prefill', 'decode'); pass --method NAME to choose one" \
        "bench a two-method program without --method"
    run_kiln run two.kiln --input x14.npy --method forward
    expect 2 "run: 'two.kiln' has no method 'forward'; its methods: 'prefill', 'decode' (pass one of them to --method)" \
        "run --method that does not exist"
    run_kiln run two.kiln --input x14.npy --method decode
    [ "$rc" -eq 0 ] || fail "run --method decode: exit $rc: $(cat err)"
    echo "ok: the records and methods a file has are accepted"
}

# Changes the first float32 1234.5 of the weights (a value only the weight matrix holds) to
# 1234.625: every table stays valid, only the contents no longer match the signature.
flip_weight() {
    "$python" - "$1" "$2" <<'EOF'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
at = data.find(struct.pack("<f", 1234.5))
assert at >= 0, "weight 1234.5 not found"
data[at:at + 4] = struct.pack("<f", 1234.625)
open(sys.argv[2], "wb").write(data)
EOF
}

# expect_verify WHAT CLEAN_LINE BAD_LINE CLEAN BAD: `kiln verify CLEAN BAD` exits 4 with a line
# matching CLEAN_LINE and one matching BAD_LINE (grep patterns).
expect_verify() {
    local what=$1 clean_line=$2 bad_line=$3
    run_kiln verify "$4" "$5"
    if [ "$rc" -eq 4 ] && grep -q "$clean_line" out && grep -q "$bad_line" out; then
        echo "ok: verify $what: $(tr '\n' '|' < out)"
    else
        fail "verify $what: exit $rc: $(cat out err)"
    fi
}

section_verify() {
    compile mm.onnx -o mm.kiln
    compile cast.onnx -o cast.kiln
    flip_weight mm.kiln bad.kiln || { fail "cannot make bad.kiln"; return; }
    run_kiln inspect mm.kiln
    [ "$rc" -eq 0 ] && [ ! -s err ] || fail "inspect clean program: exit $rc: $(cat err)"
    run_kiln verify mm.kiln cast.kiln
    if [ "$rc" -eq 0 ] && [ "$(cat out)" = "mm.kiln: ok, 1 context binary, signatures match
cast.kiln: ok, no context binaries" ]; then echo "ok: verify clean programs"
    else fail "verify clean programs: exit $rc: $(cat out err)"; fi
    run_kiln run bad.kiln --input x14.npy
    [ "$rc" -eq 0 ] || fail "the changed program no longer loads, so the test proves nothing: $(cat err)"
    run_kiln inspect bad.kiln
    expect 4 "inspect: 'bad.kiln': context binary in segment 0: signature" "inspect a program whose weight changed"
    grep -q "DOES NOT MATCH the contents" out || fail "inspect does not show the mismatch: $(cat out)"
    run_kiln inspect --json bad.kiln
    [ "$rc" -eq 4 ] && grep -q '"signature_ok": false' out || fail "inspect --json: exit $rc: $(cat out)"
    expect_verify "a changed program" "^mm.kiln: ok, 1 context binary" \
        "^bad.kiln: context binary in segment 0: signature [0-9a-f]* does not match its contents" mm.kiln bad.kiln
    run_kiln verify --json mm.kiln bad.kiln
    [ "$rc" -eq 4 ] && "$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] is False and [f["ok"] for f in r["files"]] == [True, False], r
assert "signature" in r["files"][1]["problem"], r' out || fail "verify --json: exit $rc: $(cat out)"
    run_kiln verify
    expect 2 "verify: no program given" "verify without files"
    run_kiln verify --help
    [ "$rc" -eq 0 ] && grep -q "usage: kiln verify" out || fail "verify --help: exit $rc"
    # A program without delegates keeps its weights as a segment: its hash is checked too.
    compile mm.onnx --no-delegate -o portable.kiln
    flip_weight portable.kiln bad_portable.kiln || { fail "cannot make bad_portable.kiln"; return; }
    expect_verify "a changed segment" "^portable.kiln: ok, no context binaries" \
        "^bad_portable.kiln: segment [0-9]* does not match its hash" portable.kiln bad_portable.kiln
    run_kiln inspect bad_portable.kiln
    expect 4 "segment" "inspect a program whose segment changed"
    printf 'not a program' > junk.kiln
    run_kiln verify junk.kiln
    [ "$rc" -eq 4 ] && grep -q "^junk.kiln: not a valid kiln program" out || fail "verify junk: exit $rc: $(cat out)"
}

# No byte of the output may be a control character other than the newline ending each line.
no_raw_controls() {
    if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$@"; then
        fail "raw control bytes reached the terminal: $(cat -v "$@")"
        return 1
    fi
}

section_model_content() {
    cp mm.onnx model.bin
    cp mm.onnx model.kiln
    compile model.bin -o from-bin.kiln
    run_kiln run model.bin --input x14.npy
    [ "$rc" -eq 0 ] || fail "run model.bin: exit $rc: $(cat "$work/err")"
    run_kiln run model.kiln --input x14.npy
    [ "$rc" -eq 0 ] || fail "run an ONNX model named model.kiln: exit $rc: $(cat "$work/err")"
    run_kiln bench model.bin
    expect 2 "bench: 'model.bin' is a model (onnx), not a program" "bench an ONNX model named .bin"
    printf 'GGUF\003\000\000\000\000\000\000\000\000\000\000\000' > gguf.onnx
    run_kiln compile gguf.onnx -o gguf.kiln
    expect 4 "model 'gguf.onnx': GGUF: file ends inside the metadata count" "compile a GGUF header named .onnx"
    [ -e gguf.kiln ] && fail "compile of a GGUF header left gguf.kiln behind"
    run_kiln run gguf.onnx --input x14.npy
    expect 4 "model 'gguf.onnx': GGUF: " "run a GGUF header"
    printf 'GGUF\004\000\000\000\000\000\000\000\000\000\000\000' > gguf4.onnx
    run_kiln compile gguf4.onnx -o gguf.kiln
    expect 4 "model 'gguf4.onnx' is not in a format kiln can import (it starts with \"GGUF\"; tried onnx, gguf)" \
        "compile a GGUF v4 header"
    "$python" -c 'import random, sys; random.seed(13); sys.stdout.buffer.write(bytes(random.randrange(256) for _ in range(300)))' > noise.onnx
    run_kiln compile noise.onnx -o noise.kiln
    expect 4 "model 'noise.onnx' is not in a format kiln can import (it starts with" "compile random bytes"
}

section_escape() {
    compile evil.onnx -o evil.kiln
    run_kiln run evil.kiln --input x14.npy
    [ "$rc" -eq 0 ] || fail "run evil.kiln: exit $rc: $(cat err)"
    grep -qF "output 0 'y\n\x1b[31mEVIL': f32 [1,3] = [" out || fail "run does not print the escaped name: $(cat -v out)"
    no_raw_controls out err
    run_kiln inspect evil.kiln
    grep -qF "output 0 'y\n\x1b[31mEVIL'" out || fail "inspect does not print the escaped name: $(cat -v out)"
    no_raw_controls out err
    local m1 m2
    m1=$(printf 'a\033[2Jb')
    m2=$(printf 'c\nd')
    compile --method "$m1=mm.onnx" --method "$m2=mm.onnx" -o evil2.kiln
    run_kiln run evil2.kiln --input x14.npy
    expect 2 "has 2 methods ('a\x1b[2Jb', 'c\nd'); pass --method" "method names from the file, escaped"
    no_raw_controls err
    run_kiln run evil2.kiln --input x14.npy --method "$(printf 'z\033]0;title\007')"
    expect 2 "has no method 'z\x1b]0;title\x07'" "a --method name from the command line, escaped"
    no_raw_controls err
    run_kiln run mm.onnx --input "$(printf 'in\nput.npy')"
    expect 4 "cannot read input 'in\nput.npy'" "a path from the command line, escaped"
    printf 'kiln-shards 1\nbogus\033[31m record\n' > evil.manifest
    run_kiln run evil.manifest --input x14.npy
    expect 4 "unknown record 'bogus\x1b[31m'" "a manifest's field, escaped"
    no_raw_controls err
}

case $section in
special_files | tensor_errors | run_dtypes | target_method | verify | model_content | escape) "section_$section" ;;
*) echo "unknown section '$section'" >&2; exit 2 ;;
esac
[ $failed -eq 0 ] && echo "PASS: $section"
exit $failed
