#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then the prefix moved elsewhere (every installed path is
# relative): the files are there (CLI, libwarplens shared and static, the recorder, headers, warplens.pc,
# the CMake package, docs, a man page per verb that says what the verb's --help says); one C program
# built with pkg-config and one with find_package(warplens CONFIG) (shared and static) build and run,
# using the timers, scopes and the session reader on a real session; the installed `warplens run`
# hands the program the installed recorder (checked with a stand-in driver, no GPU needed), and the
# build tree's CLI still finds the build tree's.
set -u
SRC=${WARPLENS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${WARPLENS_BUILD_DIR:-$SRC/build}
DATA=${WARPLENS_TEST_DATA:-$SRC/tests/data}
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
T=$(mktemp -d); [ -n "${KEEP_T:-}" ] || trap 'rm -rf "$T"' EXIT
SAN="" CMAKE_SAN=()
if grep -q '^WARPLENS_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null; then
    SAN="-fsanitize=address,undefined"
    CMAKE_SAN=(-DCMAKE_C_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN")
    export ASAN_OPTIONS=detect_leaks=1
fi
LIBDIR=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
[ -n "$LIBDIR" ] || LIBDIR=lib

if ! cmake --install "$BUILD" --prefix "$T/stage" > "$T/install.log" 2>&1; then
    cat "$T/install.log"; echo "install: 0 passed, 1 failed"; exit 1
fi
mv "$T/stage" "$T/p"   # relocated: nothing may point back into the staging prefix
P=$T/p
for f in bin/warplens "$LIBDIR/libwarplens.so" "$LIBDIR/libwarplens.so.0" "$LIBDIR/libwarplens.so.$VERSION" \
         "$LIBDIR/libwarplens.a" "$LIBDIR/warplens/libwarplens_recorder.so" \
         "$LIBDIR/warplens/warplens-python/sitecustomize.py" include/warplens/warplens.h include/warplens/timer.h \
         include/warplens/reader.h include/warplens/device.cuh include/warplens/calibrate.cuh \
         "$LIBDIR/pkgconfig/warplens.pc" "$LIBDIR/cmake/warplens/warplens-config.cmake" \
         "$LIBDIR/cmake/warplens/warplens-config-version.cmake" share/doc/warplens/README.md \
         share/doc/warplens/schema.md share/man/man1/warplens.1 share/bash-completion/completions/warplens \
         share/zsh/site-functions/_warplens; do
    check '[ -e "$P/$f" ]' "installed $f"
done
check '"$P/bin/warplens" completion bash | cmp -s - "$P/share/bash-completion/completions/warplens"' \
    "installed bash completion is the CLI's"
check '! grep -rqs "$T/stage" "$P/$LIBDIR/pkgconfig" "$P/$LIBDIR/cmake"' "pkg-config/CMake files name the staging prefix"
check '[ "$(readelf -d "$P/bin/warplens" | grep -c "R*PATH")" = 0 ]' "the installed CLI has no RPATH into the build tree"

# man pages: one per verb of `warplens --help`, each carrying the verb's --help text
verbs=$("$P/bin/warplens" --help | sed -n '/^commands:/,/^$/p' | awk '/^  [a-z]/ {print $1}')
check '[ "$(echo "$verbs" | wc -w)" -ge 15 ]' "verbs listed by warplens --help: $verbs"
for v in $verbs; do
    page=$P/share/man/man1/warplens-$v.1
    if [ ! -f "$page" ]; then
        fail=$((fail + 1)); echo "FAIL: no man page for $v" >&2; continue
    fi
    first=$("$P/bin/warplens" "$v" --help | head -1)
    if command -v man > /dev/null; then
        MANWIDTH=300 man -l "$page" 2>/dev/null | sed 's/^ *//' > "$T/man.txt"
        check 'grep -qxF -- "$first" "$T/man.txt"' "man -l warplens-$v.1 lacks its --help's first line '$first'"
    else
        check 'grep -qF -- "$(printf "%s" "$first" | sed "s/-/\\\\-/g")" "$page"' "warplens-$v.1 lacks '$first'"
    fi
done
check '[ "$(ls "$P/share/man/man1" | wc -l)" = "$(($(echo "$verbs" | wc -w) + 1))" ]' "one page per verb plus warplens.1"

# the programs: scopes (a no-op without the recorder), host-timed timers, the session reader
cat > "$T/prog.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <warplens/reader.h>
#include <warplens/timer.h>
#include <warplens/warplens.h>
int main(int argc, char **argv)
{
    warplens_scope_begin("install-test");
    wl_timer_host_begin(WL_TIMER_RUNTIME, "read");
    char err[512];
    warplens_reader *r = warplens_reader_open(argv[1], err, sizeof err);
    if (!r) { fprintf(stderr, "open: %s\n", err); return 1; }
    warplens_kernel_derived rows[16];
    long kernels = 0, with_occ = 0; int n;
    while ((n = warplens_reader_kernels(r, rows, 16)) > 0)
        for (int i = 0; i < n; i++, kernels++)
            with_occ += rows[i].occupancy_pct > 0 && rows[i].limiter[0];
    warplens_reader_close(r);
    wl_timer_host_end(WL_TIMER_RUNTIME, "read");
    warplens_scope_end();
    r = warplens_reader_open(argv[0], err, sizeof err);
    printf("kernels %ld occupancy %ld timer %d not-a-session %s\n", kernels, with_occ,
           (int)wl_timer_count(), r ? "opened" : (strstr(err, "not a warplens session") ? "refused" : err));
    return n < 0 || argc < 2;
}
C
want=$("$P/bin/warplens" info "$DATA/demo-h100.wlsession" | sed -n 's/^records *\([0-9]*\) kernels.*/\1/p')
expect="kernels $want occupancy $want timer 1 not-a-session refused"
PKG_CONFIG_PATH=$P/$LIBDIR/pkgconfig
export PKG_CONFIG_PATH
check '[ "$(pkg-config --modversion warplens)" = "$VERSION" ]' "pkg-config --modversion"
if cc -std=c11 -Wall -Wextra -Werror $SAN "$T/prog.c" $(pkg-config --cflags --libs warplens) \
        -Wl,-rpath,"$P/$LIBDIR" -o "$T/prog-pc" 2> "$T/cc.err"; then
    out=$("$T/prog-pc" "$DATA/demo-h100.wlsession" 2>&1)
    check '[ "$out" = "$expect" ]' "pkg-config program: '$out', wanted '$expect'"
    check 'ldd "$T/prog-pc" | grep -q "$P/$LIBDIR/libwarplens.so.0"' "pkg-config program links the installed libwarplens"
else
    fail=$((fail + 1)); echo "FAIL: pkg-config build: $(cat "$T/cc.err")" >&2
fi

mkdir -p "$T/cm"
cp "$T/prog.c" "$T/cm/"
cat > "$T/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(uses_warplens C)
find_package(warplens 0.1 CONFIG REQUIRED)
add_executable(prog_shared prog.c)
target_link_libraries(prog_shared PRIVATE warplens::warplens)
add_executable(prog_static prog.c)
target_link_libraries(prog_static PRIVATE warplens::warplens_static)
CM
if cmake -S "$T/cm" -B "$T/cm/b" -DCMAKE_PREFIX_PATH="$P" "${CMAKE_SAN[@]}" > "$T/cm.log" 2>&1 &&
   cmake --build "$T/cm/b" >> "$T/cm.log" 2>&1; then
    out=$("$T/cm/b/prog_shared" "$DATA/demo-h100.wlsession" 2>&1)
    check '[ "$out" = "$expect" ]' "find_package program (shared): '$out'"
    out=$("$T/cm/b/prog_static" "$DATA/demo-h100.wlsession" 2>&1)
    check '[ "$out" = "$expect" ]' "find_package program (static): '$out'"
    check '! ldd "$T/cm/b/prog_static" | grep -q libwarplens' "the static program needs no libwarplens.so"
else
    fail=$((fail + 1)); echo "FAIL: find_package build: $(tail -20 "$T/cm.log")" >&2
fi
sed -i 's/find_package(warplens 0.1 CONFIG REQUIRED)/find_package(warplens 0.2 CONFIG REQUIRED)/' "$T/cm/CMakeLists.txt"
check '! cmake -S "$T/cm" -B "$T/cm/b2" -DCMAKE_PREFIX_PATH="$P" > /dev/null 2>&1' "find_package(warplens 0.2) accepted $VERSION"

# the recorder the installed `warplens run` injects (a stand-in libcuda.so.1: no GPU needed)
FAKE=$BUILD/fakecuda
if [ -e "$FAKE/libcuda.so.1" ]; then
    for cli in "$P/bin/warplens" "$BUILD/bin/warplens"; do
        case $cli in "$P"/*) want_rec=$P/$LIBDIR/warplens/libwarplens_recorder.so ;;
                     *) want_rec=$BUILD/lib/libwarplens_recorder.so ;; esac
        (cd "$T" && env -u WARPLENS_RECORDER_LIB LD_LIBRARY_PATH="$FAKE" "$cli" run -q -o "$T/rec.wlsession" -- \
            sh -c 'echo "$CUDA_INJECTION64_PATH"' > "$T/rec.out" 2> "$T/rec.err")
        got=$(head -1 "$T/rec.out")
        check '[ "$got" = "$(realpath "$want_rec")" ]' "$cli run injects '$got', wanted $want_rec ($(cat "$T/rec.err"))"
    done
else
    fail=$((fail + 1)); echo "FAIL: $FAKE/libcuda.so.1 was not built" >&2
fi
echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
