"""Once-for-all style supernet training: each step samples a sub-network depth, and the compiled
forward runs only the first blocks of the shared stack up to that depth (sandwich rule: the
largest, the smallest and two random depths per step)."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

random.seed(0)
torch.manual_seed(0)


class ResBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU())

    def forward(self, x):
        return x + self.fc(x)


class Supernet(nn.Module):
    def __init__(self, dim=32, max_depth=8, classes=10):
        super().__init__()
        self.stem = nn.Linear(16, dim)
        self.blocks = nn.ModuleList(ResBlock(dim) for _ in range(max_depth))
        self.head = nn.Linear(dim, classes)

    def active_blocks(self, depth):
        return self.blocks[:depth]

    def forward(self, x, depth):
        h = self.stem(x)
        for blk in self.active_blocks(depth):
            h = blk(h)
        return self.head(h)


def sample_depths(min_d=2, max_d=8, n_random=2):
    return [max_d, min_d] + random.sample(range(min_d + 1, max_d), n_random)


net = Supernet()
cnet = torch.compile(net)
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for step in range(4):
    x, y = torch.randn(8, 16), torch.randint(0, 10, (8,))
    for depth in sample_depths():
        F.cross_entropy(cnet(x, depth), y).backward()
    opt.step()
    opt.zero_grad()
print(cnet(x, 8).argmax(-1))
