#!/usr/bin/env bash
# Builds warplens and runs the CPU test suite twice: a normal build (with the CUDA demo, GPU
# tests and benchmarks compiled, not run) and an AddressSanitizer + UndefinedBehaviorSanitizer
# build. Installs or checks its own dependencies first (scripts/deps.sh). No GPU is needed; the
# GPU suite is scripts/gpu-suite.sh, run on a machine with one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
jobs=$(nproc)

echo "== build (Release, CUDA parts compiled) =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DWARPLENS_BUILD_CUDA=ON >/dev/null
cmake --build build -j"$jobs"
echo "== tests =="
(cd build && ctest --output-on-failure -j"$jobs")

echo "== build (ASan + UBSan) =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DWARPLENS_SANITIZE=ON -DWARPLENS_BUILD_CUDA=OFF >/dev/null
cmake --build build-asan -j"$jobs"
echo "== tests under ASan + UBSan =="
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    FUZZ_SECONDS=${FUZZ_SECONDS:-20} ctest --output-on-failure -j"$jobs")
