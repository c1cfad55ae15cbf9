"""Gaussian-process regression on mini-batches: the compiled marginal-likelihood loss factors
the RBF kernel matrix with `torch.linalg.cholesky`, falling back to a jittered matrix in an
`except torch.linalg.LinAlgError` branch, as GP code usually does."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class RBF(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_ls = nn.Parameter(torch.zeros(()))
        self.log_noise = nn.Parameter(torch.tensor(-2.0))

    def forward(self, x):
        d2 = torch.cdist(x, x).pow(2)
        noise = self.log_noise.exp() * torch.eye(len(x))
        return torch.exp(-0.5 * d2 / self.log_ls.exp() ** 2) + noise


kernel = RBF()
opt = torch.optim.Adam(kernel.parameters(), lr=0.05)


@torch.compile
def neg_mll(x, y):
    K = kernel(x)
    try:
        L = torch.linalg.cholesky(K)
    except torch.linalg.LinAlgError:
        L = torch.linalg.cholesky(K + 1e-4 * torch.eye(len(x)))
    alpha = torch.cholesky_solve(y[:, None], L)
    fit = 0.5 * (y[:, None] * alpha).sum()
    return fit + L.diagonal().log().sum() + 0.5 * len(x) * math.log(2 * math.pi)


for step in range(5):
    x = torch.rand(32, 2)
    y = torch.sin(3 * x[:, 0]) + 0.1 * torch.randn(32)
    loss = neg_mll(x, y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"neg mll {loss.item():.3f}")
