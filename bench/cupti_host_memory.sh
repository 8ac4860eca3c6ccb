#!/usr/bin/env bash
# Where a CUPTI consumer's host memory goes as kernels accumulate (bench/results/threads-h100.md):
# the peak RSS of one launching thread after N kernels, unprofiled, under the minimal consumer
# (bench/floor_injection.c) with CUPTI's periodic flush, smaller device buffers or latency
# timestamps, and under warplens' recorder injected directly (no import). Run on the GPU machine
# from the repository root after scripts/stage-gpu.sh: bash bench/cupti_host_memory.sh [N...]
set -u
B=${B:-.carry/build}
FL=$PWD/$B/lib/libwl_floor_injection.so
REC=$PWD/$B/lib/libwarplens_recorder.so
dir=$(mktemp -d)
m() { echo "== $1"; shift; env "$@" 2>&1 | grep -E "VMHWM|SECONDS|floor:" | tr '\n' ' '; echo; }
for n in "${@:-2000000 6000000}"; do
    m "plain $n" "$B/bin/wl_mt_launch" 1 1 "$n"
    m "floor $n" CUDA_INJECTION64_PATH="$FL" "$B/bin/wl_mt_launch" 1 1 "$n"
    m "floor flush100 $n" CUDA_INJECTION64_PATH="$FL" WL_FLOOR_FLUSH_MS=100 "$B/bin/wl_mt_launch" 1 1 "$n"
    m "floor latency $n" CUDA_INJECTION64_PATH="$FL" WL_FLOOR_LATENCY=1 "$B/bin/wl_mt_launch" 1 1 "$n"
    m "floor devbuf512k $n" CUDA_INJECTION64_PATH="$FL" WL_FLOOR_DEVBUF_KB=512 "$B/bin/wl_mt_launch" 1 1 "$n"
    m "recorder $n" CUDA_INJECTION64_PATH="$REC" WARPLENS_CAPTURE_DIR="$dir" WARPLENS_NVML_INTERVAL_MS=0 "$B/bin/wl_mt_launch" 1 1 "$n"
    m "recorder kernels-only $n" CUDA_INJECTION64_PATH="$REC" WARPLENS_CAPTURE_DIR="$dir" WARPLENS_RECORD=kernels "$B/bin/wl_mt_launch" 1 1 "$n"
    rm -f "$dir"/*.wlcap
done
rm -rf "$dir"
