#!/usr/bin/env bash
# Hardware metrics on real programs (GPU machine only): the PyTorch attribution, graph, interruption,
# filter and progress checks (tests/gpu/check_metrics_torch.py), then warplens side by side with
# Nsight Compute on the C tests and PyTorch work (bench/ncu_compare.py: per kernel values within the
# issue's tolerances, ncu's --cache-control all and none, and the wall time of each profiled run).
# ncu is looked for on PATH, next to nvcc, then in Nsight Compute's install folder; without it that
# part says SKIP. usage: scripts/gpu-metrics-ncu.sh [build-dir] [out-dir]
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
O=${2:-bench/results/gpu}
mkdir -p "$O"
NCU=$(command -v ncu || true)
[ -z "$NCU" ] && command -v nvcc >/dev/null && [ -x "$(dirname "$(command -v nvcc)")/ncu" ] && NCU=$(dirname "$(command -v nvcc)")/ncu
[ -z "$NCU" ] && NCU=$(ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
rc=0
python3 tests/gpu/check_metrics_torch.py "$B/bin/warplens" "$O/metrics-torch" || rc=1
if [ -n "$NCU" ]; then
    "$NCU" --version | tail -1
    python3 bench/ncu_compare.py --warplens "$B/bin/warplens" --build "$B" --out "$O/ncu" --ncu "$NCU" || rc=1
else
    echo "SKIP ncu_compare: ncu not found"
fi
exit $rc
