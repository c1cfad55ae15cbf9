# Attention with ALiBi position biases: the per-head slopes come from a helper memoized with
# functools.lru_cache (the closed form for a power-of-two head count, interpolated otherwise),
# and the bias is rebuilt in forward from the key distance.
import functools
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@functools.lru_cache(maxsize=None)
def alibi_slopes(n_heads):
    def power_of_two(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]

    if math.log2(n_heads).is_integer():
        return power_of_two(n_heads)
    closest = 2 ** math.floor(math.log2(n_heads))
    return power_of_two(closest) + alibi_slopes(2 * closest)[0::2][: n_heads - closest]


class AlibiAttention(nn.Module):
    def __init__(self, dim=48, n_heads=6):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, -1).permute(2, 0, 3, 1, 4)
        slopes = torch.tensor(alibi_slopes(self.n_heads), device=x.device)
        pos = torch.arange(t, device=x.device)
        distance = (pos[None, :] - pos[:, None]).clamp(max=0).to(x.dtype)
        bias = slopes[:, None, None] * distance
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        bias = bias.masked_fill(~causal, float("-inf"))
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return self.proj(out.transpose(1, 2).reshape(b, t, d))


layer = AlibiAttention()
compiled = torch.compile(layer)
opt = torch.optim.Adam(layer.parameters(), lr=1e-3)
for step in range(4):
    x = torch.randn(2, 20, 48)
    loss = compiled(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
