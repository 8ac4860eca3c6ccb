#!/usr/bin/env bash
# The GPU suite, run on the H100 in one call: environment, capture tests, the demo, a PyTorch
# run, and the benchmarks. Expects binaries staged by scripts/stage-gpu.sh in .carry/build.
# Writes logs and small sessions to $OUT (or bench/results/gpu when run by hand).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results/gpu}
mkdir -p "$OUT"
B=.carry/build
export WARPLENS_BIN=$PWD/$B/bin/warplens
export PATH=$PWD/$B/bin:$PATH
# NVLink multicast stays off on shared multi-GPU hosts (a program using it can take the host's GPUs
# out of service): NCCL, PyTorch's symmetric memory and NVSHMEM each have their own switch
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
fails=0
step() { echo; echo "=== $* ==="; }
run_step() { # name command...
    local name=$1; shift
    step "$name"
    local t0=$SECONDS
    if "$@"; then echo "[suite] $name: ok ($((SECONDS - t0)) s)"; else echo "[suite] $name: FAILED ($((SECONDS - t0)) s)"; fails=$((fails+1)); fi
}

step "device"
date -u +"%Y-%m-%dT%H:%M:%SZ"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader 2>&1
nvcc --version | tail -1
ls -d /usr/local/cuda*/ 2>&1 | head -3
python3 -c "import torch; print('torch', torch.__version__)" 2>&1

run_step capture "$B/bin/gpu_test_capture"
cp /tmp/wl_gpu_capture.wlsession /tmp/wl_gpu_killed.wlsession "$OUT/" 2>/dev/null
run_step demo warplens run --keep-capture -o "$OUT/demo.wlsession" -- "$B/bin/warplens_demo"
cp "$OUT"/demo.wlsession.capture.*/*.wlcap "$OUT/demo.wlcap" 2>/dev/null && rm -rf "$OUT"/demo.wlsession.capture.*
run_step torch warplens run -o "$OUT/torch.wlsession" -- python3 tests/gpu/torch_workload.py 20
if [ -f tests/gpu/check_torch_session.py ]; then
    run_step torch-check python3 tests/gpu/check_torch_session.py "$OUT/torch.wlsession"
fi
# PyTorch's operators and input shapes on every kernel of an unchanged training script (and the
# process tier from WARPLENS_TIER on each)
run_step torch-ops env WARPLENS_TIER=PRODUCTION warplens run --torch-ops -o "$OUT/torch-ops.wlsession" -- \
    python3 tests/gpu/torch_ops_workload.py 10
run_step torch-ops-check python3 tests/gpu/check_torch_ops.py "$OUT/torch-ops.wlsession" 10
# every distinct launch of a PyTorch run: warplens' occupancy vs the driver's
run_step torch-occupancy warplens run -q --check-occupancy -o "$OUT/torch-occ.wlsession" -- \
    python3 tests/gpu/torch_workload.py 5
run_step occupancy-check warplens occupancy-check --all "$OUT/torch-occ.wlsession"
# `warplens advise`'s planted problems: each recorded (sessions advise-MODE.wlsession, for tests/data)
# with its fixed variant, and the measured gain of each fix in advise-gains.json (about 2-3 minutes;
# WARPLENS_SUITE_ADVISE=0 skips it)
if [ "${WARPLENS_SUITE_ADVISE:-1}" = 1 ]; then
    run_step advise bash scripts/gpu-advise.sh "$B" "$OUT"
    # the estimates judged on these fresh recordings, as CI judges the kept H100 ones (tail modes
    # also against the programs run without a profiler)
    run_step advise-check python3 scripts/advise_check.py --warplens "$B/bin/warplens" \
        --prog "$B/bin/gpu_advise_planted" --dir "$OUT"
fi
# lossless under many launching threads: the thread x stream matrix (C with raw pthreads, PyTorch),
# CUDA graphs of 10,000 nodes, a 10 M-kernel run; each against a minimal CUPTI consumer's count,
# with the recorder's peak memory per case (WARPLENS_SUITE_THREADS=default skips the 10 M run)
# torch.distributed under torchrun: per-rank sessions (kernel counts per rank against the minimal
# CUPTI consumer), ranks, a two-host merge (NCCL with >= 2 GPUs)
run_step multirank bash tests/gpu/test_multirank.sh "$OUT/multirank" "$B"
run_step threads python3 tests/gpu/gpu_threads.py --build "$B" --out "$OUT" --cases "${WARPLENS_SUITE_THREADS:-long}"
rm -f "$OUT"/threads-*.wlsession
# the no-range-limit check: 100,000 kernels with a one-pass metric set (about 1 ms each without
# replay on the H100, bench/results/metrics-cost.md); set WL_METRICS_SMALL lower for a quick run
export WL_METRICS_SMALL=${WL_METRICS_SMALL:-100000}
for t in "$B"/bin/gpu_test_*; do
    case "$t" in *gpu_test_capture) continue ;; esac
    run_step "$(basename "$t")" "$t"
done
# hardware metrics on PyTorch work and side by side with Nsight Compute (several minutes:
# WARPLENS_SUITE_NCU=0 leaves it to a call of its own, scripts/gpu-metrics-ncu.sh)
if [ "${WARPLENS_SUITE_NCU:-1}" = 1 ]; then
    run_step metrics-torch-ncu bash scripts/gpu-metrics-ncu.sh "$B" "$OUT"
fi
if [ "${WARPLENS_SUITE_BENCH:-1}" = 1 ] && [ -x scripts/gpu-bench.sh ]; then
    run_step bench bash scripts/gpu-bench.sh "$OUT"
fi
echo
echo "[suite] failures: $fails"
exit $((fails > 0))
