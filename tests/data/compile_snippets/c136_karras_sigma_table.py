"""Euler sampler for a small denoiser on an XLA device: the scheduler precomputes a Karras
sigma table and the compiled denoising step looks up the current and next noise level by the
step index."""
import math

import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm

torch.manual_seed(0)
device = xm.xla_device()


class KarrasScheduler:
    def __init__(self, num_steps, sigma_min=0.02, sigma_max=80.0, rho=7.0):
        lo, hi = sigma_min ** (1 / rho), sigma_max ** (1 / rho)
        self.sigmas = [(hi + i / (num_steps - 1) * (lo - hi)) ** rho for i in range(num_steps)] + [0.0]

    def __len__(self):
        return len(self.sigmas) - 1


class Denoiser(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, 64), nn.SiLU(), nn.Linear(64, dim))

    def forward(self, x, sigma):
        c_in = 1.0 / math.sqrt(sigma ** 2 + 1.0)
        s = torch.full((x.shape[0], 1), math.log(sigma) / 4, device=x.device)
        return x - sigma * self.net(torch.cat([x * c_in, s], dim=-1))


model = Denoiser().to(device).eval()
sched = KarrasScheduler(num_steps=12)


@torch.compile(backend="openxla")
def euler_step(x, i):
    sigma, sigma_next = sched.sigmas[i], sched.sigmas[i + 1]
    denoised = model(x, sigma)
    d = (x - denoised) / sigma
    return x + d * (sigma_next - sigma)


with torch.no_grad():
    x = torch.randn(4, 16, device=device) * sched.sigmas[0]
    for i in range(len(sched)):
        x = euler_step(x, i)
        xm.mark_step()
print(x.abs().mean())
