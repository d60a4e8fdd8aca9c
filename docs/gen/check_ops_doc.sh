#!/usr/bin/env bash
# check_ops_doc.sh GENERATOR OPS_MD — the test ops_doc_current: docs/ops.md must be exactly what
# gen_ops_doc prints from today's tables. On a difference it shows the diff and how to refresh.
set -euo pipefail
gen=$1 doc=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$gen" > "$work/ops.md"
if [[ ! -f "$doc" ]]; then
  echo "ops_doc_current: $doc does not exist; run 'make ops-doc' and commit it"
  exit 1
fi
if ! diff -u "$doc" "$work/ops.md"; then
  echo "ops_doc_current: $doc is stale (diff above: - committed, + generated); run 'make ops-doc' and commit it"
  exit 1
fi
echo "ops_doc_current: $doc matches the op tables"
