#!/usr/bin/env bash
# CI wrapper of tests/gpu/check_sass_disabled.sh: proves include/warplens/device.cuh compiles out
# completely with WARPLENS_INKERNEL=0 (needs nvcc, no GPU). Skips, saying why, without nvcc.
set -u
SRC=${WARPLENS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ ! -x "$NVCC" ]; then
    echo "device_header_sass: SKIP: nvcc not found (set NVCC or put CUDA's bin on PATH)"
    echo "device_header_sass: 0 passed, 0 failed (skipped)"
    exit 0
fi
NVCC=$NVCC exec bash "$SRC/tests/gpu/check_sass_disabled.sh"
