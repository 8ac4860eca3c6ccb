#!/usr/bin/env bash
# Builds everything the GPU suite needs on this (GPU-less) machine and stages the binaries in
# .carry/ so one device call can carry them: the GPU machine has nvcc but no SQLite headers.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DWARPLENS_BUILD_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
cmake --build build-gpu -j"$(nproc)"
rm -rf .carry && mkdir -p .carry/build
cp -r build-gpu/bin build-gpu/lib .carry/build/
rm -f .carry/build/lib/*.a
du -sh .carry
