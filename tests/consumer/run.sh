#!/usr/bin/env bash
# Installs a built gatherkit into a scratch prefix and builds the consumer in this folder five
# ways: find_package (shared, static), pkg-config (shared, static) and add_subdirectory; each
# must run and print its result. Usage: run.sh BUILD_DIR SOURCE_DIR [CARGO_TARGET_DIR]
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
cargo_dir=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

step() { printf '\n== %s\n' "$*"; }
# `set -e` ignores negated commands, so these fail explicitly.
expect_linked() {
    local want=$1 exe=$2
    # Not `ldd | grep -q`: with pipefail, grep's early exit can kill ldd and fail the pipeline.
    local deps
    deps=$(ldd "$exe")
    case "$deps" in *libgatherkit*) got=shared ;; *) got=static ;; esac
    [ "$got" = "$want" ] || { echo "FAIL: $exe links gatherkit $got, expected $want" >&2; exit 1; }
}

step "cmake --install into $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
find "$prefix" -name 'libgatherkit*' -o -name '*.pc' -o -name 'gatherkit*.cmake' -o -name gatherkit.h | sort | sed "s|$prefix|<prefix>|"
test -L "$(find "$prefix" -name libgatherkit.so.0)"   # the SONAME link is a link

for kind in shared static; do
    static=OFF; [ "$kind" = static ] && static=ON
    step "find_package, $kind"
    cmake -S "$here" -B "$work/fp-$kind" -DCMAKE_PREFIX_PATH="$prefix" -DGATHERKIT_STATIC=$static >/dev/null
    cmake --build "$work/fp-$kind" >/dev/null
    "$work/fp-$kind/consumer"
    expect_linked $kind "$work/fp-$kind/consumer"
done

pcdir=$(dirname "$(find "$prefix" -name gatherkit.pc)")
export PKG_CONFIG_PATH=$pcdir
libdir=$(pkg-config --variable=libdir gatherkit)
step "pkg-config, shared: $(pkg-config --cflags --libs gatherkit)"
cc -std=c99 -Wall -Wextra -Werror "$here/main.c" $(pkg-config --cflags --libs gatherkit) -Wl,-rpath,"$libdir" -o "$work/pc-shared"
"$work/pc-shared"
expect_linked shared "$work/pc-shared"
static_libs=$(pkg-config --static --libs gatherkit)
step "pkg-config, static: $static_libs"
cc -std=c99 -Wall -Wextra -Werror "$here/main.c" $(pkg-config --cflags gatherkit) ${static_libs/-lgatherkit/-l:libgatherkit.a} -o "$work/pc-static"
"$work/pc-static"
expect_linked static "$work/pc-static"

step "add_subdirectory"
extra=()
[ -n "$cargo_dir" ] && extra=(-DGATHERKIT_CARGO_TARGET_DIR="$cargo_dir")
cmake -S "$here" -B "$work/sub" -DGATHERKIT_VIA=subdirectory -DGATHERKIT_SOURCE_DIR="$src" "${extra[@]}" >/dev/null
cmake --build "$work/sub" >/dev/null
"$work/sub/consumer"
expect_linked shared "$work/sub/consumer"
cmake -S "$here" -B "$work/sub-static" -DGATHERKIT_VIA=subdirectory -DGATHERKIT_SOURCE_DIR="$src" -DGATHERKIT_STATIC=ON "${extra[@]}" >/dev/null
cmake --build "$work/sub-static" >/dev/null
"$work/sub-static/consumer"
expect_linked static "$work/sub-static/consumer"

# Without a C++ compiler: gatherkit is C only, so a C-only project vendors it, and as the top-level
# project it configures, with the C++ tests registered as skipped (configure only: no build).
step "add_subdirectory and top-level configure without a C++ compiler"
CXX=/nonexistent/c++ cmake -S "$here" -B "$work/sub-nocxx" -DGATHERKIT_VIA=subdirectory \
    -DGATHERKIT_SOURCE_DIR="$src" "${extra[@]}" >/dev/null
CXX=/nonexistent/c++ cmake -S "$src" -B "$work/top-nocxx" -DGATHERKIT_CARGO_TESTS=OFF "${extra[@]}" >/dev/null
skipped=$(ctest --test-dir "$work/top-nocxx" -R '^cxx_header$' 2>&1)
case "$skipped" in *"cxx_header (Skipped)"*) echo "cxx_header: skipped" ;;
    *) echo "FAIL: cxx_header is not a skipped test without a C++ compiler:" >&2; echo "$skipped" >&2; exit 1 ;;
esac

step "all consumers passed"
