"""Variational autoencoder training: the encoder outputs a diagonal Gaussian posterior and the
KL term against the standard-normal prior is computed with torch.distributions instead of the
closed-form expression."""
import torch
import torch.nn as nn
from torch.distributions import Normal, kl_divergence

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, dim=32, latent=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, 64), nn.ReLU(), nn.Linear(64, 2 * latent))
        self.decoder = nn.Sequential(nn.Linear(latent, 64), nn.ReLU(), nn.Linear(64, dim))

    def forward(self, x):
        mu, log_var = self.encoder(x).chunk(2, dim=-1)
        posterior = Normal(mu, torch.exp(0.5 * log_var))
        prior = Normal(torch.zeros_like(mu), torch.ones_like(mu))
        z = posterior.rsample()
        recon = nn.functional.mse_loss(self.decoder(z), x, reduction="none").sum(-1)
        kl = kl_divergence(posterior, prior).sum(-1)
        return (recon + kl).mean()


vae = VAE()
cvae = torch.compile(vae)
opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
for step in range(4):
    loss = cvae(torch.randn(16, 32))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"elbo loss {loss.item():.4f}")
