"""A tensor-only RandAugment-style batch augmentation for image classification: a fixed
list of simple photometric and geometric ops is applied in a freshly shuffled order for
every batch, inside the compiled training step."""
import random

import torch
import torch.nn as nn

torch.manual_seed(0)
random.seed(0)

AUG_OPS = [
    lambda x: x.flip(-1),
    lambda x: x * 1.1,
    lambda x: x - x.mean((1, 2, 3), keepdim=True) * 0.1,
    lambda x: torch.roll(x, shifts=2, dims=-2),
]

model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(8, 5))
opt = torch.optim.SGD(model.parameters(), lr=0.05)


@torch.compile
def train_step(images, labels):
    ops = list(AUG_OPS)
    random.shuffle(ops)
    for op in ops:
        images = op(images)
    loss = nn.functional.cross_entropy(model(images), labels)
    loss.backward()
    return loss


for _ in range(4):
    loss = train_step(torch.randn(4, 3, 12, 12), torch.randint(0, 5, (4,)))
    opt.step()
    opt.zero_grad()
print(loss.item())
