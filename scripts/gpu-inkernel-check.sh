#!/usr/bin/env bash
# The in-kernel steps of the GPU suite alone (issue 21), for one short device call (~2 min):
# placement in CUPTI's clock domain and graph-node buffers (gpu_test_inkernel_calibration), the
# existing in-kernel tests, the clock probe's gap floors (bench_ik_probe_gaps: measured with raw
# timestamps, then the recorder's fit with the table's floors), the device cost
# (bench_inkernel_cost) and, where cuobjdump is
# installed, the SASS of the recording loop (begin/end pairs) as evidence for the cost.
# Expects binaries staged by scripts/stage-gpu.sh in .carry/build; writes 3 files to $OUT.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results/gpu}
mkdir -p "$OUT"
B=.carry/build
export WARPLENS_BIN=$PWD/$B/bin/warplens
export PATH=$PWD/$B/bin:$PATH
fails=0
run_step() { # name command...
    local name=$1; shift
    echo; echo "=== $name ==="
    local t0=$SECONDS
    if "$@"; then echo "[inkernel] $name: ok ($((SECONDS - t0)) s)"; else echo "[inkernel] $name: FAILED ($((SECONDS - t0)) s)"; fails=$((fails+1)); fi
}
{
    date -u +"%Y-%m-%dT%H:%M:%SZ"
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1
    git rev-parse --short HEAD 2>/dev/null
    run_step inkernel-calibration "$B/bin/gpu_test_inkernel_calibration"
    run_step inkernel-session "$B/bin/gpu_test_inkernel_session"
    run_step inkernel "$B/bin/gpu_test_inkernel"
    run_step probe-gaps-raw "$B/bin/bench_ik_probe_gaps" --raw
    run_step probe-gaps "$B/bin/bench_ik_probe_gaps"
    run_step inkernel-cost "$B/bin/bench_inkernel_cost"
    echo "[inkernel] $fails failed"
} 2>&1 | tee "$OUT/inkernel-h100.log"
CUOBJDUMP=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
if [ -n "$CUOBJDUMP" ]; then
    # cost_kernel<3> is M_ON: 8 unrolled begin/end pairs per iteration, the leader recording
    "$CUOBJDUMP" -sass "$B/bin/bench_inkernel_cost" |
        awk '/Function : .*cost_kernelILi3E/ {p = 1} p && /Function : / && !/cost_kernelILi3E/ {p = 0} p' \
            >"$OUT/inkernel-sass-begin-end.txt"
    echo "SASS of the recording loop: $OUT/inkernel-sass-begin-end.txt ($(wc -l <"$OUT/inkernel-sass-begin-end.txt") lines)"
else
    echo "cuobjdump not found: no SASS dump"
fi
grep -q "^\[inkernel\] 0 failed" "$OUT/inkernel-h100.log"
