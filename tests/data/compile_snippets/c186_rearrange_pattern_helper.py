"""Vision-transformer block that uses a tiny einops-style helper: the head split and merge are
written as readable pattern strings ("b n (h d) -> b h n d") that the helper parses with plain
string operations before reshaping."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def rearrange(x, pattern, **sizes):
    source, target = (side.strip() for side in pattern.split("->"))
    if (source, target) == ("b n (h d)", "b h n d"):
        b, n, hd = x.shape
        h = sizes["h"]
        return x.reshape(b, n, h, hd // h).permute(0, 2, 1, 3)
    if (source, target) == ("b h n d", "b n (h d)"):
        b, h, n, d = x.shape
        return x.permute(0, 2, 1, 3).reshape(b, n, h * d)
    raise ValueError(f"unsupported pattern {pattern!r}")


class Block(nn.Module):
    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (rearrange(t, "b n (h d) -> b h n d", h=self.heads) for t in (q, k, v))
        attn = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(rearrange(attn, "b h n d -> b n (h d)"))
        return x + self.mlp(self.norm2(x))


block = Block()
cblock = torch.compile(block)
opt = torch.optim.AdamW(block.parameters(), lr=1e-3)
for step in range(4):
    patches = torch.randn(2, 16, 64)
    loss = cblock(patches).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
