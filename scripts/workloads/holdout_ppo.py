"""Holdout workload `holdout_ppo` (scripts/gpu-holdout.sh): PPO's update, as RL libraries write it.

Written in session 47, after every rule of docs/CLASSIFICATION.md: the update phase of proximal
policy optimization on Atari-sized frames (CleanRL's and Stable-Baselines3's loop): a rollout of
1,024 transitions (4 stacked 84 x 84 frames, an action of 18, the old log-probabilities,
advantages and returns) kept on the GPU, 4 epochs over it in shuffled minibatches of 256 (16
optimizer steps an update), a Nature-style CNN widened to 64-128-128 channels and 1,024 hidden
units with a policy and a value head, fp32, Adam, the clipped surrogate, the value and entropy
losses, gradient clipping. The policy's distribution is `torch.distributions.Categorical`, whose
argument validation is on by default: building it checks the logits, and `log_prob` checks the
actions, each check read on the host (`if not valid.all()`): two hidden syncs a minibatch that
the user's code never names. Forms:

  v      the distribution as the libraries build it (`Categorical(logits=...)`, validation on);
         the update's statistics kept on the GPU
  sb3    as v, with Stable-Baselines3's bookkeeping: the policy, value and entropy losses, the
         clip fraction read with `.item()` and the approximate KL with `.cpu().numpy()` after
         each minibatch's loss, before its backward pass (five more reads a minibatch)
  fixed  `Categorical(logits=..., validate_args=False)`, the statistics kept on the GPU

Every form reads the update's statistics once at its end (the next rollout needs the policy
anyway). One step is one update (16 optimizer steps, STEPS_PER_ITER: the table's truths are per
optimizer step, the unit of slack's steps here).

Truth rows (ROWS): step(v) - step(fixed), step(sb3) - step(fixed): serialization by the stall
classes' definition (the host waits for the GPU, then the GPU waits for the host's launches).
Untraced, in the traced process's own rounds.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

from scenario_common import Runner, main

N, MB, EPOCHS, ACTIONS = 1024, 256, 4, 18
# optimizer steps in one step() (EPOCHS * N // MB): scripts/holdout_table.py reads the truths
# per optimizer step, as slack counts its steps (GPU run 166: 958 steps in 60 updates)
STEPS_PER_ITER = 16
CLIP, VF, ENT, MAX_NORM = 0.1, 0.5, 0.01, 0.5
FORMS = ["v", "sb3", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "v", "fixed", "serialization"),
    ("serialization", ["serialization"], "sb3", "fixed", "serialization"),
]
_SHARED = []


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(4, 64, 8, stride=4), nn.ReLU(),
            nn.Conv2d(64, 128, 4, stride=2), nn.ReLU(),
            nn.Conv2d(128, 128, 3, stride=1), nn.ReLU(),
            nn.Flatten(), nn.Linear(128 * 7 * 7, 1024), nn.ReLU())
        self.pi = nn.Linear(1024, ACTIONS)
        self.v = nn.Linear(1024, 1)

    def forward(self, obs):
        h = self.body(obs.float() / 255.0)
        return self.pi(h), self.v(h).squeeze(-1)


def shared():
    if not _SHARED:
        torch.manual_seed(0)
        agent = Agent().cuda()
        opt = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
        g = torch.Generator(device="cuda").manual_seed(5)
        obs = torch.randint(0, 256, (N, 4, 84, 84), dtype=torch.uint8, device="cuda", generator=g)
        act = torch.randint(0, ACTIONS, (N,), device="cuda", generator=g)
        with torch.no_grad():
            logits, values = agent(obs)
            old_logp = torch.log_softmax(logits, -1).gather(1, act[:, None]).squeeze(1)
        adv = torch.randn(N, device="cuda", generator=g)
        ret = values + adv
        _SHARED.extend([agent, opt, (obs, act, old_logp, adv, ret, values)])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.agent, self.opt, self.rollout = shared()
        self.form = form
        self.validate = None if form != "fixed" else False  # None: the library's default
        self.stats = []

    def step(self):
        obs, act, old_logp, adv, ret, old_v = self.rollout
        sb3 = self.form == "sb3"
        logs = {"pg": [], "vf": [], "ent": [], "clip": [], "kl": []}
        kept = []
        for _ in range(EPOCHS):
            order = torch.randperm(N, device="cuda")
            for k in range(0, N, MB):
                i = order[k:k + MB]
                logits, v = self.agent(obs[i])
                dist = Categorical(logits=logits, validate_args=self.validate)
                logp = dist.log_prob(act[i])
                a = adv[i]
                a = (a - a.mean()) / (a.std() + 1e-8)
                log_ratio = logp - old_logp[i]
                ratio = log_ratio.exp()
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - CLIP, 1 + CLIP)).mean()
                v_clipped = old_v[i] + (v - old_v[i]).clamp(-CLIP, CLIP)
                vf = 0.5 * torch.max(F.mse_loss(v, ret[i], reduction="none"),
                                     F.mse_loss(v_clipped, ret[i], reduction="none")).mean()
                ent = dist.entropy().mean()
                clip_frac = ((ratio - 1).abs() > CLIP).float().mean()
                with torch.no_grad():
                    kl = ((ratio - 1) - log_ratio).mean()
                if sb3:
                    logs["pg"].append(pg.item())
                    logs["clip"].append(clip_frac.item())
                    logs["vf"].append(vf.item())
                    logs["ent"].append(-ent.item())
                    logs["kl"].append(kl.cpu().numpy())
                else:
                    kept.append(torch.stack([pg.detach(), vf.detach(), ent.detach(), clip_frac, kl]))
                loss = pg + VF * vf - ENT * ent
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(self.agent.parameters(), MAX_NORM)
                self.opt.step()
        # the update's statistics, read once (every form): the next rollout needs the policy
        if kept:
            self.stats.append(torch.stack(kept).mean(0).tolist())
        else:
            self.stats.append([sum(x) / len(x) for x in logs.values()])
        del self.stats[:-100]


if __name__ == "__main__":
    main("holdout_ppo", FORMS, Run, steps=10, warmup=2)
