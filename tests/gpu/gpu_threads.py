#!/usr/bin/env python3
"""Lossless capture under many launching threads (GPU suite): the thread x stream matrix.

For each case the same workload runs three times: unprofiled (its peak RSS and launch rate), under
the minimal CUPTI consumer (bench/floor_injection.c, the reference kernel count: it allocates a
buffer whenever CUPTI asks) and under `warplens run` with default settings. A case passes when the
session holds exactly the kernels the consumer saw (and, for the C workload, exactly the kernels
the program launched), `lost` holds no records, and no API call was lost. The recorder's memory is
the program's peak RSS under warplens minus without it (the recorder's own STAT
process_peak_rss_bytes, taken at its very end, against the workload's VmHWM unprofiled).

usage: gpu_threads.py [--build .carry/build] [--cases default|quick|long|NAME,...] [--torch]
                      [--warplens PATH] [--label TEXT] [--out DIR] [--env K=V ...]
Prints one table row per case and '[threads] N passed, M failed'; exits 1 on any failure.
"""
import argparse
import os
import re
import sqlite3
import subprocess
import sys
import time

# (name, workload, threads, streams, n, graph nodes)
CASES = [
    ("c-1x1", "c", 1, 1, 160000, 0),
    ("c-2x1", "c", 2, 1, 80000, 0),
    ("c-8x2", "c", 8, 2, 20000, 0),
    ("c-16x16", "c", 16, 16, 5000, 0),
    ("c-64x8", "c", 64, 8, 2000, 0),
    ("c-256x4", "c", 256, 4, 500, 0),
    ("c-256x16", "c", 256, 16, 250, 0),
    ("c-graph-4x10k", "c", 4, 1, 25, 10000),
    ("torch-16x4", "torch", 16, 4, 400, 0),
    ("torch-64x8", "torch", 64, 8, 200, 0),
    ("torch-128x2", "torch", 128, 2, 100, 0),
]
LONG = [("c-10M-8x2", "c", 8, 2, 1250000, 0)]
QUICK = ["c-1x1", "c-64x8", "c-256x4", "torch-16x4"]


def parse_kv(text, key):
    m = re.search(r"^%s (\S+)$" % key, text, re.M)
    return float(m.group(1)) if m else None


def workload_cmd(b, case):
    _, kind, t, s, n, nodes = case
    if kind == "c":
        cmd = [os.path.join(b, "bin", "wl_mt_launch"), str(t), str(s), str(n)]
        return cmd + (["--graph", str(nodes)] if nodes else [])
    here = os.path.dirname(os.path.abspath(__file__))
    return [sys.executable, os.path.join(here, "torch_mt_launch.py"), str(t), str(s), str(n)]


def run(cmd, env, timeout=900):
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    return p, time.monotonic() - t0


def session_facts(path):
    db = sqlite3.connect(path)
    q = lambda sql: db.execute(sql).fetchall()
    kernels = q("SELECT count(*) FROM kernel")[0][0]
    lost = q("SELECT source, sum(count) FROM lost GROUP BY source")
    stats = dict(q("SELECT name, sum(value) FROM recorder_stat GROUP BY name")) if q(
        "SELECT 1 FROM sqlite_master WHERE name = 'recorder_stat'") else {}
    api = q("SELECT count(*) FROM api_call")[0][0]
    db.close()
    return kernels, dict(lost), stats, api


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=".carry/build")
    ap.add_argument("--cases", default="default")
    ap.add_argument("--torch", action="store_true", help="include the PyTorch cases (default: when torch imports)")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--warplens", default="", help="the warplens CLI to test (default BUILD/bin/warplens)")
    ap.add_argument("--label", default="warplens")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp"))
    ap.add_argument("--env", action="append", default=[], help="K=V for the warplens runs")
    ap.add_argument("--floor-env", action="append", default=[], help="K=V for the floor runs")
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    wl = a.warplens or os.path.join(b, "bin", "warplens")
    floor = os.path.join(b, "lib", "libwl_floor_injection.so")
    table = {c[0]: c for c in CASES + LONG}
    if a.cases == "default":
        cases = CASES
    elif a.cases == "quick":
        cases = [table[n] for n in QUICK]
    elif a.cases == "long":
        cases = CASES + LONG
    else:
        cases = [table[n] for n in a.cases.split(",")]
    have_torch = not a.no_torch and subprocess.run([sys.executable, "-c", "import torch"],
                                                   capture_output=True).returncode == 0
    if not have_torch:
        cases = [c for c in cases if c[1] != "torch"]

    base = {k: v for k, v in os.environ.items() if not k.startswith(("WARPLENS_", "CUDA_INJECTION64", "NVTX_INJ"))}
    base["PYTHONUNBUFFERED"] = "1"
    floor_env = dict(base, CUDA_INJECTION64_PATH=floor, WL_FLOOR_STATS="1")
    for kv in a.floor_env:
        k, v = kv.split("=", 1)
        floor_env[k] = v
    wl_env = dict(base)
    for kv in a.env:
        k, v = kv.split("=", 1)
        wl_env[k] = v

    print(f"[threads] {a.label}: {wl}")
    hdr = ("case", "launched", "floor", "session", "lost", "api_lost", "rate_plain", "rate_floor", "rate_wl",
           "rss_plain_mib", "rss_floor_mib", "rss_wl_mib", "recorder_mib", "rec_bound_mib", "buf_mapped", "on_demand",
           "sec_plain", "sec_floor", "sec_wl", "floor_stats")
    print("\t".join(hdr))
    passed = failed = 0
    for case in cases:
        name = case[0]
        cmd = workload_cmd(b, case)
        try:
            plain, psec = run(cmd, base)
            fl, fsec = run(cmd, floor_env)
            sess = os.path.join(a.out, f"threads-{name}.wlsession")
            if os.path.exists(sess):
                os.unlink(sess)
            wr, wsec = run([wl, "run", "-q", "-o", sess, "--"] + cmd, wl_env)
        except subprocess.TimeoutExpired as e:
            print(f"{name}\tTIMEOUT {e}")
            failed += 1
            continue
        problems = []
        for label, p in (("plain", plain), ("floor", fl), ("warplens", wr)):
            if p.returncode != 0:
                problems.append(f"{label} exited {p.returncode}: {p.stderr.strip()[-300:]}")
        launched = parse_kv(plain.stdout, "KERNELS")
        m = re.search(r"floor: (\d+) kernel records", fl.stderr)
        floor_n = int(m.group(1)) if m else None
        fs = re.search(r"floor-stats: (.*)", fl.stderr)
        rate = lambda p: parse_kv(p.stdout, "RATE") or (
            (parse_kv(p.stdout, "OPS") or 0) / (parse_kv(p.stdout, "SECONDS") or 1))
        rss_plain = (parse_kv(plain.stdout, "VMHWM_KB") or 0) / 1024
        kernels, lost, stats, api = (None, {}, {}, 0)
        if os.path.exists(sess):
            kernels, lost, stats, api = session_facts(sess)
        else:
            problems.append("no session")
        lost_records = sum(v for k, v in lost.items() if k not in ("buffer_refused", "pc_buffer_overflows"))
        # older recorders wrote no STAT: the workload's own VmHWM (before the recorder's exit work)
        rss_wl = stats.get("process_peak_rss_bytes", 0) / 2**20 or (parse_kv(wr.stdout, "VMHWM_KB") or 0) / 1024
        if floor_n is None:
            problems.append("floor count missing")
        elif kernels != floor_n:
            problems.append(f"session has {kernels} kernels, the floor saw {floor_n}")
        if case[1] == "c" and launched is not None and kernels != launched:
            problems.append(f"session has {kernels} kernels, the program launched {int(launched)}")
        if lost_records:
            problems.append(f"lost: {lost}")
        row = (name, int(launched) if launched else "-", floor_n, kernels, lost_records, lost.get("api_calls", 0),
               f"{rate(plain):.0f}", f"{rate(fl):.0f}", f"{rate(wr):.0f}", f"{rss_plain:.0f}",
               f"{(parse_kv(fl.stdout, 'VMHWM_KB') or 0) / 1024:.0f}", f"{rss_wl:.0f}",
               f"{rss_wl - rss_plain:.0f}", f"{stats.get('recorder_peak_bytes', 0) / 2**20:.0f}",
               stats.get("peak_buffers_mapped", "-"), stats.get("buffers_mapped_on_demand", "-"),
               f"{psec:.1f}", f"{fsec:.1f}", f"{wsec:.1f}", fs.group(1) if fs else "-")
        print("\t".join(str(x) for x in row), flush=True)
        if problems:
            failed += 1
            for pr in problems:
                print(f"FAIL {name}: {pr}")
        else:
            passed += 1
        if os.path.exists(sess) and os.path.getsize(sess) > (64 << 20):
            os.unlink(sess)  # the long case's session is not kept
    print(f"[threads] {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
