"""Text-to-image serving on XLA with classifier-free guidance: each request brings its own guidance
scale, and, as in common pipelines, a scale of 1 or less turns guidance off so the denoiser runs once
instead of on a doubled batch."""
import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm

torch.manual_seed(0)
device = xm.xla_device()


class CondDenoiser(nn.Module):
    def __init__(self, ch=4, cond_dim=16):
        super().__init__()
        self.film = nn.Linear(cond_dim, ch)
        self.net = nn.Sequential(nn.Conv2d(ch, 32, 3, padding=1), nn.SiLU(), nn.Conv2d(32, ch, 3, padding=1))

    def forward(self, x, cond):
        return self.net(x + self.film(cond)[:, :, None, None])


class Pipeline:
    def __init__(self, denoiser, steps=4):
        self.denoiser = denoiser
        self.steps = steps
        self.step_fn = torch.compile(self.denoise_step, backend="openxla")

    def denoise_step(self, latents, cond, uncond, guidance_scale, dt):
        do_cfg = guidance_scale > 1.0
        if do_cfg:
            eps = self.denoiser(torch.cat([latents, latents]), torch.cat([uncond, cond]))
            eps_uncond, eps_cond = eps.chunk(2)
            eps = eps_uncond + guidance_scale * (eps_cond - eps_uncond)
        else:
            eps = self.denoiser(latents, cond)
        return latents - dt * eps

    @torch.no_grad()
    def __call__(self, cond, guidance_scale):
        latents = torch.randn(cond.shape[0], 4, 16, 16, device=device)
        uncond = torch.zeros_like(cond)
        for _ in range(self.steps):
            latents = self.step_fn(latents, cond, uncond, guidance_scale, 1.0 / self.steps)
            xm.mark_step()
        return latents


pipe = Pipeline(CondDenoiser().to(device).eval())
for scale in (7.5, 5.0, 1.0, 7.5, 3.0, 1.0, 9.0):
    image = pipe(torch.randn(1, 16, device=device), guidance_scale=scale)
print(image.shape)
