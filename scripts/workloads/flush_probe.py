"""The writer's flush against the traced program's calls (session 51; scripts/gpu-flushprobe.sh).

One thread makes a tiny kernel launch (x.add_(1) on a 1-element CUDA tensor) after SPIN_US of
host work, for SECS seconds, and times each iteration (the work and the launch). Printed: the
iterations, how many took over 1 ms and over 5 ms, the longest, and the buckets of 100 ms that
held one over 1 ms with their times since the start (a stall once a flush period shows as one
such bucket a second). Under slack every SLACK_FLUSH_MS the writer asks CUPTI for its records,
and CUPTI hands over its buffers (SLACK_CUPTI_BUFFER_KB each) as they fill.
"""
import os
import time

import torch


def main():
    secs = float(os.environ.get("SECS", "6"))
    spin = float(os.environ.get("SPIN_US", "20")) * 1e-6
    x = torch.zeros(1, device="cuda")
    for _ in range(1000):  # warm-up: the module loaded, the allocator's block made
        x.add_(1)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    last = t0
    worst = {}
    n = over1 = over5 = 0
    longest = 0.0
    while last - t0 < secs:
        a = time.perf_counter()
        while time.perf_counter() - a < spin:
            pass
        x.add_(1)
        t = time.perf_counter()
        d = t - last
        last = t
        n += 1
        if d > 1e-3:
            over1 += 1
            b = int((t - t0) * 10)
            worst[b] = max(worst.get(b, 0.0), d)
        over5 += d > 5e-3
        longest = max(longest, d)
        if n % 4096 == 0:
            torch.cuda.synchronize()  # the queue bounded: the host stays a few ms ahead
    torch.cuda.synchronize()
    tag = os.environ.get("PROBE_TAG", "-")
    print(f"FLUSHPROBE tag={tag} iters={n} over1ms={over1} over5ms={over5} "
          f"longest_ms={longest * 1e3:.2f} buckets="
          + ",".join(f"{b / 10:.1f}:{worst[b] * 1e3:.1f}" for b in sorted(worst)), flush=True)


if __name__ == "__main__":
    main()
