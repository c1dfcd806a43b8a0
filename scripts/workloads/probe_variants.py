# The probe's conv net in two more shapes, for checking that tracing changes nothing:
#   compile: the model under torch.compile (Triton kernels launched through the driver API)
#   loader:  batches from a DataLoader with 2 forked worker processes (fork after CUDA init)
# Prints the per-step losses and a parameter checksum: a traced run must print the same lines.
import os, sys, torch, torch.nn as nn
from torch.utils.data import DataLoader, Dataset

mode = sys.argv[1] if len(sys.argv) > 1 else "loader"
steps = int(os.environ.get("STEPS", "20"))
torch.manual_seed(0)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
dev = "cuda"
def block(ci, co): return nn.Sequential(nn.Conv2d(ci, co, 3, padding=1), nn.BatchNorm2d(co), nn.ReLU())
model = nn.Sequential(block(3, 64), block(64, 64), nn.MaxPool2d(2), block(64, 128), nn.MaxPool2d(2),
                      block(128, 256), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 100)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
lossf = nn.CrossEntropyLoss()

class Synthetic(Dataset):
    def __len__(self): return 128 * steps
    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(3, 64, 64, generator=g), i % 100

def batches():
    if mode == "loader":
        yield from DataLoader(Synthetic(), batch_size=128, num_workers=2,
                              multiprocessing_context="fork", pin_memory=True)
    else:
        ds = Synthetic()
        for s in range(steps):
            xs = torch.stack([ds[s * 128 + j][0] for j in range(128)])
            yield xs, torch.tensor([(s * 128 + j) % 100 for j in range(128)])

net = torch.compile(model) if mode == "compile" else model
for i, (x, y) in enumerate(batches()):
    x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
    opt.zero_grad(set_to_none=True)
    loss = lossf(net(x), y)
    loss.backward()
    opt.step()
    print(f"step {i} loss {loss.item():.6f}")
with torch.no_grad():
    print(f"checksum {sum(p.double().abs().sum().item() for p in model.parameters()):.6f}")
