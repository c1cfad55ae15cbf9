"""Gaudi (`hpu_backend`) monocular depth training against sparse LiDAR ground truth: pixels with no
return are 0 in the target, so the L1 loss is averaged over the valid pixels only, and the loss
helper returns a zero that keeps the graph connected when a crop has no valid pixel at all
(`if valid.any(): ... else: ...`)."""
import torch
import torch.nn as nn

try:
    import habana_frameworks.torch.core as htcore
    BACKEND = "hpu_backend"
except ImportError:  # CPU run without the Gaudi software stack
    htcore, BACKEND = None, "eager"

torch.manual_seed(0)


def masked_l1(pred, target):
    valid = target > 0
    err = (pred - target).abs()
    if valid.any():
        return (err * valid).sum() / valid.sum()
    return err.sum() * 0.0


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
                                     nn.Conv2d(32, 32, 3, padding=1), nn.ReLU())
        self.decoder = nn.Conv2d(32, 1, 3, padding=1)

    def forward(self, image):
        return nn.functional.softplus(self.decoder(self.encoder(image)))


model = DepthNet()
opt = torch.optim.Adam(model.parameters(), lr=1e-4)


@torch.compile(backend=BACKEND)
def train_loss(image, depth):
    return masked_l1(model(image), depth)


for it in range(4):
    image = torch.randn(4, 3, 32, 32)
    lidar_hits = torch.rand(4, 1, 32, 32) < 0.05  # sparse returns
    depth = torch.rand(4, 1, 32, 32) * 80.0 * lidar_hits
    loss = train_loss(image, depth)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if htcore is not None:
        htcore.mark_step()
print(f"loss {loss.item():.4f}")
