#!/usr/bin/env python3
"""Judges `warplens advise` on the planted problems just recorded (GPU suite step "advise-check",
after scripts/gpu-advise.sh), with the rules CI applies to the kept H100 sessions
(tests/cli/test_advise_cli.sh), so every GPU the suite runs on checks the estimates afresh:

  control           no finding
  other modes       the mode's rule found, with at least 2 evidence items, its estimated gain within
                    25 % of the kept session's measured gain (gain_ns_session: its total time minus the
                    fixed program's median total, both traced)
  tail modes        the dispatch model's gain without a profiler (evidence.model_gain_pct_untraced)
                    within 25 % of the gain measured here with the planted and fixed programs run
                    alone (no profiler), ROUNDS alternating rounds, the medians of their step medians;
                    for `tail` (one wave + one block of SM-filling blocks) the finding's own estimate too

usage: scripts/advise_check.py --warplens BIN --prog gpu_advise_planted --dir OUTDIR [--rounds 3]
Prints PASS/FAIL lines and "advise_check: N passed, M failed"; exit status 1 when any failed."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

RULE = {"launch_bound": "gpu-idle-launch", "sync": "gpu-idle-sync", "pageable": "copy-pageable",
        "small_copies": "copy-small", "occupancy": "occupancy", "serial_streams": "serial-streams",
        "tail": "tail-effect", "tail_long": "tail-effect", "tail_half": "tail-effect", "tail_short": "tail-effect"}
passed = failed = 0


def verdict(ok, what):
    global passed, failed
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    if ok:
        passed += 1
    else:
        failed += 1


def within(estimate, measured, tol=0.25):
    return estimate is not None and measured is not None and measured > 0 and abs(estimate - measured) <= tol * measured


def step_median(prog, mode, fixed):
    """The program run alone (no profiler): the median of its steps, from its result line."""
    args = [prog, mode] + (["--fixed"] if fixed else [])
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    m = re.search(r"^%s fixed=.* step_ns_median=(\d+)" % re.escape(mode), p.stdout, re.M)
    if p.returncode != 0 or not m:
        raise RuntimeError(f"{' '.join(args)}: exit status {p.returncode}, no result line")
    return int(m.group(1))


def unprofiled_gain_pct(prog, mode, rounds):
    planted, fixed = [], []
    for _ in range(rounds):  # alternating: the same drift of clocks and temperature on both
        planted.append(step_median(prog, mode, False))
        fixed.append(step_median(prog, mode, True))
    p, f = statistics.median(planted), statistics.median(fixed)
    return 100.0 * (p - f) / p if p else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--warplens", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    with open(os.path.join(a.dir, "advise-gains.json")) as f:
        gains = json.load(f)
    print(f"advise_check: {gains.get('device')}, recorded {gains.get('date')}, {a.rounds} rounds alone for the tail modes")
    for mode, g in gains["modes"].items():
        session = os.path.join(a.dir, g.get("session") or f"advise-{mode}.wlsession")
        if g.get("status") != "ok" or not os.path.exists(session):
            verdict(False, f"{mode}: recorded ({g.get('error', 'no session')})")
            continue
        p = subprocess.run([a.warplens, "advise", session, "--json", "--range", "step"], capture_output=True, text=True)
        try:
            findings = json.loads(p.stdout)["findings"]
        except (ValueError, KeyError):
            verdict(False, f"{mode}: advise --json: exit status {p.returncode}: {p.stderr.strip()[:200]}")
            continue
        if mode == "control":
            verdict(not findings, f"control: no finding: {[(x['rule'], x['estimated_gain_pct']) for x in findings]}")
            continue
        want = RULE.get(mode)
        mine = [x for x in findings if x["rule"] == want]
        verdict(bool(mine), f"{mode}: {want} found: {[x['rule'] for x in findings]}")
        if not mine:
            continue
        f0 = mine[0]
        verdict(len(f0.get("evidence") or {}) >= 2, f"{mode}: {want} carries evidence ({len(f0.get('evidence') or {})} items)")
        if want != "tail-effect":
            est, meas = f0.get("estimated_gain_ns"), g.get("gain_ns_session")
            verdict(within(est, meas), f"{mode}: estimated gain {est} ns within 25 % of the measured {meas} ns"
                    f" ({100.0 * (est - meas) / meas:+.1f} %)" if est is not None and meas else f"{mode}: gains missing")
            continue
        try:
            alone = unprofiled_gain_pct(a.prog, mode, a.rounds)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            verdict(False, f"{mode}: run alone: {e}")
            continue
        model = (f0.get("evidence") or {}).get("model_gain_pct_untraced")
        verdict(within(model, alone), f"{mode}: model gain without a profiler {model} % within 25 % of the {alone:.2f} %"
                " measured with the programs run alone")
        if mode == "tail":
            est = f0.get("estimated_gain_pct")
            verdict("without a profiler" in f0.get("title", "") and within(est, alone),
                    f"tail: the finding gives the gain without a profiler, {est} % against {alone:.2f} % ({f0.get('title')})")
    print(f"advise_check: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
