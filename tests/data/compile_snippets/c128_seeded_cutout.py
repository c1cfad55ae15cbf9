"""Train a small CNN with on-device cutout augmentation that is reproducible across runs.

The augmentation owns its own seeded random generator, so the cutout boxes do not depend on
the model's dropout draws; augmentation and network are compiled together.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Cutout(nn.Module):
    def __init__(self, size=4, seed=1234):
        super().__init__()
        self.size = size
        self.gen = torch.Generator().manual_seed(seed)

    def forward(self, img):
        if not self.training:
            return img
        n, _, h, w = img.shape
        cy = torch.randint(0, h, (n, 1, 1), generator=self.gen)
        cx = torch.randint(0, w, (n, 1, 1), generator=self.gen)
        ys = torch.arange(h)[None, :, None]
        xs = torch.arange(w)[None, None, :]
        box = ((ys - cy).abs() < self.size) & ((xs - cx).abs() < self.size)
        return img * (~box)[:, None].to(img.dtype)


net = nn.Sequential(
    Cutout(),
    nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Dropout(0.1),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10),
)
cnet = torch.compile(net)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
for step in range(4):
    x, y = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))
    loss = F.cross_entropy(cnet(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(float(loss))
