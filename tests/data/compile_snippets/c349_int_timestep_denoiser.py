"""Diffusers-style denoiser called from a sampling loop with Python int timesteps: the compiled
model accepts the timestep either as a tensor or as a plain number and, like UNet2DModel, turns a
number into a one-element tensor inside forward before the sinusoidal embedding; the sampler
walks ten timesteps from 999 down with a simple DDIM-like update."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([args.sin(), args.cos()], -1)


class Denoiser(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.dim = dim
        self.t_mlp = nn.Sequential(nn.Linear(dim, dim), nn.SiLU())
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.SiLU(), nn.Linear(32, dim))

    def forward(self, sample, timestep):
        if not torch.is_tensor(timestep):
            timestep = torch.tensor([timestep], dtype=torch.long, device=sample.device)
        timestep = timestep.expand(sample.shape[0])
        return self.net(sample + self.t_mlp(timestep_embedding(timestep, self.dim)))


model = Denoiser().eval()
compiled = torch.compile(model)
alphas = torch.linspace(0.9999, 0.98, 1000).cumprod(0)
x = torch.randn(4, 16)
with torch.no_grad():
    steps = list(range(999, 0, -100))
    for i, t in enumerate(steps):
        eps = compiled(x, t)
        a_t = alphas[t]
        a_prev = alphas[steps[i + 1]] if i + 1 < len(steps) else torch.tensor(1.0)
        x0 = (x - (1 - a_t).sqrt() * eps) / a_t.sqrt()
        x = a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * eps
print(x.norm())
