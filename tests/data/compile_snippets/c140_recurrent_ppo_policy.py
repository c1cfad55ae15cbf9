"""Recurrent PPO actor: the policy keeps a recurrent memory built by a small factory from the
config, and the compiled act function is called once per environment step during rollouts with
the hidden state carried between calls."""
import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)


def make_memory(kind, in_dim, hidden):
    cells = {"gru": nn.GRU, "lstm": nn.LSTM}
    return cells[kind](in_dim, hidden, batch_first=True)


class RecurrentPolicy(nn.Module):
    def __init__(self, obs_dim=6, hidden=32, n_actions=4, memory="gru"):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh())
        self.memory = make_memory(memory, hidden, hidden)
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs, h):
        z, h = self.memory(self.encoder(obs).unsqueeze(1), h)
        z = z.squeeze(1)
        return self.pi(z), self.v(z).squeeze(-1), h


policy = RecurrentPolicy()


@torch.compile
def act(obs, h):
    logits, value, h = policy(obs, h)
    dist = Categorical(logits=logits)
    a = dist.sample()
    return a, dist.log_prob(a), value, h


n_envs = 4
h = torch.zeros(1, n_envs, 32)
obs = torch.randn(n_envs, 6)
with torch.no_grad():
    for t in range(6):
        a, logp, v, h = act(obs, h)
        obs = torch.randn(n_envs, 6) + a.unsqueeze(-1) * 0.1
print(a, v)
