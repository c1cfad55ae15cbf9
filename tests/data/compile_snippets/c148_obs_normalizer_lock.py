"""Off-policy RL learner: observations are normalised with running statistics shared with actor
threads, so the statistics object guards its update with a lock; the learner's compiled update
step refreshes the statistics from the sampled batch before computing the critic loss."""
import threading

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RunningStats:
    def __init__(self, dim):
        self._lock = threading.Lock()
        self.mean = torch.zeros(dim)
        self.var = torch.ones(dim)
        self.count = torch.tensor(1e-4)

    def update(self, x):
        with self._lock:
            b_mean, b_var, b_n = x.mean(0), x.var(0, unbiased=False), x.shape[0]
            delta, tot = b_mean - self.mean, self.count + b_n
            self.mean.add_(delta * b_n / tot)
            self.var.copy_((self.var * self.count + b_var * b_n + delta.pow(2) * self.count * b_n / tot) / tot)
            self.count.copy_(tot)

    def normalize(self, x):
        return ((x - self.mean) / (self.var + 1e-8).sqrt()).clamp(-5, 5)


obs_stats = RunningStats(8)
critic = nn.Sequential(nn.Linear(8 + 2, 64), nn.ReLU(), nn.Linear(64, 1))
target = nn.Sequential(nn.Linear(8 + 2, 64), nn.ReLU(), nn.Linear(64, 1))
target.load_state_dict(critic.state_dict())
opt = torch.optim.Adam(critic.parameters(), lr=3e-4)


@torch.compile
def critic_loss(obs, act, rew, next_obs, done):
    obs_stats.update(obs)
    o, no = obs_stats.normalize(obs), obs_stats.normalize(next_obs)
    with torch.no_grad():
        y = rew + 0.99 * (1 - done) * target(torch.cat([no, act], -1)).squeeze(-1)
    return F.mse_loss(critic(torch.cat([o, act], -1)).squeeze(-1), y)


for it in range(4):
    loss = critic_loss(torch.randn(32, 8), torch.randn(32, 2), torch.randn(32), torch.randn(32, 8),
                       (torch.rand(32) < 0.1).float())
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.detach(), obs_stats.mean[:2])
