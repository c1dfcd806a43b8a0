"""A steady training run for production windows' averaged cost (issue 13; scripts/gpu-windows.sh,
part 3): a small conv net (the layers of probe_train.py) on synthetic batches already on the
GPU, trained for DURATION_S seconds after WARMUP steps. Every PERIOD_S seconds (a sync at the
period's end) it prints BUCKET t_s=... steps=... steps_per_s=..., and at the end
  RESULT workload=train_steady steps=... seconds=... steps_per_s=...
DEVICE=cpu runs it on the CPU (a dry run of the script, no GPU).
"""
import os
import time

import torch
import torch.nn as nn


def block(ci, co):
    return nn.Sequential(nn.Conv2d(ci, co, 3, padding=1), nn.BatchNorm2d(co), nn.ReLU())


def main():
    dev = os.environ.get("DEVICE", "cuda")
    duration = float(os.environ.get("DURATION_S", "300"))
    period = float(os.environ.get("PERIOD_S", "10"))
    warmup = int(os.environ.get("WARMUP", "20"))
    batch = int(os.environ.get("BATCH", "128"))
    torch.manual_seed(0)
    model = nn.Sequential(block(3, 64), block(64, 64), nn.MaxPool2d(2), block(64, 128),
                          block(128, 128), nn.MaxPool2d(2), block(128, 256),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(256, 100)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    lossf = nn.CrossEntropyLoss()
    xs = torch.randn(8, batch, 3, 64, 64, device=dev)
    ys = torch.randint(0, 100, (8, batch), device=dev)
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)

    def step(i):
        opt.zero_grad(set_to_none=True)
        loss = lossf(model(xs[i % 8]), ys[i % 8])
        loss.backward()
        opt.step()

    for i in range(warmup):
        step(i)
    sync()
    t0 = time.perf_counter()
    edge, last_n, n = t0 + period, 0, 0
    while True:
        step(n)
        n += 1
        now = time.perf_counter()
        if now >= edge or now - t0 >= duration:
            sync()
            now = time.perf_counter()
            span = now - (edge - period)
            print(f"BUCKET t_s={now - t0:.2f} steps={n - last_n} "
                  f"steps_per_s={(n - last_n) / span:.3f}", flush=True)
            last_n, edge = n, now + period
            if now - t0 >= duration:
                break
    print(f"RESULT workload=train_steady steps={n} seconds={now - t0:.3f} "
          f"steps_per_s={n / (now - t0):.4f}", flush=True)


if __name__ == "__main__":
    main()
