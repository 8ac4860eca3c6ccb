"""A small torch.distributed job for the GPU suite (tests/gpu/test_multirank.sh): STEPS steps, each
an NVTX range "step" with a forward/backward of a linear model and an all-reduce of its gradients
(DDP); the rank named by SLOW_RANK also runs three 4096^3 FP32 matrix products (~7 ms on an
H100/H200) before its forward, so it arrives last at every all-reduce: the straggler. (Three times
the step's own 512x2048x2048 product was too little on two H200s: ~0.1 ms against ~1 ms of host
time per step, and the straggler varied with the host's jitter.) NCCL when every rank has a GPU of
its own, else gloo (ranks sharing the one GPU)."""
import os
import sys

import torch
import torch.distributed as dist

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
local = int(os.environ.get("LOCAL_RANK", rank))
ngpu = torch.cuda.device_count()
backend = "nccl" if ngpu >= world else "gloo"
dev = torch.device("cuda", local % ngpu)
torch.cuda.set_device(dev)
dist.init_process_group(backend)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2048, 2048).to(dev),
                                                  device_ids=[dev.index] if backend == "nccl" else None)
x = torch.randn(512, 2048, device=dev)
w = torch.randn(2048, 2048, device=dev) / 45.0  # keeps y's scale: a matmul per extra unit of work
slow = int(os.environ.get("SLOW_RANK", "1"))
z = torch.randn(4096, 4096, device=dev)
wz = torch.randn(4096, 4096, device=dev) / 64.0
for s in range(steps):
    torch.cuda.nvtx.range_push("step")
    if rank == slow:
        for _ in range(3):
            z = torch.tanh(z @ wz)
    y = torch.relu(x @ w)
    loss = model(y).square().mean()
    loss.backward()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
dist.destroy_process_group()
print(f"rank {rank}/{world} {backend} done")
