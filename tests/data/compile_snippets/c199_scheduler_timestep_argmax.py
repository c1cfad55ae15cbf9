"""Diffusion sampling loop: a compiled denoising step calls an Euler scheduler that finds the
current timestep's position in its schedule with an argmax over a match mask and gathers sigma
and the next sigma with index_select, all on the device."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class EulerScheduler:
    def __init__(self, steps=8):
        self.timesteps = torch.linspace(999, 0, steps).round()
        self.sigmas = torch.cat([torch.linspace(14.0, 0.03, steps), torch.zeros(1)])

    def index_for_timestep(self, t):
        return (self.timesteps == t).int().argmax()

    def step(self, model_output, t, sample):
        i = self.index_for_timestep(t)
        sigma, sigma_next = self.sigmas.index_select(0, torch.stack([i, i + 1]))
        return sample + (sigma_next - sigma) * model_output


class TinyDenoiser(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)
        self.t_embed = nn.Linear(1, ch)

    def forward(self, x, t):
        return self.conv(x) + self.t_embed(t.view(1, 1) / 1000.0).view(1, -1, 1, 1)


unet = TinyDenoiser().eval()
scheduler = EulerScheduler()


@torch.no_grad()
def denoise_step(latents, t):
    return scheduler.step(unet(latents, t), t, latents)


step_fn = torch.compile(denoise_step)
latents = torch.randn(1, 4, 16, 16) * scheduler.sigmas[0]
for t in scheduler.timesteps:
    latents = step_fn(latents, t)
print(f"latent std {latents.std().item():.4f}")
