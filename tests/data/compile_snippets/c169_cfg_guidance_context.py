"""Diffusion denoiser with classifier-free guidance: a context manager on the model
temporarily raises the guidance scale for the final sampling steps and restores it
afterwards; the compiled denoiser reads the scale attribute."""
import contextlib

import torch
import torch.nn as nn

torch.manual_seed(0)


class Denoiser(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1 + 4, 64), nn.SiLU(), nn.Linear(64, dim))
        self.null_cond = nn.Parameter(torch.zeros(4))
        self.guidance = 3.0

    @contextlib.contextmanager
    def guidance_scale(self, value):
        old = self.guidance
        self.guidance = value
        try:
            yield self
        finally:
            self.guidance = old

    def eps(self, x, t, cond):
        return self.net(torch.cat([x, t.expand(x.shape[0], 1), cond], -1))

    def forward(self, x, t, cond):
        with self.guidance_scale(self.guidance * 1.5):
            e_c = self.eps(x, t, cond)
            e_u = self.eps(x, t, self.null_cond.expand_as(cond))
            return e_u + self.guidance * (e_c - e_u)


model = torch.compile(Denoiser().eval())
x, cond = torch.randn(2, 16), torch.randn(2, 4)
with torch.no_grad():
    for t in torch.linspace(1.0, 0.0, 6)[:-1]:
        x = x - 0.2 * model(x, t.view(1, 1), cond)
print(x.norm().item())
