"""PPO update for a continuous-control policy: a Gaussian policy head, the clipped
surrogate objective and an entropy bonus, computed in a compiled loss from a rollout
batch of observations, actions and old log-probabilities."""
import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(0)


class GaussianPolicy(nn.Module):
    def __init__(self, obs_dim=6, act_dim=2):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, act_dim))
        self.log_std = nn.Parameter(torch.full((act_dim,), -0.5))

    def dist(self, obs):
        return Normal(self.body(obs), self.log_std.exp().expand(obs.shape[0], -1))


policy = GaussianPolicy()
opt = torch.optim.Adam(policy.parameters(), lr=3e-4)


@torch.compile
def ppo_loss(obs, act, old_logp, adv, clip=0.2, ent_coef=0.01):
    d = policy.dist(obs)
    logp = d.log_prob(act).sum(-1)
    ratio = (logp - old_logp).exp()
    surr = torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv)
    return -(surr.mean() + ent_coef * d.entropy().sum(-1).mean())


obs = torch.randn(64, 6)
with torch.no_grad():
    d0 = policy.dist(obs)
    act = d0.sample()
    old_logp = d0.log_prob(act).sum(-1)
adv = torch.randn(64)
for epoch in range(4):
    loss = ppo_loss(obs, act, old_logp, adv)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
