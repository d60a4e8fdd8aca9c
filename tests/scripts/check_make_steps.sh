#!/usr/bin/env bash
# check_make_steps.sh SOURCE_DIR — the test make_steps: what `make demo` and `make test` print
# around their real output.
#  - scripts/quiet.sh prints one line for a step that succeeds and the step's whole output (and
#    status) for one that fails;
#  - every cmake command `make demo` runs goes through it (make -n: nothing is executed);
#  - the tier-3 line of scripts/test.sh says "reported, not required" beside its counts.
set -euo pipefail
src=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-make-steps.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "make_steps: $*" >&2; exit 1; }
[[ -x $src/scripts/quiet.sh ]] || fail "scripts/quiet.sh is missing: make demo has no quiet steps"

out=$("$src/scripts/quiet.sh" "noisy step" sh -c 'for i in 1 2 3; do echo "noise $i"; echo "warning $i" >&2; done' 2>&1)
[[ $out == "== noisy step" ]] || fail "a succeeding step printed more than its line: $out"
status=0
out=$("$src/scripts/quiet.sh" "failing step" sh -c 'echo "cc: error: it broke"; echo "detail" >&2; exit 3' 2>&1) ||
  status=$?
[[ $status -eq 3 ]] || fail "a failing step exited $status, not its command's 3"
for want in "== failing step" "cc: error: it broke" "detail" "step 'failing step' failed (exit status 3)"; do
  [[ $out == *"$want"* ]] || fail "a failing step's output lacks '$want': $out"
done

make -n -s -C "$src" demo BUILD="$work/build" JOBS=2 > "$work/demo.n"
if grep -nE '^[[:space:]]*cmake[[:space:]]' "$work/demo.n"; then
  fail "make demo runs cmake without scripts/quiet.sh (above), printing the build's noise"
fi
[[ $(grep -c 'scripts/quiet.sh .* cmake ' "$work/demo.n") -ge 2 ]] ||
  fail "make demo does not configure and build through scripts/quiet.sh: $(cat "$work/demo.n")"

sed -n '/^tier3_line()/,/^}/p' "$src/scripts/test.sh" > "$work/tier3.sh"
[[ -s $work/tier3.sh ]] || fail "scripts/test.sh has no tier3_line function"
# shellcheck source=/dev/null
source "$work/tier3.sh"
line=$(printf '43: case a ... ok\n43: 192 passed, 318 failed\n' | tier3_line)
[[ $(printf '%s\n' "$line" | wc -l) -eq 1 && $line == *"192 passed, 318 failed"* && $line == *"gated by its ratchet"* ]] ||
  fail "the tier-3 line does not say 'gated by its ratchet' beside its counts: $line"
echo "make_steps: quiet steps, make demo wrapped, tier-3 line: $line"
