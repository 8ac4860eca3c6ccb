#!/usr/bin/env bash
# End-to-end CPU test of the explicit timers through libwarplens.so: a small C program built against
# the public header and the shared library (no CUDA headers or libraries), run without a GPU. Checks
# the host-timed fallback, verbosity from $WARPLENS_TIMER (none prints and creates nothing), the
# summary text, the end-without-begin message, the session side file, then the Python binding.
set -u
SRC=${WARPLENS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${WARPLENS_BUILD_DIR:-$SRC/build}
LIB=$BUILD/lib/libwarplens.so
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
if [ ! -f "$LIB" ]; then echo "timer_cli: $LIB missing (build first)"; exit 1; fi
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
SAN=""
grep -q '^WARPLENS_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null && SAN="-fsanitize=address,undefined"
cat > "$T/prog.c" <<'C'
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <unistd.h>
#include "warplens/timer.h"
int main(void)
{
    int solver = wl_timer_category_register("solver");
    void *stream = (void *)0;
    wl_timer_host_begin(solver, "solve");
    wl_timer_span_begin(WL_TIMER_RUNTIME, stream, "gpu_workload");
    for (int c = 0; c < 3; c++) {
        wl_timer_gpu_begin(WL_TIMER_RUNTIME, stream, "kernel_chunk_%d", c);
        usleep(1000);
        wl_timer_gpu_end(WL_TIMER_RUNTIME, stream, "kernel_chunk_%d", c);
    }
    wl_timer_span_end(WL_TIMER_RUNTIME, stream, "gpu_workload");
    wl_timer_host_end(solver, "solve");
    int rc = wl_timer_gpu_end(WL_TIMER_RUNTIME, stream, "kernel_chunk_%d", 9);
    printf("end-without-begin %d\n", rc);
    printf("pending %d\n", wl_timer_collect());
    wl_timer_print(stdout, -1);
    wl_timer_stats st;
    wl_timer_get_stats(&st);
    printf("stats intervals %llu events %llu backend %d\n", (unsigned long long)st.intervals,
           (unsigned long long)st.events_created, st.backend);
    return 0;
}
C
if ! cc -std=c11 -Wall -Wextra -Werror $SAN -I"$SRC/include" "$T/prog.c" -L"$BUILD/lib" -lwarplens \
        -Wl,-rpath,"$BUILD/lib" -o "$T/prog" 2> "$T/cc.err"; then
    cat "$T/cc.err"; echo "timer_cli: 0 passed, 1 failed"; exit 1
fi
ldd "$T/prog" | grep -q cuda && { fail=$((fail + 1)); echo "FAIL: links CUDA" >&2; }
ldd "$LIB" | grep -qi cuda && { fail=$((fail + 1)); echo "FAIL: libwarplens.so links CUDA" >&2; }

export WARPLENS_TIMER_BACKEND=host   # deterministic on machines with a GPU too
WARPLENS_TIMER=verbose "$T/prog" > "$T/v.out" 2> "$T/v.err"
check '[ $? -eq 0 ]' "verbose run exit"
check 'grep -q "^warplens timers (host timestamps: no CUDA driver or device):$" "$T/v.out"' "header"
check 'grep -qE "^  runtime: gpu [0-9.]+ ms \(3 intervals, host-timed\), host 0.000 ms \(0 intervals\)$" "$T/v.out"' "runtime total"
check 'grep -qE "^    span gpu_workload: [0-9.]+ ms \[host-timed\]$" "$T/v.out"' "span line"
check 'grep -qE "^    gpu  kernel_chunk_1: [0-9]+\.[0-9]{3} ms \[host-timed\]$" "$T/v.out"' "chunk line"
check 'grep -qE "^  solver: gpu 0.000 ms \(0 intervals\), host [0-9.]+ ms \(1 interval\)$" "$T/v.out"' "solver total"
check 'grep -q "^end-without-begin -1$" "$T/v.out"' "end without begin code"
check 'grep -q "end of .kernel_chunk_9. (gpu, category runtime) without a matching begin" "$T/v.err"' "message"
check 'grep -q "^  1 call returned an error$" "$T/v.out"' "error counted"
check 'grep -q "^stats intervals 5 events 0 backend 1$" "$T/v.out"' "stats"
WARPLENS_TIMER=default "$T/prog" > "$T/d.out" 2>/dev/null
check '! grep -q kernel_chunk_1 "$T/d.out" && grep -q "span gpu_workload" "$T/d.out"' "default hides chunks"
WARPLENS_TIMER=debug "$T/prog" > "$T/g.out" 2>/dev/null
check 'grep -qE "kernel_chunk_0: .* \| stream \(nil\) tid [0-9]+ .* host clock$" "$T/g.out"' "debug line"
WARPLENS_TIMER=none "$T/prog" > "$T/n.out" 2> "$T/n.err"
check 'grep -q "^stats intervals 0 events 0 backend 0$" "$T/n.out" && ! grep -q "warplens timers" "$T/n.out"' "none creates nothing"
check '[ ! -s "$T/n.err" ] && grep -q "^end-without-begin 0$" "$T/n.out"' "none is silent"
mkdir "$T/cap"
WARPLENS_CAPTURE_DIR="$T/cap" WARPLENS_TIMER=default "$T/prog" > /dev/null 2>&1
f=$(ls "$T/cap"/*.wltimers 2>/dev/null | head -1)
check '[ -n "$f" ] && [ "$(grep -c "^interval" "$f")" -eq 5 ] && grep -q "^end	5$" "$f"' "side file"
check '[ -z "$(ls "$T/cap" | grep -v "\.wltimers$")" ]' "no temporary file left"

PRE=""   # a sanitized libwarplens.so needs the sanitizer runtimes first in python3's library list
[ -n "$SAN" ] && PRE="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
if command -v python3 > /dev/null; then
    LD_PRELOAD="$PRE" ASAN_OPTIONS=detect_leaks=0 WARPLENS_LIB="$LIB" PYTHONPATH="$SRC/python" \
        python3 - > "$T/py.out" 2>&1 <<'PY'
import time
from warplens import timer
class FakeTorchStream:   # what torch.cuda.Stream offers: .cuda_stream
    cuda_stream = 0
class FakeCupyStream:    # cupy: .ptr
    ptr = 0
timer.set_verbosity(timer.VERBOSE)
cat = timer.category("python")
assert cat == 3, cat
with timer.span("gpu_workload", stream=FakeTorchStream()):
    for c in range(2):
        with timer.gpu("kernel_chunk_%d" % c, stream=FakeCupyStream(), cat=cat):
            time.sleep(0.001)
with timer.host("100%_host"):
    pass
try:
    timer.gpu_end("nope")
    raise SystemExit("no error raised")
except timer.TimerError as e:
    assert "without" in str(e)
assert timer.collect() == 0
ivs = timer.intervals()
assert [i["name"] for i in ivs] == ["gpu_workload", "kernel_chunk_0", "kernel_chunk_1", "100%_host"], ivs
assert all(i["status"] == "done" and (i["host_timed"] or i["kind"] == "host") for i in ivs), ivs
assert ivs[1]["duration_ns"] >= 1000000
s = timer.summary()
assert "    gpu  kernel_chunk_1:" in s and "python: gpu" in s, s
assert timer.stats()["intervals"] == 4
print("python ok")
PY
    check 'grep -q "^python ok$" "$T/py.out"' "python binding: $(tail -3 "$T/py.out")"
else
    echo "timer_cli: python3 not found: binding not tested"
fi
echo "timer_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
