#!/usr/bin/env bash
# Fuzzes the PyTorch NVTX range parser (src/store/torch_range.c) with libFuzzer (+ASan+UBSan) for
# FUZZ_SECONDS (default 20), seeded with tests/fuzz/corpus_torch_range (never modified). Skips,
# saying why, when clang or its libFuzzer runtime is missing.
set -u
SRC=${WARPLENS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
CLANG=${CLANG:-clang}
out=${WARPLENS_BUILD_DIR:-/tmp}/fuzz_torch_range
mkdir -p "$out/corpus" "$out/artifacts"
cp -n "$SRC"/tests/fuzz/corpus_torch_range/* "$out/corpus/" 2>/dev/null || true
if ! command -v "$CLANG" >/dev/null; then
    echo "fuzz_torch_range: SKIP: clang not found"; echo "fuzz_torch_range: 0 passed, 0 failed (skipped)"; exit 0
fi
if ! "$CLANG" -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -I"$SRC/src" "$SRC/tests/fuzz/fuzz_torch_range.c" "$SRC/src/store/torch_range.c" \
    -o "$out/fuzz_torch_range" 2>"$out/build.log"; then
    echo "fuzz_torch_range: SKIP: $CLANG cannot build libFuzzer targets ($(head -1 "$out/build.log"))"
    echo "fuzz_torch_range: 0 passed, 0 failed (skipped)"; exit 0
fi
if "$out/fuzz_torch_range" -max_total_time="${FUZZ_SECONDS:-20}" -max_len=512 -timeout=10 \
    -artifact_prefix="$out/artifacts/" -print_final_stats=1 "$out/corpus" 2>"$out/fuzz.log"; then
    grep -E "^stat::number_of_executed_units" "$out/fuzz.log"
    echo "fuzz_torch_range: 1 passed, 0 failed"
    exit 0
fi
tail -30 "$out/fuzz.log"
echo "fuzz_torch_range: 0 passed, 1 failed (artifacts in $out/artifacts)"
exit 1
