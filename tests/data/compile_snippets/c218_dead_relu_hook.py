"""MLP training with activation monitoring: a forward hook on every ReLU records how many units
never fired on the batch, so dead units can be logged next to the loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self, dims=(32, 64, 64, 64, 10)):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-2], dims[1:-1]))
        self.acts = nn.ModuleList(nn.ReLU() for _ in self.layers)
        self.head = nn.Linear(dims[-2], dims[-1])

    def forward(self, x):
        for layer, act in zip(self.layers, self.acts):
            x = act(layer(x))
        return self.head(x)


dead_units = {}


def track_dead(name):
    def hook(module, inputs, output):
        dead_units[name] = int((output <= 0).all(dim=0).sum())
    return hook


model = MLP()
for i, act in enumerate(model.acts):
    act.register_forward_hook(track_dead(f"relu{i}"))
cmodel = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(6):
    x, y = torch.randn(32, 32), torch.randint(0, 10, (32,))
    loss = F.cross_entropy(cmodel(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"loss {loss.item():.4f} dead {dead_units}")
