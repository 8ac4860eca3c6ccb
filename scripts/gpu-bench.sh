#!/usr/bin/env bash
# GPU benchmarks, run by scripts/gpu-suite.sh on the H100: capture overhead (and any GPU
# benchmark binary bench_*_gpu built from bench/). Results go to $1.
set -u
cd "$(dirname "$0")/.."
OUT=${1:-bench/results/gpu}
B=.carry/build
python3 bench/overhead.py "$B" "$OUT" --reps "${WARPLENS_BENCH_REPS:-15}" ${WARPLENS_BENCH_SUITES:+--suites "$WARPLENS_BENCH_SUITES"}
rc=$?
python3 bench/metrics_cost.py "$B" "$OUT" || rc=1
for b in "$B"/bin/bench_*; do
    case "$(basename "$b")" in bench_launch|bench_decode|bench_export|bench_metrics_cost) continue ;; esac  # run above / CPU benches
    echo "=== $(basename "$b") ==="
    "$b" | tee "$OUT/$(basename "$b").txt" || rc=1
done
exit $rc
