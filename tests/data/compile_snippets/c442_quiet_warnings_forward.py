"""A segmentation head ported from an old code base that upsamples bilinearly without
`align_corners` (which older releases warned about): to keep the training log readable, its
upsampling helper wraps the interpolation in `warnings.catch_warnings()` with an "ignore" filter."""
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def quiet_upsample(x, size):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return F.interpolate(x, size=size, mode="bilinear")


class SegHead(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
                                 nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU())
        self.cls = nn.Conv2d(32, classes, 1)

    def forward(self, images):
        logits = self.cls(self.enc(images))
        return quiet_upsample(logits, images.shape[-2:])


model = SegHead()
cmodel = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(4):
    images = torch.randn(2, 3, 32, 32)
    target = torch.randint(0, 4, (2, 32, 32))
    loss = F.cross_entropy(cmodel(images), target)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
