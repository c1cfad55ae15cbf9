"""VAE training with a cyclical KL-annealing schedule computed with NumPy; the schedule value for
the current step is passed to the compiled loss function as the KL weight."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def cyclical_beta(step, period=8, ratio=0.5):
    phase = np.mod(step, period) / period
    return np.minimum(1.0, phase / ratio) * 0.5 * (1 - np.cos(np.pi * np.minimum(1.0, phase / ratio)))


class VAE(nn.Module):
    def __init__(self, d=20, z=4):
        super().__init__()
        self.enc = nn.Linear(d, 2 * z)
        self.dec = nn.Sequential(nn.Linear(z, 32), nn.ReLU(), nn.Linear(32, d))

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        zs = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(zs), mu, logvar


vae = VAE()


@torch.compile
def elbo_loss(x, beta):
    recon, mu, logvar = vae(x)
    rec = F.mse_loss(recon, x, reduction="sum") / x.shape[0]
    kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(-1).mean()
    return rec + beta * kl


opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
for step in range(12):
    loss = elbo_loss(torch.randn(16, 20), cyclical_beta(step))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.detach())
