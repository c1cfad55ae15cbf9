"""Memory-constrained training of a deep residual MLP: the model's forward wraps its stack of
blocks in torch.utils.checkpoint.checkpoint_sequential with four segments, and the whole
model is compiled."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint_sequential

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        return x + self.ff(self.norm(x))


class DeepMLP(nn.Module):
    def __init__(self, dim=32, depth=8, n_cls=4):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, n_cls)

    def forward(self, x):
        h = checkpoint_sequential(self.blocks, 4, x, use_reentrant=False)
        return self.head(h)


model = DeepMLP()
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for _ in range(3):
    x, y = torch.randn(8, 32), torch.randint(0, 4, (8,))
    loss = F.cross_entropy(compiled(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss)
