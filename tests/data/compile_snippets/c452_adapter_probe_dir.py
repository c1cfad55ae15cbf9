"""Adapter fine-tuning of a frozen encoder: `attach_adapters` sets a bottleneck `adapter` on every
other block after the model is built, and each block's `forward` looks for one with
`"adapter" in dir(self)` before adding its residual."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = x + self.ff(self.norm(x))
        if "adapter" in dir(self):
            h = h + self.adapter(h)
        return h


def attach_adapters(blocks, dim, bottleneck=8):
    for i, block in enumerate(blocks):
        if i % 2 == 1:
            block.adapter = nn.Sequential(nn.Linear(dim, bottleneck), nn.ReLU(), nn.Linear(bottleneck, dim))


dim = 32
encoder = nn.Sequential(*[Block(dim) for _ in range(4)], nn.Linear(dim, 2))
encoder.requires_grad_(False)
attach_adapters(encoder[:4], dim)
cencoder = torch.compile(encoder)
opt = torch.optim.Adam([p for p in encoder.parameters() if p.requires_grad], lr=1e-3)
for _ in range(4):
    x, y = torch.randn(8, 6, dim), torch.randint(0, 2, (8,))
    loss = F.cross_entropy(cencoder(x).mean(1), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
