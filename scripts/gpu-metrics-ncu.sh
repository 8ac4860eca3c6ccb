#!/usr/bin/env bash
# Compares `warplens run --metrics` with Nsight Compute on the copy and FMA kernels of
# tests/gpu/gpu_test_metrics (GPU machine only). Prints PASS/FAIL per kernel and metric (2%
# tolerance) or "SKIP" when ncu is not installed. Usage: scripts/gpu-metrics-ncu.sh [build-dir]
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
if ! command -v ncu >/dev/null 2>&1; then
    echo "SKIP gpu-metrics-ncu: ncu not found"
    exit 0
fi
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
T=$(mktemp -d)
export WL_METRICS_SMALL=10
"$B/bin/warplens" run -q -o "$T/w.wlsession" --metrics "$M" -- "$B/bin/gpu_test_metrics" --workload || exit 1
ncu --csv --metrics "$M" -k regex:'wl_metrics_(copy|fma)' -c 2 "$B/bin/gpu_test_metrics" --workload >"$T/ncu.csv" 2>/dev/null || {
    echo "FAIL gpu-metrics-ncu: ncu failed (see $T)"; exit 1; }
python3 - "$T/w.wlsession" "$T/ncu.csv" <<'PY'
import csv, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = [r for r in csv.reader(open(sys.argv[2])) if len(r) > 10]
hdr, data = rows[0], rows[1:]
ki, mi, vi = hdr.index("Kernel Name"), hdr.index("Metric Name"), hdr.index("Metric Value")
fails = 0
for r in data:
    kern = "wl_metrics_copy" if "copy" in r[ki] else "wl_metrics_fma"
    ncu = float(r[vi].replace(",", ""))
    if r[mi] == "gpu__time_duration.sum":
        continue  # time differs by design (replay, clocks): reported by the GPU test instead
    ours = db.execute("SELECT km.value FROM kernel_metric km JOIN kernels k ON k.id = km.kernel_id JOIN metric m"
                      " ON m.id = km.metric_id WHERE m.name = ? AND k.name LIKE ? ORDER BY k.start_ns LIMIT 1",
                      (r[mi], "%" + kern + "%")).fetchone()
    ours = ours[0] if ours else None
    unit_scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}
    ncu *= unit_scale.get(r[vi - 1], 1) if vi > 0 else 1
    ok = ours is not None and abs(ours - ncu) <= 0.02 * max(abs(ncu), 1)
    fails += not ok
    print(("PASS" if ok else "FAIL"), kern, r[mi], "warplens", ours, "ncu", ncu)
sys.exit(1 if fails else 0)
PY
