"""Implicit-depth classifier whose weight-tied cell is iterated a fixed number of times.

The cell's recurrent weight carries a spectral-norm parametrization so the iteration is a
contraction. Because the same weight is used at every iteration, `forward` runs the loop under
`torch.nn.utils.parametrize.cached()` so the parametrized weight is computed once per call
instead of once per iteration.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils.parametrizations import spectral_norm

torch.manual_seed(0)
ITERS = 6


class FixedPointClassifier(nn.Module):
    def __init__(self, dim=32, classes=5):
        super().__init__()
        self.inject = nn.Linear(16, dim)
        self.cell = spectral_norm(nn.Linear(dim, dim, bias=False))
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        u = self.inject(x)
        z = torch.zeros_like(u)
        with parametrize.cached():
            for _ in range(ITERS):
                z = torch.tanh(self.cell(z) + u)
        return self.head(z)


model = FixedPointClassifier()
compiled = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(4):
    loss = F.cross_entropy(compiled(torch.randn(16, 16)), torch.randint(0, 5, (16,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(round(loss.item(), 3))
