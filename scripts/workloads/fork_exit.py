"""GPU check of a process that leaves by os._exit (interpose/exit.c; scripts/gpu-forkexit.sh).

The parent never touches CUDA; it forks CHILDREN children through multiprocessing (start method
fork), each of which runs STEPS steps of a small MLP on the GPU, synchronizes, and returns:
multiprocessing ends a fork child with os._exit, so no atexit handler runs. Each child prints
one line, `CHILD pid=P steps=N kernels_at_least=K`, K the kernels its steps launched at least (a
forward and backward of 3 Linear layers and an SGD step, each step); the stage checks each
child's trace for K kernels or more.
"""
import multiprocessing as mp
import os
import sys

CHILDREN = int(os.environ.get("CHILDREN", "2"))
STEPS = int(os.environ.get("STEPS", "50"))


def child(i):
    import torch
    import torch.nn as nn

    torch.manual_seed(i)
    m = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                      nn.Linear(256, 10)).cuda()
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    x = torch.randn(64, 256, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    for _ in range(STEPS):
        opt.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(m(x), y).backward()
        opt.step()
    torch.cuda.synchronize()
    # at least the 3 forward GEMMs and 3 backward ones a step
    print(f"CHILD pid={os.getpid()} steps={STEPS} kernels_at_least={6 * STEPS}", flush=True)


def main():
    ctx = mp.get_context("fork")
    ps = [ctx.Process(target=child, args=(i,)) for i in range(CHILDREN)]
    for p in ps:
        p.start()
    for p in ps:
        p.join()
    bad = [p.exitcode for p in ps if p.exitcode != 0]
    print(f"PARENT children={CHILDREN} failed={len(bad)}", flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
