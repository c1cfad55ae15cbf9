"""Profiling a transformer block during training: the attention and the MLP inside forward are
wrapped in named profiler ranges so they show up in the trace."""
import torch
import torch.nn as nn
from torch.profiler import record_function

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        with record_function("attn"):
            h = self.norm1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
        with record_function("mlp"):
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
print(f"loss {loss.item():.4f}")
