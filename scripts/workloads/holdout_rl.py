"""Holdout workload `holdout_rl` (scripts/gpu-holdout.sh): on-policy RL with environments on the CPU.

Written after the rules of session 19 (docs/CLASSIFICATION.md) as a loop no rule was tuned on:
the shape of a PPO trainer (CleanRL's, with gym's synchronous vector environment). A policy and
value MLP (64 -> 1024 -> 1024 -> 8 action means + 1 value, fp32) acts in NE=128 environments
for T=32 steps (the rollout), then trains on the rollout for 2 epochs of 4 minibatches (Adam,
foreach). An environment is a small nonlinear system of 64 state variables driven by 8 actions
(a damped, coupled oscillator with a reward for staying near the origin); the loop's iteration is
one rollout and its update. Forms:

  h      the environments on the host, stepped one after the other in Python (gym's
         SyncVectorEnv: each env.step() a few numpy calls on its own state): every rollout step
         copies the observations to the GPU (pageable), runs the policy, reads the actions back
         (.cpu(): a sync), and steps the 128 environments while the GPU waits
  fixed  the same environments batched on the GPU (the usual fix: a GPU-vectorized simulator,
         Isaac Gym's or Brax's way): the same arithmetic as tensor operations, nothing read back
         during the rollout

Truth row (ROWS): step(h) - step(fixed), untraced, in the traced process's own rounds
(BENCH_REUSE=1): the host's environments and the round trip they force. The host waits for the
GPU's actions, then the GPU waits for the host: serialization by the stall classes' definition
(docs/CLASSIFICATION.md), with the round trip's fix (the work on the GPU); slack's serialization,
data starvation and copy stall are summed against it, its serialization what-if against the
fixed form.
"""
import numpy as np
import torch
import torch.nn as nn

from scenario_common import Runner, main

NE, T, OBS, ACT, H = 128, 32, 64, 8, 1024
EPOCHS, MB = 2, 4
FORMS = ["h", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization", "data_starvation", "copy_stall"], "h", "fixed",
     "serialization"),
]


def dynamics():
    """The environments' fixed coupling (the same for every form and environment): state
    coupling A (OBS x OBS, stable), action gain B (ACT x OBS)"""
    g = np.random.default_rng(0)
    # float32 after the scaling: a NumPy float64 scalar makes the product float64 (NumPy 2)
    a = (g.standard_normal((OBS, OBS)) * (0.9 / np.sqrt(OBS))).astype(np.float32)
    b = (g.standard_normal((ACT, OBS)) * 0.3).astype(np.float32)
    return a, b


class Env:
    """One environment on the host: gym's step(action) -> (obs, reward, done), in numpy on its
    own state vector, as a single-environment simulator is written."""

    def __init__(self, seed, a, b):
        self.rng = np.random.default_rng(seed)
        self.a, self.b = a, b
        self.reset()

    def reset(self):
        self.s = self.rng.standard_normal(OBS).astype(np.float32) * 0.5
        self.v = np.zeros(OBS, np.float32)
        self.t = 0
        return self.s

    def step(self, act):
        act = np.clip(act, -1.0, 1.0)
        force = np.tanh(self.s @ self.a) + act @ self.b
        self.v = 0.95 * self.v + 0.05 * force
        self.s = self.s + 0.1 * self.v
        reward = -float(np.dot(self.s, self.s)) / OBS - 0.01 * float(np.dot(act, act))
        self.t += 1
        done = self.t >= 200 or not np.isfinite(reward)
        obs = self.reset() if done else self.s
        return obs, reward, done


class SyncVectorEnv:
    """gym's synchronous vector environment: the environments stepped one after the other"""

    def __init__(self, n):
        a, b = dynamics()
        self.envs = [Env(i, a, b) for i in range(n)]

    def reset(self):
        return np.stack([e.reset() for e in self.envs])

    def step(self, acts):
        out = [e.step(x) for e, x in zip(self.envs, acts)]
        obs = np.stack([o for o, _, _ in out])
        rew = np.array([r for _, r, _ in out], np.float32)
        done = np.array([d for _, _, d in out], np.float32)
        return obs, rew, done


class GpuVectorEnv:
    """The same environments batched on the GPU (one tensor operation for all of them)"""

    def __init__(self, n):
        a, b = dynamics()
        self.a = torch.from_numpy(a).cuda()
        self.b = torch.from_numpy(b).cuda()
        self.gen = torch.Generator(device="cuda").manual_seed(0)
        self.n = n
        self.s = torch.randn(n, OBS, device="cuda", generator=self.gen) * 0.5
        self.v = torch.zeros(n, OBS, device="cuda")
        self.t = torch.zeros(n, device="cuda")

    def reset(self):
        return self.s

    def step(self, acts):
        acts = acts.clamp(-1.0, 1.0)
        force = torch.tanh(self.s @ self.a) + acts @ self.b
        self.v = 0.95 * self.v + 0.05 * force
        self.s = self.s + 0.1 * self.v
        rew = -(self.s * self.s).sum(1) / OBS - 0.01 * (acts * acts).sum(1)
        self.t = self.t + 1
        done = ((self.t >= 200) | ~torch.isfinite(rew)).float()
        fresh = torch.randn(self.n, OBS, device="cuda", generator=self.gen) * 0.5
        keep = (1.0 - done)[:, None]
        self.s = self.s * keep + fresh * (1.0 - keep)
        self.v = self.v * keep
        self.t = self.t * (1.0 - done)
        return self.s, rew, done


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS, H), nn.Tanh(), nn.Linear(H, H), nn.Tanh())
        self.mu = nn.Linear(H, ACT)
        self.value = nn.Linear(H, 1)
        self.log_std = nn.Parameter(torch.full((ACT,), -0.5))

    def forward(self, x):
        h = self.body(x)
        return self.mu(h), self.log_std.expand(x.shape[0], ACT), self.value(h).squeeze(-1)


def log_prob(mu, log_std, a):
    return (-0.5 * ((a - mu) / log_std.exp()) ** 2 - log_std - 0.9189385).sum(-1)


class Run(Runner):
    def __init__(self, form):
        torch.manual_seed(0)
        self.host = form == "h"
        self.pi = Policy().cuda()
        self.opt = torch.optim.Adam(self.pi.parameters(), lr=3e-4, foreach=True)
        self.env = SyncVectorEnv(NE) if self.host else GpuVectorEnv(NE)
        self.obs = self.env.reset()
        self.gen = torch.Generator(device="cuda").manual_seed(1)

    def rollout(self):
        obs_b, act_b, logp_b, rew_b, done_b, val_b = [], [], [], [], [], []
        obs = self.obs
        with torch.no_grad():
            for _ in range(T):
                o = torch.from_numpy(obs).cuda() if self.host else obs
                mu, ls, v = self.pi(o)
                a = mu + ls.exp() * torch.randn(mu.shape, device="cuda", generator=self.gen)
                if self.host:
                    nobs, r, d = self.env.step(a.cpu().numpy())  # the round trip
                    r, d = torch.from_numpy(r).cuda(), torch.from_numpy(d).cuda()
                else:
                    nobs, r, d = self.env.step(a)
                obs_b.append(o)
                act_b.append(a)
                logp_b.append(log_prob(mu, ls, a))
                rew_b.append(r)
                done_b.append(d)
                val_b.append(v)
                obs = nobs
            self.obs = obs
            last_v = self.pi(torch.from_numpy(obs).cuda() if self.host else obs)[2]
        return (torch.stack(obs_b), torch.stack(act_b), torch.stack(logp_b), torch.stack(rew_b),
                torch.stack(done_b), torch.stack(val_b), last_v)

    def step(self):
        obs, act, logp, rew, done, val, last_v = self.rollout()
        # returns and advantages (GAE, lambda 0.95, gamma 0.99), on the GPU
        adv = torch.zeros_like(rew)
        gae = torch.zeros_like(last_v)
        nxt = last_v
        for t in reversed(range(T)):
            nonterm = 1.0 - done[t]
            delta = rew[t] + 0.99 * nxt * nonterm - val[t]
            gae = delta + 0.99 * 0.95 * nonterm * gae
            adv[t] = gae
            nxt = val[t]
        ret = adv + val
        n = T * NE
        obs, act, logp = obs.reshape(n, OBS), act.reshape(n, ACT), logp.reshape(n)
        adv, ret = adv.reshape(n), ret.reshape(n)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        for _ in range(EPOCHS):
            perm = torch.randperm(n, device="cuda", generator=self.gen)
            for k in range(MB):
                idx = perm[k * n // MB:(k + 1) * n // MB]
                mu, ls, v = self.pi(obs[idx])
                ratio = (log_prob(mu, ls, act[idx]) - logp[idx]).exp()
                pg = -torch.min(ratio * adv[idx], ratio.clamp(0.8, 1.2) * adv[idx]).mean()
                loss = pg + 0.5 * ((v - ret[idx]) ** 2).mean()
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(self.pi.parameters(), 0.5, foreach=True)
                self.opt.step()


if __name__ == "__main__":
    main("holdout_rl", FORMS, Run, steps=10, warmup=2)
