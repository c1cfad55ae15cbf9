"""CutMix training in the style of the reference implementation: the loop draws the mixing ratio
`lam` from `np.random.beta`, the box centre with `np.random.randint` and the partner permutation
with `torch.randperm` on the host, and the compiled train step turns them into the box with the
usual `rand_bbox` arithmetic (`int(W * math.sqrt(1.0 - lam))`, clipped with `max`/`min`), pastes
the shuffled batch into it and mixes the two cross-entropies by the pasted area."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
np.random.seed(0)


def rand_bbox(size, lam, cx, cy):
    W, H = size[-1], size[-2]
    cut_rat = math.sqrt(1.0 - lam)
    cut_w, cut_h = int(W * cut_rat), int(H * cut_rat)
    bbx1, bby1 = max(cx - cut_w // 2, 0), max(cy - cut_h // 2, 0)
    bbx2, bby2 = min(cx + cut_w // 2, W), min(cy + cut_h // 2, H)
    return bbx1, bby1, bbx2, bby2


model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


@torch.compile
def cutmix_step(images, target, rand_index, lam, cx, cy):
    bbx1, bby1, bbx2, bby2 = rand_bbox(images.size(), lam, cx, cy)
    images = images.clone()
    images[:, :, bby1:bby2, bbx1:bbx2] = images[rand_index, :, bby1:bby2, bbx1:bbx2]
    lam = 1 - ((bbx2 - bbx1) * (bby2 - bby1) / (images.size(-1) * images.size(-2)))
    output = model(images)
    return F.cross_entropy(output, target) * lam + F.cross_entropy(output, target[rand_index]) * (1.0 - lam)


for it in range(8):
    images, target = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
    lam = float(np.random.beta(1.0, 1.0))
    rand_index = torch.randperm(images.size(0))
    cx, cy = int(np.random.randint(32)), int(np.random.randint(32))
    loss = cutmix_step(images, target, rand_index, lam, cx, cy)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
