"""Cost of hardware metrics per kernel (issue: hardware metrics, item 2). Runs bench_metrics_cost
(N one-warp kernels) unprofiled, traced without metrics, and under `warplens run --metrics` with a
one-pass set (collected without replay), the same set forced to kernel replay, and the multi-pass
`default` preset; with and without a 1 GiB allocation that kernel replay has to save and restore.
For each metrics run it checks the session: every kernel has metrics and timestamps.

usage: python3 bench/metrics_cost.py BUILD_DIR OUT_DIR [--scale 1.0]"""
import argparse
import datetime
import os
import re
import sqlite3
import subprocess
import sys
import time

CASES = [  # label, metrics, forced replay, kernels, extra MiB
    ("unprofiled", None, None, 5000, 0),
    ("traced, no metrics", "", None, 5000, 0),
    ("occupancy (1 pass), no replay", "occupancy", None, 2000, 0),
    ("occupancy (1 pass), no replay, +1 GiB", "occupancy", None, 2000, 1024),
    ("occupancy (1 pass), kernel replay", "occupancy", "kernel", 100, 0),
    ("occupancy (1 pass), kernel replay, +1 GiB", "occupancy", "kernel", 30, 1024),
    ("default (multi-pass), kernel replay", "default", None, 100, 0),
]


def session_facts(path):
    con = sqlite3.connect(path)
    try:
        q = lambda sql: con.execute(sql).fetchone()[0]
        return {
            "kernels": q("SELECT count(*) FROM kernel"),
            "with_metrics": q("SELECT count(DISTINCT kernel_id) FROM kernel_metric")
            if q("SELECT count(*) FROM sqlite_master WHERE name = 'kernel_metric'") else 0,
            "no_timestamp": q("SELECT count(*) FROM kernel WHERE has_timestamps = 0"),
            "lost": q("SELECT coalesce(sum(count), 0) FROM lost"),
        }
    finally:
        con.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every case's kernel count")
    ap.add_argument("--case-timeout", type=float, default=90, help="seconds before a case is given up")
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    warplens = os.path.join(b, "bin", "warplens")
    prog = os.path.join(b, "bin", "bench_metrics_cost")
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for label, metrics, replay, n, mib in CASES:
        n = max(10, int(n * a.scale))
        env = dict(os.environ)
        env.pop("WARPLENS_METRICS_REPLAY", None)
        if replay:
            env["WARPLENS_METRICS_REPLAY"] = replay
        session = os.path.join(a.out, "metrics_cost.wlsession")
        cmd = [prog, str(n), str(mib)]
        if metrics is not None:
            cmd = [warplens, "run", "-q", "-o", session] + (["--metrics", metrics] if metrics else []) + ["--"] + cmd
        if os.path.exists(session):
            os.unlink(session)
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=a.case_timeout)
        except subprocess.TimeoutExpired:
            p = subprocess.CompletedProcess(cmd, -1, "", f"timed out after {a.case_timeout} s")
        wall = time.monotonic() - t0
        m = re.search(r"us_per_kernel=([0-9.]+)", p.stdout)
        passes = re.search(r"(\d+) metrics in (\d+) (?:replay )?pass", p.stderr)
        facts = session_facts(session) if metrics is not None and p.returncode == 0 else {}
        row = (label, n, mib, float(m.group(1)) if m else float("nan"), wall,
               passes.group(2) if passes else "-", facts)
        rows.append(row)
        print(f"{label:45s} n={n:6d} us/kernel={row[3]:10.1f} wall={wall:7.1f}s passes={row[5]} {facts}"
              + ("" if p.returncode == 0 else f" FAILED rc={p.returncode}: {p.stderr[-400:]}"), flush=True)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    dev = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    with open(os.path.join(a.out, "metrics-cost.md"), "w") as f:
        f.write(f"# Hardware metrics: host time per kernel ({now}, {dev})\n\n")
        f.write(f"`python3 bench/metrics_cost.py .carry/build OUT --scale {a.scale}` — one-warp FMA kernels"
                " back to back, time of the launch loop + final sync divided by kernels.\n\n")
        f.write("| case | kernels | passes | µs per kernel | wall s | kernels with metrics | no timestamp | lost |\n")
        f.write("|---|---:|---:|---:|---:|---:|---:|---:|\n")
        for label, n, mib, us, wall, passes, facts in rows:
            f.write(f"| {label} | {n} | {passes} | {us:.1f} | {wall:.1f} | {facts.get('with_metrics', '-')} |"
                    f" {facts.get('no_timestamp', '-')} | {facts.get('lost', '-')} |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
