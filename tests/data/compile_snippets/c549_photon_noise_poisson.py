"""Gaudi (`hpu_backend`) low-light denoiser trained on synthetic shot noise: the compiled training
loss draws a photon budget per image, simulates the sensor with `torch.poisson(clean * photons) /
photons`, adds Gaussian read noise and scores the denoiser's output with an L1 loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)
denoiser = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1),
                         nn.ReLU(), nn.Conv2d(32, 3, 3, padding=1))


def denoise_loss(clean, min_photons=5.0, max_photons=200.0, read_std=0.01):
    photons = torch.empty(clean.shape[0], 1, 1, 1).uniform_(min_photons, max_photons)
    noisy = torch.poisson(clean * photons) / photons
    noisy = noisy + read_std * torch.randn_like(noisy)
    return F.l1_loss(noisy + denoiser(noisy), clean)


loss_fn = torch.compile(denoise_loss, backend=BACKEND)
opt = torch.optim.Adam(denoiser.parameters(), lr=1e-3)
for it in range(4):
    clean = torch.rand(8, 3, 32, 32)
    loss = loss_fn(clean)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
print(f"loss {loss.item():.4f}")
