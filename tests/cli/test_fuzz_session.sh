#!/usr/bin/env bash
# Fuzzes reading sessions (tests/fuzz/fuzz_session.c) with libFuzzer (+ASan+UBSan) for
# FUZZ_SECONDS (default 20): every read verb and exporter on the sessions of tests/data damaged at
# the SQL level and byte by byte; a crash, a sanitizer report, a leak, a run longer than
# FUZZ_TIMEOUT seconds (default 20: a hang; a verb takes well under a second on these sessions) or a
# verb that fails without exactly one line saying why fails the test. The 10-minute runs of
# bench/results/fuzz-session.txt, one per level of mutation, each from the seeds alone:
#   WL_FUZZ_OPS=sql FUZZ_OUT=/tmp/fz-sql FUZZ_SECONDS=600 FUZZ_TIMEOUT=10 bash tests/cli/test_fuzz_session.sh
#   WL_FUZZ_OPS=bytes FUZZ_OUT=/tmp/fz-bytes FUZZ_SECONDS=600 FUZZ_TIMEOUT=10 bash tests/cli/test_fuzz_session.sh
# Skips, saying why, when clang or its libFuzzer runtime is missing.
set -u
SRC=${WARPLENS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
CLANG=${CLANG:-clang}
CUDA=${CUDA_HOME:-/usr/local/cuda}
out=${FUZZ_OUT:-${WARPLENS_BUILD_DIR:-/tmp}/fuzz_session}
mkdir -p "$out/obj" "$out/corpus" "$out/artifacts"
: >"$out/build.log"
if ! command -v "$CLANG" >/dev/null; then
    echo "fuzz_session: SKIP: clang not found"; echo "fuzz_session: 0 passed, 0 failed (skipped)"; exit 0
fi
flags=(-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -fno-sanitize-recover=all
    -I"$SRC/include" -I"$SRC/src" -I"$SRC/tools/warplens" -I"$CUDA/include")
# the store, analysis, exporters and the CLI's verbs (not its main), compiled nproc at a time; an
# object is kept only when newer than its source and every header (a struct that changed in a header
# would otherwise meet objects compiled with its old layout)
newest_header=$(ls -t "$SRC"/include/warplens/*.h "$SRC"/src/*/*.h "$SRC"/tools/warplens/*.h 2>/dev/null | head -1)
compile() {
    local o="$out/obj/$(echo "$1" | tr / _).o"
    [ "$o" -nt "$1" ] && [ "$o" -nt "$newest_header" ] || "$CLANG" "${flags[@]}" -fsanitize=fuzzer-no-link,address,undefined -c "$1" -o "$o"
}
built=1
jobs=0
for f in "$SRC"/src/{common,capfile,store,analysis,export}/*.c "$SRC"/tools/warplens/*.c; do
    [ "$(basename "$f")" = main.c ] && [ "$(basename "$(dirname "$f")")" = warplens ] && continue
    compile "$f" 2>>"$out/build.log" &
    jobs=$((jobs + 1))
    if [ $jobs -ge "$(nproc)" ]; then wait -n || built=0; jobs=$((jobs - 1)); fi
done
while [ $jobs -gt 0 ]; do wait -n || built=0; jobs=$((jobs - 1)); done
if [ $built = 0 ] || ! "$CLANG" "${flags[@]}" -fsanitize=fuzzer,address,undefined \
    -DWL_FUZZ_DATA_DIR="\"$SRC/tests/data\"" "$SRC/tests/fuzz/fuzz_session.c" "$out"/obj/*.o \
    -l:libsqlite3.a -lstdc++ -lm -ldl -lpthread -o "$out/fuzz_session" 2>>"$out/build.log"; then
    echo "fuzz_session: SKIP: $CLANG cannot build libFuzzer targets ($(grep -m1 error "$out/build.log"))"
    echo "fuzz_session: 0 passed, 0 failed (skipped)"; exit 0
fi
# seeds: each verb invocation once (fuzz_session.c's VERBS table, 31 entries: 48 seeds cover it with
# room to grow), on a session chosen by its number, no damage yet
python3 - "$out/corpus" <<'PY'
import os, sys
for verb in range(48):
    open(os.path.join(sys.argv[1], "seed-%02d" % verb), "wb").write(bytes([verb % 18, verb]))
PY
if "$out/fuzz_session" -max_total_time="${FUZZ_SECONDS:-20}" -timeout="${FUZZ_TIMEOUT:-20}" -max_len=512 -len_control=0 \
    -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$out/artifacts/" \
    "$out/corpus" >"$out/fuzz.log" 2>&1; then
    grep -E "^fuzz_session: [0-9]+ runs|stat::number_of_executed_units|stat::new_units_added" "$out/fuzz.log"
    echo "fuzz_session: 1 passed, 0 failed"
    exit 0
fi
tail -40 "$out/fuzz.log"
echo "fuzz_session: 0 passed, 1 failed (artifacts in $out/artifacts)"
exit 1
