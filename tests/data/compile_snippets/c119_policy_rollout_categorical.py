"""Collect rollouts for a small actor-critic on a toy 1-D corridor environment.

The policy network is compiled; it samples actions from a categorical distribution and returns
their log-probabilities, the entropy and the value estimates for the PPO update.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Corridor:
    """A batch of agents on a line of cells; reaching the last cell pays 1 and restarts."""

    def __init__(self, n_envs=8, length=10):
        self.length = length
        self.pos = torch.zeros(n_envs, dtype=torch.long)

    def observe(self):
        return nn.functional.one_hot(self.pos, self.length).float()

    def step(self, action):
        self.pos = (self.pos + action * 2 - 1).clamp(0, self.length - 1)
        done = self.pos == self.length - 1
        self.pos = torch.where(done, torch.zeros_like(self.pos), self.pos)
        return done.float(), done


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=10, n_actions=2):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh())
        self.pi = nn.Linear(32, n_actions)
        self.v = nn.Linear(32, 1)

    def forward(self, obs):
        h = self.body(obs)
        dist = torch.distributions.Categorical(logits=self.pi(h))
        action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.v(h).squeeze(-1)


env = Corridor()
agent = torch.compile(ActorCritic())
buffer = []
with torch.no_grad():
    for t in range(16):
        obs = env.observe()
        action, logp, entropy, value = agent(obs)
        reward, done = env.step(action)
        buffer.append((obs, action, logp, value, reward, done))
rewards = torch.stack([b[4] for b in buffer])
print(rewards.sum(), torch.stack([b[2] for b in buffer]).mean())
