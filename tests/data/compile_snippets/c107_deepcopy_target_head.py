import copy

import torch
import torch.nn as nn

torch.manual_seed(0)

online = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16))


@torch.compile
def byol_targets(view):
    target_net = copy.deepcopy(online)
    for p in target_net.parameters():
        p.requires_grad_(False)
    return target_net(view)


for _ in range(3):
    t = byol_targets(torch.randn(8, 16))
print(t.shape)
