"""Accuracy scenario `launch_storm` (scripts/accuracy.sh).

broken: every step launches 400 tiny elementwise kernels (64 floats each) one by one from Python:
        each costs microseconds of host time and runs in about one, so the GPU waits on launches.
fixed:  the same 400 operations captured once as a CUDA graph and replayed: one launch per step.
Each step starts with a clone of the input and ends with a sum into an accumulator (operations
that occur once per step).
"""
import torch

from scenario_common import Runner, main

K = 400


class Run(Runner):
    def __init__(self, form):
        self.inp = torch.randn(64, device="cuda")
        self.acc = torch.zeros((), device="cuda")
        if form == "fixed":
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side), torch.no_grad():
                for _ in range(3):
                    self.body()
            torch.cuda.current_stream().wait_stream(side)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph), torch.no_grad():
                self.body()
            self.step = self.graph.replay
        else:
            self.step = self.eager

    @torch.no_grad()
    def body(self):
        x = self.inp.clone()
        for k in range(K):
            x = x * 1.0001 if k % 2 == 0 else x + 0.0001
        self.acc.add_(x.sum())

    def eager(self):
        self.body()


if __name__ == "__main__":
    main("launch_storm", ["broken", "fixed"], Run, steps=100, warmup=20)
