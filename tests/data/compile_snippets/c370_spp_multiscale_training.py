"""Multi-scale training of an SPP-net classifier: images come at a different size each batch,
and the spatial pyramid pooling layer sizes its max-pool windows from the feature map."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
SIZES = [64, 80, 96, 112, 128]


class SpatialPyramidPool(nn.Module):
    def __init__(self, levels=(1, 2, 4)):
        super().__init__()
        self.levels = levels

    def forward(self, x):
        h, w = x.shape[-2:]
        pooled = []
        for n in self.levels:
            window = (math.ceil(h / n), math.ceil(w / n))
            pooled.append(F.max_pool2d(x, kernel_size=window, stride=window, ceil_mode=True).flatten(1))
        return torch.cat(pooled, dim=1)


class SPPNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU())
        self.spp = SpatialPyramidPool()
        self.fc = nn.Linear(32 * (1 + 4 + 16), classes)

    def forward(self, x):
        return self.fc(self.spp(self.features(x)))


model = SPPNet()
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step, size in enumerate(SIZES):
    x, y = torch.randn(4, 3, size, size), torch.randint(0, 10, (4,))
    loss = F.cross_entropy(compiled(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
