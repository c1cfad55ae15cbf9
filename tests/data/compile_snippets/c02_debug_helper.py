import torch
import torch.nn as nn

torch.manual_seed(0)


def show(name, t):
    print(name, t.shape, t.abs().max())


class Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(10, 10)
        self.b = nn.Linear(10, 10)

    def forward(self, x):
        h = self.a(x)
        show("hidden", h)
        return self.b(h.relu())


m = torch.compile(Mixer())
with torch.no_grad():
    for _ in range(3):
        m(torch.randn(2, 10))
