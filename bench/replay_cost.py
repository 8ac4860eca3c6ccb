"""Where the time of a multi-pass (kernel replay) metrics run goes, warplens against Nsight Compute
(issue: hardware metrics on real programs, item 6, cost).

1. Device memory sweep: bench_metrics_cost (N one-warp FMA kernels) with 0, 1, 4, 16 GiB of extra
   device memory allocated and written, under `warplens run --metrics SET` and under `ncu` with the
   same metric names (ncu's defaults: --cache-control all, --clock-control base). Per kernel: the
   program's own launch-loop time, ncu's replay passes, and warplens' time split by CUPTI call
   (recorder_stat metrics_*: configure = counter-data image + SetConfig, start, stop, decode,
   evaluate, tie, and the profiled launch itself, where CUPTI's kernel replay runs the passes).
2. Variants of how warplens drives CUPTI on the same program (--variants, recorder settings such as
   WARPLENS_METRICS_CONFIG_ONCE=1, WARPLENS_METRICS_FLUSH_MS=N, WARPLENS_METRICS_IMAGE_REINIT=1).
   Every tiny run is checked: every kernel has its range and its FFMA count is 32 x its loop count.
3. Optionally (--torch) the PyTorch transformer step of the ncu table, with the same split, and
   (--ncu-torch) the same step under ncu.

usage: python3 bench/replay_cost.py BUILD_DIR OUT_DIR --ncu PATH [--set default] [--sweep 0,1024,4096,16384]
           [--no-ncu-sweep] [--variants 'ENV=V,ENV=V;ENV=V'] [--torch [--ncu-torch]]"""
import argparse
import os
import re
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH = os.path.join(os.path.dirname(HERE), "tests", "gpu", "torch_metrics_workload.py")
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
PHASES = ["configure", "start", "stop", "decode", "evaluate", "tie", "kernel_call", "other_call"]


def kernels_for(mib):
    return 12 if mib <= 1024 else 6 if mib <= 4096 else 4


def run(cmd, env=None, timeout=240):
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        out, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""), 124
    return out, rc, time.monotonic() - t0


def session_split(path):
    """recorder_stat metrics_* -> {phase: (ns, count, max_ns)}, metric names, ffma per kernel in launch order."""
    db = sqlite3.connect(path)
    try:
        st = dict(db.execute("SELECT name, value FROM recorder_stat WHERE name LIKE 'metrics_%'").fetchall())
        split = {p: (st.get(f"metrics_{p}_ns", 0), st.get(f"metrics_{p}_count", 0), st.get(f"metrics_{p}_max_ns", 0))
                 for p in PHASES}
        names = [r[0] for r in db.execute("SELECT name FROM metric ORDER BY id")]
        ffma = [r[0] for r in db.execute(
            "SELECT km.value FROM kernel_metric km JOIN metric m ON m.id = km.metric_id WHERE m.name = ?"
            " ORDER BY km.correlation_id", (FFMA,))]
        kernels = db.execute("SELECT count(*) FROM kernel").fetchone()[0]
        passes = db.execute("SELECT max(num_passes) FROM metric_config").fetchone()[0]
        return split, names, ffma, kernels, passes
    finally:
        db.close()


def fmt_split(split, kernels):
    parts = []
    for p in PHASES:
        ns, n, mx = split[p]
        if n:
            parts.append(f"{p} {ns / 1e6 / max(kernels, 1):.2f} ms/kernel ({n} calls, {ns / 1e6 / n:.2f} ms each"
                         + (f", max {mx / 1e6:.1f}" if mx else "") + ")")
    return "; ".join(parts)


def warplens_case(a, label, argv, env_extra, expect_ffma=None, timeout=300):
    session = os.path.join(a.out, "replay_cost.wlsession")
    if os.path.exists(session):
        os.unlink(session)
    env = dict(os.environ)
    env.update(env_extra)
    out, rc, wall = run([a.warplens, "run", "-q", "-o", session, "--metrics", a.set, "--"] + argv, env, timeout)
    us = re.search(r"us_per_kernel=([0-9.]+)", out)
    if rc != 0 or not os.path.exists(session):
        print(f"WARPLENS {label}: FAILED rc={rc} wall={wall:.1f}s\n{out[-1500:]}", flush=True)
        return {}
    split, names, ffma, kernels, passes = session_split(session)
    ok = ""
    if expect_ffma is not None and FFMA in names:
        ok = " ffma-check " + ("ok" if ffma == expect_ffma else f"MISMATCH ({len(ffma)} values, want {len(expect_ffma)};"
                                                                    f" first {ffma[:8]} want {expect_ffma[:8]})")
    print(f"WARPLENS {label}: wall {wall:.1f} s, {us.group(1) if us else '-'} us/kernel (program), {kernels} kernels,"
          f" {passes} passes, {len(ffma)} with ffma;{ok}\n  split: {fmt_split(split, kernels)}", flush=True)
    return {"names": names, "us": float(us.group(1)) if us else None, "wall": wall,
            "ok": expect_ffma is None or FFMA not in names or ffma == expect_ffma}


def ncu_case(a, label, names, argv, extra=(), timeout=300):
    cmd = [a.ncu, "--metrics", ",".join(names)] + list(extra) + argv
    out, rc, wall = run(cmd, None, timeout)
    us = re.search(r"us_per_kernel=([0-9.]+)", out)
    passes = sorted({int(x) for x in re.findall(r"- (\d+) pass(?:es)?", out)})
    profiled = len(re.findall(r"==PROF== Profiling", out))
    print(f"NCU {label}: rc {rc}, wall {wall:.1f} s, {us.group(1) if us else '-'} us/kernel (program),"
          f" {profiled} kernels profiled, passes per kernel {passes}", flush=True)
    if rc != 0:
        print(out[-1500:], flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--ncu", required=True)
    ap.add_argument("--set", default="default")
    ap.add_argument("--sweep", default="0,1024,4096,16384", help="extra MiB per case (warplens and ncu)")
    ap.add_argument("--no-ncu-sweep", action="store_true", help="the sweep under warplens only")
    ap.add_argument("--variants", default="", help="'ENV=V,ENV=V;ENV=V' warplens variants of the 0 MiB case")
    ap.add_argument("--kernels", type=int, default=0, help="kernels of the tiny cases (default: 12 at 0-1 GiB, fewer above)")
    ap.add_argument("--torch", action="store_true", help="also the transformer step")
    ap.add_argument("--ncu-torch", action="store_true", help="and the whole transformer step under ncu")
    a = ap.parse_args()
    a.warplens = os.path.join(os.path.abspath(a.build), "bin", "warplens")
    prog = os.path.join(os.path.abspath(a.build), "bin", "bench_metrics_cost")
    os.makedirs(a.out, exist_ok=True)
    names = None
    for mib in [int(x) for x in a.sweep.split(",") if x]:
        n = a.kernels or kernels_for(mib)
        argv = [prog, str(n), str(mib)]
        expect = [32.0] + [32.0 * ((i % 7) + 1) for i in range(n)]
        r = warplens_case(a, f"tiny x{n} +{mib} MiB", argv, {}, expect)
        names = r.get("names") or names
        if names and not a.no_ncu_sweep:
            ncu_case(a, f"tiny x{n} +{mib} MiB", names, argv)
    for spec in [v for v in a.variants.split(";") if v]:
        env = dict(kv.split("=", 1) for kv in spec.split(",") if kv)
        n = a.kernels or kernels_for(0)
        argv = [prog, str(n), "0"]
        expect = [32.0] + [32.0 * ((i % 7) + 1) for i in range(n)]
        warplens_case(a, f"tiny x{n} +0 MiB, {spec}", argv, env, expect)
    if a.torch:
        argv = [sys.executable, TORCH, "transformer"]
        tn = warplens_case(a, "torch transformer", argv, {}, None, timeout=400)
        if a.ncu_torch and tn.get("names"):
            ncu_case(a, "torch transformer (whole run)", tn["names"], argv, timeout=200)
    return 0


if __name__ == "__main__":
    sys.exit(main())
