"""GAN training on Gaudi with a spectrally normalized discriminator: every linear layer of the
critic is wrapped with torch.nn.utils.spectral_norm, whose power iteration updates its buffers on
each forward pass."""
import torch
import torch.nn as nn
import habana_frameworks.torch.core as htcore

torch.manual_seed(0)
sn = nn.utils.spectral_norm

generator = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))
critic = nn.Sequential(sn(nn.Linear(16, 64)), nn.LeakyReLU(0.2), sn(nn.Linear(64, 64)),
                       nn.LeakyReLU(0.2), sn(nn.Linear(64, 1)))
ccritic = torch.compile(critic, backend="hpu_backend")
opt_g = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.9))
opt_d = torch.optim.Adam(critic.parameters(), lr=2e-4, betas=(0.5, 0.9))

for step in range(4):
    real = torch.randn(16, 16) + 1.0
    fake = generator(torch.randn(16, 8))
    d_loss = nn.functional.relu(1 - ccritic(real)).mean() + nn.functional.relu(1 + ccritic(fake.detach())).mean()
    d_loss.backward()
    opt_d.step()
    opt_d.zero_grad()
    htcore.mark_step()
    g_loss = -ccritic(fake).mean()
    g_loss.backward()
    opt_g.step()
    opt_g.zero_grad()
    htcore.mark_step()
print(f"d {d_loss.item():.4f} g {g_loss.item():.4f}")
