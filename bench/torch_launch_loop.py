"""Launch-bound PyTorch loop for bench/overhead.py: per step, 8 layers of (64x64 matmul, relu,
add) — 24 short kernels. Two measures, each the median over segments, so one burst of
interference moves one segment, not the result:
  US_HOST_PER_LAUNCH  the time to issue the ops of one step, per op, with the GPU idle when the step
                      starts (synchronised before the timing, not inside it): what launching costs
                      the host, without the GPU pushing back. The GPU's clocks vary from process to
                      process on the lent machine (a launch-bound loop leaves it mostly idle), and in
                      a slow-clock process the end-to-end loop becomes GPU-bound, which hides the
                      host cost a profiler adds; this measure does not depend on it.
  US_PER_KERNEL       end to end: segments of 100 steps, each ending with a synchronisation.
  US_CPU_PROBE        the same ops on tiny CPU tensors (no CUDA, outside any profiler): how fast this
                      process runs PyTorch's host code, independent of the profiler (see cpu_probe).
With --torch-profiler MODE the loop runs inside torch.profiler (MODE = cuda or cpu+cuda).

With --toggle ROUNDS it measures instead what recording adds *within* this one process: ROUNDS
rounds of US_HOST_PER_LAUNCH-style steps with recording off and on, in alternating order. "On" is
after torch.cuda.profiler.start() (cudaProfilerStart: warplens --capture-range profiler-api and the
floor with WL_FLOOR_RANGE=1 record from there) or, with --torch-profiler, inside a torch.profiler
context entered for that half-round; "off" after torch.cuda.profiler.stop() / outside the context.
Prints US_HOST_OFF, US_HOST_ON (medians of the rounds) and US_HOST_ADDED (median of the rounds'
paired on - off), free of the differences between processes that move whole runs; US_HOST_PRE:
before the first start (the profiler loaded, never switched on).

With --pin, before every segment (outside the timing) the main thread is pinned alone to the first
CPU it may use and every other thread of the process (CUDA's, the profiler's) to the others, away
from the main CPU's hyperthread sibling where there are enough CPUs: which core a profiler's
thread lands on next to the launching thread is otherwise decided per process, which made runs of
one mode differ by up to 35 % (bench/results/overhead-torch-diag.md)."""
import argparse
import contextlib
import os
import threading
import time

import torch


SEGMENT = 100


def loop_steps(steps: int, xs, ws):
    for _ in range(steps):
        h = xs
        for w in ws:
            h = torch.relu(h @ w) + h


def loop(steps: int, xs, ws):
    loop_steps(steps, xs, ws)
    torch.cuda.synchronize()


def host_timed(steps: int, xs, ws, ops_per_step: int, pin=None):
    per_op = []
    for i in range(steps):
        if pin and i % 100 == 0:
            pin_threads(pin)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loop_steps(1, xs, ws)
        per_op.append((time.perf_counter() - t0) * 1e6 / ops_per_step)
    torch.cuda.synchronize()
    per_op.sort()
    return per_op[len(per_op) // 2]


def siblings(cpu: int) -> set:
    """The CPUs sharing cpu's core (hyperthreads), cpu included."""
    try:
        with open(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list") as f:
            text = f.read().strip()
    except OSError:
        return {cpu}
    out = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def pin_threads(allowed: set) -> None:
    if len(allowed) < 2:
        return
    main = min(allowed)
    rest = allowed - siblings(main) or allowed - {main}
    me = threading.get_native_id()
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), {main} if int(tid) == me else rest)
        except OSError:
            pass  # the thread has ended


def segments_median(run_segment, segments: int, ops_per_segment: int, pin=None) -> float:
    """Median over segments of the time per op of run_segment(), pinned before each (outside the timing)."""
    per_op = []
    for _ in range(segments):
        if pin:
            pin_threads(pin)
        t0 = time.perf_counter()
        run_segment()
        per_op.append((time.perf_counter() - t0) * 1e6 / ops_per_segment)
    per_op.sort()
    return per_op[len(per_op) // 2]


def timed(steps: int, xs, ws, ops_per_step: int, pin=None):
    return segments_median(lambda: loop(SEGMENT, xs, ws), steps // SEGMENT, SEGMENT * ops_per_step, pin)


def cpu_probe(ops_per_step: int, pin=None, steps: int = 2000) -> float:
    """The same ops on tiny CPU tensors, after the timed loops and outside any profiler: PyTorch's
    dispatch without CUDA, so no profiler sees it. It measures how fast this process runs Python and
    PyTorch's host code, which differs between processes on the lent machine (bimodal), and lets
    bench/overhead.py compare modes within the same speed class without selecting on the measure."""
    xs = torch.randn(4, 4)
    ws = [torch.randn(4, 4) * 0.01 for _ in range(ops_per_step // 3)]
    return segments_median(lambda: loop_steps(SEGMENT, xs, ws), steps // SEGMENT, SEGMENT * ops_per_step, pin)


def toggled(rounds: int, steps: int, xs, ws, ops_per_step: int, tp_mode, pin=None):
    acts = [torch.profiler.ProfilerActivity.CUDA]
    if tp_mode == "cpu+cuda":
        acts.append(torch.profiler.ProfilerActivity.CPU)
    off, on, added = [], [], []
    pre = host_timed(steps * 2, xs, ws, ops_per_step, pin)  # before any start: loaded, never switched on
    for r in range(rounds):
        t = {}
        for k in range(2):
            rec = (k + r) % 2  # alternate which state goes first
            if not tp_mode:
                (torch.cuda.profiler.start if rec else torch.cuda.profiler.stop)()
            on_ctx = torch.profiler.profile(activities=acts) if tp_mode and rec else contextlib.nullcontext()
            with on_ctx:
                host_timed(5, xs, ws, ops_per_step, pin)  # the switch's first steps
                t[rec] = host_timed(steps, xs, ws, ops_per_step, pin)
        off.append(t[0])
        on.append(t[1])
        added.append(t[1] - t[0])
    if not tp_mode:
        torch.cuda.profiler.stop()
    med = lambda v: sorted(v)[len(v) // 2]
    print(f"US_HOST_PRE {pre:.4f}")
    print(f"US_HOST_OFF {med(off):.4f}")
    print(f"US_HOST_ON {med(on):.4f}")
    print(f"US_HOST_ADDED {med(added):.4f}")
    print(f"TOGGLE_ROUNDS {rounds}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--torch-profiler", choices=["cuda", "cpu+cuda"])
    ap.add_argument("--pin", action="store_true", help="main thread alone on one CPU, the others elsewhere")
    ap.add_argument("--toggle", type=int, metavar="ROUNDS", help="in-process off/on rounds (see the module text)")
    a = ap.parse_args()
    pin = set(os.sched_getaffinity(0)) if a.pin else None
    torch.manual_seed(0)
    xs = torch.randn(64, 64, device="cuda")
    ws = [torch.randn(64, 64, device="cuda") * 0.01 for _ in range(8)]
    loop(50, xs, ws)  # warm-up: cuBLAS handles, kernel loads
    ops_per_step = len(ws) * 3
    if a.toggle:
        toggled(a.toggle, a.steps, xs, ws, ops_per_step, a.torch_profiler, pin)
        return
    if a.torch_profiler:
        acts = [torch.profiler.ProfilerActivity.CUDA]
        if a.torch_profiler == "cpu+cuda":
            acts.append(torch.profiler.ProfilerActivity.CPU)
        with torch.profiler.profile(activities=acts):
            us = timed(a.steps, xs, ws, ops_per_step, pin)
            host = host_timed(a.steps, xs, ws, ops_per_step, pin)
    else:
        us = timed(a.steps, xs, ws, ops_per_step, pin)
        host = host_timed(a.steps, xs, ws, ops_per_step, pin)
    print(f"US_PER_KERNEL {us:.4f}")
    print(f"US_HOST_PER_LAUNCH {host:.4f}")
    print(f"US_CPU_PROBE {cpu_probe(ops_per_step, pin):.4f}")


if __name__ == "__main__":
    main()
