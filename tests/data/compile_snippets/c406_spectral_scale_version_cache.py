"""Lipschitz-bounded layer that caches its weight's spectral norm between optimizer steps.

The layer divides its weight by the weight's largest singular value. Computing that norm costs
an SVD, so the layer keeps the value and recomputes it only when the weight has changed. It
detects a change the way some caching code does, by remembering the parameter's in-place
version counter (`_version`), which the optimizer bumps at every step.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LipschitzLinear(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim, dim) / dim ** 0.5)
        self._cached_version = -1
        self.register_buffer("_sigma", torch.ones(()))

    def spectral_norm(self):
        if self.weight._version != self._cached_version:
            self._sigma = torch.linalg.matrix_norm(self.weight.detach(), ord=2)
            self._cached_version = self.weight._version
        return self._sigma

    def forward(self, x):
        return F.linear(x, self.weight / self.spectral_norm())


model = nn.Sequential(nn.Linear(10, 16), LipschitzLinear(16), nn.Tanh(), nn.Linear(16, 2))
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(5):
    loss = F.cross_entropy(compiled(torch.randn(8, 10)), torch.randint(0, 2, (8,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(round(loss.item(), 3))
