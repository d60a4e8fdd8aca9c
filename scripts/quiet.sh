#!/usr/bin/env bash
# quiet.sh LABEL COMMAND [ARG...] — one step of a `make` target, in one line: prints "== LABEL",
# runs COMMAND with its output held in a temporary log, and shows that output in full (on
# stderr) only when COMMAND fails, then exits with its status. `make demo` uses it so that the
# configure and build steps print one line each before the demo's own output.
set -uo pipefail
label=$1
shift
echo "== $label"
log=$(mktemp "${TMPDIR:-/tmp}/kiln-step.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
status=0
"$@" >"$log" 2>&1 || status=$?
if [[ $status -ne 0 ]]; then
  cat "$log" >&2
  echo "kiln: step '$label' failed (exit status $status): $*" >&2
fi
exit $status
