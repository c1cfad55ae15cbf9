"""Point-cloud classification with on-device augmentation: the compiled model's augmentation
module scales each cloud by a factor drawn with `torch.empty(b, 1, 1).uniform_(self.low,
self.high)`, the bounds kept as registered buffers so they follow the module to its device."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RandomScale(nn.Module):
    def __init__(self, low=0.8, high=1.25):
        super().__init__()
        self.register_buffer("low", torch.tensor(low))
        self.register_buffer("high", torch.tensor(high))

    def forward(self, points):
        if not self.training:
            return points
        scale = torch.empty(points.shape[0], 1, 1, device=points.device).uniform_(self.low,
                                                                                  self.high)
        return points * scale


class PointNetLite(nn.Module):
    def __init__(self, classes=8):
        super().__init__()
        self.augment = RandomScale()
        self.point_mlp = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 128))
        self.head = nn.Linear(128, classes)

    def forward(self, points):
        feats = self.point_mlp(self.augment(points))
        return self.head(feats.max(dim=1).values)


model = PointNetLite()
step_model = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(5):
    points = torch.randn(16, 256, 3)
    labels = torch.randint(0, 8, (16,))
    loss = F.cross_entropy(step_model(points), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
