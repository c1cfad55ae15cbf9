"""Attention-kernel benchmark of a small encoder served through the `openxla` backend.

The encoder's attention helper reads the `ATTN_IMPL` environment variable on every call, the
way some model libraries let users choose an implementation without touching code: scaled
dot-product attention, an explicit softmax, or a chunked explicit softmax. The benchmark harness
compiles the encoder once and sets the variable to each implementation in turn, timing a few
calls of each.
"""
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import torch_xla
except ImportError:  # no PyTorch/XLA here: run on the CPU with the default backend
    torch_xla = None

torch.manual_seed(0)
DIM, HEADS = 32, 4


def attention(q, k, v):
    impl = os.environ.get("ATTN_IMPL", "sdpa")
    if impl == "sdpa":
        return F.scaled_dot_product_attention(q, k, v)
    scale = q.shape[-1] ** -0.5
    if impl == "eager":
        return (q @ k.transpose(-2, -1) * scale).softmax(-1) @ v
    outs = [(qc @ k.transpose(-2, -1) * scale).softmax(-1) @ v for qc in q.split(8, dim=2)]
    return torch.cat(outs, dim=2)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.out = nn.Linear(DIM, DIM)
        self.ff = nn.Sequential(nn.Linear(DIM, 2 * DIM), nn.GELU(), nn.Linear(2 * DIM, DIM))

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (z.view(b, t, HEADS, -1).transpose(1, 2) for z in self.qkv(x).chunk(3, dim=-1))
        x = x + self.out(attention(q, k, v).transpose(1, 2).reshape(b, t, DIM))
        return x + self.ff(x)


encoder = Encoder().eval()
compiled = torch.compile(encoder, backend="openxla" if torch_xla else "eager")
timings = {}
with torch.no_grad():
    for impl in ["sdpa", "eager", "chunked"]:
        os.environ["ATTN_IMPL"] = impl
        start = time.perf_counter()
        for _ in range(3):
            out = compiled(torch.randn(4, 32, DIM))
        timings[impl] = time.perf_counter() - start
print(sorted(timings))
