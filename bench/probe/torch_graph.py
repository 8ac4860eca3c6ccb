# A small MLP captured in a CUDA graph by PyTorch and replayed three times, a plain kernel between.
import torch
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
torch.cuda.synchronize()
print("captured", flush=True)
for _ in range(3):
    g.replay()
    x.mul_(1.0)
torch.cuda.synchronize()
print("done", float(y[0, 0]))
