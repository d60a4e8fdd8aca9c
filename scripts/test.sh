#!/usr/bin/env bash
# test.sh — the `make test` steps: the whole CTest suite in a release build with warnings as
# errors, then again under AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer runs
# with ASan), then the tests labelled `tsan` (the cpu backend's lifetime, publication and
# scratch-group tests) under ThreadSanitizer. Each build's ctest summary is printed; any failure
# stops with non-zero status.
set -euo pipefail
jobs=$(nproc)
run_suite() {
  local dir=$1; shift
  echo "== configure $dir ($*)"
  cmake -S . -B "$dir" -DKILN_WERROR=ON "$@" >/dev/null
  echo "== build $dir"
  cmake --build "$dir" -j"$jobs" 2>&1 | grep -E "error|warning|Error" || true
  cmake --build "$dir" -j"$jobs" >/dev/null
  echo "== ctest $dir"
  ctest --test-dir "$dir" --output-on-failure -j"$jobs"
}
# Only the tests carrying a label, and what they link (test name = target name), not the tree.
run_labelled_suite() {
  local dir=$1 label=$2; shift 2
  echo "== configure $dir ($*)"
  cmake -S . -B "$dir" -DKILN_WERROR=ON "$@" >/dev/null
  local targets
  targets=$(ctest --test-dir "$dir" -N -L "$label" | sed -n 's/^ *Test *#[0-9]*: //p')
  echo "== build $dir:" $targets
  cmake --build "$dir" -j"$jobs" --target $targets 2>&1 | grep -E "error|warning|Error" || true
  cmake --build "$dir" -j"$jobs" --target $targets >/dev/null
  echo "== ctest $dir -L $label"
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" -L "$label"
}
# Tier 3: the count on one line, and that only its ratchet is gated (tests/scripts checks it).
tier3_line() {
  local count
  count=$(grep -oE "[0-9]+ passed, [0-9]+ failed" | tail -1 || true)
  echo "== ONNX conformance tier 3: ${count:-no count} (gated by its ratchet: the cases of tests/conformance/passing_tier3.txt must pass)"
}
run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo
ctest --test-dir build -R "conformance_tier3_ratchet$" --verbose 2>/dev/null | tier3_line
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_suite build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_SANITIZE=address,undefined
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  run_labelled_suite build-tsan tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_SANITIZE=thread
echo "== make test: all suites passed"
