"""Activation offloading on Gaudi for a compiled MLP stack: the training loop enters
torch.autograd.graph.save_on_cpu around the compiled model's forward and the backward pass."""
import torch
import torch.nn as nn
import habana_frameworks.torch.core as htcore

torch.manual_seed(0)


class MLPBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        return x + self.ff(self.norm(x))


class Stack(nn.Module):
    def __init__(self, dim=32, depth=3):
        super().__init__()
        self.blocks = nn.ModuleList(MLPBlock(dim) for _ in range(depth))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def offloaded_step(cmodel, opt, x):
    with torch.autograd.graph.save_on_cpu(pin_memory=False):
        loss = cmodel(x).pow(2).mean()
        loss.backward()
    opt.step()
    opt.zero_grad()
    htcore.mark_step()
    return loss


model = Stack()
cmodel = torch.compile(model, backend="hpu_backend")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    loss = offloaded_step(cmodel, opt, torch.randn(4, 16, 32))
print(float(loss))
