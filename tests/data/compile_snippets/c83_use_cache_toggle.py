import torch
import torch.nn as nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.use_cache = False
        self.attn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, 64), nn.GELU(), nn.Linear(64, dim))

    def forward(self, x):
        a, _ = self.attn(x, x, x, need_weights=False)
        h = x + a
        out = h + self.mlp(h)
        if self.use_cache:
            return out, h.detach()
        return out


block = Block()
cblock = torch.compile(block)
opt = torch.optim.SGD(block.parameters(), lr=0.01)
for _ in range(3):
    cblock(torch.randn(2, 8, 32)).pow(2).mean().backward()
    opt.step()
    opt.zero_grad()

block.eval()
block.use_cache = True
with torch.no_grad():
    for _ in range(3):
        out, cache = cblock(torch.randn(2, 8, 32))
print(out.shape, cache.shape)
