"""The tracer's cost per launch, for scripts/accuracy.sh: a loop of tiny elementwise operations
(one kernel launch each, 16 floats), run untraced and under libslack by the script; the
difference in microseconds per operation is what tracing adds to each launch on this machine.
Prints: CALIB us_per_op=... (the median of 5 rounds of N operations)."""
import os
import statistics
import time

import torch

from scenario_common import pin_main_thread

N = int(os.environ.get("N", "20000"))
pin_main_thread()
t = torch.ones(16, device="cuda")
for _ in range(2000):
    t = t * 1.0001
torch.cuda.synchronize()
v = []
for _ in range(5):
    t0 = time.perf_counter()
    for _ in range(N):
        t = t * 1.0001
    torch.cuda.synchronize()
    v.append((time.perf_counter() - t0) / N * 1e6)
print(f"CALIB us_per_op={statistics.median(v):.4f} min={min(v):.4f} max={max(v):.4f}", flush=True)
