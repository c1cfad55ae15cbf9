"""YOLO-style multi-scale training: every few steps the trainer picks a new scale from a list and
the compiled detector resizes its input batch by that factor before the backbone."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.SiLU(),
                                      nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.SiLU())
        self.head = nn.Conv2d(16, 5 + 3, 1)

    def forward(self, images, scale):
        images = F.interpolate(images, scale_factor=scale, mode="bilinear", align_corners=False)
        return self.head(self.backbone(images))


SCALES = [0.5, 0.625, 0.75, 0.875, 1.0, 1.125, 1.25]
model = Detector()
cmodel = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
scale = 1.0
for step in range(12):
    if step % 2 == 0:
        scale = random.choice(SCALES)
    out = cmodel(torch.randn(4, 3, 64, 64), scale)
    loss = out.pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
