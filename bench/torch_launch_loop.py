"""Launch-bound PyTorch loop for bench/overhead.py: per step, 8 layers of (64x64 matmul, relu,
add) — about 24 short kernels. Prints host time per kernel op over the timed loop. With
--torch-profiler MODE the loop runs inside torch.profiler (MODE = cuda or cpu+cuda)."""
import argparse
import time

import torch


def loop(steps: int, xs, ws):
    for _ in range(steps):
        h = xs
        for w in ws:
            h = torch.relu(h @ w) + h
    torch.cuda.synchronize()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--torch-profiler", choices=["cuda", "cpu+cuda"])
    a = ap.parse_args()
    torch.manual_seed(0)
    xs = torch.randn(64, 64, device="cuda")
    ws = [torch.randn(64, 64, device="cuda") * 0.01 for _ in range(8)]
    loop(50, xs, ws)  # warm-up: cuBLAS handles, kernel loads
    ops = a.steps * len(ws) * 3
    if a.torch_profiler:
        acts = [torch.profiler.ProfilerActivity.CUDA]
        if a.torch_profiler == "cpu+cuda":
            acts.append(torch.profiler.ProfilerActivity.CPU)
        with torch.profiler.profile(activities=acts) as prof:
            t0 = time.perf_counter()
            loop(a.steps, xs, ws)
            t1 = time.perf_counter()
        n = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
        print(f"TORCH_PROFILER_GPU_EVENTS {n}")
    else:
        t0 = time.perf_counter()
        loop(a.steps, xs, ws)
        t1 = time.perf_counter()
    print(f"US_PER_KERNEL {(t1 - t0) * 1e6 / ops:.4f}")


if __name__ == "__main__":
    main()
