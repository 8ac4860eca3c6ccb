"""Launch-bound PyTorch loop for bench/overhead.py: per step, 8 layers of (64x64 matmul, relu,
add) — 24 short kernels. Runs in segments of 100 steps (each ending with a synchronisation) and
prints the median over segments of host time per kernel op, so one burst of interference moves one
segment, not the result. With --torch-profiler MODE the loop runs inside torch.profiler
(MODE = cuda or cpu+cuda)."""
import argparse
import time

import torch


SEGMENT = 100


def loop(steps: int, xs, ws):
    for _ in range(steps):
        h = xs
        for w in ws:
            h = torch.relu(h @ w) + h
    torch.cuda.synchronize()


def timed(steps: int, xs, ws, ops_per_step: int):
    per_op = []
    for _ in range(steps // SEGMENT):
        t0 = time.perf_counter()
        loop(SEGMENT, xs, ws)
        per_op.append((time.perf_counter() - t0) * 1e6 / (SEGMENT * ops_per_step))
    per_op.sort()
    return per_op[len(per_op) // 2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--torch-profiler", choices=["cuda", "cpu+cuda"])
    a = ap.parse_args()
    torch.manual_seed(0)
    xs = torch.randn(64, 64, device="cuda")
    ws = [torch.randn(64, 64, device="cuda") * 0.01 for _ in range(8)]
    loop(50, xs, ws)  # warm-up: cuBLAS handles, kernel loads
    ops_per_step = len(ws) * 3
    if a.torch_profiler:
        acts = [torch.profiler.ProfilerActivity.CUDA]
        if a.torch_profiler == "cpu+cuda":
            acts.append(torch.profiler.ProfilerActivity.CPU)
        with torch.profiler.profile(activities=acts):
            us = timed(a.steps, xs, ws, ops_per_step)
    else:
        us = timed(a.steps, xs, ws, ops_per_step)
    print(f"US_PER_KERNEL {us:.4f}")


if __name__ == "__main__":
    main()
