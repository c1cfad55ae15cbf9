"""Sample from a small latent-diffusion denoiser on Gaudi.

The UNet is compiled with the HPU backend and called once per timestep of a 10-step DDPM
sampler; its decoder resizes the coarse features back to the input size and logs it.
"""
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
import habana_frameworks.torch.core as htcore

logging.basicConfig(level=logging.WARNING)
logger = logging.getLogger("tiny_unet")
torch.manual_seed(0)


class TinyUNet(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.inp = nn.Conv2d(4, ch, 3, padding=1)
        self.down = nn.Conv2d(ch, ch, 3, stride=2, padding=1)
        self.time = nn.Sequential(nn.Linear(1, ch), nn.SiLU(), nn.Linear(ch, ch))
        self.out = nn.Conv2d(2 * ch, 4, 3, padding=1)

    def upsample_like(self, h, ref):
        size = ref.shape[-2:]
        logger.info("upsampling decoder features to %s", tuple(size))
        return F.interpolate(h, size=size, mode="nearest")

    def forward(self, x, t):
        h0 = F.silu(self.inp(x))
        temb = self.time(t.float().view(-1, 1) / 1000)
        h1 = F.silu(self.down(h0) + temb[:, :, None, None])
        h1 = self.upsample_like(h1, h0)
        return self.out(torch.cat([h0, h1], dim=1))


def ddpm_sample(unet, shape, steps=10):
    betas = torch.linspace(1e-4, 0.02, steps)
    alphas = 1 - betas
    abar = torch.cumprod(alphas, 0)
    x = torch.randn(shape)
    for i in reversed(range(steps)):
        t = torch.full((shape[0],), i, dtype=torch.long)
        eps = unet(x, t)
        x = (x - betas[i] / (1 - abar[i]).sqrt() * eps) / alphas[i].sqrt()
        if i > 0:
            x = x + betas[i].sqrt() * torch.randn_like(x)
        htcore.mark_step()
    return x


unet = torch.compile(TinyUNet().eval(), backend="hpu_backend")
with torch.no_grad():
    latents = ddpm_sample(unet, (2, 4, 16, 16))
print(latents.shape, latents.std())
