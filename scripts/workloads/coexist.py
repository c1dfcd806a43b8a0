"""The coexistence check's program (scripts/gpu-coexist.sh): a small deterministic training run
whose stdout must not change under any profiler. Prints one line per 10 steps with the loss (to
6 decimals: cuDNN is pinned deterministic) and, with --kineto, the number of CUDA kernel events
torch.profiler itself recorded (on stderr, so stdout stays the same with and without it).

  python3 coexist.py [--kineto | --kineto-first] [--steps N]

--kineto-first starts torch.profiler before the program's first CUDA call (its CUPTI client
registers before libslack's CUPTI starts); --kineto starts it after the model is on the GPU.
"""
import argparse
import sys

import torch
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kineto", action="store_true", help="run inside torch.profiler (CPU+CUDA)")
    ap.add_argument("--kineto-first", action="store_true",
                    help="the same, started before the first CUDA call")
    ap.add_argument("--steps", type=int, default=40)
    a = ap.parse_args()
    prof = None
    if a.kineto_first:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.start()
    torch.manual_seed(0)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    dev = "cuda"
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4),
                          nn.Flatten(), nn.Linear(512, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    xs = torch.randn(4, 64, 3, 32, 32, generator=g)
    ys = torch.randint(0, 10, (4, 64), generator=g)
    if a.kineto:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.start()
    for i in range(a.steps):
        x, y = xs[i % 4].to(dev), ys[i % 4].to(dev)
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if i % 10 == 9:
            print(f"step {i + 1} loss {loss.item():.6f}", flush=True)
    torch.cuda.synchronize()
    if prof is not None:
        prof.stop()
        n = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
        print(f"KINETO cuda_events={n}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
