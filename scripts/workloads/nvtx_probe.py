"""The probe's conv net (probe_train.py) with NVTX ranges as a PyTorch user writes them, for
scripts/gpu-nvtx.sh: each step inside `with torch.cuda.nvtx.range("train_step")`, the forward
pass inside range_push("forward")/range_pop(), the batch's copy inside range_start("data") /
range_end. Under libslack the ranges become MARKER records and `slack report` takes its steps
from "train_step".

  STEPS=20 python3 nvtx_probe.py   prints RESULT steps_per_s=... ranges=<ranges opened>
"""
import os
import time

import torch
import torch.nn as nn

steps = int(os.environ.get("STEPS", "20"))
torch.manual_seed(0)
dev = "cuda"


def block(ci, co):
    return nn.Sequential(nn.Conv2d(ci, co, 3, padding=1), nn.BatchNorm2d(co), nn.ReLU())


model = nn.Sequential(block(3, 64), block(64, 64), nn.MaxPool2d(2), block(64, 128),
                      block(128, 128), nn.MaxPool2d(2), block(128, 256), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(256, 100)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
lossf = nn.CrossEntropyLoss()
xs = torch.randn(8, 128, 3, 64, 64)
ys = torch.randint(0, 100, (8, 128))
ranges = 0


def step(i):
    global ranges
    with torch.cuda.nvtx.range("train_step"):
        r = torch.cuda.nvtx.range_start("data")
        x = xs[i % 8].to(dev)
        y = ys[i % 8].to(dev)
        torch.cuda.nvtx.range_end(r)
        opt.zero_grad(set_to_none=True)
        torch.cuda.nvtx.range_push("forward")
        loss = lossf(model(x), y)
        torch.cuda.nvtx.range_pop()
        loss.backward()
        opt.step()
    ranges += 3


for i in range(3):
    step(i)
torch.cuda.synchronize()
t0 = time.perf_counter()
for i in range(steps):
    step(i)
torch.cuda.synchronize()
sps = steps / (time.perf_counter() - t0)
print(f"RESULT steps_per_s={sps:.2f} steps={steps + 3} ranges={ranges}", flush=True)
