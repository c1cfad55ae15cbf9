import torch
import torch.nn as nn

torch.manual_seed(0)


class GatedBlock(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.gate = nn.Linear(dim, 1)
        self.small = nn.Linear(dim, dim)
        self.large = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        use_large = self.gate(x).mean() > 0
        return torch.cond(use_large, lambda t: self.large(t), lambda t: self.small(t), (x,))


block = torch.compile(GatedBlock().eval())
with torch.no_grad():
    for _ in range(5):
        y = block(torch.randn(4, 32))
print(y.shape)
