#!/usr/bin/env bash
# inspect_golden.sh — what `kiln inspect` (text and --json), `kiln verify`, `kiln scratch-size`
# and the --target check print for fixed program files, compared byte for byte with expected/
# (README.md): committed programs (programs/: a plain one, two records, two methods sharing
# weights, slc, portable, two shards, a changed weight, a broken context binary) and the
# format's golden files (tests/golden/*.kiln), and the program fuzz seed with metadata
# (fuzz/corpus/program/metadata_v2.kiln: format version 2, four keys, no methods). Each case's
# stdout, stderr and exit status are one expected file. Only what does not depend on this machine is compared: every program is
# inspected, but only those with a record every x86-64 CPU runs are verified (verify loads them).
#
# usage: inspect_golden.sh BUILD_DIR [--write]   (--write: record the outputs as expected/)
# Exit status: 0 every output as expected, 1 not, 2 usage.
set -u
if [ $# -lt 1 ]; then
    echo "usage: inspect_golden.sh BUILD_DIR [--write]" >&2
    exit 2
fi
kiln=$(cd "$1" && pwd)/kiln || exit 2
write=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
golden=$here/../../golden
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here"/programs/*.kiln "$golden"/*.kiln "$here"/../../../fuzz/corpus/program/metadata_v2.kiln "$work"/
cd "$work" || exit 2

failed=0
# check NAME ARGS...: run kiln ARGS, compare with expected/NAME (or write it)
check() {
    local name=$1
    shift
    { "$kiln" "$@" 2>&1; echo "exit $?"; } > "$work/out"
    if [ "$write" = --write ]; then
        cp "$work/out" "$here/expected/$name"
    elif ! diff -u "$here/expected/$name" "$work/out" > "$work/diff"; then
        echo "FAIL: kiln $* differs from expected/$name:"
        head -40 "$work/diff"
        failed=1
    fi
}

for p in $(cd "$here/programs" && ls *.kiln) $(cd "$golden" && ls *.kiln); do
    check "$p.inspect" inspect "$p"
    check "$p.inspect.json" inspect --json "$p"
done
check metadata_v2.kiln.inspect inspect metadata_v2.kiln
check metadata_v2.kiln.inspect.json inspect --json metadata_v2.kiln
for p in $(cd "$here/programs" && ls *.kiln) linear_cpu_generic_v1.kiln linear_cpu_generic_v2.kiln \
         add_cpu_generic_v1.kiln relu_portable_v1.kiln; do
    check "$p.verify" verify "$p"
    check "$p.verify.json" verify --json "$p"
done
check verify_several verify plain.kiln signature_changed.kiln invalid_context.kiln portable.kiln
check scratch_size scratch-size sharded-shard0.kiln sharded-shard1.kiln plain.kiln portable.kiln
check scratch_size.json scratch-size --json sharded-shard0.kiln sharded-shard1.kiln multi_target.kiln
check scratch_size_invalid scratch-size plain.kiln invalid_context.kiln
# shard 0 alone needs less than the group size both shards got: --write records its own need
check scratch_size_write scratch-size --write sharded-shard0.kiln portable.kiln
check scratch_size_written.inspect inspect sharded-shard0.kiln
check scratch_size_written.inspect.json inspect --json sharded-shard0.kiln
check scratch_size_written.verify verify sharded-shard0.kiln
check target_missing bench multi_target.kiln --target armv8 --iterations 1 --warmup 0
[ "$write" = --write ] && echo "wrote $(ls "$here/expected" | wc -l) expected outputs"
[ $failed -eq 0 ] && echo "ok: every output as expected"
exit $failed
