"""Karras-schedule Euler sampler on a TPU.

The sampler object walks the noise levels and keeps the current one as a plain float; the
denoising step, compiled with torch_xla, reads it from the sampler.
"""
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm

torch.manual_seed(0)
device = xm.xla_device()


class KarrasSampler:
    def __init__(self, steps=10, sigma_min=0.02, sigma_max=20.0, rho=7.0):
        ramp = torch.linspace(0, 1, steps)
        lo, hi = sigma_min ** (1 / rho), sigma_max ** (1 / rho)
        self.sigmas = ((hi + ramp * (lo - hi)) ** rho).tolist() + [0.0]
        self.sigma = self.sigmas[0]
        self.sigma_next = self.sigmas[1]

    def advance(self, i):
        self.sigma, self.sigma_next = self.sigmas[i], self.sigmas[i + 1]


unet = nn.Sequential(nn.Conv2d(4, 16, 3, padding=1), nn.SiLU(), nn.Conv2d(16, 4, 3, padding=1)).to(device).eval()
sampler = KarrasSampler()


def euler_step(x):
    c_in = 1 / (sampler.sigma ** 2 + 1) ** 0.5
    denoised = x - sampler.sigma * unet(x * c_in)
    d = (x - denoised) / sampler.sigma
    return x + d * (sampler.sigma_next - sampler.sigma)


euler_step = torch_xla.compile(euler_step)

with torch.no_grad():
    x = torch.randn(1, 4, 16, 16, device=device) * sampler.sigmas[0]
    for i in range(len(sampler.sigmas) - 1):
        sampler.advance(i)
        x = euler_step(x)
        torch_xla.sync()
print(x.std())
