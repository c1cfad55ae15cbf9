"""Inference engine: before each forward the runner installs a per-batch context object in a
module-level variable (a vLLM-style forward context), and attention layers read its settings."""
import contextlib
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@dataclass
class ForwardContext:
    causal: bool
    softmax_scale: float


_forward_context = None


@contextlib.contextmanager
def set_forward_context(ctx):
    global _forward_context
    prev, _forward_context = _forward_context, ctx
    try:
        yield
    finally:
        _forward_context = prev


def get_forward_context():
    return _forward_context


class Attention(nn.Module):
    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        ctx = get_forward_context()
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=ctx.causal, scale=ctx.softmax_scale)
        return self.out(o.transpose(1, 2).reshape(b, t, d))


class Decoder(nn.Module):
    def __init__(self, dim=64, layers=2):
        super().__init__()
        self.layers = nn.ModuleList(Attention(dim) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = x + layer(x)
        return x


model = torch.compile(Decoder().eval())
with torch.no_grad():
    for step in range(4):
        ctx = ForwardContext(causal=True, softmax_scale=0.25)
        with set_forward_context(ctx):
            y = model(torch.randn(2, 16, 64))
print(y.shape)
