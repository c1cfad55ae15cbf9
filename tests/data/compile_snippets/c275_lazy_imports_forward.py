"""A vision-transformer block for an XLA device (compiled with torch_xla.compile) whose forward
imports its helpers lazily, the way optional-dependency code does: scaled_dot_product_attention
from torch.nn.functional and sqrt from math, with an ImportError fallback."""
import torch
import torch.nn as nn
import torch_xla

torch.manual_seed(0)


class LazyAttention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        from math import sqrt
        try:
            from torch.nn.functional import scaled_dot_product_attention as sdpa
        except ImportError:
            sdpa = None
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if sdpa is not None:
            y = sdpa(q, k, v)
        else:
            y = (q @ k.transpose(-1, -2) / sqrt(d // self.heads)).softmax(-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


block = LazyAttention()
step = torch_xla.compile(block)
with torch.no_grad():
    for _ in range(3):
        y = step(torch.randn(2, 8, 32))
        torch_xla.sync()
print(y.shape)
