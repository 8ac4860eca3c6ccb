# One small transformer training step with AMP (autocast fp16 + GradScaler), then a ResNet-ish conv step.
import sys, torch
torch.manual_seed(0)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1
enc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True), 2).cuda()
head = torch.nn.Linear(256, 1000).cuda()
opt = torch.optim.AdamW(list(enc.parameters()) + list(head.parameters()), lr=1e-4)
scaler = torch.amp.GradScaler("cuda")
x = torch.randn(8, 128, 256, device="cuda")
t = torch.randint(0, 1000, (8, 128), device="cuda")
for _ in range(steps):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(head(enc(x)).flatten(0, 1), t.flatten())
    opt.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
torch.cuda.synchronize()
print("transformer done", float(loss), flush=True)
conv = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
                           torch.nn.Conv2d(32, 64, 3, stride=2, padding=1), torch.nn.ReLU(),
                           torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10)).cuda()
copt = torch.optim.SGD(conv.parameters(), lr=0.01)
img = torch.randn(16, 3, 64, 64, device="cuda")
lab = torch.randint(0, 10, (16,), device="cuda")
for _ in range(steps):
    l = torch.nn.functional.cross_entropy(conv(img), lab)
    copt.zero_grad(set_to_none=True)
    l.backward()
    copt.step()
torch.cuda.synchronize()
print("conv done", float(l))
