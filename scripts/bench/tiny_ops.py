"""scripts/bench: a loop of tiny PyTorch ops, the launch-bound end of real programs.

One elementwise multiply on a 16-float CUDA tensor per op (as in scripts/workloads/probe_train.py,
so the numbers compare with its tiny_op_us): each op is one kernel launch and the GPU work is
negligible, so the time per op is the host's cost of an eager op, launch included. BLOCKS blocks
of OPS ops after a warm-up, each timed to a synchronization; the median block is the figure.

  python3 tiny_ops.py            prints RESULT workload=tiny_ops us_per_op=<median> blocks=...
  import tiny_ops; tiny_ops.run()   returns (median, blocks)
"""
import statistics
import sys
import time

import torch

BLOCKS = 7
OPS = 3000


def run(blocks=BLOCKS, ops=OPS, dev="cuda"):
    t = torch.ones(16, device=dev)
    for _ in range(500):  # warm-up: the kernel is loaded, the caching allocator primed
        t = t * 1.0001
    torch.cuda.synchronize()
    us = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(ops):
            t = t * 1.0001
        torch.cuda.synchronize()
        us.append((time.perf_counter() - t0) / ops * 1e6)
    if not torch.isfinite(t).all():
        raise SystemExit("tiny_ops: non-finite result")
    return statistics.median(us), us


def main():
    med, us = run()
    print("RESULT workload=tiny_ops us_per_op=%.3f ops=%d blocks=%s" %
          (med, BLOCKS * OPS, ",".join("%.3f" % u for u in us)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
