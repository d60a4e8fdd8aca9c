#!/bin/sh
# check_no_stderr.sh — the library prints nothing (issue 13 item 8): every failure speaks through
# the caller's diag (src/core/diag.h). The one write to stderr allowed is a broken contract's
# line right before abort (src/core/check.c, KILN_DEBUG builds only).
# Arguments: the library archives (libkiln.a, libkiln_compiler.a); no object in them but
# check.c's may reference stderr or perror. In a KILN_DEBUG build (Debug, sanitizers) this also
# covers the debug-only paths. Exit 0 ok, 1 a writer found, 77 no nm.
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm (binutils) is not installed"; exit 77; }
found=$(nm -A "$@" 2>/dev/null | grep -E ' U (stderr|perror)$' | grep -v ':check\.c\.o:')
if [ -n "$found" ]; then
    echo "FAIL: library objects write to stderr:" >&2
    echo "$found" >&2
    exit 1
fi
echo "ok: no library object but core/check.c references stderr"
