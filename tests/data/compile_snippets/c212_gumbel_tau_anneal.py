"""Discrete VAE / straight-through codebook training: the encoder's code logits go through a hard
Gumbel-softmax whose temperature is annealed every step by an exponential schedule."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DiscreteVAE(nn.Module):
    def __init__(self, dim=32, codes=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, 64), nn.ReLU(), nn.Linear(64, codes))
        self.codebook = nn.Linear(codes, dim, bias=False)

    def forward(self, x, tau):
        one_hot = F.gumbel_softmax(self.encoder(x), tau=tau, hard=True)
        return F.mse_loss(self.codebook(one_hot), x)


def temperature(step, start=1.0, floor=0.5, rate=1e-1):
    return max(floor, start * math.exp(-rate * step))


model = DiscreteVAE()
cmodel = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(8):
    loss = cmodel(torch.randn(16, 32), temperature(step))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
