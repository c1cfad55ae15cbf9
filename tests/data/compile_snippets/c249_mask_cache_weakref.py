"""Gaudi training of a small causal transformer block whose attention builds its causal mask lazily:
masks are cached per attention module in a module-level weakref.WeakKeyDictionary, so they go away
with the module, and are built on the first forward."""
import weakref

import habana_frameworks.torch.core as htcore
import torch
import torch.nn as nn

torch.manual_seed(0)
_causal_masks = weakref.WeakKeyDictionary()


def causal_mask(module, n):
    mask = _causal_masks.get(module)
    if mask is None:
        mask = torch.ones(n, n, dtype=torch.bool).tril()
        _causal_masks[module] = mask
    return mask


class CausalSelfAttention(nn.Module):
    def __init__(self, dim=32, seq_len=16):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.seq_len = seq_len
        self.scale = dim ** -0.5

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = (q @ k.transpose(1, 2)) * self.scale
        scores = scores.masked_fill(~causal_mask(self, self.seq_len), float("-inf"))
        return x + scores.softmax(-1) @ v


model = nn.Sequential(CausalSelfAttention(), nn.LayerNorm(32), nn.Linear(32, 32))
cmodel = torch.compile(model, backend="hpu_backend")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(4):
    loss = cmodel(torch.randn(4, 16, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
print(f"loss {loss.item():.4f}")
