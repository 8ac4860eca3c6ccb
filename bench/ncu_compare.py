"""warplens side by side with Nsight Compute (issue: hardware metrics on real programs, items 5-6).

For each workload: `warplens run --metrics SET` once, and `ncu` twice with the same metric names
(the ones the warplens session collected) plus ncu's launch statistics, with `--cache-control all`
(ncu's default: caches flushed before each replay pass) and `--cache-control none`. Kernels are
matched in launch order by their base names. Per kernel and metric the values are compared:

  FLOP counters (fadd/fmul/ffma per precision), instructions   exact; where ncu's own two runs
                                                                  disagree, within 0.5 % of one
  DRAM bytes read / written                                      within 2 % of one of ncu's two runs
                                                                  where the kernel moves > 16 MiB
  L1 / L2 hit rate                                               within 2 percentage points of one run
                                                                  or between them (> 4096 sectors;
                                                                  shown only where ncu's own rate
                                                                  exceeds 100 %)
  (DRAM bytes and L2 hit rates outside these under kernel replay are "explained": CUPTI's restore
   leaves L2 dirty, docs/recorder.md; counted in their own column, never hidden)
  theoretical occupancy, its limiter, registers per thread        equal (warplens' calculator; ncu's
                                                                  sm__maximum_warps_per_active_cycle_pct
                                                                  and launch__occupancy_limit_*); a
                                                                  limiter differing only by ncu's
                                                                  shared-memory tie is "explained"
  duration (gpu__time_duration.sum)                               shown, not judged (ncu locks clocks)

and the wall time of each whole profiled run is kept (cost, item 6), per kernel, also for a one-pass
set. Writes OUT/metrics-ncu.md (summary tables, the commands) and OUT/metrics-ncu.csv (every kernel
and metric). With --offline, reads a warplens session and ncu CSV files instead of running anything
(used by tests/cli/test_ncu_compare.sh). With --rejudge, re-applies these tolerances to earlier
metrics-ncu.csv files (nothing re-measured).

usage: python3 bench/ncu_compare.py --warplens BIN --build BUILD_DIR --out OUT [--set default]
           [--only NAME,...] [--cost NAME,...] [--ncu PATH]
       python3 bench/ncu_compare.py --offline SESSION NCU_ALL.csv NCU_NONE.csv --warplens BIN --out OUT
       python3 bench/ncu_compare.py --rejudge CSV... [--replayed] --warplens BIN --out OUT"""
import argparse
import csv
import datetime
import difflib
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TORCH = os.path.join(ROOT, "tests", "gpu", "torch_metrics_workload.py")
LAUNCH = ["launch__registers_per_thread", "sm__maximum_warps_per_active_cycle_pct", "launch__occupancy_limit_registers",
          "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps", "launch__occupancy_limit_blocks",
          "launch__grid_size", "launch__block_size"]
LIMITS = {"launch__occupancy_limit_registers": "registers", "launch__occupancy_limit_shared_mem": "shared_memory",
          "launch__occupancy_limit_warps": "warps", "launch__occupancy_limit_blocks": "blocks"}
UNIT = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12, "KB": 1e3, "MB": 1e6, "GB": 1e9,
        "nsecond": 1, "usecond": 1e3, "msecond": 1e6, "second": 1e9, "Kinst": 1e3, "Minst": 1e6, "Ginst": 1e9,
        "Kwarp": 1e3, "Mwarp": 1e6, "Kcycle": 1e3, "Mcycle": 1e6, "Gcycle": 1e9}
MIB16 = 16 * 2**20


def workloads(build):
    py = sys.executable
    return {
        "c-metrics": [os.path.join(build, "bin", "gpu_test_metrics"), "--workload"],
        "c-gemm": [os.path.join(build, "bin", "gpu_test_metrics_gemm"), "--workload"],
        "torch-elementwise": [py, TORCH, "elementwise"],
        "torch-transformer": [py, TORCH, "transformer"],
        "torch-convnet": [py, TORCH, "convnet"],
    }


def base_name(name):
    """'void at::native::foo<4, x>(int, float*)' -> 'foo'; 'elementwise_kernel' stays."""
    s = name.strip()
    if s.startswith("void "):
        s = s[5:]
    depth, cut = 0, len(s)
    for i, ch in enumerate(s):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0 and i > 0 and not s.startswith("(anonymous", i):
            cut = i
            break
    s = s[:cut]
    s = re.sub(r"<.*>", "", s)
    return s.split("::")[-1].strip()


def number(text, unit=""):
    t = text.replace(",", "").strip()
    if t in ("", "n/a", "N/A", "nan"):
        return None
    try:
        v = float(t)
    except ValueError:
        return None
    return v * UNIT.get(unit, 1)


def parse_ncu(text):
    """ncu CSV (long form: one row per metric; or wide --page raw with a units row) -> list of
    kernels in ID order: {"id", "name", "metrics": {name: value}}."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if not rows:
        return []
    hdr = rows[0]
    kernels = {}
    if "Metric Name" in hdr:
        ki, ii = hdr.index("Kernel Name"), hdr.index("ID")
        mi, ui, vi = hdr.index("Metric Name"), hdr.index("Metric Unit"), hdr.index("Metric Value")
        for r in rows[1:]:
            if len(r) <= vi or r[0] == "ID":
                continue
            k = kernels.setdefault(int(r[ii]), {"id": int(r[ii]), "name": r[ki], "metrics": {}})
            k["metrics"][r[mi]] = number(r[vi], r[ui])
    else:
        ki, ii = hdr.index("Kernel Name"), hdr.index("ID")
        units = rows[1] if len(rows) > 1 and rows[1][ii] == "" else None
        for r in rows[2 if units else 1:]:
            if len(r) < len(hdr) or not r[ii].strip().isdigit():
                continue
            k = kernels.setdefault(int(r[ii]), {"id": int(r[ii]), "name": r[ki], "metrics": {}})
            for j, col in enumerate(hdr):
                if "__" in col:
                    k["metrics"][col] = number(r[j], units[j] if units else "")
    return [kernels[i] for i in sorted(kernels)]


def warplens_kernels(warplens, session):
    """The session's kernels in launch order: name, occupancy, limiter, registers, metric values."""
    p = subprocess.run([warplens, "kernels", session, "--calls", "--json"], capture_output=True, text=True)
    calls = json.loads(p.stdout) if p.returncode == 0 and p.stdout.strip() else []
    if isinstance(calls, dict):
        calls = calls.get("calls", calls.get("kernels", []))
    db = sqlite3.connect(session)
    names = {r[0]: r[1] for r in db.execute("SELECT id, name FROM kernels")}
    graph = {r[0] for r in db.execute("SELECT id FROM kernel WHERE graph_id != 0")}
    vals = {}
    for kid, metric, value in db.execute("SELECT km.kernel_id, m.name, km.value FROM kernel_metric km JOIN metric m"
                                         " ON m.id = km.metric_id WHERE km.kernel_id IS NOT NULL"):
        vals.setdefault(kid, {})[metric] = value
    out = []
    for c in sorted(calls, key=lambda c: (c.get("start_ns") or 0, c["id"])):
        if c["id"] in graph:
            continue
        out.append({"id": c["id"], "name": names.get(c["id"], "?"), "occupancy": c.get("occupancy_pct"),
                    "limiter": c.get("limiter"), "registers": c.get("registers"), "metrics": vals.get(c["id"], {})})
    # kernel replay leaves kernels untimed: launch order is correlation order then
    order = {r[0]: r[1] for r in db.execute("SELECT id, correlation_id FROM kernel")}
    out.sort(key=lambda k: order.get(k["id"], 0))
    return out


def session_replayed(session):
    """True when the session's metrics were collected under kernel replay (metric_config.replay)."""
    db = sqlite3.connect(session)
    try:
        return db.execute("SELECT count(*) FROM metric_config WHERE replay = 'kernel'").fetchone()[0] > 0
    except sqlite3.Error:
        return False


def align(ours, theirs):
    """Pairs (i, j) of kernels with the same base name, in order."""
    a = [base_name(k["name"]) for k in ours]
    b = [base_name(k["name"]) for k in theirs]
    pairs = []
    for blk in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_matching_blocks():
        pairs += [(blk.a + t, blk.b + t) for t in range(blk.size)]
    return pairs


def limiter_set(text):
    return {w.strip().replace(" ", "_") for w in (text or "").split("+") if w.strip() and w.strip() != "none"}


def ncu_limiter(m):
    lim = {LIMITS[k]: v for k, v in m.items() if k in LIMITS and v is not None}
    if not lim:
        return None
    low = min(lim.values())
    return {k for k, v in lim.items() if v == low}


def klass(metric):
    if "sass_thread_inst_executed_op_" in metric:
        return "flop"
    if metric in ("smsp__inst_executed.sum", "sm__inst_executed_pipe_tensor.sum", "sm__ctas_launched.sum"):
        return "exact"
    if metric.startswith("dram__bytes"):
        return "dram"
    if metric.endswith("hit_rate.pct"):
        return "hit"
    if metric == "gpu__time_duration.sum":
        return "time"
    return "other"


HIT_LOOKUPS = {"l1tex__t_sector_hit_rate.pct": ("l1tex__t_sectors_lookup_hit.sum", "l1tex__t_sectors_lookup_miss.sum"),
               "lts__t_sector_hit_rate.pct": ("lts__t_sectors_lookup_hit.sum", "lts__t_sectors_lookup_miss.sum")}
MIN_SECTORS = 4096   # a hit rate over fewer lookups (128 KiB) moves by points with a handful of lines
VARYING_REL = 0.005  # counts that ncu's own two runs disagree on: within 0.5 % of one of them


REPLAY_NOTE = "kernel replay: L2 state after CUPTI's restore (docs/recorder.md)"


def judge(metric, w, a, n, km=None, replayed=False):
    """(verdict, note): ok / FAIL / explained / info. km: the kernel's other warplens metrics (sector
    counts). replayed: the warplens session measured this kernel under kernel replay, where DRAM bytes
    and L2 hit rates include what CUPTI's memory restore left in L2 (docs/recorder.md, measured on
    the SGEMMs: one-pass runs agree with ncu --cache-control none, replayed ones do not)."""
    if w is None or (a is None and n is None):
        return "info", "missing"
    k = klass(metric)
    if k in ("flop", "exact"):
        if a == w or n == w:
            return "ok", ""
        if a is not None and n is not None and a != n:
            # ncu measured the same kernel twice and got two counts: the count varies from run to run
            # (persistent / warp-specialised kernels spin on barriers), so exact is not defined
            near = min(abs(w - a) / max(abs(a), 1), abs(w - n) / max(abs(n), 1))
            if near <= VARYING_REL:
                return "ok", f"varies run to run (ncu {a:.0f} / {n:.0f}); within {100 * near:.2f} %"
        return "FAIL", ""
    if k == "dram":
        big = max(v for v in (w, a, n) if v is not None) > MIB16
        rel = lambda x: abs(w - x) / x if x else (0 if w == 0 else 1)
        near = [name for name, x in (("all", a), ("none", n)) if x is not None and rel(x) <= 0.02]
        if not big:
            return "info", "<= 16 MiB"
        if near:
            return "ok", "matches " + "/".join(near)
        return ("explained", REPLAY_NOTE) if replayed else ("FAIL", "")
    if k == "hit":
        parts = HIT_LOOKUPS.get(metric)
        if parts and km is not None and all(p in km for p in parts) and sum(km[p] for p in parts) < MIN_SECTORS:
            return "info", f"< {MIN_SECTORS} sectors looked up"
        if any(x is not None and x > 100.0 for x in (a, n)):
            # ncu's own rate above 100 %: the metric's ratio is of counters that are not hits and
            # lookups of the same sectors (the FMA test kernels on the H200: ncu 150 % and 228 %)
            return "info", "ncu's own rate > 100 %: not a fraction"
        near = [name for name, x in (("all", a), ("none", n)) if x is not None and abs(w - x) <= 2.0]
        if near:
            return "ok", "matches " + "/".join(near)
        if a is not None and n is not None and min(a, n) <= w <= max(a, n):
            return "ok", "between ncu's cache policies"
        if replayed and metric.startswith("lts__"):
            return "explained", REPLAY_NOTE
        return "FAIL", ""
    return "info", ""


def judge_limiter(ours, theirs):
    """Limiter sets. ncu's shared-memory block limit uses the carveout the driver configured for the
    launch, which it sizes for the blocks the other limits allow, so shared memory ties there."""
    if ours == theirs:
        return "ok", ""
    if theirs == ours | {"shared_memory"}:
        return "explained", "ncu's shared-memory limit uses the driver's carveout (docs/recorder.md)"
    return "FAIL", ""


def compare(name, ours, all_runs, none_runs, rows, replayed=False):
    pairs = align(ours, all_runs)
    pairs_none = dict(align(ours, none_runs))
    for i, j in pairs:
        w, a = ours[i], all_runs[j]
        nn = none_runs[pairs_none[i]] if i in pairs_none else {"metrics": {}}
        for metric in sorted(set(w["metrics"]) | set(a["metrics"])):
            if metric.startswith("launch__") or metric == "sm__maximum_warps_per_active_cycle_pct":
                continue
            wv, av, nv = w["metrics"].get(metric), a["metrics"].get(metric), nn["metrics"].get(metric)
            verdict, note = judge(metric, wv, av, nv, w["metrics"], replayed)
            rows.append([name, i, base_name(w["name"]), metric, wv, av, nv, verdict, note])
        occ = a["metrics"].get("sm__maximum_warps_per_active_cycle_pct")
        if occ is not None and w["occupancy"] is not None:
            rows.append([name, i, base_name(w["name"]), "theoretical occupancy %", w["occupancy"], occ, None,
                         "ok" if abs(occ - w["occupancy"]) <= 0.01 else "FAIL", ""])
        lim = ncu_limiter(a["metrics"])
        if lim is not None and w["limiter"] is not None:
            ours_lim = limiter_set(w["limiter"])
            verdict, note = judge_limiter(ours_lim, lim)
            rows.append([name, i, base_name(w["name"]), "occupancy limiter", "+".join(sorted(ours_lim)),
                         "+".join(sorted(lim)), None, verdict, note])
        regs = a["metrics"].get("launch__registers_per_thread")
        if regs is not None and w["registers"] is not None:
            rows.append([name, i, base_name(w["name"]), "registers per thread", w["registers"], regs, None,
                         "ok" if regs == w["registers"] else "FAIL", ""])
    return len(pairs)


def timed(cmd, log, env=None):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.monotonic() - t0
    with open(log, "w") as f:
        f.write(f"$ {' '.join(cmd)}\n{p.stderr}\nexit {p.returncode}, {wall:.2f} s\n")
    return p, wall


def metric_names(session):
    db = sqlite3.connect(session)
    return [r[0] for r in db.execute("SELECT name FROM metric ORDER BY id")]


def run_workload(a, name, argv, rows, cost):
    out = a.out
    # the program alone: what neither profiler adds (start-up, the work itself)
    _, base = timed(argv, os.path.join(out, f"{name}.unprofiled.log"))
    session = os.path.join(out, f"{name}.wlsession")
    if os.path.exists(session):
        os.unlink(session)
    wcmd = [a.warplens, "run", "-q", "-o", session, "--metrics", a.set, "--"] + argv
    p, w_wall = timed(wcmd, os.path.join(out, f"{name}.warplens.log"))
    if p.returncode != 0 or not os.path.exists(session):
        print(f"{name}: warplens run failed ({p.returncode})", flush=True)
        return
    names = metric_names(session)
    ncu_metrics = ",".join(names + LAUNCH)
    runs = {}
    for cc in ("all", "none"):
        cmd = [a.ncu, "--csv", "--print-units", "base", "--cache-control", cc, "--metrics", ncu_metrics] + argv
        p, wall = timed(cmd, os.path.join(out, f"{name}.ncu-{cc}.log"))
        with open(os.path.join(out, f"{name}.ncu-{cc}.csv"), "w") as f:
            f.write(p.stdout)
        runs[cc] = (parse_ncu(p.stdout), wall, p.returncode)
    ours = warplens_kernels(a.warplens, session)
    matched = compare(name, ours, runs["all"][0], runs["none"][0], rows, session_replayed(session))
    cost.append([name, a.set, len(ours), len(runs["all"][0]), matched, w_wall, runs["all"][1], runs["none"][1],
                 " ".join(wcmd[:6] + ["..."]), f"ncu --cache-control all|none --metrics <{len(names)} + launch stats>",
                 base])
    print(f"{name}: {len(ours)} warplens kernels, {len(runs['all'][0])} ncu kernels, {matched} matched;"
          f" wall warplens {w_wall:.1f} s, ncu {runs['all'][1]:.1f} / {runs['none'][1]:.1f} s", flush=True)
    if name in a.cost_one_pass:
        s1 = os.path.join(out, f"{name}.onepass.wlsession")
        cmd = [a.warplens, "run", "-q", "-o", s1, "--metrics", "occupancy", "--"] + argv
        p, w1 = timed(cmd, os.path.join(out, f"{name}.onepass.warplens.log"))
        one = metric_names(s1) if os.path.exists(s1) else []
        p2, n1 = timed([a.ncu, "--csv", "--metrics", ",".join(one)] + argv, os.path.join(out, f"{name}.onepass.ncu.log"))
        cost.append([name, "occupancy (1 pass)", len(warplens_kernels(a.warplens, s1)) if os.path.exists(s1) else 0,
                     len(parse_ncu(p2.stdout)), "-", w1, n1, None, " ".join(cmd[:6] + ["..."]), "ncu --metrics <same>",
                     base])


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def write_report(a, rows, cost, device):
    with open(os.path.join(a.out, "metrics-ncu.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["workload", "kernel_index", "kernel", "metric", "warplens", "ncu_cache_all", "ncu_cache_none",
                    "verdict", "note"])
        w.writerows(rows)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    fails = sum(r[7] == "FAIL" for r in rows)
    explained = sum(r[7] == "explained" for r in rows)
    with open(os.path.join(a.out, "metrics-ncu.md"), "w") as f:
        f.write(f"# warplens --metrics vs Nsight Compute ({now}, {device})\n\n")
        f.write(f"Command: `python3 bench/ncu_compare.py {' '.join(sys.argv[1:])}`. Every kernel and metric:"
                " `metrics-ncu.csv`. Tolerances: FLOP counters and instructions exact; DRAM bytes within 2 % of"
                " ncu's `--cache-control all` or `none` where a kernel moves > 16 MiB; hit rates within 2 points of"
                " one or between the two where more than 4096 sectors are looked up; counts ncu's own two runs"
                " disagree on within 0.5 %; theoretical occupancy, limiter and registers equal (a limiter that"
                " differs only by ncu's shared-memory tie is counted as explained); durations shown only.\n\n")
        f.write(f"{len(rows)} comparisons, {fails} outside tolerance, {explained} explained (docs/recorder.md, Agreement with Nsight Compute).\n\n")
        f.write("| workload | metric | kernels | ok | outside | explained | info | worst (warplens / ncu all / ncu none) |\n")
        f.write("|---|---|---:|---:|---:|---:|---:|---|\n")
        groups = {}
        for r in rows:
            groups.setdefault((r[0], r[3]), []).append(r)
        for (wl, metric), rs in sorted(groups.items()):
            bad = [r for r in rs if r[7] in ("FAIL", "explained")]
            worst = bad[0] if bad else max(rs, key=lambda r: abs((r[4] or 0) - (r[5] or 0)) if isinstance(r[4], (int, float))
                                           and isinstance(r[5], (int, float)) else 0)
            f.write(f"| {wl} | {metric} | {len(rs)} | {sum(r[7] == 'ok' for r in rs)} | {sum(r[7] == 'FAIL' for r in rs)} |"
                    f" {sum(r[7] == 'explained' for r in rs)} | {sum(r[7] == 'info' for r in rs)} | {worst[2]}: {fmt(worst[4])} / {fmt(worst[5])} /"
                    f" {fmt(worst[6])} {worst[8]} |\n")
        f.write("\n## Cost: wall time of the whole profiled run\n\n"
                "Added ms/kernel: (profiled wall - the program's unprofiled wall) / kernels profiled, the time each\n"
                "profiler adds per kernel (ncu: its `--cache-control all` run).\n\n")
        f.write("| workload | set | warplens kernels | ncu kernels | matched | unprofiled s | warplens s | ncu (cache all) s |"
                " ncu (cache none) s | warplens added ms/kernel | ncu added ms/kernel |\n"
                "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
        for c in cost:
            wk, nk = c[2] or 1, c[3] or 1
            base = c[10] if len(c) > 10 else 0.0
            f.write(f"| {c[0]} | {c[1]} | {c[2]} | {c[3]} | {c[4]} | {base:.1f} | {c[5]:.1f} | {c[6]:.1f} | {fmt(c[7])} |"
                    f" {(c[5] - base) * 1000 / wk:.1f} | {(c[6] - base) * 1000 / nk:.1f} |\n")
    return fails


def rejudge(paths, replayed=False):
    """Rows of earlier reports with today's tolerances (the values are not re-measured)."""
    def num(v):
        try:
            return float(v)
        except ValueError:
            return v if v else None
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            rows += [[r[0], int(r[1]), r[2], r[3], num(r[4]), num(r[5]), num(r[6]), r[7], r[8]]
                     for r in list(csv.reader(f))[1:]]
    kms = {}
    for r in rows:
        if isinstance(r[4], float):
            kms.setdefault((r[0], r[1]), {})[r[3]] = r[4]
    for r in rows:
        if r[3] == "occupancy limiter":
            r[7], r[8] = judge_limiter(limiter_set(r[4]), limiter_set(r[5]))
        elif r[3] not in ("theoretical occupancy %", "registers per thread"):
            r[7], r[8] = judge(r[3], r[4], r[5], r[6], kms.get((r[0], r[1])), replayed)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--warplens", required=True)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--set", default="default")
    ap.add_argument("--only", default="")
    ap.add_argument("--cost", default="torch-elementwise,torch-transformer", help="workloads also timed with a one-pass set")
    ap.add_argument("--ncu", default=shutil.which("ncu") or "ncu")
    ap.add_argument("--offline", nargs=3, metavar=("SESSION", "NCU_ALL", "NCU_NONE"))
    ap.add_argument("--rejudge", nargs="+", metavar="CSV", help="re-apply the tolerances to earlier metrics-ncu.csv files")
    ap.add_argument("--replayed", action="store_true",
                    help="with --rejudge: the warplens runs used kernel replay (a multi-pass set such as default)")
    a = ap.parse_args()
    a.cost_one_pass = set(x for x in a.cost.split(",") if x)
    os.makedirs(a.out, exist_ok=True)
    rows, cost = [], []
    if a.rejudge:
        rows = rejudge(a.rejudge, a.replayed)
        fails = write_report(a, rows, cost, "rejudged: " + ", ".join(a.rejudge))
        print(f"ncu_compare: {len(rows)} comparisons, {fails} outside tolerance")
        return 1 if fails else 0
    if a.offline:
        session, fa, fn = a.offline
        ours = warplens_kernels(a.warplens, session)
        compare("offline", ours, parse_ncu(open(fa).read()), parse_ncu(open(fn).read()), rows,
                session_replayed(session))
        fails = write_report(a, rows, cost, "offline")
        print(f"ncu_compare: {len(rows)} comparisons, {fails} outside tolerance")
        return 1 if fails else 0
    if not shutil.which(a.ncu) and not os.path.exists(a.ncu):
        print("SKIP ncu_compare: ncu not found")
        return 0
    device = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                            capture_output=True, text=True).stdout.strip()
    only = set(x for x in a.only.split(",") if x)
    for name, argv in workloads(a.build).items():
        if not only or name in only:
            run_workload(a, name, argv, rows, cost)
    fails = write_report(a, rows, cost, device)
    print(f"ncu_compare: {len(rows)} comparisons, {fails} outside tolerance; see {a.out}/metrics-ncu.md")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
