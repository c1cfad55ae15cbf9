"""`openxla` multi-scale training of a coordinate-conditioned segmentation head (CoordConv
style): `forward` appends two channels of normalized pixel coordinates, built as
`torch.arange(h) * (2 / (h - 1)) - 1` (and the same for `w`) from the feature map's size, before
the classifier; the crop size is drawn per step from the multi-scale list."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla.core.xla_model as xm
    BACKEND, device = "openxla", xm.xla_device()
except ImportError:  # CPU run without torch_xla
    xm, BACKEND, device = None, "eager", torch.device("cpu")

torch.manual_seed(0)
random.seed(0)


class CoordSegHead(nn.Module):
    def __init__(self, in_ch=3, dim=16, classes=5):
        super().__init__()
        self.stem = nn.Conv2d(in_ch, dim, 3, padding=1)
        self.cls = nn.Conv2d(dim + 2, classes, 1)

    def forward(self, images):
        feats = F.relu(self.stem(images))
        b, _, h, w = feats.shape
        ys = torch.arange(h, device=feats.device) * (2.0 / (h - 1)) - 1.0
        xs = torch.arange(w, device=feats.device) * (2.0 / (w - 1)) - 1.0
        grid_y, grid_x = torch.meshgrid(ys, xs, indexing="ij")
        coords = torch.stack([grid_x, grid_y]).expand(b, 2, h, w)
        return self.cls(torch.cat([feats, coords], 1))


model = CoordSegHead().to(device)
step_model = torch.compile(model, backend=BACKEND)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(8):
    size = random.choice((32, 40, 48, 56, 64))
    images = torch.randn(2, 3, size, size, device=device)
    masks = torch.randint(0, 5, (2, size, size), device=device)
    loss = F.cross_entropy(step_model(images), masks)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if xm is not None:
        xm.mark_step()
print(f"loss {loss.item():.4f}")
