# Runs small element-wise kernels until killed (for interruption tests).
import sys, time, torch
x = torch.randn(1 << 20, device="cuda")
n = 0
end = time.time() + float(sys.argv[1]) if len(sys.argv) > 1 else 1e18
while time.time() < end:
    x.mul_(1.0001); x.add_(0.5); n += 2
torch.cuda.synchronize()
print("launched", n)
