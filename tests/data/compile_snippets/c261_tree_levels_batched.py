"""A tree encoder for fixed-arity hierarchies (e.g. 8 patches pooled pairwise into a quadtree
summary): the leaves come as one tensor and a loop over the configured depth merges neighbouring
pairs level by level, so every batch has the same tree."""
from dataclasses import dataclass

import torch
import torch.nn as nn

torch.manual_seed(0)


@dataclass
class TreeConfig:
    dim: int = 16
    depth: int = 3


class LevelTreeEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.depth = cfg.depth
        self.combine = nn.ModuleList(nn.Linear(2 * cfg.dim, cfg.dim) for _ in range(cfg.depth))
        self.classify = nn.Linear(cfg.dim, 2)

    def merge_level(self, nodes, level):
        b, n, d = nodes.shape
        pairs = nodes.reshape(b, n // 2, 2 * d)
        return torch.tanh(self.combine[level](pairs))

    def forward(self, leaves):
        nodes = leaves
        for level in range(self.depth):
            nodes = self.merge_level(nodes, level)
        return self.classify(nodes.squeeze(1))


cfg = TreeConfig()
model = LevelTreeEncoder(cfg)
forward = torch.compile(model)
opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
for _ in range(5):
    leaves = torch.randn(4, 2 ** cfg.depth, cfg.dim)
    loss = nn.functional.cross_entropy(forward(leaves), torch.randint(0, 2, (4,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(float(loss))
