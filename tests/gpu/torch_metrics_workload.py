"""PyTorch work for the hardware-metrics checks of the GPU suite (check_metrics_torch.py) and the
side-by-side with Nsight Compute (bench/ncu_compare.py). One mode per run, so each profiled run
holds one kind of work:

  elementwise  the issue's program: three rounds of z = x + y; z.mul_(0.5); x.copy_(z) on 512 MiB
               tensors (device copies between kernels), then two 2048^2 FP32 matmuls
  transformer  one training step of a small transformer encoder with AMP (fp16 autocast, GradScaler,
               AdamW): cuBLAS/cuBLASLt GEMMs, softmax, layer norm, fused optimizer kernels
  convnet      one training step of a small conv net (cuDNN convolutions, batch norm, pooling, SGD)
  graph        a small MLP captured in a CUDA graph and replayed 3 times, a plain kernel between
  loop         small element-wise kernels for SECONDS (argument 2), for interruption tests
  nvtx         the elementwise rounds, the middle one inside an NVTX range "round" (filters)

usage: python3 torch_metrics_workload.py MODE [SECONDS]. Prints one JSON line with what it did."""
import json
import sys
import time

import torch


def elementwise(rounds=3, nvtx_round=-1):
    x = torch.randn(128 * 1024 * 1024, device="cuda")  # 512 MiB
    y = torch.randn_like(x)
    for r in range(rounds):
        if r == nvtx_round:
            torch.cuda.nvtx.range_push("round")
        z = x + y
        z.mul_(0.5)
        x.copy_(z)
        if r == nvtx_round:
            torch.cuda.nvtx.range_pop()
    a = torch.randn(2048, 2048, device="cuda")
    b = torch.randn(2048, 2048, device="cuda")
    c = a @ b
    d = c @ b
    torch.cuda.synchronize()
    return {"copies": rounds, "d": float(d[0, 0])}


def transformer():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).cuda()
    head = torch.nn.Linear(256, 1000).cuda()
    opt = torch.optim.AdamW(list(enc.parameters()) + list(head.parameters()), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    x = torch.randn(8, 128, 256, device="cuda")
    t = torch.randint(0, 1000, (8, 128), device="cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(head(enc(x)).flatten(0, 1), t.flatten())
    opt.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    torch.cuda.synchronize()
    return {"loss": float(loss)}


def convnet():
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
        torch.nn.Conv2d(32, 64, 3, stride=2, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Conv2d(64, 128, 3, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(128, 10)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    img = torch.randn(32, 3, 64, 64, device="cuda")
    lab = torch.randint(0, 10, (32,), device="cuda")
    loss = torch.nn.functional.cross_entropy(net(img), lab)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
    return {"loss": float(loss)}


def graph():
    m = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256)).cuda()
    x = torch.randn(64, 256, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            y = m(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = m(x)
    for _ in range(3):
        g.replay()
        x.mul_(1.0)
    torch.cuda.synchronize()
    return {"replays": 3, "y": float(y[0, 0])}


def loop(seconds):
    x = torch.randn(1 << 20, device="cuda")
    n = 0
    end = time.time() + seconds
    print("LOOP STARTED", flush=True)
    while time.time() < end:
        x.mul_(1.0001)
        x.add_(0.5)
        n += 2
    torch.cuda.synchronize()
    return {"launches": n}


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 else "elementwise"
    if mode == "elementwise":
        out = elementwise()
    elif mode == "nvtx":
        out = elementwise(nvtx_round=1)
    elif mode == "transformer":
        out = transformer()
    elif mode == "convnet":
        out = convnet()
    elif mode == "graph":
        out = graph()
    elif mode == "loop":
        out = loop(float(sys.argv[2]) if len(sys.argv) > 2 else 10)
    else:
        print(f"unknown mode {mode}", file=sys.stderr)
        return 2
    out["mode"] = mode
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
