"""Gaudi diffusion sampling with an Adams-Bashforth / DPM-Solver-style multistep sampler: the sampler
keeps the denoiser's recent outputs and the compiled update uses as many of them as it has, up to
third order, so the first steps fall back to lower orders."""
import habana_frameworks.torch.core as htcore
import torch
import torch.nn as nn

torch.manual_seed(0)


class Denoiser(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(ch + 1, 32, 3, padding=1), nn.SiLU(), nn.Conv2d(32, ch, 3, padding=1))

    def forward(self, x, sigma):
        s = sigma.view(-1, 1, 1, 1).expand(x.shape[0], 1, *x.shape[2:])
        return self.net(torch.cat([x, s], dim=1))


class MultistepSampler:
    def __init__(self, denoiser, steps=10, order=3):
        self.denoiser = denoiser
        self.sigmas = torch.linspace(1.0, 0.0, steps + 1)
        self.order = order
        self.model_outputs = []
        self.update = torch.compile(self.multistep_update, backend="hpu_backend")

    @staticmethod
    def multistep_update(model_outputs, sample, h):
        if len(model_outputs) == 1:
            return sample - h * model_outputs[-1]
        if len(model_outputs) == 2:
            return sample - h * (1.5 * model_outputs[-1] - 0.5 * model_outputs[-2])
        d = 23 * model_outputs[-1] - 16 * model_outputs[-2] + 5 * model_outputs[-3]
        return sample - h * d / 12

    @torch.no_grad()
    def sample(self, x):
        for i in range(len(self.sigmas) - 1):
            sigma, sigma_next = self.sigmas[i], self.sigmas[i + 1]
            self.model_outputs.append(self.denoiser(x, sigma))
            self.model_outputs = self.model_outputs[-self.order:]
            x = self.update(self.model_outputs, x, sigma - sigma_next)
            htcore.mark_step()
        return x


sampler = MultistepSampler(Denoiser().eval())
print(sampler.sample(torch.randn(2, 4, 16, 16)).std())
