#!/usr/bin/env bash
# Fuzzes the capture-file reader with libFuzzer (+ASan+UBSan) for FUZZ_SECONDS (default 20),
# seeded with a capture built by the store tests' builder. A longer run:
#   FUZZ_SECONDS=3600 bash tests/cli/test_fuzz_capfile.sh
# Skips, saying why, when clang or its libFuzzer runtime is missing.
set -u
SRC=${WARPLENS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
CLANG=${CLANG:-clang}
out=${WARPLENS_BUILD_DIR:-/tmp}/fuzz_capfile
mkdir -p "$out/corpus" "$out/artifacts"
if ! command -v "$CLANG" >/dev/null; then
    echo "fuzz_capfile: SKIP: clang not found"; echo "fuzz_capfile: 0 passed, 0 failed (skipped)"; exit 0
fi
if ! "$CLANG" -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -I"$SRC/src" "$SRC/tests/fuzz/fuzz_capfile.c" "$SRC/src/capfile/capfile_reader.c" "$SRC/src/capfile/capfile.c" \
    -o "$out/fuzz_capfile" 2>"$out/build.log"; then
    echo "fuzz_capfile: SKIP: $CLANG cannot build libFuzzer targets ($(head -1 "$out/build.log"))"
    echo "fuzz_capfile: 0 passed, 0 failed (skipped)"; exit 0
fi
# seed: a small valid capture (header + string + kernel + device sample + PM def and sample + stall reason
# + kernel stall + end)
python3 - "$out/corpus/seed.wlcap" <<'PY'
import struct, sys
hdr = b"WLCAP\x01\r\n" + struct.pack("<IIQQ", 1, 32, 42, 1)
s = b"kern"
rec = struct.pack("<HHI", 1, 0, 8 + len(s)) + struct.pack("<II", 1, len(s)) + s
kernel = bytearray(168); struct.pack_into("<I", kernel, 152, 1)
rec += struct.pack("<HHI", 4, 0, 168) + bytes(kernel)
sample = bytearray(64); struct.pack_into("<QQ", sample, 0, 2, 1)  # a DEVICE_SAMPLE (type 21)
rec += struct.pack("<HHI", 21, 0, 64) + bytes(sample)
pmdef = struct.pack("<QIIIIII", 100000, 0, 0, 1, 0, 0, 0)  # a PM_METRIC_DEF (type 22) naming index 0
rec += struct.pack("<HHI", 22, 0, 32) + pmdef
pm = struct.pack("<QQQIIII", 1, 100001, 0, 0, 0, 1, 0) + struct.pack("<8d", 4096, 0, 0, 0, 0, 0, 0, 0)
rec += struct.pack("<HHI", 23, 0, 104) + pm  # a PM_SAMPLE (type 23)
s2 = b"smsp__pcsamp_warps_issue_stalled_wait"  # STALL_REASON (24) and KERNEL_STALL (25)
rec += struct.pack("<HHI", 1, 0, 8 + len(s2)) + struct.pack("<II", 2, len(s2)) + s2
rec += struct.pack("<HHI", 24, 0, 16) + struct.pack("<IIII", 0, 3, 2, 14)
rec += struct.pack("<HHI", 25, 0, 24) + struct.pack("<IIIIQ", 1, 0, 3, 0, 42)
rec += struct.pack("<HHI", 14, 0, 56) + bytes(56)
open(sys.argv[1], "wb").write(hdr + rec)
PY
if "$out/fuzz_capfile" -max_total_time="${FUZZ_SECONDS:-20}" -max_len=8192 -timeout=10 \
    -artifact_prefix="$out/artifacts/" "$out/corpus" >"$out/fuzz.log" 2>&1; then
    grep -E "^Done|stat::number_of_executed_units" "$out/fuzz.log" | tail -1
    echo "fuzz_capfile: 1 passed, 0 failed"
    exit 0
fi
tail -30 "$out/fuzz.log"
echo "fuzz_capfile: 0 passed, 1 failed"
exit 1
