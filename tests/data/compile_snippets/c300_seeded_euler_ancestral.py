# Euler-ancestral sampling for a small denoiser, one compiled call per step, with a
# per-request torch.Generator so that the same seed reproduces the same sample.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Denoiser(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, 64), nn.SiLU(), nn.Linear(64, dim))

    def forward(self, x, sigma):
        c_in = 1 / (sigma ** 2 + 1).sqrt()
        feat = torch.cat([x * c_in, sigma.log().expand(x.shape[0], 1)], dim=-1)
        return x - sigma * self.net(feat)


def get_sigmas(n, sigma_min=0.02, sigma_max=10.0):
    ramp = torch.linspace(0, 1, n)
    sigmas = (sigma_max ** (1 / 7) + ramp * (sigma_min ** (1 / 7) - sigma_max ** (1 / 7))) ** 7
    return torch.cat([sigmas, sigmas.new_zeros(1)])


def ancestral_step(model, x, sigma, sigma_next, generator):
    denoised = model(x, sigma)
    sigma_up = (sigma_next ** 2 * (sigma ** 2 - sigma_next ** 2) / sigma ** 2).clamp(min=0).sqrt()
    sigma_down = (sigma_next ** 2 - sigma_up ** 2).sqrt()
    d = (x - denoised) / sigma
    x = x + d * (sigma_down - sigma)
    noise = torch.randn(x.shape, generator=generator, dtype=x.dtype)
    return x + noise * sigma_up


model = Denoiser().eval()
step_fn = torch.compile(ancestral_step)


@torch.no_grad()
def sample(seed, n_steps=6, batch=2):
    generator = torch.Generator().manual_seed(seed)
    sigmas = get_sigmas(n_steps)
    x = torch.randn(batch, 16, generator=generator) * sigmas[0]
    for i in range(n_steps):
        x = step_fn(model, x, sigmas[i], sigmas[i + 1], generator)
    return x


print(sample(1234).norm().item(), sample(1234).norm().item())
