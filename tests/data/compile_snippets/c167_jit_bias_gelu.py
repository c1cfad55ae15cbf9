"""Transformer MLP that still uses an older TorchScript-fused bias+GELU helper (tanh
approximation) from a pre-2.0 code base, now run under torch.compile for fine-tuning."""
import torch
import torch.nn as nn

torch.manual_seed(0)


@torch.jit.script
def bias_gelu(bias, y):
    x = bias + y
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


class FusedMLP(nn.Module):
    def __init__(self, dim=32, hidden=64):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden, bias=False)
        self.bias1 = nn.Parameter(torch.zeros(hidden))
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(bias_gelu(self.bias1, self.fc1(x)))


mlp = FusedMLP()
cmlp = torch.compile(mlp)
opt = torch.optim.Adam(mlp.parameters(), lr=1e-3)
for _ in range(4):
    x = torch.randn(4, 10, 32)
    loss = (cmlp(x) - x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
