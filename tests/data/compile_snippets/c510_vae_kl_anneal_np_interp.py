"""VAE training with KL annealing: the compiled loss takes the global step and reads the KL
weight off a piecewise-linear schedule (zero for the first steps, a ramp, then one) with
`np.interp(step, KL_STEPS, KL_WEIGHTS)`."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
KL_STEPS = [0, 20, 60]
KL_WEIGHTS = [0.0, 0.0, 1.0]


class VAE(nn.Module):
    def __init__(self, dim=784, latent=16):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(dim, 256), nn.ReLU(), nn.Linear(256, 2 * latent))
        self.dec = nn.Sequential(nn.Linear(latent, 256), nn.ReLU(), nn.Linear(256, dim))

    def forward(self, x):
        mu, log_var = self.enc(x).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * (0.5 * log_var).exp()
        return self.dec(z), mu, log_var


vae = VAE()


@torch.compile
def vae_loss(x, step):
    recon, mu, log_var = vae(x)
    rec = F.binary_cross_entropy_with_logits(recon, x, reduction="sum") / x.shape[0]
    kl = -0.5 * torch.sum(1 + log_var - mu.pow(2) - log_var.exp()) / x.shape[0]
    beta = np.interp(step, KL_STEPS, KL_WEIGHTS)
    return rec + beta * kl


opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
for step in range(0, 80, 10):
    x = torch.rand(32, 784)
    loss = vae_loss(x, step)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.2f}")
