"""Rotary position embeddings for a small decoder on TPU: the cosine and sine tables are built by
a memoised helper keyed on sequence length and head size, and the attention forward is compiled
with torch_xla.compile."""
import functools

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm

torch.manual_seed(0)
device = xm.xla_device()


@functools.lru_cache(maxsize=16)
def rope_tables(seq_len, head_dim, base=10000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float32), inv_freq)
    return angles.cos(), angles.sin()


def apply_rope(x):
    cos, sin = rope_tables(x.shape[-2], x.shape[-1])
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


class RopeAttention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k = apply_rope(q), apply_rope(k)
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


attn = RopeAttention().to(device)
fwd = torch_xla.compile(attn)
with torch.no_grad():
    for _ in range(4):
        y = fwd(torch.randn(2, 16, 32, device=device))
        xm.mark_step()
print(y.shape)
