"""Loops whose steps are hard to find from the GPU's work alone (scripts/gpu-diagnosis.sh).

Each form runs STEPS iterations of an outer loop and prints how many it ran; slack's step count
must equal it (the warm-up steps it leaves out counted in).

  tiny     per iteration: 1,200 tiny elementwise ops of 4 kinds on a 16-float tensor, then
           torch.cuda.synchronize() (the only per-iteration anchor: a sync)
  matmul4  per iteration: a pinned batch copied to the GPU (non_blocking), then 4 identical
           2048x2048 matmuls (the same kernel 4 times), then the result read with .item()
  ops1200  per iteration: a pinned batch copied to the GPU, 1,200 tiny ops, no sync
"""
import argparse
import os
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--form", choices=["tiny", "matmul4", "ops1200"], required=True)
    a = ap.parse_args()
    steps = int(os.environ.get("STEPS", "30"))
    dev = torch.device("cuda")
    x = torch.ones(16, device=dev)
    host = torch.randn(64, 2048).pin_memory()
    w = torch.randn(2048, 2048, device=dev) / 45.0
    t0 = time.perf_counter()
    for _ in range(steps):
        if a.form == "tiny":
            for _ in range(300):
                x.mul_(1.0001)
                x.add_(0.5)
                x.sub_(0.5)
                x.abs_()
            torch.cuda.synchronize()
        elif a.form == "matmul4":
            b = host.to(dev, non_blocking=True)
            y = torch.randn(2048, 2048, device=dev)
            for _ in range(4):
                y = torch.mm(y, w)
            v = (y.sum() + b.sum()).item()
        else:
            b = host.to(dev, non_blocking=True)
            for _ in range(300):
                x.mul_(1.0001)
                x.add_(0.5)
                x.sub_(0.5)
                x.abs_()
            x.add_(b[0, :16])
    torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / steps * 1e3
    print(f"RESULT scenario=steps_probe form={a.form} iterations={steps} step_ms={dt:.3f}",
          flush=True)


if __name__ == "__main__":
    main()
