"""PyTorch workload for the GPU suite: matmuls (cuBLAS launches through cuLaunchKernelEx),
elementwise ops, a reduction, copies both ways, NVTX ranges through torch.cuda.nvtx, and a CUDA
graph replay. Prints what it did as JSON on its last line for the checker."""
import json
import sys

import torch


def main() -> int:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    dev = torch.device("cuda")
    torch.manual_seed(0)
    a = torch.randn(1024, 1024, device=dev)
    b = torch.randn(1024, 1024, device=dev)
    host = torch.randn(4 << 20, pin_memory=True)
    for i in range(steps):
        torch.cuda.nvtx.range_push(f"step-{i}")
        c = a @ b
        c = torch.relu(c) + 1.0
        s = c.sum()
        d = host.to(dev, non_blocking=True)
        back = d[: 1 << 20].cpu()
        torch.cuda.nvtx.range_pop()
    # bf16 matmul goes through a different cuBLAS/cutlass path
    x = torch.randn(2048, 2048, device=dev, dtype=torch.bfloat16)
    y = x @ x
    g = torch.cuda.CUDAGraph()
    static_in = torch.randn(256, 256, device=dev)
    s1 = torch.cuda.Stream()
    with torch.cuda.stream(s1):
        for _ in range(3):  # warm-up on the side stream, as the docs ask
            static_out = torch.tanh(static_in @ static_in)
    torch.cuda.current_stream().wait_stream(s1)
    with torch.cuda.graph(g):
        static_out = torch.tanh(static_in @ static_in)
    for _ in range(10):
        g.replay()
    torch.cuda.synchronize()
    print(json.dumps({"steps": steps, "sum": float(s), "back": float(back[0]), "y": float(y[0, 0]),
                      "graph_replays": 10, "out": float(static_out[0, 0])}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
