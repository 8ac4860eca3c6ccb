#!/usr/bin/env bash
# CI build check of the timers' HIP backend: compiles src/timer/*.c with -DWARPLENS_TIMER_HIP against
# Debian's HIP headers (bookworm: package libamdhip64-dev, /usr/include/hip) with -Wall -Wextra
# -Werror, and checks that the objects call hipEvent* and nothing from CUDA. Nothing is run: there
# is no AMD GPU here. Skips with the reason when the headers are not installed.
set -u
SRC=${WARPLENS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
HIP_INC=${HIP_INCLUDE_DIR:-}
for d in "$HIP_INC" /usr/include /opt/rocm/include; do
    [ -n "$d" ] && [ -f "$d/hip/hip_runtime_api.h" ] && { HIP_INC=$d; break; }
done
if [ -z "$HIP_INC" ] || [ ! -f "$HIP_INC/hip/hip_runtime_api.h" ]; then
    echo "timer_hip_build: SKIP: hip/hip_runtime_api.h not found (Debian 12: apt-get install libamdhip64-dev)"
    echo "timer_hip_build: 0 passed, 0 failed (skipped)"
    exit 0
fi
CC=${CC:-cc}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0 fail=0
for f in "$SRC"/src/timer/*.c; do
    o="$T/$(basename "$f" .c).o"
    if $CC -std=c11 -D_GNU_SOURCE -DWARPLENS_TIMER_HIP -D__HIP_PLATFORM_AMD__ -Wall -Wextra -Werror -fPIC \
            -I"$SRC/include" -I"$SRC/src" -I"$HIP_INC" -c "$f" -o "$o" 2> "$T/err"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "FAIL: $f does not compile with the HIP backend:" >&2; cat "$T/err" >&2
    fi
done
if [ -f "$T/timer_backend_hip.o" ]; then
    u=$(nm -u "$T"/*.o | awk '{print $2}' | sort -u)
    if echo "$u" | grep -q '^hipEventRecord$' && echo "$u" | grep -q '^hipEventElapsedTime$' \
            && ! echo "$u" | grep -qi '^cu'; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "FAIL: HIP objects do not use hipEvent*, or use CUDA: $u" >&2
    fi
fi
echo "timer_hip_build: $pass passed, $fail failed (compiled only; no AMD GPU to run on)"
[ "$fail" -eq 0 ]
