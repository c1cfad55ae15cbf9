"""Euler-ancestral sampling with per-step seeds, so that a given seed reproduces an image even
when the number of steps or the batch changes.

Each sampler step is compiled: it predicts the denoised sample, takes the Euler step down to the
next sigma and adds fresh noise drawn from the step's own seed.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

denoiser = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.SiLU(), nn.Conv2d(16, 3, 3, padding=1)).eval()


def step_noise(like, seed, step):
    torch.manual_seed(seed * 1000 + step)
    return torch.randn_like(like)


@torch.compile
def ancestral_step(x, sigma, sigma_next, seed, step):
    denoised = x - sigma * denoiser(x / (sigma ** 2 + 1) ** 0.5)
    sigma_up = (sigma_next ** 2 * (sigma ** 2 - sigma_next ** 2) / sigma ** 2) ** 0.5
    sigma_down = (sigma_next ** 2 - sigma_up ** 2) ** 0.5
    d = (x - denoised) / sigma
    x = x + d * (sigma_down - sigma)
    return x + step_noise(x, seed, step) * sigma_up


sigmas = torch.linspace(10.0, 0.1, 9).tolist() + [0.0]
with torch.no_grad():
    for seed in (7, 8):
        x = torch.randn(1, 3, 16, 16) * sigmas[0]
        for i in range(len(sigmas) - 2):
            x = ancestral_step(x, sigmas[i], sigmas[i + 1], seed, i)
        print(seed, x.std())
