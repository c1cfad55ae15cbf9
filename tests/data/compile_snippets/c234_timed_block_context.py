"""Profiling a transformer block during training: a small context manager times the attention
and the MLP inside forward and keeps the durations for the step report."""
import contextlib
import time
from collections import defaultdict

import torch
import torch.nn as nn

torch.manual_seed(0)
timings = defaultdict(list)


@contextlib.contextmanager
def timed(name):
    start = time.perf_counter()
    yield
    timings[name].append(time.perf_counter() - start)


class Block(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        with timed("attn"):
            h = self.norm1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
        with timed("mlp"):
            x = x + self.mlp(self.norm2(x))
        return x


block = Block()
cblock = torch.compile(block)
opt = torch.optim.AdamW(block.parameters(), lr=1e-3)
for step in range(4):
    loss = cblock(torch.randn(8, 16, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}", {k: len(v) for k, v in timings.items()})
