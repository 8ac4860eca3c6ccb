#!/usr/bin/env bash
# Builds the in-kernel decoder fuzz harness with clang (libFuzzer + ASan + UBSan) and runs it for
# a bounded time on a copy of the seed corpus (tests/fuzz/corpus_inkernel is never modified).
# usage: tests/fuzz/run_fuzz.sh <seconds> [extra libFuzzer flags...]
# Long run: tests/fuzz/run_fuzz.sh 3600 -jobs=2 -workers=2
# Crashes are written to $FUZZ_OUT (default: a folder under the build dir or /tmp), reported below.
set -euo pipefail
secs=${1:?usage: run_fuzz.sh <seconds> [libFuzzer flags]}
shift
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
CLANG=${CLANG:-clang}
out=${FUZZ_OUT:-${WARPLENS_BUILD_DIR:-/tmp}/fuzz_inkernel}
mkdir -p "$out/corpus" "$out/artifacts"
cp -n "$here"/corpus_inkernel/* "$out/corpus/" 2>/dev/null || true
"$CLANG" -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -I"$src/include" -I"$src/src" \
    "$here/fuzz_inkernel_decode.c" \
    "$src/src/analysis/inkernel_decode.c" "$src/src/analysis/inkernel_walk.c" \
    "$src/src/analysis/inkernel_summary.c" \
    "$src/src/analysis/inkernel_place.c" "$src/src/export/inkernel_chrome.c" \
    "$src/src/export/inkernel_perfetto.c" "$src/src/export/perfetto_packets.c" \
    "$src/src/export/perfetto_intern.c" "$src/src/export/pb_encode.c" "$src/src/common/grow.c" \
    -o "$out/fuzz_inkernel_decode"
echo "run_fuzz: running for ${secs}s, corpus $out/corpus"
"$out/fuzz_inkernel_decode" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$out/artifacts/" -print_final_stats=1 "$@" "$out/corpus" 2>"$out/fuzz.log" \
    && rc=0 || rc=$?
grep -E "^(stat::number_of_executed_units|stat::new_units_added|Done)" "$out/fuzz.log" || true
if [ $rc -ne 0 ]; then
    tail -40 "$out/fuzz.log"
    echo "run_fuzz: FAILED (exit $rc); artifacts in $out/artifacts" >&2
fi
exit $rc
