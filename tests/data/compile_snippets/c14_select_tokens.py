import torch
import torch.nn as nn


class Pooler(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, h, keep):
        kept = h[keep]
        return self.proj(kept).mean(0)


p = torch.compile(Pooler())
torch.manual_seed(3)
with torch.no_grad():
    for _ in range(4):
        p(torch.randn(12, 8), torch.rand(12) > 0.5)
