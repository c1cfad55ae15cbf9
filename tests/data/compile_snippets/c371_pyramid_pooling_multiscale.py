"""Multi-scale training of a segmentation head with a PSPNet pyramid pooling module: the crops
come at a different size each batch, pooled to fixed bins and upsampled back to the map size."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
SIZES = [64, 80, 96, 112, 128]


class PyramidPooling(nn.Module):
    def __init__(self, channels, bins=(1, 2, 3, 6)):
        super().__init__()
        self.bins = bins
        self.reduce = nn.ModuleList(nn.Conv2d(channels, channels // 4, 1) for _ in bins)

    def forward(self, x):
        h, w = x.shape[-2:]
        outs = [x]
        for b, conv in zip(self.bins, self.reduce):
            y = conv(F.adaptive_avg_pool2d(x, b))
            outs.append(F.interpolate(y, size=(h, w), mode="bilinear", align_corners=False))
        return torch.cat(outs, dim=1)


class PSPHead(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.ReLU())
        self.ppm = PyramidPooling(32)
        self.cls = nn.Conv2d(32 + 4 * 8, classes, 1)

    def forward(self, x):
        logits = self.cls(self.ppm(self.features(x)))
        return F.interpolate(logits, size=x.shape[-2:], mode="bilinear", align_corners=False)


model = PSPHead()
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for size in SIZES:
    x, y = torch.randn(2, 3, size, size), torch.randint(0, 5, (2, size, size))
    loss = F.cross_entropy(compiled(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
