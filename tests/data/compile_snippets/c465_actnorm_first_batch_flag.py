"""Glow-style normalizing flow with ActNorm layers: each ActNorm initializes its shift and
log-scale from the first batch it sees (data-dependent initialization) and sets its
`initialized` flag, after which it is a plain affine layer trained with the rest of the flow."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class ActNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(dim))
        self.log_scale = nn.Parameter(torch.zeros(dim))
        self.initialized = False

    def forward(self, x):
        if not self.initialized:
            with torch.no_grad():
                self.loc.copy_(-x.mean(0))
                self.log_scale.copy_(-torch.log(x.std(0) + 1e-6))
            self.initialized = True
        return (x + self.loc) * torch.exp(self.log_scale), self.log_scale.sum().expand(x.shape[0])


class Coupling(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim // 2, 32), nn.ReLU(), nn.Linear(32, dim))

    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        log_s, t = self.net(a).chunk(2, dim=-1)
        log_s = torch.tanh(log_s)
        return torch.cat([a, b * torch.exp(log_s) + t], -1).flip(-1), log_s.sum(-1)


class Flow(nn.Module):
    def __init__(self, dim=8, depth=3):
        super().__init__()
        self.layers = nn.ModuleList(m for _ in range(depth) for m in (ActNorm(dim), Coupling(dim)))

    def forward(self, x):
        log_det = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        log_prob = -0.5 * (x ** 2).sum(-1) - 0.5 * x.shape[-1] * math.log(2 * math.pi)
        return -(log_prob + log_det).mean()


flow = Flow()
nll = torch.compile(flow)
opt = torch.optim.Adam(flow.parameters(), lr=1e-3)
for step in range(6):
    x = torch.randn(128, 8) * 3 + 1
    loss = nll(x)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"nll {loss.item():.4f}")
