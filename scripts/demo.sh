#!/usr/bin/env bash
# Builds warplens and profiles the bundled demo program with `warplens run`. On a machine without
# an NVIDIA GPU, warplens says so in one line and this script then shows what warplens makes of
# a session of the same demo recorded on an H100 (tests/data/demo-h100.wlsession).
set -euo pipefail
cd "$(dirname "$0")/.."
WARPLENS_DEPS_BROWSER=0 bash scripts/deps.sh >/dev/null
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DWARPLENS_BUILD_CUDA=ON >/dev/null
cmake --build build -j"$(nproc)" --target warplens_cli warplens_recorder warplens_api warplens_demo >/dev/null
W=build/bin/warplens

"$W" run -o demo.wlsession -- build/bin/warplens_demo
if [ -f demo.wlsession ]; then
    session=demo.wlsession
else
    session=tests/data/demo-h100.wlsession
    echo
    echo "== No session was recorded here; this is the same demo recorded on an H100 ($session) =="
    "$W" stats "$session"
fi
echo
echo "== warplens kernels $session =="
"$W" kernels "$session"
echo
echo "== Next: warplens kernel $session tiled_matmul | warplens export $session --format perfetto -o demo.pftrace"
echo "==       (open in ui.perfetto.dev) | warplens report $session -o demo.html"
