import torch
import torch.nn as nn

torch.manual_seed(0)


class MonitoredMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 16))
        self.activation_means = []

    def forward(self, x):
        h = self.net(x)
        if not torch.compiler.is_compiling():
            self.activation_means.append(h.abs().mean().item())
        return h


mlp = MonitoredMLP()
mlp(torch.randn(4, 16))
compiled = torch.compile(mlp)
for _ in range(5):
    out = compiled(torch.randn(4, 16))
print(len(mlp.activation_means), out.shape)
