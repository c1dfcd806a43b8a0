"""Holdout workload `holdout_diffusion` (scripts/gpu-holdout.sh): a diffusion model's training loop.

Written in session 31 as a loop no rule was tuned on: a DDPM-style denoiser (a small UNet of
residual blocks with GroupNorm, SiLU and a timestep embedding, channels 64-128-256, about 170
parameter tensors) trained with bf16 autocast and AdamW on 128 noisy 64x64 images a step, kept on
the GPU (timesteps and noise drawn on the device), and the exponential moving average of the
weights that diffusion training keeps for sampling. Forms, a 2x2 of two habits:

  e      the EMA updated one parameter at a time in a Python loop (`e.mul_(d).add_(p, alpha=1-d)`:
         two tiny kernels a tensor, about 340 launches a step); no read of the loss
  ie     the loss read with `.item()` for the progress line right after the optimizer step, then
         the same EMA loop: the GPU has run dry at the read and waits on each of the EMA's tiny
         launches, then on the next step's first ones
  i      the loss read, then the EMA in one call (`torch._foreach_lerp_`)
  fixed  the EMA in one call, no read (the losses kept on the GPU, read at close)
  compiled  `fixed` with the model under torch.compile (default mode): no stall's form, the
         check of the kernel_storm compute hint's saving on the fixed form's trace (its
         elementwise kernels' time fused), not a truth row

Truth rows (ROWS): each habit's cost with the other one present and absent, untraced, in the
traced process's own rounds. Whether the EMA loop costs anything without the read depends on
whether the host's launches keep ahead of the GPU's step (they should here: the `e` row's truth
is near zero, and slack should not call it a stall).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from scenario_common import Runner, main

B, H, T = 128, 64, 1000
FORMS = ["e", "ie", "i", "fixed", "compiled"]
ROWS = [
    ("launch_overhead", ["launch_overhead"], "e", "fixed", "launch_overhead"),
    ("serialization", ["serialization"], "ie", "e", "serialization"),
    ("launch_overhead", ["launch_overhead"], "ie", "i", "launch_overhead"),
    ("serialization", ["serialization"], "i", "fixed", "serialization"),
]
_SHARED = []


def temb(t, dim):
    half = dim // 2
    f = torch.exp(-torch.arange(half, device=t.device, dtype=torch.float32) * (9.21 / half))
    a = t.float()[:, None] * f[None]
    return torch.cat([a.sin(), a.cos()], 1)


class Block(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.n1 = nn.GroupNorm(8, cin)
        self.c1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(tdim, cout)
        self.n2 = nn.GroupNorm(8, cout)
        self.c2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, te):
        h = self.c1(F.silu(self.n1(x)))
        h = h + self.t(te)[:, :, None, None]
        h = self.c2(F.silu(self.n2(h)))
        return h + self.skip(x)


class UNet(nn.Module):
    def __init__(self, ch=(64, 128, 256), tdim=256):
        super().__init__()
        self.tdim = tdim
        self.tmlp = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inp = nn.Conv2d(3, ch[0], 3, padding=1)
        self.down = nn.ModuleList()
        self.pool = nn.ModuleList()
        c = ch[0]
        skips = []
        for i, co in enumerate(ch):
            self.down.append(nn.ModuleList([Block(c, co, tdim), Block(co, co, tdim)]))
            skips.append(co)
            c = co
            self.pool.append(nn.Conv2d(c, c, 3, stride=2, padding=1) if i < len(ch) - 1 else nn.Identity())
        self.mid = nn.ModuleList([Block(c, c, tdim), Block(c, c, tdim)])
        self.up = nn.ModuleList()
        for i, co in reversed(list(enumerate(ch))):
            self.up.append(nn.ModuleList([Block(c + skips[i], co, tdim), Block(co, co, tdim)]))
            c = co
        self.out = nn.Sequential(nn.GroupNorm(8, c), nn.SiLU(), nn.Conv2d(c, 3, 3, padding=1))

    def forward(self, x, t):
        te = self.tmlp(temb(t, self.tdim))
        h = self.inp(x)
        hs = []
        for blocks, pool in zip(self.down, self.pool):
            for b in blocks:
                h = b(h, te)
            hs.append(h)
            h = pool(h)
        for b in self.mid:
            h = b(h, te)
        for blocks in self.up:
            s = hs.pop()
            if h.shape[-1] != s.shape[-1]:
                h = F.interpolate(h, size=s.shape[-2:], mode="nearest")
            h = torch.cat([h, s], 1)
            for b in blocks:
                h = b(h, te)
        return self.out(h)


def shared():
    if not _SHARED:
        m = UNet().cuda().to(memory_format=torch.channels_last)
        opt = torch.optim.AdamW(m.parameters(), lr=2e-4, weight_decay=0.0)
        g = torch.Generator(device="cuda").manual_seed(5)
        images = torch.rand(8, B, 3, H, H, device="cuda", generator=g) * 2 - 1
        betas = torch.linspace(1e-4, 0.02, T, device="cuda")
        abar = torch.cumprod(1 - betas, 0)
        _SHARED.extend([m, opt, images, abar])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt, self.images, self.abar = shared()
        self.model.train()
        # (compiled once, on the first step of its first round: the harness's warm-up, untimed)
        self.fwd = torch.compile(self.model) if form == "compiled" else self.model
        self.params = [p for p in self.model.parameters()]
        # each form keeps its own average (a form's rounds must not see another's)
        self.ema = [p.detach().clone() for p in self.params]
        self.decay = 0.999
        self.i = 0
        self.losses = []
        self.log = []

    def step(self):
        x0 = self.images[self.i % self.images.shape[0]].contiguous(memory_format=torch.channels_last)
        self.i += 1
        t = torch.randint(0, T, (B,), device="cuda")
        noise = torch.randn_like(x0)
        a = self.abar[t][:, None, None, None]
        xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = self.fwd(xt, t)
            loss = F.mse_loss(pred.float(), noise)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        if self.form in ("ie", "i"):
            v = loss.item()
            self.log.append(f"step {self.i} loss {v:.5f}")
            del self.log[:-50]
        else:
            self.losses.append(loss.detach())
            del self.losses[:-50]
        with torch.no_grad():
            if self.form in ("e", "ie"):
                for e, p in zip(self.ema, self.params):
                    e.mul_(self.decay).add_(p.detach(), alpha=1 - self.decay)
            else:
                torch._foreach_lerp_(self.ema, [p.detach() for p in self.params], 1 - self.decay)

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()


if __name__ == "__main__":
    main("holdout_diffusion", FORMS, Run, steps=30, warmup=5)
