"""Holdout workload `holdout_rnn` (scripts/gpu-holdout.sh): a launch-bound inference loop.

A 2-layer LSTM decoder unrolled in Python over 48 time steps (nn.LSTMCell, hidden 512, batch
16, an output projection and a ReLU per step), no gradient: a few small kernels per time step,
hundreds per step of the loop, each shorter than its launch.

  eager  the unrolled loop launched op by op
  fixed  the same loop captured once as a CUDA graph and replayed (one launch per step)

Truth: step(eager) - step(fixed) = launch overhead, untraced, in the traced process's own
rounds.
"""
import torch
import torch.nn as nn

from scenario_common import Runner, main

B, I, HID, TSTEPS = 16, 256, 512, 48
FORMS = ["eager", "fixed"]
ROWS = [("launch_overhead", ["launch_overhead"], "eager", "fixed", "launch_overhead")]
_SHARED = []


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.LSTMCell(I, HID)
        self.c2 = nn.LSTMCell(HID, HID)
        self.proj = nn.Linear(HID, I)

    def forward(self, x0):
        h1 = c1 = h2 = c2 = torch.zeros(B, HID, device=x0.device)
        x, outs = x0, []
        for _ in range(TSTEPS):
            h1, c1 = self.c1(x, (h1, c1))
            h2, c2 = self.c2(h1, (h2, c2))
            x = torch.relu(self.proj(h2))
            outs.append(x)
        return torch.stack(outs)


def shared():
    if not _SHARED:
        _SHARED.append(Decoder().cuda().eval())
    return _SHARED[0]


class Run(Runner):
    def __init__(self, form):
        self.model = shared()
        self.x = torch.randn(B, I, device="cuda")
        self.graph = None
        if form == "fixed":
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.no_grad(), torch.cuda.stream(s):
                for _ in range(3):
                    self.model(self.x)
            torch.cuda.current_stream().wait_stream(s)
            self.graph = torch.cuda.CUDAGraph()
            with torch.no_grad(), torch.cuda.graph(self.graph):
                self.out = self.model(self.x)

    def step(self):
        if self.graph is not None:
            self.graph.replay()
            return
        with torch.no_grad():
            self.out = self.model(self.x)


if __name__ == "__main__":
    main("holdout_rnn", FORMS, Run, steps=40, warmup=5)
