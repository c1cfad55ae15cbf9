import random

import torch
import torch.nn as nn

torch.manual_seed(0)
random.seed(0)


class LayerDropEncoder(nn.Module):
    def __init__(self, dim=32, depth=4, layerdrop=0.2):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))
        self.layerdrop = layerdrop

    def forward(self, x):
        for layer in self.layers:
            if self.training and random.random() < self.layerdrop:
                continue
            x = x + torch.relu(layer(x))
        return x


encoder = LayerDropEncoder()
compiled = torch.compile(encoder)
opt = torch.optim.SGD(encoder.parameters(), lr=0.01)
for _ in range(6):
    compiled(torch.randn(4, 32)).pow(2).mean().backward()
    opt.step()
    opt.zero_grad()
print(sum(p.sum() for p in encoder.parameters()))
