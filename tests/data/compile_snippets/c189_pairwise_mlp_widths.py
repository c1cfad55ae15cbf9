"""Tabular regression MLP configured by a list of layer widths: itertools.pairwise builds the
layers, and the forward uses zip/enumerate/islice to apply activations and a residual skip to
the hidden layers only."""
import itertools

import torch
import torch.nn as nn

torch.manual_seed(0)

WIDTHS = [12, 64, 64, 64, 1]


class WidthMLP(nn.Module):
    def __init__(self, widths=WIDTHS):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(widths))
        self.norms = nn.ModuleList(nn.LayerNorm(w) for w in widths[1:-1])

    def forward(self, x):
        x = self.norms[0](self.layers[0](x)).relu()
        for layer, norm in zip(itertools.islice(self.layers, 1, len(self.layers) - 1),
                               itertools.islice(self.norms, 1, None)):
            x = x + norm(layer(x)).relu()
        return self.layers[-1](x)


model = WidthMLP()
cmodel = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(4):
    x, y = torch.randn(32, 12), torch.randn(32, 1)
    loss = nn.functional.smooth_l1_loss(cmodel(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
