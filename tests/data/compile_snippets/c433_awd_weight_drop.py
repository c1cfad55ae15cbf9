"""AWD-LSTM-style DropConnect on a recurrent cell's hidden-to-hidden weight: a `WeightDrop`
wrapper keeps the raw weight as its own parameter and, in `forward`, sets a dropped-out copy as
the wrapped Linear's `weight` with `setattr` before calling it."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class WeightDrop(nn.Module):
    def __init__(self, module, name="weight", p=0.3):
        super().__init__()
        self.module, self.name, self.p = module, name, p
        raw = getattr(module, name)
        del module._parameters[name]
        self.register_parameter(name + "_raw", nn.Parameter(raw.data))

    def forward(self, x):
        raw = getattr(self, self.name + "_raw")
        setattr(self.module, self.name, F.dropout(raw, self.p, self.training))
        return self.module(x)


class RecurrentCell(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.inp = nn.Linear(dim, dim)
        self.hid = WeightDrop(nn.Linear(dim, dim, bias=False))

    def forward(self, xs):
        h = torch.zeros(xs.shape[0], xs.shape[2])
        for t in range(xs.shape[1]):
            h = torch.tanh(self.inp(xs[:, t]) + self.hid(h))
        return h


cell = RecurrentCell()
ccell = torch.compile(cell)
opt = torch.optim.SGD(cell.parameters(), lr=0.05)
for step in range(4):
    loss = ccell(torch.randn(4, 6, 32)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f}")
