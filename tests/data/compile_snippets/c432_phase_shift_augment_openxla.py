"""XLA training of a complex-spectrogram denoiser with random global phase rotation as
augmentation: the compiled step rotates the noisy spectrogram and its target by the same
`cmath.exp(1j * phi)`, phi drawn per batch."""
import cmath
import random

import torch
import torch.nn as nn

try:
    import torch_xla.core.xla_model as xm
    device, BACKEND = xm.xla_device(), "openxla"
except ImportError:
    xm, device, BACKEND = None, torch.device("cpu"), "eager"

random.seed(0)
torch.manual_seed(0)


class Denoiser(nn.Module):
    def __init__(self, bins=33):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2 * bins, 64), nn.ReLU(), nn.Linear(64, 2 * bins))

    def forward(self, spec):
        out = self.net(torch.cat([spec.real, spec.imag], -1))
        re, im = out.chunk(2, -1)
        return torch.complex(re, im)


model = Denoiser().to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)


@torch.compile(backend=BACKEND)
def step_loss(noisy, clean, phi):
    rot = cmath.exp(1j * phi)
    pred = model(noisy * rot)
    return (pred - clean * rot).abs().pow(2).mean()


for step in range(6):
    clean = torch.randn(8, 20, 33, dtype=torch.complex64)
    noisy = clean + 0.3 * torch.randn(8, 20, 33, dtype=torch.complex64)
    loss = step_loss(noisy.to(device), clean.to(device), random.uniform(0, 2 * cmath.pi))
    loss.backward()
    opt.step()
    opt.zero_grad()
    if xm is not None:
        xm.mark_step()
print(f"loss {loss.item():.4f}")
