"""Transformer-style classifier instrumented with a call-counting decorator for a cost report.

A small profiling utility counts how often each decorated function runs (a module-level
`collections.Counter` keyed by qualified name) so the training script can estimate the work per
epoch. The decorator is applied to the blocks' `forward`, and the whole model is compiled.
"""
import collections
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
CALL_COUNTS = collections.Counter()


def count_calls(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        CALL_COUNTS[fn.__qualname__] += 1
        return fn(*args, **kwargs)
    return wrapper


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    @count_calls
    def forward(self, x):
        return x + self.mlp(self.norm(x))


class Classifier(nn.Module):
    def __init__(self, dim=32, depth=3, classes=5):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        return self.head(self.blocks(x).mean(1))


model = Classifier()
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    loss = F.cross_entropy(compiled(torch.randn(8, 6, 32)), torch.randint(0, 5, (8,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(dict(CALL_COUNTS))
