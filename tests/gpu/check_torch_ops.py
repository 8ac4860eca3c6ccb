"""GPU suite: checks the session `warplens run --torch-ops` wrote for tests/gpu/torch_ops_workload.py
(10 steps): PyTorch's operator ranges were recorded for the unchanged script, and every kernel
carries the operator that launched it and its input shapes, forward (main thread) and backward
(autograd's device thread) alike; `warplens kernels --by op` gives the key_averages view; the run's
WARPLENS_TIER is every kernel's tier.

    python3 tests/gpu/check_torch_ops.py SESSION [STEPS]     (WARPLENS_BIN: the warplens binary)
"""
import json
import os
import sqlite3
import subprocess
import sys

BATCH, IN, HIDDEN, OUT = 64, 1024, 4096, 512
from pycheck import check, summary


def main(path: str, steps: int) -> int:
    db = sqlite3.connect(path)
    q = lambda sql, *a: (db.execute(sql, a).fetchone() or (None,))[0]
    check(q("SELECT value FROM meta WHERE key = 'torch_ops'") == "1", "session recorded with --torch-ops")
    ranges = q("SELECT count(*) FROM nvtx_range r JOIN op o ON o.id = r.op_id WHERE o.source = 'torch'")
    check(ranges > 20 * steps, "PyTorch operator ranges recorded (emit_nvtx turned on without a script change)", ranges)
    kernels = q("SELECT count(*) FROM kernel")
    check(kernels > 10 * steps, "kernels recorded", kernels)
    # every kernel is tied to an operator (the loop runs entirely inside PyTorch operators)
    no_op = q("SELECT count(*) FROM kernel k LEFT JOIN op o ON o.id = k.op_id WHERE o.source IS NOT 'torch'")
    check(no_op == 0, "every kernel carries a PyTorch operator", no_op)
    for r in db.execute("SELECT o.source, o.name, count(*) FROM kernel k LEFT JOIN op o ON o.id = k.op_id"
                        " GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 12"):
        print("  ", r)
    # forward GEMMs: aten::addmm with the Linear layers' shapes
    fwd = [(name, shape, n) for name, shape, n in db.execute(
        "SELECT o.name, o.shape, count(*) FROM kernels k JOIN op o ON o.id = k.op_id"
        " WHERE k.tid = k.pid AND (k.name LIKE '%gemm%' OR k.name LIKE '%nvjet%' OR k.name LIKE '%xmma%'"
        " OR k.name LIKE '%cutlass%') GROUP BY 1, 2")]
    print("   forward GEMM operators:", fwd)
    l1 = sum(n for name, shape, n in fwd if name == "aten::addmm" and f"[{BATCH}, {IN}]" in shape)
    l2 = sum(n for name, shape, n in fwd if name == "aten::addmm" and f"[{BATCH}, {HIDDEN}]" in shape)
    check(l1 >= steps, f"layer 1 GEMM kernels carry aten::addmm with input [{BATCH}, {IN}]", l1)
    check(l2 >= steps, f"layer 2 GEMM kernels carry aten::addmm with input [{BATCH}, {HIDDEN}]", l2)
    # backward: autograd's device thread launches, under its own operator ranges
    bwd = q("SELECT count(*) FROM kernel k WHERE k.tid IS NOT NULL AND k.tid != k.pid")
    check(bwd >= 4 * steps, "backward kernels launched on autograd's thread", bwd)
    bwd_op = q("SELECT count(*) FROM kernel k JOIN op o ON o.id = k.op_id WHERE k.tid != k.pid AND o.source = 'torch'")
    check(bwd_op == bwd, "every backward kernel carries its operator", f"{bwd_op} of {bwd}")
    bwd_names = [r[0] for r in db.execute("SELECT DISTINCT o.name FROM kernel k JOIN op o ON o.id = k.op_id"
                                          " WHERE k.tid != k.pid")]
    print("   backward operators:", bwd_names)
    check(any(n in ("aten::mm", "aten::addmm") for n in bwd_names), "backward GEMMs under aten::mm", bwd_names)
    # record_shapes=True: operators list their inputs' shapes; a range without inputs (an autograd
    # node's own range) has none, and kernels launched directly in one keep that
    bare = [r for r in db.execute("SELECT o.name, count(*) FROM kernel k JOIN op o ON o.id = k.op_id"
                                  " WHERE o.shape = '' GROUP BY 1")]
    n_bare = sum(n for _, n in bare)
    check(n_bare * 20 <= kernels, "at least 95 % of kernels' operators have input shapes", bare)
    # the key_averages view from the CLI
    bin_ = os.environ.get("WARPLENS_BIN", "warplens")
    out = subprocess.run([bin_, "kernels", path, "--by", "op", "--json"], capture_output=True, text=True)
    check(out.returncode == 0, "warplens kernels --by op", out.stderr)
    if out.returncode == 0:
        ops = json.loads(out.stdout)
        addmm = [o for o in ops if o["operation"] == "aten::addmm" and o["source"] == "torch"]
        calls = sum(o["calls"] for o in addmm)
        check(calls >= 2 * steps, "--by op: aten::addmm called twice a step", calls)
        check(all(o["input_shapes"] for o in addmm), "--by op: aten::addmm rows have input shapes", addmm)
        check(sum(o["kernels"] for o in ops) == kernels, "--by op: kernels add up to the session's",
              sum(o["kernels"] for o in ops))
        check(any(o["cpu_ns"] > 0 and o["gpu_ns"] > 0 for o in addmm), "--by op: CPU and GPU time of aten::addmm")
    # the run's WARPLENS_TIER=PRODUCTION: the process default of every kernel
    tiers = [r for r in db.execute("SELECT coalesce(tier, '-'), count(*) FROM kernel GROUP BY 1")]
    check(tiers == [("PRODUCTION", kernels)], "every kernel has the process tier PRODUCTION (WARPLENS_TIER)", tiers)
    # per launch, as the exports read it
    out = subprocess.run([bin_, "kernels", path, "--calls", "--json"], capture_output=True, text=True)
    if out.returncode == 0:
        calls = json.loads(out.stdout)
        gemm = [c for c in calls if c["backend"] in ("cuBLAS", "cuBLASLt", "CUTLASS")]
        check(gemm and all(c["operation"] and c["shape"] for c in gemm), "GEMM launches carry operation and shape",
              len(gemm))
    return summary("torch-ops")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10))
