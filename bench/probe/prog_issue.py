# The program: three element-wise rounds with a device copy each on 512 MiB tensors, then two matmuls.
import torch
x = torch.randn(128 * 1024 * 1024, device="cuda")
y = torch.randn_like(x)
for _ in range(3):
    z = x + y
    z.mul_(0.5)
    x.copy_(z)
a = torch.randn(2048, 2048, device="cuda")
b = torch.randn(2048, 2048, device="cuda")
c = a @ b
d = c @ b
torch.cuda.synchronize()
print("done", float(d[0, 0]))
