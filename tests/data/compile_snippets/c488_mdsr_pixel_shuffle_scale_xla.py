"""`torch_xla.compile` training of a multi-scale super-resolution network (MDSR style): one
shared body serves the x2, x3 and x4 tasks, each batch is drawn for one scale, and the shared
tail convolution's first `3 * scale * scale` channels are rearranged by
`F.pixel_shuffle(..., scale)` into the high-resolution image."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
    compile_step = torch_xla.compile
except ImportError:  # CPU run without torch_xla
    compile_step = torch.compile

torch.manual_seed(0)
random.seed(0)
MAX_SCALE = 4


class MDSR(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.head = nn.Conv2d(3, ch, 3, padding=1)
        self.body = nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(ch, ch, 3, padding=1))
        self.tail = nn.Conv2d(ch, 3 * MAX_SCALE * MAX_SCALE, 3, padding=1)

    def forward(self, lr_images, scale):
        h = self.head(lr_images)
        h = h + self.body(h)
        return F.pixel_shuffle(self.tail(h)[:, : 3 * scale * scale], scale)


model = MDSR()
opt = torch.optim.Adam(model.parameters(), lr=1e-4)


def sr_loss(lr_images, hr_images, scale):
    return F.l1_loss(model(lr_images, scale), hr_images)


step = compile_step(sr_loss)
for it in range(8):
    scale = random.choice((2, 3, 4))
    hr_images = torch.rand(2, 3, 12 * scale, 12 * scale)
    lr_images = F.avg_pool2d(hr_images, scale)
    loss = step(lr_images, hr_images, scale)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"l1 {loss.item():.4f}")
