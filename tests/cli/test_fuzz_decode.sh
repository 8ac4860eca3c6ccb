#!/usr/bin/env bash
# Runs the in-kernel decoder fuzz harness (tests/fuzz/run_fuzz.sh) for 30 seconds. Skips, saying
# why, when clang or its libFuzzer runtime is missing (Debian: apt-get install clang
# libclang-rt-14-dev).
set -u
SRC=${WARPLENS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
CLANG=${CLANG:-clang}
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
if ! command -v "$CLANG" >/dev/null; then
    echo "fuzz_decode: SKIP: clang not found"
    echo "fuzz_decode: 0 passed, 0 failed (skipped)"
    exit 0
fi
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
    >"$probe/p.c"
if ! "$CLANG" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" 2>"$probe/err"; then
    echo "fuzz_decode: SKIP: $CLANG cannot build libFuzzer targets ($(head -1 "$probe/err"))"
    echo "fuzz_decode: 0 passed, 0 failed (skipped)"
    exit 0
fi
export FUZZ_OUT=${WARPLENS_BUILD_DIR:-$probe}/fuzz_inkernel
if bash "$SRC/tests/fuzz/run_fuzz.sh" "${FUZZ_SECONDS:-30}"; then
    echo "fuzz_decode: 1 passed, 0 failed"
    exit 0
fi
echo "fuzz_decode: 0 passed, 1 failed"
exit 1
