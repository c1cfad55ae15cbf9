"""`openxla` multi-scale texture descriptor: the compiled encoder builds a Gaussian-style pyramid
with as many levels as the image allows (`int(math.log2(min(h, w))) - 2`, down to 4x4) and
concatenates per-level channel statistics; training draws a new square crop size per step."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without torch_xla
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)


class PyramidDescriptor(nn.Module):
    def __init__(self, channels=3, dim=16, max_levels=6):
        super().__init__()
        self.proj = nn.Conv2d(channels, dim, 3, padding=1)
        self.out = nn.Linear(2 * dim * max_levels, 8)
        self.max_levels = max_levels

    def forward(self, images):
        h = self.proj(images)
        levels = int(math.log2(min(h.shape[-2:]))) - 2
        stats = []
        for _ in range(levels):
            stats += [h.mean((-2, -1)), h.std((-2, -1))]
            h = F.avg_pool2d(h, 2)
        desc = torch.cat(stats, -1)
        desc = F.pad(desc, (0, self.out.in_features - desc.shape[-1]))
        return self.out(desc)


model = PyramidDescriptor().to(device)
cmodel = torch.compile(model, backend=BACKEND)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for crop in (32, 64, 48, 128, 96, 256, 40):
    images = torch.randn(4, 3, crop, crop, device=device)
    loss = cmodel(images).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    if xm is not None:
        xm.mark_step()
print(f"loss {loss.item():.4f}")
