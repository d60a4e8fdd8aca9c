#!/usr/bin/env bash
# check_install.sh BUILD_DIR [UNUSED] — the test install_consumer: install kiln into a scratch
# prefix and use it as a project outside the tree would.
#  - the README's link lines, run verbatim: the runtime through `pkg-config --libs kiln`
#    (libkiln.so), fully static through `--static` (libkiln.a), the compiler through
#    kiln-compiler (libkiln_compiler.so); each program runs;
#  - find_package(kiln): the runtime and the compiler, each as the shared library and the
#    archive; each program runs (tests/install/CMakeLists.txt);
#  - libkiln.so and libkiln_compiler.so export exactly the functions their installed headers
#    declare, each declared KILN_API, and nothing of the internal layers;
#  - the installed headers do not send readers to files users do not have (the docs/ pages
#    they cite are installed in share/doc/kiln);
#  - the installed kiln tool does not need libkiln.so (it links the archive).
# The second argument (a work folder, from older callers) is ignored: everything happens in a
# mktemp -d folder that is removed on exit.
set -euo pipefail
build=$1 here=$(cd "$(dirname "$0")" && pwd)
readme=$here/../../README.md
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-install-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "install_consumer: $*" >&2; exit 1; }
needs() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }

cmake --install "$build" --prefix "$work/prefix" >/dev/null
prefix=$work/prefix
libdir=$(dirname "$(ls -d "$prefix"/lib*/pkgconfig)")
export PKG_CONFIG_PATH=$libdir/pkgconfig
for f in libkiln.a libkiln.so libkiln.so.0 libkiln.so.0.1.0 libkiln_compiler.a libkiln_compiler.so.0; do
  [[ -e $libdir/$f ]] || fail "$f is not installed in $libdir"
done
[[ $(readelf -d "$libdir/libkiln.so.0.1.0" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p') == libkiln.so.0 ]] ||
  fail "libkiln.so.0.1.0 does not have the soname libkiln.so.0"

# Installed headers are the contract: no pointer to the source tree's ../shared/ design notes,
# and every docs/<page>.md they cite is installed (share/doc/kiln/<page>.md).
if grep -n 'shared/\|API\.md' "$prefix"/include/kiln/*.h; then
  fail "an installed header refers to a file users do not have (above)"
fi
for page in $(grep -ohE 'docs/[A-Za-z0-9_-]+\.md' "$prefix"/include/kiln/*.h | sort -u); do
  [[ -f $prefix/share/doc/kiln/${page#docs/} ]] || fail "an installed header cites $page, which is not installed"
done

# ---- exports: exactly the KILN_API functions of the installed headers ----
# Declared functions are read from the preprocessed headers (comments gone, KILN_API expanded).
declared() {  # HEADER... -> "name marked" per declared function, marked 1 when KILN_API
  printf '#include <kiln/%s>\n' "$@" | cc -E -P -I"$prefix/include" -x c - |
    awk '{ while (match($0, /kiln_[a-z0-9_]+\(/)) {
             print substr($0, RSTART, RLENGTH - 1), (index($0, "visibility(\"default\")") ? 1 : 0)
             $0 = substr($0, RSTART + RLENGTH) } }' | sort -u
}
check_exports() {  # LIBRARY DECLARATIONS_FILE
  local lib=$1 decls=$2
  local unmarked
  unmarked=$(awk '$2 == 0 { print $1 }' "$decls" | tr '\n' ' ')
  [[ -z $unmarked ]] || fail "declared without KILN_API (so not exported by $(basename "$lib")): $unmarked"
  awk '{ print $1 }' "$decls" | sort -u > "$work/want"
  nm -D --defined-only "$lib" | awk '{ print $NF }' | sort -u > "$work/have"
  local foreign leaked missing
  foreign=$(grep -v '^kiln_' "$work/have" | tr '\n' ' ' || true)
  [[ -z $foreign ]] || fail "$(basename "$lib") exports names outside kiln_*: $foreign"
  leaked=$(comm -13 "$work/want" "$work/have" | tr '\n' ' ')
  [[ -z $leaked ]] || fail "$(basename "$lib") exports internal symbols no installed header declares: $leaked"
  missing=$(comm -23 "$work/want" "$work/have" | tr '\n' ' ')
  [[ -z $missing ]] || fail "$(basename "$lib") does not export declared functions: $missing"
  echo "$(basename "$lib"): exports the $(wc -l < "$work/want") functions its headers declare, nothing else"
}
declared kiln.h backend.h > "$work/runtime.decl"
declared compiler.h | grep -vxFf "$work/runtime.decl" > "$work/compiler.decl" || true
[[ -s $work/runtime.decl && -s $work/compiler.decl ]] || fail "found no declarations in the installed headers"
check_exports "$libdir/libkiln.so" "$work/runtime.decl"
check_exports "$libdir/libkiln_compiler.so" "$work/compiler.decl"

# A program for the runtime consumers to run: the demo's digits CNN, by the installed tool.
"$prefix/bin/kiln" compile "$here/../../demo/digits.onnx" --input-shape image=2,1,8,8 -o "$work/digits.kiln" >/dev/null

# ---- the README's lines, verbatim, in a folder holding app.c and compile.c ----
mkdir "$work/readme"
cp "$here/consumer.c" "$work/readme/app.c"
cp "$here/compile_consumer.c" "$work/readme/compile.c"
run_readme_line() {
  local line=$1 out=$2
  grep -qF -- "$line" "$readme" || fail "README.md no longer shows: $line"
  (cd "$work/readme" && rm -f a.out && eval "$line" && mv a.out "$out") || fail "README line failed: $line"
}
run_readme_line 'cc app.c $(pkg-config --cflags --libs kiln)' app-shared
run_readme_line 'cc -static app.c $(pkg-config --cflags --libs --static kiln)' app-static
run_readme_line 'cc compile.c $(pkg-config --cflags --libs kiln-compiler)' compile-shared
cd "$work/readme"
[[ " $(needs app-shared)" == *" libkiln.so.0 "* ]] || fail "app-shared does not use libkiln.so.0 (needs: $(needs app-shared))"
LD_LIBRARY_PATH=$libdir ./app-shared "$work/digits.kiln"
[[ -z $(needs app-static) ]] || fail "app-static (cc -static) needs shared libraries: $(needs app-static)"
./app-static "$work/digits.kiln"
[[ " $(needs compile-shared)" == *" libkiln_compiler.so.0 "* ]] ||
  fail "compile-shared does not use libkiln_compiler.so.0 (needs: $(needs compile-shared))"
LD_LIBRARY_PATH=$libdir ./compile-shared

# ---- find_package(kiln): shared and static, runtime and compiler ----
cmake -S "$here" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
cd "$work/cmake-build"
for exe in consumer consumer_static compile_consumer compile_consumer_static; do
  n=" $(needs $exe)"
  case $exe in
    consumer) [[ $n == *" libkiln.so.0 "* ]] || fail "kiln::kiln did not link libkiln.so.0 (needs:$n)" ;;
    compile_consumer) [[ $n == *" libkiln_compiler.so.0 "* ]] || fail "kiln::kiln_compiler did not link libkiln_compiler.so.0 (needs:$n)" ;;
    *) [[ $n != *libkiln* ]] || fail "$exe links a shared kiln library (needs:$n)" ;;
  esac
  LD_LIBRARY_PATH=$libdir "./$exe" "$work/digits.kiln"
done

# ---- the kiln tool links the archive ----
test -x "$prefix/bin/kiln" || fail "bin/kiln is not installed"
[[ " $(needs "$prefix/bin/kiln")" != *libkiln* ]] || fail "bin/kiln needs a shared kiln library: $(needs "$prefix/bin/kiln")"
"$prefix/bin/kiln" --version
echo "install check passed"
