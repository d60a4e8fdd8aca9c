#!/usr/bin/env python3
"""clang_syntax.py — every C file of the build, compiled by clang with the build's own flags
(compile_commands.json), syntax and warnings only (-fsyntax-only, no code): the cheap form of
the clang/libFuzzer build (fuzz/README.md), so what gcc accepts and clang refuses — an unused
static function, a non-constant static initialiser — fails in the ordinary suite instead of the
next fuzzing session. Warnings are errors when the build has -Werror. Sources generated into the
build tree (protobuf-c) are skipped: their warnings are not kiln's.

Usage: clang_syntax.py BUILD_DIR SOURCE_DIR. Exit 0 all clean, 1 a file refused, 77 no clang or
no compile_commands.json (configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON; the top-level
CMakeLists.txt turns it on).
"""
import json
import os
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

# gcc-only flags the top-level CMakeLists.txt adds for GNU only; a gcc build's commands carry them.
GCC_ONLY = {"-Wno-format-truncation"}


def clang_command(entry, clang):
    args = entry.get("arguments") or shlex.split(entry["command"])
    out = [clang]
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a in GCC_ONLY:
            continue
        out.append("-fsyntax-only" if a == "-c" else a)
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    build, source = (os.path.realpath(p) for p in sys.argv[1:])
    clang = shutil.which("clang")
    db = os.path.join(build, "compile_commands.json")
    if not clang or not os.path.exists(db):
        print("SKIP: needs clang and %s" % db)
        return 77
    with open(db) as f:
        entries = json.load(f)
    todo = []
    for e in entries:
        path = os.path.realpath(os.path.join(e["directory"], e["file"]))
        if path.startswith(source + os.sep) and not path.startswith(build + os.sep):
            todo.append((e, path))

    def check(item):
        e, path = item
        r = subprocess.run(clang_command(e, clang), cwd=e["directory"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        return path, r.returncode, r.stdout

    checked = len(todo)
    failed = 0
    with ThreadPoolExecutor(max_workers=2) as pool:  # two cores at most, as every build here
        for path, rc, text in pool.map(check, todo):
            if rc != 0:
                failed += 1
                print("FAIL: clang refuses %s:\n%s" % (os.path.relpath(path, source), text))
    print("%d of %d files refused by clang" % (failed, checked) if failed else "ok: clang accepts all %d files" % checked)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
