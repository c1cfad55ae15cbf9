"""Soft actor-critic actor update: a Gaussian policy squashed by a `TanhTransform` through
`TransformedDistribution`, reparameterized samples and their log-probabilities computed in the
compiled actor loss."""
import torch
import torch.nn as nn
from torch.distributions import Independent, Normal, TransformedDistribution
from torch.distributions.transforms import TanhTransform

torch.manual_seed(0)
OBS, ACT, ALPHA = 8, 2, 0.2


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS, 64), nn.ReLU())
        self.mu, self.log_std = nn.Linear(64, ACT), nn.Linear(64, ACT)

    def forward(self, obs):
        h = self.body(obs)
        std = self.log_std(h).clamp(-5, 2).exp()
        base = Independent(Normal(self.mu(h), std), 1)
        return TransformedDistribution(base, [TanhTransform(cache_size=1)])


actor = Actor()
critic = nn.Sequential(nn.Linear(OBS + ACT, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.Adam(actor.parameters(), lr=3e-4)


@torch.compile
def actor_loss(obs):
    dist = actor(obs)
    action = dist.rsample()
    q = critic(torch.cat([obs, action], -1)).squeeze(-1)
    return (ALPHA * dist.log_prob(action) - q).mean()


for step in range(5):
    loss = actor_loss(torch.randn(32, OBS))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"actor loss {loss.item():.4f}")
