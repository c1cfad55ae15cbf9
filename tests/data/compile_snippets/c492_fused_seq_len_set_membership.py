"""Encoder inference on requests of varying length: the attention block takes the fused
`scaled_dot_product_attention` path when the sequence length is one of the lengths the fused
kernel was tuned for (`if n in TUNED_LENGTHS:`, a set), and an explicit softmax attention
otherwise."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
TUNED_LENGTHS = {16, 32, 64, 128}


class Block(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        if n in TUNED_LENGTHS:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
            out = scores.softmax(-1) @ v
        return x + self.proj(out.transpose(1, 2).reshape(b, n, d))


class Encoder(nn.Module):
    def __init__(self, depth=2, dim=32):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.norm(x).mean(1)


model = Encoder().eval()
encode = torch.compile(model)
with torch.no_grad():
    for n in (32, 20, 64, 45, 16, 50, 128, 36):
        emb = encode(torch.randn(2, n, 32))
        print(n, f"{emb.norm().item():.2f}")
