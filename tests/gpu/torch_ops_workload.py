"""PyTorch training loop for the GPU suite's --torch-ops step: an unchanged script (no NVTX, no
profiler calls) whose kernels `warplens run --torch-ops` must tie to their operators and input
shapes. Two Linear layers (cuBLAS GEMMs through aten::addmm), ReLU, an MSE loss, backward (on
autograd's device thread) and an SGD step. Prints what it did as JSON on its last line."""
import json
import sys

import torch

BATCH, IN, HIDDEN, OUT = 64, 1024, 4096, 512


def main() -> int:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, OUT)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(BATCH, IN, device=dev)
    y = torch.randn(BATCH, OUT, device=dev)
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    print(json.dumps({"steps": steps, "batch": BATCH, "in": IN, "hidden": HIDDEN, "out": OUT, "loss": float(loss)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
