"""Gaudi decoder block that picks its rotary-embedding path from an environment variable.

Deployment scripts set `USE_FUSED_ROPE=0` to fall back to the reference rotary implementation
when debugging numerics; the rotary helper reads the variable with `os.environ.get` and applies
the rotation either with the rotate-half formula over the full head width or on the two halves
explicitly. The variable is set once, before the model is built, and not touched afterwards.
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import habana_frameworks.torch.core as htcore  # Gaudi software stack: registers "hpu_backend"
except ImportError:  # CPU-only machine: same code, no step markers
    htcore = None

os.environ.setdefault("USE_FUSED_ROPE", "1")
torch.manual_seed(0)
DIM, HEADS, SEQ = 32, 4, 12


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class RotaryBlock(nn.Module):
    def __init__(self):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, DIM // HEADS, 2).float() / (DIM // HEADS)))
        angles = torch.outer(torch.arange(SEQ).float(), inv_freq).repeat(1, 2)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.out = nn.Linear(DIM, DIM)

    def rope(self, x):
        if os.environ.get("USE_FUSED_ROPE", "1") == "1":
            return x * self.cos + rotate_half(x) * self.sin
        x1, x2 = x.chunk(2, dim=-1)
        c, s = self.cos.chunk(2, dim=-1)[0], self.sin.chunk(2, dim=-1)[0]
        return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (z.view(b, t, HEADS, -1).transpose(1, 2) for z in self.qkv(x).chunk(3, dim=-1))
        attn = F.scaled_dot_product_attention(self.rope(q), self.rope(k), v, is_causal=True)
        return x + self.out(attn.transpose(1, 2).reshape(b, t, DIM))


block = RotaryBlock().eval()
compiled = torch.compile(block, backend="hpu_backend" if htcore else "eager")
with torch.no_grad():
    for step in range(5):
        out = compiled(torch.randn(2, SEQ, DIM))
        if htcore:
            htcore.mark_step()
print(out.shape)
