#!/usr/bin/env bash
# Builds everything the GPU suite needs on this (GPU-less) machine and stages the binaries in
# .carry/ so one device call can carry them: the GPU machine has nvcc but no SQLite headers.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DWARPLENS_BUILD_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
# Only what runs on the GPU machine (CPU tests are CI's): the CLI, libraries, demo, GPU tests, benches.
targets="warplens_cli warplens_recorder warplens_api warplens_demo wl_floor_injection wl_floor_callback_injection bench_callback_cost wl_mt_launch gpu_advise_planted"
for f in tests/gpu/gpu_test_*.c tests/gpu/gpu_test_*.cu bench/bench_*.c bench/bench_*.cu; do
    [ -e "$f" ] && targets="$targets $(basename "${f%.*}")"
done
cmake --build build-gpu -j"$(nproc)" --target $targets -- -k || echo "stage-gpu: WARNING: some targets failed to build (their previous binaries, if any, are staged)"
rm -rf .carry && mkdir -p .carry/build
cp -r build-gpu/bin build-gpu/lib .carry/build/
rm -f .carry/build/lib/*.a
du -sh .carry
